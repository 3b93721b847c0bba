"""Team users: hashed tokens, and a removal that leaves nothing of theirs behind."""

from __future__ import annotations

import hashlib

import pytest

from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user, remove_user
from workhearth.errors import NotFoundError, UsageError

KEY = bytes(range(32))


def _rows_of_every_table(url: str) -> dict[str, list[str]]:
    """Every row of every table of the store, as text (the whole database, no guessing)."""
    with connect(url) as conn:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        ]
        return {t: [str(r[0]) for r in conn.execute(f"SELECT x::text FROM {t} x")] for t in tables}


def test_token_is_stored_hashed_and_finds_its_user(pg_url: str) -> None:
    with PgBank(pg_url) as bank, connect(pg_url) as conn:
        token = add_user(conn, "ann")
        assert bank.user_for_token(token) == "ann"
        assert bank.user_for_token(token + "x") is None
        assert bank.user_for_token("") is None
        stored = conn.execute("SELECT token_hash FROM users").fetchone()[0]
        assert bytes(stored) == hashlib.sha256(token.encode()).digest()
    assert all(token not in row for rows in _rows_of_every_table(pg_url).values() for row in rows)


def test_names_are_checked_and_unique(pg_url: str) -> None:
    with PgBank(pg_url), connect(pg_url) as conn:
        add_user(conn, "ann")
        with pytest.raises(UsageError, match="already exists"):
            add_user(conn, "ann")
        with pytest.raises(UsageError, match="team user name"):
            add_user(conn, "ann; drop table users")
        with pytest.raises(NotFoundError, match="no team user"):
            remove_user(conn, "carol")


@pytest.mark.parametrize("key", [None, KEY], ids=["plain", "encrypted"])
def test_removal_deletes_every_row_of_theirs_in_every_table(pg_url: str, key: bytes | None) -> None:
    with PgBank(pg_url, key=key) as bank, connect(pg_url) as conn:
        token = add_user(conn, "ann")
        add_user(conn, "bob")
        mine = []
        for i in range(3):
            mine.append(
                bank.save(
                    "ann",
                    f"annmarker{i} 记忆库 number {i}",
                    tags=["anntag"],
                    contexts=[{"snippet": f"annsnippet{i}", "session_id": "annsession"}],
                    idempotency_key=f"annkey{i}",
                )
            )
        bank.delete("ann", mine[0].id)  # deleted entries go too
        kept = bank.save("bob", "bob keeps 记忆", idempotency_key="bobkey")
        before = _rows_of_every_table(pg_url)
        assert all(before[t] for t in ("entries", "provenance", "entry_terms", "idempotency"))
        assert remove_user(conn, "ann") == 3
        assert bank.user_for_token(token) is None
        assert bank.list("ann") == ([], None)
        with pytest.raises(NotFoundError):
            bank.save("ann", "ghost")
    after = _rows_of_every_table(pg_url)
    leftovers = {
        t: [r for r in rows if any(s in r for s in ("ann", *(e.id for e in mine)))]
        for t, rows in after.items()
    }
    assert all(not rows for rows in leftovers.values()), leftovers
    with connect(pg_url) as conn:
        for table in ("entry_terms", "provenance", "idempotency"):
            rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            assert rows > 0 or table == "provenance", table  # bob's rows stay
    with PgBank(pg_url, key=key) as bank:
        assert bank.get("bob", kept.id).content == "bob keeps 记忆"
        assert [h.entry_id for h in bank.search("bob", "记忆")] == [kept.id]
