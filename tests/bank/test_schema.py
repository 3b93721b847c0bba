"""Migrations on start, and the search indexes: made in one place, checked everywhere else."""

from __future__ import annotations

import threading

import pytest

from workhearth.bank.server import schema
from workhearth.bank.server.schema import (
    SEARCH_INDEXES,
    ensure_search_indexes,
    missing_search_indexes,
    prepare,
)
from workhearth.bank.server.store import PgBank, connect
from workhearth.errors import HearthError


def test_fresh_install_migrates_and_builds_every_index(pg_url: str) -> None:
    with connect(pg_url) as conn:
        assert prepare(conn) == [1]
        assert missing_search_indexes(conn) == []
        assert prepare(conn) == []  # a second start migrates nothing


def test_ensure_search_indexes_runs_twice(pg_url: str) -> None:
    with connect(pg_url) as conn:
        prepare(conn)
        conn.execute("DROP INDEX entries_content_trgm")
        ensure_search_indexes(conn)
        ensure_search_indexes(conn)
        assert missing_search_indexes(conn) == []


def test_ensure_search_indexes_runs_concurrently(pg_url: str) -> None:
    with connect(pg_url) as conn:
        prepare(conn)
        for name in SEARCH_INDEXES:
            conn.execute(f"DROP INDEX {name}")
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def build() -> None:
        try:
            with connect(pg_url) as conn:
                barrier.wait(timeout=30)
                ensure_search_indexes(conn)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    with connect(pg_url) as conn:
        assert missing_search_indexes(conn) == []


def test_two_servers_starting_together_migrate_once(pg_url: str) -> None:
    errors: list[BaseException] = []

    def start() -> None:
        try:
            PgBank(pg_url, max_size=1).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    with connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM hearth_schema").fetchall() == [(1,)]


@pytest.mark.parametrize("name", list(SEARCH_INDEXES))
def test_a_dropped_index_makes_start_up_fail_naming_it(pg_url: str, name: str) -> None:
    PgBank(pg_url).close()
    with connect(pg_url) as conn:
        conn.execute(f"DROP INDEX {name}")
    with pytest.raises(HearthError, match=f"missing its search index {name}"):
        PgBank(pg_url)
    with connect(pg_url) as conn:  # and it was not quietly re-created
        assert missing_search_indexes(conn) == [name]


def test_a_pending_migration_rebuilds_the_indexes(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    PgBank(pg_url).close()
    with connect(pg_url) as conn:
        conn.execute("DROP INDEX entries_content_words")

    def m002_rebuilds_words(cur) -> None:  # an upgrade that replaces an index
        cur.execute("DROP INDEX IF EXISTS entries_content_words")

    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, (2, m002_rebuilds_words)])
    PgBank(pg_url).close()
    with connect(pg_url) as conn:
        assert missing_search_indexes(conn) == []
        assert [v for (v,) in conn.execute("SELECT version FROM hearth_schema ORDER BY 1")] == [
            1,
            2,
        ]


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    PgBank(pg_url).close()
    with connect(pg_url) as conn:
        conn.execute("INSERT INTO hearth_schema (version) VALUES (99)")
    with pytest.raises(HearthError, match="schema version 99"):
        PgBank(pg_url)
