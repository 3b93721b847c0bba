"""Issue #17 hole 11 (team part): after ``hearth team user remove NAME --purge`` the removed
user's text is gone from the database's data files, not only from its rows.

Without ``--purge`` the deleted rows stay in the files until PostgreSQL reuses the
space, and the same search finds them: that case proves the test can fail.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import orjson
import psycopg
import pytest

from tests.bank.pg_cluster import Server
from tests.bank.test_cli import hearth as _hearth
from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user


def _files_holding(server: Server, url: str, needle: bytes) -> list[str]:
    """The files of ``url``'s database (tables, indexes, TOAST) whose bytes hold ``needle``,
    after a checkpoint has written every page to them."""
    assert server.data is not None
    with psycopg.connect(server.url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
    with connect(url) as conn:
        row = conn.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
        assert row is not None
        folder = server.data / "base" / str(row[0])
        found = [p.name for p in folder.iterdir() if p.is_file() and needle in p.read_bytes()]
        # Why names: a failure then says which table or index kept the text.
        return sorted(
            f"{name} ({conn.execute('SELECT pg_filenode_relation(0, %s)::text', (int(name.split('.')[0].split('_')[0]),)).fetchone()[0]})"
            for name in found
        )


@pytest.mark.parametrize("purge", [True, False], ids=["purge", "no-purge"])
def test_remove_purge_leaves_no_text_of_theirs_in_the_data_files(
    tmp_path: Path, pg_server: Server, new_db: Callable[[], str], purge: bool
) -> None:
    if pg_server.data is None:
        pytest.skip("HEARTH_TEST_PG_DATA is not set: the data files cannot be read")
    url = new_db()
    marker = "annmark" + uuid.uuid4().hex[:10]
    with PgBank(url) as bank, connect(url) as conn:
        add_user(conn, "ann")
        add_user(conn, "bob")
        for i in range(20):
            bank.save(
                "ann",
                f"{marker} deploy notes number {i} 记忆库",
                tags=[f"{marker}tag"],
                contexts=[{"snippet": f"{marker} said in chat {i}", "origin": f"{marker}o"}],
                idempotency_key=f"{marker}key{i}",
            )
        kept = bank.save("bob", "bob keeps his note", tags=["bobtag"])
    with connect(url) as conn:
        # Why: as autovacuum would have by then; the statistics then hold samples of the text.
        conn.execute("ANALYZE")
    assert _files_holding(pg_server, url, marker.encode()), "the test sees no text at all"

    args = ["remove", "ann", "--store", url, "--json"]
    done = _hearth(tmp_path, *args, *(["--purge"] if purge else []))
    assert done.returncode == 0, done.stderr
    report = orjson.loads(done.stdout)
    assert report["name"] == "ann" and report["entries"] == 20
    leftovers = _files_holding(pg_server, url, marker.encode())
    if purge:
        assert set(report["purged"]) >= {"entries", "provenance", "entry_terms", "idempotency"}
        assert "locks" in done.stderr and "VACUUM FULL" in done.stderr, done.stderr
        assert leftovers == [], leftovers
    else:
        assert "purged" not in report and done.stderr == ""
        assert leftovers, "without --purge the deleted rows stay in the files"
    with PgBank(url) as bank:
        assert bank.get("bob", kept.id).content == "bob keeps his note"
        assert [h.entry_id for h in bank.search("bob", "keeps")] == [kept.id]


def test_purge_text_is_plain_and_json_is_one_object(tmp_path: Path, pg_url: str) -> None:
    PgBank(pg_url).close()
    with connect(pg_url) as conn:
        add_user(conn, "ann")
    done = _hearth(tmp_path, "remove", "ann", "--store", pg_url, "--purge")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "removed team user ann and their 0 memory entries"
    assert "purged" in done.stdout and "VACUUM FULL" in done.stderr
    missing = _hearth(tmp_path, "remove", "ann", "--store", pg_url, "--purge")
    assert missing.returncode != 0 and missing.stderr.strip() == "hearth: no team user 'ann'"


def test_purge_by_the_tables_owner_rewrites_them_and_names_what_it_cannot(
    tmp_path: Path, pg_server: Server
) -> None:
    """A role that owns the bank but is no superuser: the tables are rewritten, and the
    planner statistics it may not touch are named on stderr."""
    if pg_server.data is None:
        pytest.skip("HEARTH_TEST_PG_DATA is not set: the data files cannot be read")
    name = "hearth_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {name} LOGIN")
        conn.execute(f"CREATE DATABASE {name} OWNER {name}")
    url = pg_server.url_for(name).replace("postgres@", f"{name}@", 1)
    marker = "annmark" + uuid.uuid4().hex[:10]
    try:
        with PgBank(url) as bank, connect(url) as conn:
            add_user(conn, "ann")
            for i in range(5):
                bank.save("ann", f"{marker} owner-only note {i}")
        # A role that may read the bank but owns none of it is refused before anything goes.
        with psycopg.connect(pg_server.url_for(name), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE {name}_x LOGIN")
            conn.execute(f"GRANT ALL ON SCHEMA public TO {name}_x")
            conn.execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {name}_x")
        other = url.replace(f"{name}@", f"{name}_x@", 1)
        refused = _hearth(tmp_path, "remove", "ann", "--store", other, "--purge")
        assert refused.returncode != 0 and refused.stderr.strip().splitlines() == [
            "hearth: --purge needs the owner of the bank's tables or a superuser: "
            f"entries belongs to {name}; nothing was removed"
        ]
        done = _hearth(tmp_path, "remove", "ann", "--store", url, "--purge", "--json")
        assert done.returncode == 0, done.stderr
        assert "pg_statistic" not in orjson.loads(done.stdout)["purged"]
        warning = [line for line in done.stderr.splitlines() if "warning" in line]
        assert warning == [
            "hearth: warning: the planner statistics (pg_statistic) may keep samples of "
            "their text: a superuser can run VACUUM FULL pg_statistic in this database"
        ]
        leftovers = _files_holding(pg_server, url, marker.encode())
        assert [f for f in leftovers if "pg_statistic" not in f] == [], leftovers
    finally:
        with psycopg.connect(pg_server.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"DROP ROLE IF EXISTS {name}_x")
            conn.execute(f"DROP ROLE IF EXISTS {name}")


def test_rows_a_running_transaction_still_sees_are_reported_not_claimed_gone(
    pg_server: Server, pg_url: str
) -> None:
    """VACUUM FULL keeps deleted rows an open snapshot may see: the purge tries again,
    then names what stayed; once that transaction ends, a purge removes them."""
    from workhearth.bank.server.purge import purge
    from workhearth.bank.server.users import remove_user

    if pg_server.data is None:
        pytest.skip("HEARTH_TEST_PG_DATA is not set: the data files cannot be read")
    marker = "annmark" + uuid.uuid4().hex[:10]
    with PgBank(pg_url) as bank, connect(pg_url) as conn:
        add_user(conn, "ann")
        for i in range(5):
            bank.save("ann", f"{marker} note {i}")
    reader = psycopg.connect(pg_url)
    try:
        # A snapshot taken before the removal, on a table the purge does not lock.
        reader.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        reader.execute("SELECT count(*) FROM hearth_schema").fetchone()
        with connect(pg_url) as conn:
            remove_user(conn, "ann")
            held = purge(conn, wait=0.5)
        assert held.kept.get("entries", 0) >= 5, held
        assert _files_holding(pg_server, pg_url, marker.encode())
    finally:
        reader.close()
    with connect(pg_url) as conn:
        done = purge(conn, wait=5)
    assert done.kept == {} and done.statistics, done
    assert _files_holding(pg_server, pg_url, marker.encode()) == []
