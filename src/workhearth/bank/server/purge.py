"""``hearth team user remove NAME --purge``: the removed text leaves the data files too.

A DELETE only marks rows dead; their bytes stay in the table and index files until
PostgreSQL happens to reuse the space. ``VACUUM FULL`` writes each table and its
indexes anew and drops the old files. What it cannot do, and what is said instead:

- it holds an exclusive lock on each table while it rewrites it (the bank's requests
  wait), and it needs the tables' owner or a superuser (:func:`check_purge` refuses
  before anything is removed, since PostgreSQL would skip a table with a mere warning);
- rows a running transaction may still see are kept: the rewrite is tried again for up
  to ``wait`` seconds, then the rows left are reported per table;
- the planner statistics sample the text, and ``ANALYZE`` keeps the old samples of a
  table left empty: a superuser role clears them and rewrites ``pg_statistic`` too;
- WAL, replicas and backups keep the text until they rotate.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import psycopg

from workhearth.errors import UsageError

# Every table a user's rows live in (users itself: their name and token hash).
PURGED_TABLES = ("entries", "provenance", "entry_terms", "idempotency", "users")
STATISTICS = "pg_statistic"
STATISTICS_KEPT = (
    "the planner statistics (pg_statistic) may keep samples of their text: "
    "a superuser can run VACUUM FULL pg_statistic in this database"
)
WAIT = 30.0  # seconds to retry a table whose deleted rows a transaction still sees
# Why English only: VACUUM VERBOSE's detail line; a server with other lc_messages
# reports nothing here and the purge then cannot tell (said in the README).
_NOT_YET = re.compile(r"(\d+) dead row versions cannot be removed yet")


@dataclass
class PurgeReport:
    rewritten: list[str] = field(default_factory=list)
    kept: dict[str, int] = field(default_factory=dict)  # table -> deleted rows still there
    statistics: bool = False  # pg_statistic cleared and rewritten too


def check_purge(conn: psycopg.Connection) -> None:
    """Refuse a purge this role cannot do, before anything is removed."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT t, pg_get_userbyid(c.relowner) "
            "FROM unnest(%s::text[]) WITH ORDINALITY u(t, n) "
            "JOIN pg_class c ON c.oid = t::regclass "
            "WHERE NOT pg_has_role(current_user, c.relowner, 'USAGE') "
            "AND NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) ORDER BY n",
            (list(PURGED_TABLES),),
        )
        foreign = cur.fetchall()
    if foreign:
        table, owner = foreign[0]
        raise UsageError(
            f"--purge needs the owner of the bank's tables or a superuser: {table} belongs "
            f"to {owner}; nothing was removed"
        )


def purge(conn: psycopg.Connection, wait: float = WAIT) -> PurgeReport:
    """Rewrite the bank's tables (``conn`` in autocommit mode: VACUUM runs outside a
    transaction); see the module's doc for what stays and how it is reported."""
    report = PurgeReport()
    # Why one table at a time: each lock is held only while its table is rewritten.
    for table in PURGED_TABLES:
        kept = _rewrite(conn, table, wait)
        report.rewritten.append(table)
        if kept:
            report.kept[table] = kept
    superuser = _is_superuser(conn)
    if superuser:
        _forget_statistics(conn)
    conn.execute(f"ANALYZE {', '.join(PURGED_TABLES)}")
    if superuser:
        kept = _rewrite(conn, STATISTICS, wait)
        report.statistics = True
        if kept:
            report.kept[STATISTICS] = kept
    return report


def _rewrite(conn: psycopg.Connection, table: str, wait: float) -> int:
    """VACUUM FULL ``table`` until no deleted row is left (or ``wait`` is spent);
    returns how many deleted rows a running transaction kept."""
    deadline = time.monotonic() + wait
    pause = 0.1
    while True:
        kept = _vacuum_full(conn, table)
        if not kept or time.monotonic() + pause > deadline:
            return kept
        time.sleep(pause)
        pause = min(pause * 2, 2.0)


def _vacuum_full(conn: psycopg.Connection, table: str) -> int:
    kept = 0

    def count(diag: psycopg.errors.Diagnostic) -> None:
        nonlocal kept
        found = _NOT_YET.search(diag.message_detail or "")
        if found:
            kept += int(found.group(1))

    conn.add_notice_handler(count)
    try:
        conn.execute(f"VACUUM (FULL, VERBOSE) {table}")
    finally:
        conn.remove_notice_handler(count)
    return kept


def _is_superuser(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
    return bool(row and row[0])


def _forget_statistics(conn: psycopg.Connection) -> None:
    """Drop the statistics of the bank's tables and indexes (``ANALYZE`` makes them anew)."""
    tables = list(PURGED_TABLES)
    conn.execute(
        "DELETE FROM pg_statistic WHERE starelid IN ("
        "SELECT t::regclass::oid FROM unnest(%s::text[]) t "
        "UNION SELECT indexrelid FROM pg_index "
        "WHERE indrelid IN (SELECT t::regclass::oid FROM unnest(%s::text[]) t))",
        (tables, tables),
    )
