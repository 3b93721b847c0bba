"""``hearth shell snapshot``: capture the user's shell now, as a session start does."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.shell.snapshot import capture

app = HearthTyper(help="The user's shell, as commands see it.", no_args_is_help=True)


@app.callback()
def _group() -> None:
    """The user's shell, as commands see it."""


@app.command()
def snapshot(
    show: Annotated[bool, typer.Option("--show", help="Print the snapshot too.")] = False,
    json: JsonOpt = False,
) -> None:
    """Capture $SHELL now and print the snapshot's path.

    The snapshot holds exported variables, functions, aliases and shell options;
    every shell command of a session runs after sourcing it.
    """
    wh = hearth()
    # Why: the CLI is where the process environment enters; the library takes it as data.
    snap = capture(wh.paths, wh.workspace, os.environ)
    if json:
        print_json(snap.as_dict())
        return
    if snap.warning:
        print(f"hearth: warning: {snap.warning}", file=sys.stderr)
    print(snap.path)
    if show:
        sys.stdout.flush()
        sys.stdout.buffer.write(snap.path.read_bytes())
        sys.stdout.flush()
