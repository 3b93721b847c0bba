"""``hearth workspace add|list|remove``: the folders the agent may touch."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json, table

app = HearthTyper(help="Folders the agent is allowed to work in.", no_args_is_help=True)


def _workspaces():  # -> Workspaces
    from workhearth.agent.workspace import Workspaces

    wh = hearth()
    return Workspaces(wh.paths, current=wh.workspace)


@app.command()
def add(folder: Annotated[Path, typer.Argument(metavar="DIR")]) -> None:
    """Authorize a folder for file tools and shell commands."""
    item = _workspaces().add(folder)
    print(f"authorized {item.path}")
    broad = _too_broad(Path(item.path))
    if broad:
        print(
            f"hearth: warning: {item.path} is {broad}: the agent may now read and change "
            f"every file in it (undo with `hearth workspace remove {item.path}`)",
            file=sys.stderr,
        )


def _too_broad(path: Path) -> str | None:
    """Why authorizing ``path`` is risky, or None for an ordinary project folder."""
    real = Path(os.path.realpath(path))
    if real == Path(real.anchor):
        return "the whole filesystem"
    if real == Path(os.path.realpath(Path.home())):
        return "your whole home folder"
    if real.parent == Path(real.anchor):
        return "a top-level system folder"
    return None


@app.command()
def remove(folder: Annotated[Path, typer.Argument(metavar="DIR")]) -> None:
    """Stop authorizing a folder."""
    _workspaces().remove(folder)
    print(f"removed {folder}")


@app.command("list")
def list_(json: JsonOpt = False) -> None:
    """Authorized folders (the current folder is always authorized for its own sessions)."""
    ws = _workspaces()
    rows = [item.as_dict() for item in ws.list()]
    if json:
        print_json({"current": str(hearth().workspace), "authorized": rows})
        return
    print(f"current folder: {hearth().workspace}")
    if rows:
        table(["authorized folder"], [[r["path"]] for r in rows])
