"""The MCP client: the MCP servers hearth's agent may use, their tools as agent tools, and
a folder's ``.mcp.json`` shown before it is trusted.

Library code below the surfaces, beside the task service it builds on: ``hearth run``
and the page's tasks both use it.
"""
