"""The MCP server surface: memory, sessions and skills as MCP tools, over stdio
(``hearth mcp``) and streamable HTTP (``/mcp`` of ``hearth serve``, local and team)."""
