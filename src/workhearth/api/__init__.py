"""What the REST API (``server/``), the MCP servers (``mcp/``) and the CLI's ``--json`` share.

Why one package below all three: they were written apart and each had its own copy of
the output shapes, the workspace-argument check and the skill detail; one copy keeps
their answers (field names, types, messages) from drifting apart. Only ``models``
imports pydantic (the CLI keeps it out of its commands: ~70 ms each).
"""
