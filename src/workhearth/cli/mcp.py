"""``hearth mcp`` (the MCP server over stdio) and ``hearth mcp list|tools|test`` (client side).

The ``mcp`` SDK is imported inside each command, so ``hearth --help`` pays nothing for it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json, table

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


# ------------------------------------------------------------------ client side


def _servers():  # -> MCPServers
    import os
    import sys

    from workhearth.mcp.client import open_servers

    wh = hearth()
    return open_servers(
        wh.config,
        wh.workspace,
        os.environ,
        lambda message: print(f"hearth: {message}", file=sys.stderr),
    )


def _server_row(spec) -> dict[str, object]:  # spec: McpServerConfig
    # Why: env and header values may hold secrets; only their names are shown.
    return {
        "name": spec.name,
        "transport": spec.transport,
        "command": spec.command,
        "args": list(spec.args),
        "url": spec.url,
        "env": sorted(spec.env),
        "headers": sorted(spec.headers),
        "source": spec.source,
    }


@app.command("list")
def list_servers(json: JsonOpt = False) -> None:
    """The MCP servers hearth's agent may use, and the file each comes from."""
    specs = list(_servers().specs.values())
    if json:
        print_json([_server_row(spec) for spec in specs])
        return
    if not specs:
        print("no MCP server configured: add [mcp.servers.NAME] to config.toml or a .mcp.json here")
        return
    table(
        ["name", "transport", "command / url", "source"],
        [
            [s.name, s.transport, s.url or " ".join([s.command or "", *s.args]), s.source]
            for s in specs
        ],
    )


@app.command()
def tools(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A configured MCP server.")],
    json: JsonOpt = False,
) -> None:
    """Start one server and list its tools, as the agent sees them (mcp__NAME__TOOL)."""
    from workhearth.mcp.tools import exposed_name

    servers = _servers()
    try:
        found = servers.list_tools(name)
    finally:
        servers.close()
    rows = [{**t.as_dict(), "exposed_name": exposed_name(name, t.name)} for t in found]
    if json:
        print_json(rows)
        return
    table(
        ["tool", "read-only", "description"],
        [[r["exposed_name"], "yes" if r["read_only"] else "no", r["description"]] for r in rows],
    )


@app.command()
def test(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A configured MCP server.")],
    json: JsonOpt = False,
) -> None:
    """Start one server, list its tools, and report how long that took."""
    import time

    servers = _servers()
    started = time.monotonic()
    try:
        found = servers.list_tools(name)
    finally:
        servers.close()
    elapsed = time.monotonic() - started
    if json:
        print_json({"name": name, "tools": len(found), "seconds": round(elapsed, 3)})
    else:
        print(f"{name}: started and listed {len(found)} tools in {elapsed:.2f} s")
