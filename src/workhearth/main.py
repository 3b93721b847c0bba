"""``hearth``: the one command, put together from the three surfaces (DESIGN §7).

The CLI, the server and the MCP server never import each other; this module, above all
three, is the one place that knows them all. It says which commands ``hearth`` has (each
imported only when it runs, or when ``hearth --help`` lists them), gives the server the
MCP endpoint it serves at ``/mcp``, and hands the surfaces it starts the process
environment, as the CLI hands it to the library.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workhearth.cli import main as cli_main
from workhearth.cli.lazy import Loader

if TYPE_CHECKING:
    from workhearth.bank.server.store import PgBank
    from workhearth.config import Config
    from workhearth.server.mounts import Endpoint


def _local_mcp(config: Config, workspace: Path, authorize: Callable[[Any], bool]) -> Endpoint:
    """``/mcp`` of ``hearth serve``: the tools of ``hearth mcp`` over streamable HTTP."""
    from workhearth.mcp.server.http import mcp_http_app

    return mcp_http_app(config, workspace, authorize=authorize)


def _team_mcp(bank: PgBank) -> Endpoint:
    """``/mcp`` of ``hearth serve --store``: the team bank's memory tools, per user."""
    from workhearth.mcp.server.team import TeamMCPEndpoint

    return TeamMCPEndpoint(bank)


def serve() -> Callable[..., None]:
    """``hearth serve``: the server's command, serving the MCP server at ``/mcp``."""
    from workhearth.cli.context import hearth
    from workhearth.server.serve import serve_command

    return serve_command(hearth, os.environ, {"/mcp": _local_mcp}, {"/mcp": _team_mcp})


def mcp() -> Any:
    """``hearth mcp``: the MCP server over stdio, and the CLI's list|tools|test."""
    from workhearth.cli.context import hearth
    from workhearth.cli.mcp import commands

    def serve_stdio() -> None:
        from workhearth.mcp.server.tools import run_stdio

        wh = hearth()
        run_stdio(wh.config, wh.workspace)

    return commands(serve_stdio)


# Every command, in the order `hearth --help` lists them: "module:attribute" (a command
# function or a Typer group), or a function above that builds one.
COMMANDS: dict[str, Loader] = {
    "run": "workhearth.cli.run:run",
    "resume": "workhearth.cli.run:resume",
    "rewind": "workhearth.cli.rewind:rewind",
    "audit": "workhearth.cli.audit:audit",
    "check": "workhearth.cli.check:check",
    "doctor": "workhearth.cli.doctor:doctor",
    "serve": serve,
    "sessions": "workhearth.cli.sessions:app",
    "memory": "workhearth.cli.memory:app",
    "mcp": mcp,
    "models": "workhearth.cli.models:app",
    "shell": "workhearth.cli.shell:app",
    "skills": "workhearth.cli.skills:app",
    "trash": "workhearth.cli.trash:app",
    "team": "workhearth.cli.team:app",
    "workspace": "workhearth.cli.workspace:app",
    "wiki": "workhearth.cli.wiki:app",
}

app = cli_main.hearth_app(COMMANDS)


def run(argv: list[str] | None = None) -> int:
    """The console script: ``hearth`` on ``argv`` (the process's own if None, then exit)."""
    return cli_main.run(app, argv)
