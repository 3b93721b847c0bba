"""The layer index (DESIGN §4 Index): incremental, rebuildable, migrated, self-healing."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

import workhearth.memory.index as index_mod
import workhearth.memory.schema as schema_mod
from workhearth.memory.files import HASH_STATE_FILE, INDEX_FILE
from workhearth.memory.index import MemoryIndex
from workhearth.memory.schema import FTS_TABLES, MIGRATIONS
from workhearth.memory.search import Searcher

NOTES = {
    "MEMORY.md": "# Memory\n\n- The user prefers tabs over spaces. ^m-23456789\n"
    "- 用户喜欢在晚上整理会话记忆。 ^m-3456789a\n",
    "daily/2024-05-01.md": "# 2024-05-01\n\n## Crash\n\n崩溃后可以恢复，记忆索引没有丢失。\n"
    "The tapir session crashed twice; recovery worked.\n",
    "projects/hearth.md": "# Hearth\n\n## Design\n\nSQLite FTS5 trigram index over Markdown notes.\n"
    "- 两个字的词 like 记忆 need bigrams.\n\n## Plans\n\nBenchmark the okapi corpus.\n",
    "people/ana.md": "# Ana\n\nAna reviews the index code. 她负责测试。\n",
}
QUERIES = ["tapir", "记忆", "崩溃恢复", "index", "okapi corpus", "SQLite 索引", "测试"]
OLD = time.time_ns() - 3600 * 10**9  # an hour ago: well outside the racy window


def write(folder: Path, rel: str, text: str, mtime_ns: int | None = OLD) -> Path:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    return path


@pytest.fixture
def layer(tmp_path: Path) -> Path:
    folder = tmp_path / "awareness"
    for i, (rel, text) in enumerate(NOTES.items()):
        write(folder, rel, text, OLD + i)
    return folder


@pytest.fixture
def index(layer: Path) -> Iterator[MemoryIndex]:
    ix = MemoryIndex(layer)
    yield ix
    ix.close()


def results(ix: MemoryIndex) -> list[list[tuple]]:
    searcher = Searcher(ix.db)
    return [
        [
            (h.path, h.line_start, h.line_end, h.text, h.score, h.entry_id)
            for h in searcher.search(q)
        ]
        for q in QUERIES
    ]


def state(folder: Path) -> dict:
    return orjson.loads((folder / HASH_STATE_FILE).read_bytes())


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the Markdown files read from now on."""
    seen: list[str] = []
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.suffix == ".md":
            seen.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    return seen


def ranges(ix: MemoryIndex) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for path, cid in ix.db.execute("SELECT path, id FROM chunks ORDER BY id"):
        out.setdefault(path, []).append(cid)
    return out


def check_fts(ix: MemoryIndex) -> None:
    """FTS5 agrees with itself (and fts_tri with chunks); the counts kept agree with the rows."""
    for table in index_mod.FTS_TABLES:
        ix.db.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")
    rows = ix.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    assert ix.db.execute("SELECT chunks FROM state").fetchone()[0] == rows
    assert ix.db.execute("SELECT coalesce(sum(chunks), 0) FROM files").fetchone()[0] == rows


# ------------------------------------------------------------- incremental
def test_first_update_indexes_every_file_and_records_its_state(
    layer: Path, index: MemoryIndex
) -> None:
    report = index.update()
    assert (report.files_seen, report.files_changed, report.files_removed) == (4, 4, 0)
    assert report.chunks == index.db.execute("SELECT count(*) FROM chunks").fetchone()[0] > 4
    saved = state(layer)
    assert saved["version"] == index_mod.STATE_VERSION
    assert saved["index"] == index.db.execute("SELECT generation FROM state").fetchone()[0]
    assert set(saved["files"]) == set(NOTES)
    for rel, (mtime_ns, size, digest) in saved["files"].items():
        st = (layer / rel).stat()
        assert (mtime_ns, size) == (st.st_mtime_ns, st.st_size)
        assert digest == index_mod.digest_of((layer / rel).read_bytes())
    assert all(results(index))
    check_fts(index)


def test_unchanged_files_are_not_read_again(
    layer: Path, index: MemoryIndex, reads: list[str]
) -> None:
    index.update()
    reads.clear()
    statements: list[str] = []
    index.db.set_trace_callback(statements.append)
    report = index.update()
    index.db.set_trace_callback(None)
    assert reads == []
    assert report.files_changed == 0
    assert report.chunks > 0
    # Why: the hash-state names this index's generation, so no file row is read.
    assert [s for s in statements if s not in ("BEGIN", "COMMIT")] == [
        "SELECT generation, chunks, fingerprint FROM state"
    ]


def test_only_hash_changed_files_are_chunked_again(
    layer: Path, index: MemoryIndex, reads: list[str]
) -> None:
    index.update()
    before = ranges(index)
    os.utime(layer / "people/ana.md", ns=(OLD + 99, OLD + 99))  # touched, same bytes
    write(layer, "daily/2024-05-01.md", NOTES["daily/2024-05-01.md"] + "A new okapi line.\n")
    reads.clear()
    report = index.update()
    assert sorted(reads) == ["2024-05-01.md", "ana.md"]  # stat changed: read and hashed
    assert report.files_changed == 1  # only the hash that changed is chunked again
    after = ranges(index)
    assert after["people/ana.md"] == before["people/ana.md"]
    assert after["MEMORY.md"] == before["MEMORY.md"]
    assert min(after["daily/2024-05-01.md"]) > max(max(ids) for ids in before.values())
    assert state(layer)["files"]["people/ana.md"][0] == OLD + 99
    hits = Searcher(index.db).search("okapi")
    assert {h.path for h in hits} >= {"daily/2024-05-01.md", "projects/hearth.md"}
    check_fts(index)


def test_a_files_chunks_have_consecutive_ids_in_line_order(layer: Path, index: MemoryIndex) -> None:
    index.update()
    write(layer, "MEMORY.md", NOTES["MEMORY.md"] + "- Another entry. ^m-456789ab\n")
    index.update()
    for path, first, count in index.db.execute("SELECT path, first_id, chunks FROM files"):
        rows = index.db.execute(
            "SELECT id, line_start FROM chunks WHERE path = ? ORDER BY id", (path,)
        ).fetchall()
        assert [r[0] for r in rows] == list(range(first, first + count))
        assert [r[1] for r in rows] == sorted(r[1] for r in rows)


def test_deleted_files_drop_out(layer: Path, index: MemoryIndex) -> None:
    index.update()
    (layer / "daily/2024-05-01.md").unlink()
    report = index.update()
    assert report.files_removed == 1
    assert "daily/2024-05-01.md" not in ranges(index)
    assert "daily/2024-05-01.md" not in state(layer)["files"]
    assert Searcher(index.db).search("tapir") == []
    assert all(h.path != "daily/2024-05-01.md" for h in Searcher(index.db).search("崩溃"))
    check_fts(index)


def test_incremental_updates_match_a_fresh_build(layer: Path, index: MemoryIndex) -> None:
    index.update()
    write(layer, "people/ana.md", "# Ana\n\nAna left the tapir team. 她不再负责测试。\n", OLD + 7)
    (layer / "projects/hearth.md").unlink()
    write(layer, "projects/new.md", "# New\n\n新的记忆索引 for the okapi corpus.\n", OLD + 8)
    index.update(only=["people/ana.md"])
    index.update()
    incremental = results(index)
    check_fts(index)
    index.close()
    for name in (INDEX_FILE, HASH_STATE_FILE):
        (layer / name).unlink()
    fresh = MemoryIndex(layer)
    fresh.update()
    assert results(fresh) == incremental
    fresh.close()


@pytest.mark.parametrize(
    "damage",
    [b"\x00garbage{", b'{"version": 2, "index": "x", "files": {"MEMORY.md": "oops"}}'],
)
def test_damaged_hash_state_costs_reads_not_chunking(
    layer: Path, index: MemoryIndex, reads: list[str], damage: bytes
) -> None:
    index.update()
    (layer / HASH_STATE_FILE).write_bytes(damage)
    reads.clear()
    report = index.update()
    assert len(reads) == 4  # every file is read and hashed again ...
    assert report.files_changed == 0  # ... but its chunks stay: the index has the hashes
    assert set(state(layer)["files"]) == set(NOTES)
    assert index.update().files_changed == 0


def test_a_recently_modified_file_is_hashed_again(layer: Path, index: MemoryIndex) -> None:
    now = time.time_ns()
    write(layer, "MEMORY.md", "# Memory\n\n- gnu facts\n", now)
    index.update()
    assert state(layer)["files"]["MEMORY.md"][3:] == [1]  # racy: not trusted yet
    # Why: an edit within the timestamp granularity keeps mtime and size.
    write(layer, "MEMORY.md", "# Memory\n\n- yak facts\n", now)
    assert index.update().files_changed == 1
    assert [h.path for h in Searcher(index.db).search("yak")] == ["MEMORY.md"]


def test_partial_update_after_losing_the_index_leaves_nothing_out(
    layer: Path, index: MemoryIndex
) -> None:
    index.update()
    index.close()
    (layer / INDEX_FILE).unlink()
    index.update(only=["MEMORY.md"])
    assert set(ranges(index)) == {"MEMORY.md"}
    assert state(layer)["index"] is None  # it does not describe the whole index
    index.update()
    assert set(ranges(index)) == set(NOTES)


def test_another_process_updating_meanwhile(layer: Path, index: MemoryIndex) -> None:
    index.update()
    other = MemoryIndex(layer)
    write(layer, "people/ana.md", "# Ana\n\nAna now writes the gnu docs.\n", OLD + 50)
    assert other.update().files_changed == 1
    other.close()
    assert index.update().files_changed == 0
    assert [h.path for h in Searcher(index.db).search("gnu")] == ["people/ana.md"]
    check_fts(index)


def test_big_builds_in_small_batches_match(
    layer: Path, index: MemoryIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.update()
    before = results(index)
    index.close()
    (layer / INDEX_FILE).unlink()
    # Why: a huge layer is read twice (bytes not kept), inserted in many batches,
    # then merged ('optimize') and its freed pages given back.
    monkeypatch.setattr(index_mod, "KEEP_BYTES", 0)
    monkeypatch.setattr(index_mod, "BATCH_CHUNKS", 1)
    monkeypatch.setattr(index_mod, "BIG_BUILD_CHUNKS", 1)
    again = MemoryIndex(layer)
    again.update()
    assert results(again) == before
    assert again.db.execute("PRAGMA freelist_count").fetchone()[0] == 0
    check_fts(again)
    again.close()


# ------------------------------------------------------------- rebuilding
@pytest.mark.parametrize("also_hash_state", [False, True])
def test_deleted_index_is_rebuilt_with_identical_results(
    layer: Path, index: MemoryIndex, also_hash_state: bool
) -> None:
    index.update()
    before = results(index)
    assert all(before)
    index.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{layer / INDEX_FILE}{suffix}").unlink(missing_ok=True)
    if also_hash_state:
        (layer / HASH_STATE_FILE).unlink()
    again = MemoryIndex(layer)
    report = again.update()
    assert report.files_changed == 4
    assert results(again) == before
    again.close()


def test_index_deleted_under_an_open_handle_is_rebuilt(layer: Path, index: MemoryIndex) -> None:
    index.update()
    before = results(index)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{layer / INDEX_FILE}{suffix}").unlink(missing_ok=True)
    assert index.update().files_changed == 4
    assert (layer / INDEX_FILE).exists()
    assert results(index) == before


def test_garbage_index_is_set_aside_and_rebuilt(layer: Path, index: MemoryIndex) -> None:
    index.update()
    before = results(index)
    index.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{layer / INDEX_FILE}{suffix}").unlink(missing_ok=True)
    garbage = b"not a database " * 300
    (layer / INDEX_FILE).write_bytes(garbage)
    again = MemoryIndex(layer)
    assert again.update().files_changed == 4
    assert results(again) == before
    assert (layer / f"{INDEX_FILE}{index_mod.DAMAGED_SUFFIX}").read_bytes() == garbage
    again.close()


def test_index_damaged_inside_is_rebuilt_during_update(layer: Path, index: MemoryIndex) -> None:
    index.update()
    before = results(index)
    index.close()
    path = layer / INDEX_FILE
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(page * 2, len(data), page):  # every page after the schema's
        data[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(data))
    write(layer, "people/ana.md", NOTES["people/ana.md"] + "More about gnus.\n")
    again = MemoryIndex(layer)
    again.update()  # the damage shows while writing: set aside, built again
    assert (layer / f"{INDEX_FILE}{index_mod.DAMAGED_SUFFIX}").exists()
    assert [h.path for h in Searcher(again.db).search("gnus")] == ["people/ana.md"]
    assert results(again)[0] == before[0]  # tapir: a file that did not change
    check_fts(again)
    again.close()


def test_index_from_a_newer_workhearth_is_set_aside(layer: Path, index: MemoryIndex) -> None:
    index.update()
    index.db.execute("INSERT INTO migrations VALUES (999, 'future', 0)")
    index.close()
    again = MemoryIndex(layer)
    assert again.update().files_changed == 4
    assert max(r[0] for r in again.db.execute("SELECT version FROM migrations")) == max(
        v for v, _, _ in MIGRATIONS
    )
    again.close()


def test_changed_text_analysis_rebuilds_the_index(layer: Path, index: MemoryIndex) -> None:
    index.update()
    before = results(index)
    index.db.execute("UPDATE state SET fingerprint = 'from another chunker'")
    report = index.update()
    assert report.files_changed == 4
    assert results(index) == before
    check_fts(index)


# ------------------------------------------------------------- migrations
def test_a_version_1_index_is_migrated(layer: Path) -> None:
    db = sqlite3.connect(layer / INDEX_FILE, isolation_level=None)
    db.execute("CREATE TABLE migrations(version INTEGER PRIMARY KEY, name TEXT, applied REAL)")
    schema_mod._m001_initial(db)
    db.execute("INSERT INTO migrations VALUES (1, 'initial', 0)")
    db.execute("INSERT INTO files VALUES ('MEMORY.md', 'stale', 0, 0)")
    db.execute(
        "INSERT INTO chunks(id, path, line_start, line_end, heading, text, entry_id, tokens)"
        " VALUES (1, 'MEMORY.md', 1, 1, '', 'a stale wombat chunk', NULL, 4)"
    )
    db.execute("INSERT INTO fts_tri(rowid, text) VALUES (1, 'a stale wombat chunk')")
    db.execute("INSERT INTO fts_word(rowid, text) VALUES (1, 'a stale wombat chunk')")
    db.close()
    (layer / HASH_STATE_FILE).write_bytes(
        orjson.dumps({"MEMORY.md": [OLD, len(NOTES["MEMORY.md"].encode()), "stale"]})
    )
    ix = MemoryIndex(layer)
    report = ix.update()
    assert [r[0] for r in ix.db.execute("SELECT version FROM migrations ORDER BY version")] == [
        1,
        2,
        3,
    ]
    assert report.files_changed == 4
    columns = {r[1] for r in ix.db.execute("PRAGMA table_info(chunks)")}
    assert "heading" not in columns
    assert Searcher(ix.db).search("wombat") == []
    assert Searcher(ix.db).search("tapir")
    assert state(layer)["version"] == index_mod.STATE_VERSION
    check_fts(ix)
    ix.close()


def test_migrations_are_atomic(layer: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done(x)")
        raise RuntimeError("power cut")

    known = [v for v, _, _ in schema_mod.MIGRATIONS]
    monkeypatch.setattr(
        schema_mod, "MIGRATIONS", [*schema_mod.MIGRATIONS, (max(known) + 1, "broken", broken)]
    )
    with pytest.raises(RuntimeError):
        index_mod.connect(layer)
    monkeypatch.undo()
    db = index_mod.connect(layer)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "half_done" not in tables
    assert {r[0] for r in db.execute("SELECT version FROM migrations")} == set(known)
    db.close()


# ------------------------------------------------------ patching the last file
def last_file(ix: MemoryIndex) -> str:
    return ix.db.execute("SELECT path FROM chunks ORDER BY id DESC LIMIT 1").fetchone()[0]


def test_appending_to_the_last_file_keeps_its_unchanged_chunks(
    layer: Path, index: MemoryIndex
) -> None:
    index.update()
    rel = last_file(index)
    before = ranges(index)
    statements: list[str] = []
    text = (layer / rel).read_text(encoding="utf-8")
    write(layer, rel, text + "\n- A tapir entry saved later. ^m-56789abc\n", OLD + 50)
    index.db.set_trace_callback(statements.append)
    index.update(only=[rel])
    index.db.set_trace_callback(None)
    after = ranges(index)
    # Why: a save appends to a long MEMORY.md; its earlier chunks must not be re-inserted.
    assert after[rel][: len(before[rel])] == before[rel]
    assert len(after[rel]) == len(before[rel]) + 1
    assert not any(s.startswith("DELETE FROM chunks") for s in statements)
    assert {p: ids for p, ids in after.items() if p != rel} == {
        p: ids for p, ids in before.items() if p != rel
    }
    assert any(h.entry_id == "m-56789abc" for h in Searcher(index.db).search("tapir entry"))
    check_fts(index)


def snapshot(ix: MemoryIndex, folder: Path) -> dict[str, object]:
    """Everything an index holds except its ids' values, and its hash-state's view of it."""
    files = {
        path: (digest, size, count)
        for path, digest, size, count in ix.db.execute("SELECT path, hash, size, chunks FROM files")
    }
    chunks: dict[str, list[tuple]] = {}
    for path, first, count in ix.db.execute("SELECT path, first_id, chunks FROM files"):
        rows = ix.db.execute(
            "SELECT id, line_start, line_end, text, entry_id, tokens FROM chunks"
            " WHERE path = ? ORDER BY id",
            (path,),
        ).fetchall()
        assert [r[0] for r in rows] == list(range(first, first + count))
        chunks[path] = [r[1:] for r in rows]
    saved = state(folder)
    assert saved["index"] == ix.db.execute("SELECT generation FROM state").fetchone()[0]
    assert {rel: entry[2] for rel, entry in saved["files"].items()} == {
        rel: row[0] for rel, row in files.items()
    }
    check_fts(ix)
    found = [
        sorted((h.path, h.line_start, h.line_end, h.text, round(h.score, 6), h.entry_id) for h in r)
        for r in [Searcher(ix.db).search(q) for q in [*QUERIES, "tapir entry", "okapi 7"]]
    ]
    return {"files": files, "chunks": chunks, "found": found}


def test_patched_index_matches_a_full_rebuild_after_random_changes(
    layer: Path, index: MemoryIndex, tmp_path: Path
) -> None:
    import random
    import shutil

    rng = random.Random(9)
    index.update()
    rels = [*NOTES, "daily/2024-05-02.md"]
    for step in range(80):
        # Why mostly MEMORY.md: saves append to it, so it is the file usually patched.
        rel = "MEMORY.md" if rng.random() < 0.5 else rng.choice(rels)
        path = layer / rel
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        action = rng.choice(["append", "append", "append", "edit", "delete", "heading", "drop"])
        if action == "append":
            word = rng.choice(["tapir", "okapi", "记忆", "index", "测试"])
            lines += [f"- {word} entry {step} saved. ^m-{step:08d}"]
        elif action == "edit" and lines:
            k = rng.randrange(len(lines))
            lines[k] = f"{lines[k]} okapi {step}"
        elif action == "delete" and lines:
            del lines[rng.randrange(len(lines))]
        elif action == "heading":
            lines += ["", f"## Part {step}", "", f"A long note {step} " * rng.randrange(1, 40)]
        elif action == "drop":
            path.unlink(missing_ok=True)
            lines = None
        if lines is not None:
            write(layer, rel, "\n".join(lines) + "\n", OLD + 100 + step)
        index.update(only=[rel] if rng.random() < 0.7 else None)
        if step % 10 == 9:
            fresh_folder = tmp_path / f"fresh{step}"
            shutil.copytree(
                layer, fresh_folder, ignore=shutil.ignore_patterns(".*", INDEX_FILE + "*")
            )
            fresh = MemoryIndex(fresh_folder)
            fresh.update()
            index.update()  # Why: only=[...] leaves the hash-state unclaimed; a full one names it
            assert snapshot(index, layer) == snapshot(fresh, fresh_folder)
            fresh.close()


# Pieces appended to MEMORY.md, chosen so that some change how lines written
# before them read: an indented id under the last entry (its item is looked for
# above), an id the file already holds (the later one is the entry), a heading,
# text after the last entry (it joins that text's chunk), control characters.
APPENDS = [
    "- A kinkajou entry. ^m-{n:08d}",
    "- A two-line entry\n  about a kinkajou. ^m-{n:08d}",
    "",
    "  an indented line under the last entry ^m-{n:08d}",
    "  an indented line without an id",
    "Plain text a user typed after the entries.",
    "## A new section",
    "- The first entry again. ^m-23456789",
    "- A repeat of an id written just before. ^m-{prev:08d}",
    "- An item a user wrote without an id",
    "A line with a vertical tab\x0b and a C1\x85 control.",
    "记忆 kinkajou " * 60,
]


def file_chunks(ix: MemoryIndex, rel: str) -> list[tuple]:
    return ix.db.execute(
        "SELECT line_start, line_end, text, entry_id FROM chunks WHERE path = ? ORDER BY id",
        (rel,),
    ).fetchall()


def test_appends_chunk_as_the_whole_file_would(layer: Path, index: MemoryIndex) -> None:
    import random

    from workhearth.memory.chunking import chunk_lines
    from workhearth.memory.decode import text_lines

    rng = random.Random(20)
    index.update()
    path = layer / "MEMORY.md"
    for step in range(150):
        pieces = [
            rng.choice(APPENDS).format(n=step * 10 + k, prev=step * 10 + k - 1)
            for k in range(rng.randrange(1, 4))
        ]
        with path.open("a", encoding="utf-8") as f:
            f.write("".join(piece + "\n" for piece in pieces))
        os.utime(path, ns=(OLD + 1000 + step, OLD + 1000 + step))
        index.update(only=["MEMORY.md"])
        whole = [
            (c.line_start, c.line_end, c.text, c.entry_id)
            for c in chunk_lines(text_lines(path.read_bytes()))
        ]
        assert file_chunks(index, "MEMORY.md") == whole, pieces
    check_fts(index)


def test_an_append_reads_only_the_chunks_after_the_last_entry(tmp_path: Path) -> None:
    folder = tmp_path / "awareness"
    entries = "".join(f"- Entry number {k} about tapirs. ^m-{k:08d}\n" for k in range(300))
    path = write(folder, "MEMORY.md", "# Memory\n\n" + entries)
    index = MemoryIndex(folder)
    index.update()
    statements: list[str] = []
    with path.open("a", encoding="utf-8") as f:
        f.write("- One more tapir entry. ^m-56789abc\n")
    os.utime(path, ns=(OLD + 60, OLD + 60))
    index.db.set_trace_callback(statements.append)
    index.update(only=["MEMORY.md"])
    index.db.set_trace_callback(None)
    read = [s for s in statements if s.startswith("SELECT line_start, line_end, text, entry_id")]
    # Why: a save must not read back (nor chunk) the hundreds of entries before it.
    assert read and all("BETWEEN 301 AND 300" in s for s in read), read
    assert file_chunks(index, "MEMORY.md")[-1] == (
        303,
        303,
        "- One more tapir entry. ^m-56789abc",
        "m-56789abc",
    )
    assert len(file_chunks(index, "MEMORY.md")) == 301
    index.close()


def test_saves_one_by_one_leave_few_fts_segments(tmp_path: Path) -> None:
    """Each small update adds a segment to every FTS5 table; the bounded merge after
    it folds them together, so a query reads each term from a few places, not ~15."""
    folder = tmp_path / "awareness"
    folder.mkdir()
    ix = MemoryIndex(folder)
    for i in range(200):
        with (folder / "MEMORY.md").open("a", encoding="utf-8") as f:
            f.write(f"- note {i} about the deploy pipeline number {i * 7}\n")
        ix.update()
    for table in FTS_TABLES:
        # _data holds the structure record, the averages and each segment's leaf pages:
        # FTS5's defaults left 15-17 rows here for this history.
        (rows,) = ix.db.execute(f"SELECT count(*) FROM {table}_data").fetchone()
        assert rows <= 8, table
    hits = Searcher(ix.db).search("pipeline number 1393", limit=3)
    assert hits and "note 199 " in hits[0].text
    ix.close()


def test_an_index_from_before_usermerge_is_migrated_in_place(
    layer: Path, index: MemoryIndex
) -> None:
    index.update()
    before = results(index)
    for table in FTS_TABLES:
        index.db.execute(f"DELETE FROM {table}_config WHERE k = 'usermerge'")
    index.db.execute("DELETE FROM migrations WHERE version = 3")
    index.close()
    again = MemoryIndex(layer)
    assert again.update().files_changed == 0  # kept, not rebuilt
    for table in FTS_TABLES:
        row = again.db.execute(f"SELECT v FROM {table}_config WHERE k = 'usermerge'").fetchone()
        assert row == (2,)
    assert results(again) == before
    again.close()


def test_term_counts_are_reused_until_the_index_changes(layer: Path, index: MemoryIndex) -> None:
    from workhearth.memory.search import TermStats

    index.update()
    stats = TermStats()
    Searcher(index.db, stats).search("tapir okapi")
    first = stats.generation
    assert first is not None and stats.docs["tapir"] == 1 and stats.docs["okapi"] == 1
    write(layer, "extra.md", "# Extra\n\nAnother tapir note.\n", None)
    index.update()
    hits = Searcher(index.db, stats).search("tapir")
    assert stats.generation != first and stats.docs["tapir"] == 2
    assert {h.path for h in hits} >= {"extra.md"}
