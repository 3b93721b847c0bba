"""``hearth team user add|remove|list [NAME] --store postgresql://…`` (DESIGN §6)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table, short_time

app = HearthTyper(help="The team bank on a PostgreSQL server.", no_args_is_help=True)
user_app = HearthTyper(help="Team users and their tokens.", no_args_is_help=True)
app.add_typer(user_app, name="user")

StoreOpt = Annotated[
    str,
    typer.Option(
        "--store",
        metavar="postgresql://…",
        help="The team store's PostgreSQL URL.",
        show_default=False,
    ),
]
NameArg = Annotated[str, typer.Argument(metavar="NAME")]


def _connect(store: str):  # -> psycopg.Connection, migrated and checked
    # Why lazy: psycopg is the optional team extra, and costs every other command nothing.
    from workhearth.bank.server.schema import prepare
    from workhearth.bank.server.store import connect

    conn = connect(store)
    try:
        prepare(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@user_app.command()
def add(name: NameArg, store: StoreOpt, json: JsonOpt = False) -> None:
    """Create a user and print their token (shown this once; only its hash is kept)."""
    from workhearth.bank.server.users import add_user

    with _connect(store) as conn:
        token = add_user(conn, name)
    if json:
        print_json({"name": name, "token": token})
    else:
        print(f"added team user {name}; their token (shown once, keep it safe):")
        print(token)


PurgeOpt = Annotated[
    bool,
    typer.Option(
        "--purge",
        help="Also VACUUM FULL the affected tables, so the removed text leaves the data "
        "files; it locks each table while it rewrites it (the bank's requests wait).",
    ),
]


@user_app.command()
def remove(name: NameArg, store: StoreOpt, purge: PurgeOpt = False, json: JsonOpt = False) -> None:
    """Delete a user and everything stored of theirs, in one transaction."""
    from workhearth.bank.server.purge import check_purge
    from workhearth.bank.server.users import remove_user

    purged: list[str] | None = None
    kept: dict[str, int] = {}
    with _connect(store) as conn:
        if purge:
            check_purge(conn)
        entries = remove_user(conn, name)
        if purge:
            purged, kept = _purge(conn)
    if json:
        extra = {} if purged is None else {"purged": purged, "kept": kept}
        print_json({"name": name, "entries": entries, **extra})
        return
    print(f"removed team user {name} and their {entries} memory entries")
    if purged is not None:
        print(
            f"purged {', '.join(purged)}: their text is gone from the data files "
            "(WAL, replicas and backups keep it until they rotate)"
        )


def _purge(conn) -> tuple[list[str], dict[str, int]]:  # conn: psycopg.Connection
    """VACUUM FULL, its warnings on stderr; returns the tables rewritten and the rows kept."""
    from workhearth.bank.server.purge import PURGED_TABLES, STATISTICS, STATISTICS_KEPT, purge

    # Why on stderr: warnings about locks and leftovers; stdout stays the result.
    print(
        f"hearth: purging: VACUUM FULL locks {', '.join(PURGED_TABLES)} while it "
        "rewrites each of them; the team bank's requests wait",
        file=sys.stderr,
        flush=True,
    )
    report = purge(conn)
    if not report.statistics:
        print(f"hearth: warning: {STATISTICS_KEPT}", file=sys.stderr)
    for name, rows in report.kept.items():
        print(
            f"hearth: warning: {rows} deleted rows of {name} are still seen by a running "
            f"transaction and stay in the data files: run VACUUM FULL {name} once it ends",
            file=sys.stderr,
        )
    return report.rewritten + ([STATISTICS] if report.statistics else []), report.kept


@user_app.command("list")
def list_(store: StoreOpt, json: JsonOpt = False) -> None:
    """The team's users (never their tokens)."""
    from workhearth.bank.server.users import list_users

    with _connect(store) as conn:
        users = list_users(conn)
    if json:
        print_json(users)
    elif not users:
        print("no team users yet: hearth team user add NAME --store …")
    else:
        columns = [
            Column("name", main=True),
            Column("added", cut="never"),
            Column("entries", cut="never", align="right"),
        ]
        print_table(columns, [[u["name"], short_time(u["created"]), u["entries"]] for u in users])
