"""``hearth mcp`` (the MCP server over stdio) and ``hearth mcp list|tools|test`` (client side).

The MCP server is a surface of its own, which the CLI never imports: :mod:`workhearth.main`
hands :func:`commands` the function that serves it. The ``mcp`` SDK is imported inside each
command, so ``hearth --help`` pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table

HELP = (
    "MCP: `hearth mcp` serves memory, sessions and skills over stdio; "
    "list|tools|test inspect the MCP servers hearth uses."
)


def commands(serve_stdio: Callable[[], None]) -> HearthTyper:
    """The ``hearth mcp`` group: ``serve_stdio`` without a subcommand, else list|tools|test."""
    app = HearthTyper(help=HELP)

    @app.callback(invoke_without_command=True)
    def serve(ctx: typer.Context) -> None:
        """Without a subcommand: run the MCP server over stdio (for Claude Code, Qwen Code, …)."""
        if ctx.invoked_subcommand is None:
            serve_stdio()

    app.command("list")(list_servers)
    app.command()(tools)
    app.command()(test)
    return app


# ------------------------------------------------------------------ client side


def _servers():  # -> MCPServers
    import os

    from workhearth.mcp.client.servers import open_servers

    wh = hearth()
    return open_servers(wh.config, wh.workspace, os.environ, _warn, wh.trust)


def _warn(message: str) -> None:
    import sys

    print(f"hearth: {message}", file=sys.stderr)


def _untrusted():  # -> dict[str, McpServerConfig]
    """The servers of this folder's .mcp.json while the user has not trusted it (as written)."""
    from workhearth.mcp.client.servers import read_mcp_json
    from workhearth.trust import MCP_JSON

    state = hearth().trust
    if MCP_JSON not in state.pending:
        return {}
    return read_mcp_json(state.folder / MCP_JSON, None, lambda _message: None)


def _server_row(spec, trusted: bool = True) -> dict[str, object]:  # spec: McpServerConfig
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
        "loaded": trusted,
        "trust": spec.trust,
        "read_only_tools": list(spec.read_only_tools),
    }


def list_servers(json: JsonOpt = False) -> None:
    """The MCP servers hearth's agent may use, and the file each comes from."""
    loaded = _servers().specs
    waiting = {n: s for n, s in _untrusted().items() if n not in loaded}
    rows = [_server_row(s) for s in loaded.values()]
    rows += [_server_row(s, trusted=False) for s in waiting.values()]
    if json:
        print_json(rows)
        return
    if not rows:
        print("no MCP server configured: add [mcp.servers.NAME] to config.toml or a .mcp.json here")
        return
    columns = [
        Column("name", cut="never"),
        Column("transport", cut="never", drop=2),
        Column("command / url", main=True),
        Column("source", cut="start", cap=20, drop=1),
        Column("status", cut="never"),
    ]
    print_table(
        columns,
        [
            [
                str(r["name"]),
                str(r["transport"]),
                str(r["url"] or " ".join([str(r["command"] or ""), *r["args"]])),  # type: ignore[misc]
                str(r["source"]),
                "trusted" if r["trust"] else "loads" if r["loaded"] else "folder not trusted",
            ]
            for r in rows
        ],
    )
    if waiting:
        _warn(
            f"servers of {hearth().trust.folder}/.mcp.json do not load until you trust the "
            f"folder: `hearth workspace trust {hearth().trust.folder}`"
        )


def _open(name: str):  # -> MCPServers
    """The servers, refusing by name one the user has not trusted yet."""
    from workhearth.mcp.client.servers import McpError

    servers = _servers()
    if name not in servers.specs and name in _untrusted():
        folder = hearth().trust.folder
        raise McpError(
            f"MCP server {name!r} comes from {folder}/.mcp.json, which you have not trusted: "
            f"run `hearth workspace trust {folder}` first"
        )
    return servers


def tools(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A configured MCP server.")],
    json: JsonOpt = False,
) -> None:
    """Start one server and list its tools, as the agent sees them (mcp__NAME__TOOL)."""
    from workhearth.mcp.client.tools import exposed_name

    servers = _open(name)
    spec = servers.specs.get(name)
    try:
        found = servers.list_tools(name)
    finally:
        servers.close()
    rows = [
        {
            **t.as_dict(),
            "exposed_name": exposed_name(name, t.name),
            # Why: the user's config decides; the server's readOnlyHint is only shown.
            "read_only": spec is not None and t.name in spec.read_only_tools,
            "needs_approval": not (spec and (spec.trust or t.name in spec.read_only_tools)),
        }
        for t in found
    ]
    if json:
        print_json(rows)
        return
    columns = [
        Column("tool", cut="never"),
        Column("read-only (your config)", cut="never"),
        Column("server's hint", cut="never", drop=1),
        Column("description", main=True),
    ]
    print_table(
        columns,
        [
            [
                r["exposed_name"],
                "yes" if r["read_only"] else "no",
                "read-only" if r["read_only_hint"] else "-",
                r["description"],
            ]
            for r in rows
        ],
    )


def test(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A configured MCP server.")],
    json: JsonOpt = False,
) -> None:
    """Start one server, list its tools, and report how long that took."""
    import time

    servers = _open(name)
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
