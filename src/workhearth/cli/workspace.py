"""``hearth workspace add|list|remove|trust|untrust``: the folders the agent may touch,
and the folders whose own ``.mcp.json``, skills and agents the user lets load."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table

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
    trusted = [state.as_dict() for state in _trust_store().folders()]
    if json:
        print_json({"current": str(hearth().workspace), "authorized": rows, "trusted": trusted})
        return
    print(f"current folder: {hearth().workspace}")
    if rows:
        print_table(
            [Column("authorized folder", cut="start", main=True)], [[r["path"]] for r in rows]
        )
    if trusted:
        columns = [
            Column("trusted folder", cut="start", cap=30),
            Column("items", main=True),
        ]
        print_table(
            columns,
            [
                [str(t["folder"]), ", ".join(f"{i['item']} ({i['status']})" for i in t["items"])]
                for t in trusted
            ],
        )


def _trust_store():  # -> TrustStore
    from workhearth.trust import TrustStore

    return TrustStore(hearth().paths)


@app.command()
def trust(folder: Annotated[Path, typer.Argument(metavar="DIR")]) -> None:
    """Let DIR's .mcp.json, skills and agents load (asked again when they change)."""
    from workhearth.cli.trust import describe

    state = _trust_store().trust(folder)
    if not state.present:
        print(
            f"trusted {state.folder} (it brings nothing yet; whatever it brings later "
            "is asked about first)"
        )
        return
    print(f"trusted {state.folder}; these load from now on, until they change:")
    print("\n".join(describe(state, list(state.present), os.environ)))


@app.command()
def untrust(folder: Annotated[Path, typer.Argument(metavar="DIR")]) -> None:
    """Stop loading DIR's .mcp.json, skills and agents."""
    from workhearth.errors import NotFoundError

    store = _trust_store()
    real = store.check(folder).folder
    if not store.untrust(folder):
        raise NotFoundError(f"{real} is not a trusted folder")
    print(f"no longer trusted: {real}")
