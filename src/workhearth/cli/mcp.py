"""``hearth mcp`` (the MCP server over stdio) and ``hearth mcp list|tools|test`` (client side).

The ``mcp`` SDK is imported inside each command, so ``hearth --help`` pays nothing for it.
"""

from __future__ import annotations

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper

app = HearthTyper(
    help="MCP: `hearth mcp` serves memory, sessions and skills over stdio; "
    "list|tools|test inspect the MCP servers hearth uses.",
)


@app.callback(invoke_without_command=True)
def serve_stdio(ctx: typer.Context) -> None:
    """Without a subcommand: run the MCP server over stdio (for Claude Code, Qwen Code, …)."""
    if ctx.invoked_subcommand is not None:
        return
    from workhearth.mcp.server import run_stdio

    wh = hearth()
    run_stdio(wh.config, wh.workspace)
