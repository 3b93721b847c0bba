"""MCP: the server exposing memory and sessions, and the client for external tools."""
