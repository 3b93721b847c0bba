"""PgBank against a real PostgreSQL server: the bank rules of DESIGN §4, per caller."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from workhearth.bank.server.store import NOT_FOUND, PgBank, connect
from workhearth.bank.server.users import add_user
from workhearth.errors import NotFoundError, UsageError


@pytest.fixture
def bank(pg_url: str) -> Iterator[PgBank]:
    with PgBank(pg_url, max_size=4) as b, connect(pg_url) as conn:
        add_user(conn, "ann")
        add_user(conn, "bob")
        yield b


def test_save_get_list_edit_delete_restore(bank: PgBank) -> None:
    entry = bank.save(
        "ann",
        "The release train leaves on Thursdays",
        level="critical",
        tags=["release"],
        contexts=[{"snippet": "we ship thursdays", "session_id": "s1", "origin": "chat"}],
    )
    assert entry.id.startswith("m-") and entry.level == "critical" and entry.layer == "team"
    assert entry.provenance == [
        {"snippet": "we ship thursdays", "session_id": "s1", "message_id": None, "origin": "chat"}
    ]
    assert bank.get("ann", entry.id).content == "The release train leaves on Thursdays"
    edited = bank.edit("ann", entry.id, "The release train leaves on Fridays")
    assert edited.content.endswith("Fridays") and edited.updated >= entry.updated
    assert [h.entry_id for h in bank.search("ann", "fridays")] == [entry.id]
    assert bank.search("ann", "thursdays") == []
    bank.delete("ann", entry.id)
    with pytest.raises(NotFoundError):
        bank.get("ann", entry.id)
    assert bank.list("ann") == ([], None)
    assert bank.search("ann", "fridays") == []
    assert bank.restore("ann", entry.id).content.endswith("Fridays")
    with pytest.raises(UsageError, match="not deleted"):
        bank.restore("ann", entry.id)


def test_users_are_isolated_and_foreign_ids_leak_nothing(bank: PgBank) -> None:
    mine = bank.save("ann", "ann's secret recipe uses saffron")
    bank.save("bob", "bob likes saffron too")
    assert [e.content for e in bank.list("bob")[0]] == ["bob likes saffron too"]
    assert [h.text for h in bank.search("bob", "saffron")] == ["bob likes saffron too"]
    errors = []
    for call in (
        lambda: bank.get("bob", mine.id),
        lambda: bank.edit("bob", mine.id, "stolen"),
        lambda: bank.delete("bob", mine.id),
        lambda: bank.restore("bob", mine.id),
        lambda: bank.get("bob", "m-00000000"),
        lambda: bank.get("bob", "../../etc"),
    ):
        with pytest.raises(NotFoundError) as info:
            call()
        errors.append(str(info.value))
    assert set(errors) == {NOT_FOUND}
    assert bank.get("ann", mine.id).content == "ann's secret recipe uses saffron"


def test_list_pages_with_a_cursor_and_filters_by_tag(bank: PgBank) -> None:
    saved = [bank.save("ann", f"note number {i}", tags=["odd"] if i % 2 else []) for i in range(7)]
    seen, cursor = [], None
    while True:
        page, cursor = bank.list("ann", limit=3, cursor=cursor)
        seen += [e.id for e in page]
        if cursor is None:
            break
    assert seen == [e.id for e in reversed(saved)]
    assert [e.content for e in bank.list("ann", tag="ODD")[0]] == [
        "note number 5",
        "note number 3",
        "note number 1",
    ]
    with pytest.raises(UsageError, match="bad cursor"):
        bank.list("ann", cursor="!!!")


def test_same_idempotency_key_twice_saves_once(bank: PgBank) -> None:
    first = bank.save("ann", "queued while offline", idempotency_key="k-1")
    again = bank.save("ann", "queued while offline", idempotency_key="k-1")
    assert again.id == first.id and again.existed and not first.existed
    # Why: a resend after the user deleted the entry must not bring it back.
    bank.delete("ann", first.id)
    bank.save("ann", "queued while offline", idempotency_key="k-1")
    assert bank.list("ann")[0] == []
    # The same key of another user is another save.
    theirs = bank.save("bob", "queued while offline", idempotency_key="k-1")
    assert theirs.id != first.id and not theirs.existed
    assert [e.id for e in bank.list("bob")[0]] == [theirs.id]


def test_concurrent_saves_with_one_key_land_once(bank: PgBank) -> None:
    with ThreadPoolExecutor(4) as pool:
        ids = set(
            pool.map(
                lambda _: bank.save("ann", "sent four times", idempotency_key="k").id, range(8)
            )
        )
    assert len(ids) == 1
    assert len(bank.list("ann")[0]) == 1


def test_same_sentence_twice_is_one_entry(bank: PgBank) -> None:
    first = bank.save("ann", "tabs, never spaces")
    second = bank.save("ann", "  tabs, never spaces ")
    assert second.id == first.id and second.existed


def test_limits_and_secrets_are_the_local_banks(bank: PgBank) -> None:
    with pytest.raises(UsageError, match="limit is 8000"):
        bank.save("ann", "x" * 8001)
    with pytest.raises(UsageError, match="at most 32 tags"):
        bank.save("ann", "fine", tags=[f"t{i}" for i in range(33)])
    with pytest.raises(UsageError, match="refused"):
        bank.save("ann", "my key is sk-ant-api03-" + "a" * 90)
    with pytest.raises(UsageError, match="refused"):
        bank.save("ann", "fine", contexts=[{"snippet": "AKIAIOSFODNN7EXAMPLE is the key"}])
    masked = bank.save("ann", "my key is sk-ant-api03-" + "a" * 90, redact=True)
    assert "aaaaaaaa" not in masked.content
    with pytest.raises(UsageError, match="query is too long"):
        bank.search("ann", "q" * 513)
    with pytest.raises(UsageError, match="between 1 and 50"):
        bank.search("ann", "q", limit=51)
    with pytest.raises(UsageError, match="between 1 and 100"):
        bank.list("ann", limit=101)
    with pytest.raises(UsageError, match="scope"):
        bank.save("ann", "fine", scope="world")
    assert bank.list("ann")[0] == [masked]


def test_org_scope_is_stored_but_reads_stay_per_user(bank: PgBank, pg_url: str) -> None:
    entry = bank.save("ann", "org wide fact", scope="org", org="acme")
    with connect(pg_url) as conn:
        row = conn.execute("SELECT scope, org FROM entries WHERE id = %s", (entry.id,)).fetchone()
    assert row == ("org", "acme")
    assert bank.list("bob")[0] == [] and bank.search("bob", "org wide fact") == []


def test_unknown_owner_cannot_save(bank: PgBank) -> None:
    with pytest.raises(NotFoundError):
        bank.save("carol", "who am i")


def test_chinese_and_two_character_searches(bank: PgBank) -> None:
    a = bank.save("ann", "记忆库在崩溃后可以恢复")
    b = bank.save("ann", "今天学习了新的记忆方法")
    c = bank.save("ann", "数据库崩溃恢复流程")
    bank.save("bob", "记忆 属于 bob")
    assert {h.entry_id for h in bank.search("ann", "记忆")} == {a.id, b.id}
    hits = bank.search("ann", "崩溃恢复")
    # The whole phrase ranks first; the split one (崩溃后可以恢复) is still found.
    assert [h.entry_id for h in hits] == [c.id, a.id]
    assert hits[0].score == 1.0 and 0.1 <= hits[1].score < 1.0
    assert [h.entry_id for h in bank.search("ann", "学")] == [b.id]
    assert bank.search("ann", "不存在") == []


def test_latin_words_substrings_and_ranking(bank: PgBank) -> None:
    a = bank.save("ann", "Reindexing the bank rebuilds every trigram")
    b = bank.save("ann", "The index lives next to the Markdown files")
    bank.save("ann", "nothing relevant at all")
    hits = bank.search("ann", "index")
    assert [h.entry_id for h in hits] == [b.id, a.id]
    assert bank.search("ann", "C++") == []
    c = bank.save("ann", "we write C++ at work")
    assert [h.entry_id for h in bank.search("ann", "c++")] == [c.id]
    assert bank.search("ann", "   ") == []


def test_concurrent_banks_share_one_database(pg_url: str) -> None:
    with PgBank(pg_url) as one, PgBank(pg_url) as two, connect(pg_url) as conn:
        add_user(conn, "ann")
        saved = one.save("ann", "seen by the other server")
        assert two.get("ann", saved.id).content == "seen by the other server"


def test_bad_url_is_one_clear_error() -> None:
    from workhearth.errors import HearthError

    with pytest.raises(HearthError, match="cannot connect to the team store") as info:
        PgBank("postgresql://nobody:pw@127.0.0.1:1/none")
    assert "pw" not in str(info.value)
    with pytest.raises(UsageError, match="postgresql://"):
        PgBank("mysql://x")
    assert psycopg  # imported for the skip in conftest


def test_the_planners_statistics_are_refreshed_at_start_and_after_a_burst_of_saves(
    pg_url: str,
) -> None:
    """A keyed search planned on stale statistics took 1.4 s instead of 115 ms right
    after a bulk import (bench/team_crypto.py); the store refreshes them itself."""

    def analyzed() -> int:
        with connect(pg_url) as conn:
            row = conn.execute(
                "SELECT analyze_count FROM pg_stat_user_tables WHERE relname = 'entry_terms'"
            ).fetchone()
        return int(row[0]) if row else 0

    with PgBank(pg_url, max_size=2) as bank, connect(pg_url) as conn:
        add_user(conn, "ann")
        deadline = time.monotonic() + 10
        while analyzed() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        at_start = analyzed()
        assert at_start >= 1
        for n in range(PgBank.ANALYZE_EVERY - 1):
            bank.save("ann", f"bulk imported fact number {n}")
        assert analyzed() == at_start
        bank.save("ann", "one more fact")
        # Why a wait: a backend reports its statistics as it exits, a moment after.
        deadline = time.monotonic() + 10
        while analyzed() == at_start and time.monotonic() < deadline:
            time.sleep(0.05)
        assert analyzed() == at_start + 1
