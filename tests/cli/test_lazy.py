"""Commands are imported when they run: `hearth check` imports its own module and no other
command's, while `hearth --help` still lists every command."""

from __future__ import annotations

import subprocess
import sys

import typer.main

from workhearth.main import COMMANDS, app

# Modules any command needs: the entry, the global options, help and output helpers.
SHARED = {
    "workhearth.cli",
    "workhearth.cli.context",
    "workhearth.cli.help",
    "workhearth.cli.lazy",
    "workhearth.cli.main",
    "workhearth.cli.options",
    "workhearth.cli.output",
    "workhearth.cli.params",
    "workhearth.cli.tables",
}


def _surface_modules_after(*argv: str) -> set[str]:
    """The cli/, server/ and mcp/ modules a fresh `hearth ARGV` has imported when it ends."""
    code = (
        "import contextlib, io, sys\n"
        "from workhearth.main import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    run({list(argv)!r})\n"
        "print(*sorted(sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    prefixes = ("workhearth.cli", "workhearth.server", "workhearth.mcp")
    return {m for m in done.stdout.split() if m.startswith(prefixes)}


def test_a_command_imports_no_other_command() -> None:
    assert _surface_modules_after("check", "--help") - SHARED == {"workhearth.cli.check"}
    assert _surface_modules_after("--version") <= SHARED


def test_help_imports_and_lists_every_command_in_order() -> None:
    loaded = _surface_modules_after("--help")
    assert {"workhearth.cli.memory", "workhearth.server.serve", "workhearth.cli.mcp"} <= loaded
    root = typer.main.get_command(app)
    ctx = root.make_context("hearth", [], resilient_parsing=True)
    commands = root.get_help(ctx).split("Commands:")[1].splitlines()
    names = [line.split()[0] for line in commands if line.strip() and not line.startswith("   ")]
    assert names == list(COMMANDS)


def test_the_server_and_the_mcp_server_are_wired_above_the_cli() -> None:
    """`hearth serve` and `hearth mcp` are built by workhearth.main, not by cli/."""
    root = typer.main.get_command(app)
    serve = root.commands["serve"]  # type: ignore[attr-defined]
    assert {p.name for p in serve.params} >= {"host", "port", "store", "login_url"}
    mcp = root.commands["mcp"]  # type: ignore[attr-defined]
    assert list(mcp.commands) == ["list", "tools", "test"]
    assert mcp.invoke_without_command  # bare `hearth mcp` serves over stdio
