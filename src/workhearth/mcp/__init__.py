"""MCP both ways: ``server/`` serves memory, sessions and skills (``hearth mcp``, ``/mcp``);
``client/`` connects hearth's agent to other MCP servers."""
