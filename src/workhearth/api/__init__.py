"""What the REST API (``server/``), the MCP servers (``mcp/``) and the CLI's ``--json`` share.

Why one package below all three: they were written apart and each had its own copy of
the output shapes, the workspace-argument check and the skill detail; one copy keeps
their answers (field names, types, messages) from drifting apart.

The wire shapes are pydantic models, each declared once: ``models`` (memory),
``session_models`` (sessions, tasks), ``skill_models``, ``check_models`` (receipts),
``wiki_models`` (Repowiki pages),
``workbench_models`` (trust, trash, audit, files, server info, errors). REST routes name them as their
``response_model``; MCP tools return them, so the SDK derives each tool's output
schema from the same class (tests/api/test_wire_shapes.py compares both). Only these
``*models`` modules import pydantic (the CLI keeps it out of its commands: ~70 ms each).
"""
