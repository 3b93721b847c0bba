"""The server keeps its memory objects between requests and still sees every change on disk."""

from __future__ import annotations

import os
import sqlite3
import threading
import time

import orjson
import pytest

from tests.server.conftest import Served
from workhearth.memory import schema


def _search(served: Served, q: str) -> list[dict]:
    r = served.api.get("/v1/memory/search", params={"q": q})
    assert r.status_code == 200, r.text
    return r.json()["results"]


def _memory_file(served: Served):
    return served.library().memory.folder("project") / "MEMORY.md"


def test_searches_reuse_one_memory_object(served: Served) -> None:
    served.api.post("/v1/memory", json={"content": "The invoice run is on Fridays"})
    seen = []
    for _ in range(3):
        assert _search(served, "invoice")
        seen.append(id(served.app.state.memories.loop_reader(served.workspace)))
    assert len(set(seen)) == 1 and seen[0] != id(None)


def test_an_editor_append_is_seen_by_the_next_search(served: Served) -> None:
    served.api.post("/v1/memory", json={"content": "The printer is on floor two"})
    assert _search(served, "zebra") == []
    with _memory_file(served).open("a", encoding="utf-8") as f:
        f.write("\nThe zebra crossing outside is repainted in May.\n")
    assert [h["text"] for h in _search(served, "zebra")]


def test_a_same_size_rewrite_at_the_same_mtime_is_seen(served: Served) -> None:
    """The racy case: size, inode and mtime all unchanged, the file looked at as it changed."""
    served.api.post("/v1/memory", json={"content": "The backup disk is labelled walrus"})
    path = _memory_file(served)
    # Why a time ahead of now: the last look happens "while the file changes", as
    # when an editor writes in the same clock tick that a request stats the file.
    ahead = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(ahead, ahead))
    assert _search(served, "walrus")
    data = path.read_bytes()
    path.write_bytes(data.replace(b"walrus", b"pelican"))
    os.utime(path, ns=(ahead, ahead))
    assert _search(served, "pelican")
    assert _search(served, "walrus") == []


def test_a_tag_added_to_the_meta_by_hand_is_seen_by_the_next_search(served: Served) -> None:
    entry = served.api.post("/v1/memory", json={"content": "Vendor contracts renew in March"})
    assert _search(served, "procurement") == []
    meta_path = _memory_file(served).parent / "memory_meta.json"
    meta = orjson.loads(meta_path.read_bytes())
    meta["entries"][entry.json()["id"]]["tags"] = ["procurement"]
    meta_path.write_bytes(orjson.dumps(meta))
    hits = _search(served, "procurement")
    assert [h["entry_id"] for h in hits] == [entry.json()["id"]]
    assert hits[0]["tags"] == ["procurement"]


def test_concurrent_saves_and_searches_lose_nothing(served: Served) -> None:
    ids: list[str] = []
    errors: list[str] = []

    def saver(n: int) -> None:
        for i in range(8):
            r = served.api.post("/v1/memory", json={"content": f"Fact {n}-{i}: desk {n * 100 + i}"})
            if r.status_code == 201:
                ids.append(r.json()["id"])
            else:
                errors.append(r.text)

    def searcher() -> None:
        for _ in range(20):
            r = served.api.get("/v1/memory/search", params={"q": "desk"})
            if r.status_code != 200:
                errors.append(r.text)

    threads = [threading.Thread(target=saver, args=(n,)) for n in range(6)]
    threads += [threading.Thread(target=searcher) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(set(ids)) == 48
    library = served.library().memory
    for entry_id in ids:
        assert library.get(entry_id).id == entry_id
    listed = served.api.get("/v1/memory", params={"limit": 100}).json()["entries"]
    assert {e["id"] for e in listed} == set(ids)


def test_the_running_server_keeps_what_it_built_out_of_collections(served: Served) -> None:
    """A full collection over the loaded modules stalled every thread ~50 ms under
    saves; the server freezes what exists once it is built, and lets go when it stops."""
    import gc

    assert gc.get_freeze_count() > 10_000
    r = served.api.post("/v1/memory", json={"content": "Collections stay short"})
    assert r.status_code == 201
    assert gc.get_freeze_count() > 10_000


def test_a_search_never_waits_for_a_save_holding_the_layer_lock(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Searches run on the event loop: one that waited on the layer lock would stall the
    whole server for as long as a save (say, ``hearth run`` in another process, on a
    slow disk) holds it."""
    import workhearth.memory.api as memory_api
    from workhearth.memory.meta import EntryMeta

    monkeypatch.setattr(memory_api, "REFRESH_SECONDS", 0.0)  # every read "due" a refresh
    served.api.post("/v1/memory", json={"content": "The invoice run is on Fridays"})
    assert _search(served, "invoice")
    store = served.library().memory.store("project")
    results: dict[str, object] = {}
    with store.locked():
        # Another process's save caught half-way: its meta written, its Markdown line not yet.
        store.meta.put("m-zzzzzzzz", EntryMeta())
        store.meta.save()
        searcher = threading.Thread(
            target=lambda: results.update(search=served.api.get("/v1/memory/search?q=invoice"))
        )
        searcher.start()
        searcher.join(timeout=10)
        answered = not searcher.is_alive()
    searcher.join(timeout=30)
    assert answered, "the search waited for the layer lock"
    assert results["search"].status_code == 200  # type: ignore[attr-defined]
    assert [h["text"] for h in results["search"].json()["results"]]  # type: ignore[attr-defined]


def _hold_index_lock(served: Served, seconds: float) -> threading.Thread:
    """Another connection takes the index's write lock, as an indexing process does."""
    index = served.library().memory.folder("project") / ".index.sqlite"
    assert index.exists()
    held = threading.Event()

    def hold() -> None:
        db = sqlite3.connect(index, isolation_level=None)
        db.execute("BEGIN IMMEDIATE")
        held.set()
        time.sleep(seconds)
        db.execute("COMMIT")
        db.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    return holder


def test_a_held_index_lock_is_waited_for_not_reported(served: Served) -> None:
    """Issue #20: another process writing the index (a `hearth memory index`, a second
    server) holds SQLite's write lock for a moment: a save and a search wait for it, as
    a reader should, and never answer "database is locked" (nor name the index file)."""
    served.api.post("/v1/memory", json={"content": "The walrus pen is cleaned on Mondays"})
    holder = _hold_index_lock(served, 1.5)
    try:
        saved = served.api.post("/v1/memory", json={"content": "The walrus eats at noon"})
        assert saved.status_code in (200, 201), saved.text
        assert len(_search(served, "walrus")) == 2
    finally:
        holder.join()
    assert "locked" not in saved.text and ".index.sqlite" not in saved.text


def test_a_lock_held_past_the_wait_is_a_503_in_words(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the busy timeout the answer is "busy, try again" (503, code busy), not a 400
    carrying SQLite's "database is locked" or the index's path."""
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_S", 0.2)  # a short wait, so the test is quick
    served.api.post("/v1/memory", json={"content": "The otter pen is cleaned on Tuesdays"})
    holder = _hold_index_lock(served, 2.0)
    try:
        saved = served.api.post("/v1/memory", json={"content": "The otter eats at noon"})
        r = served.api.get("/v1/memory/search", params={"q": "otter"})
    finally:
        holder.join()
    assert saved.status_code == 201, saved.text  # the save stands: the index is a cache
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["code"] == "busy" and "try again" in body["detail"]
    assert "locked" not in r.text and ".index.sqlite" not in r.text and "/" not in body["detail"]
    assert len(_search(served, "otter")) == 2  # and once the lock is gone, both are found
