"""``hearth trash list|restore|empty``."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table, short_size, short_time
from workhearth.errors import UsageError
from workhearth.trash import Trash

DAY = 86_400

app = HearthTyper(help="Deleted files and sessions, restorable.", no_args_is_help=True)

# Why: the file's path is what people look for, so it keeps the width (its tail, the
# name, first); the id shortens to a unique prefix that `hearth trash restore` takes,
# and the time (a trash id starts with it) and the size give way when narrow.
TRASH_ID_SHORT = 17


def _columns(first: Column, when: Column) -> list[Column]:
    return [
        first,
        when,
        Column("size", cut="never", align="right", drop=2),
        Column("original", cut="start", main=True),
    ]


def _history(session_id: str):  # -> FileHistory
    from workhearth.agent.history import FileHistory

    return FileHistory(hearth().sessions.open(session_id))


def _trash() -> Trash:
    return Trash(hearth().paths.trash)


@app.command("list")
def list_(
    session: Annotated[
        str | None,
        typer.Option(help="List this session's file history (overwritten versions) instead."),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """What is in the trash, newest first (or a session's file history)."""
    if session is not None:
        versions = _history(session).list()
        if json:
            print_json([v.as_dict() for v in versions])
        elif not versions:
            print("no earlier versions kept in this session")
        else:
            print_table(
                _columns(Column("n", cut="never", align="right"), Column("kept", cut="never")),
                [[v.n, short_time(v.time), short_size(v.size), v.original] for v in versions],
            )
        return
    items = _trash().list()
    if json:
        print_json([vars(i) for i in items])
    elif not items:
        print("the trash is empty")
    else:
        print_table(
            _columns(
                Column("id", cut="never", short=TRASH_ID_SHORT),
                Column("deleted", cut="never", drop=1),
            ),
            [[i.id, short_time(i.deleted_at), short_size(i.size), i.original] for i in items],
        )


@app.command()
def restore(
    item_id: Annotated[str, typer.Argument(metavar="ID")],
    overwrite: Annotated[
        bool, typer.Option(help="Replace what is there now (it is kept too).")
    ] = False,
    session: Annotated[
        str | None, typer.Option(help="Restore version ID from this session's file history.")
    ] = None,
) -> None:
    """Put a trashed file, folder or session back where it was (or an earlier file version)."""
    if session is not None:
        if not item_id.isdigit():
            raise UsageError(f"a file-history version is a number, not {item_id!r}")
        version = _history(session).restore(int(item_id), overwrite=overwrite)
        print(f"restored version {version.n} of {version.original}")
        return
    item = _trash().restore(_whole_id(item_id), overwrite=overwrite)
    print(f"restored {item.original}")


def _whole_id(given: str) -> str:
    """The trash id ``given`` starts, when it starts only one (a listing shows short ids)."""
    if len(given) < 4 or "/" in given:
        return given  # the trash itself refuses it, in its own words
    ids = [item.id for item in _trash().list()]
    matches = [i for i in ids if i.startswith(given)]
    if given in ids or not matches:
        return given
    if len(matches) > 1:
        raise UsageError(f"trash id prefix {given!r} is ambiguous")
    return matches[0]


@app.command()
def empty(
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
    older_than: Annotated[
        int | None,
        typer.Option(
            "--older-than",
            metavar="DAYS",
            min=0,
            help="Only items deleted more than DAYS days ago ([retention] trash_days does "
            "this daily).",
        ),
    ] = None,
) -> None:
    """Delete everything in the trash (or only its old items) for good."""
    what = "everything" if older_than is None else f"items deleted over {older_than} days ago"
    if not yes and not typer.confirm(f"Delete {what} in the trash for good?"):
        raise typer.Exit(1)
    cutoff = None if older_than is None else time.time() - older_than * DAY
    print(f"removed {_trash().empty(older_than=cutoff)} items")
