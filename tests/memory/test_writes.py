"""Memory writes when the disk is in trouble (DESIGN §4): a full disk, and what a killed
writer leaves behind. The disk is a real small tmpfs mounted for the test (we run as
root); without the right to mount, these tests are skipped with the reason."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest

from tests.disks import fill_bytes, fill_inodes
from workhearth import Workhearth
from workhearth.errors import HearthError


def indexed_ids(folder: Path) -> set[str]:
    """Entry ids in the index file itself (read without writing anything)."""
    uri = f"file:{folder / '.index.sqlite'}?immutable=1"
    db = sqlite3.connect(uri, uri=True)
    try:
        return {r[0] for r in db.execute("SELECT entry_id FROM chunks WHERE entry_id IS NOT NULL")}
    finally:
        db.close()


def layer_state(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.startswith(".index")}


def test_save_on_a_full_disk_fails_clearly_and_leaves_no_half_entry(
    small_disk: Path, tmp_path: Path
) -> None:
    home, ws = small_disk / "home", tmp_path / "ws"
    wh = Workhearth(home=home, workspace=ws)
    first = wh.memory.save("the tapir sleeps in the afternoon")
    wh.memory.close()
    folder = wh.memory.folder("project")
    before = layer_state(folder)
    filler = fill_bytes(small_disk)

    wh = Workhearth(home=home, workspace=ws)
    with pytest.raises(HearthError, match=r"memory not saved: .*No space left on device"):
        wh.memory.save("a second fact that finds no room")
    assert layer_state(folder) == before  # no half entry, no meta for it, no temp file
    # Reading never needs to write: search and list work on the full disk.
    assert [h.entry_id for h in wh.memory.search("tapir")] == [first.id]
    assert [e.id for e in wh.memory.list()[0]] == [first.id]
    wh.memory.close()

    filler.unlink()
    wh = Workhearth(home=home, workspace=ws)
    second = wh.memory.save("a second fact with room now")
    assert [h.entry_id for h in wh.memory.search("second fact")] == [second.id]


def test_save_succeeds_when_only_the_index_cannot_be_written_and_index_catches_up(
    small_disk: Path, tmp_path: Path
) -> None:
    home, ws = small_disk / "home", tmp_path / "ws"
    wh = Workhearth(home=home, workspace=ws)
    wh.memory.save("the tapir sleeps in the afternoon")
    wh.memory.close()  # SQLite removes its -wal and -shm
    folder = wh.memory.folder("project")
    fillers = fill_inodes(small_disk)
    # Why one free inode: the meta's temporary file takes it and its rename frees the
    # old meta's; appending needs none; SQLite's -wal and -shm need two.
    fillers.pop().unlink()

    wh = Workhearth(home=home, workspace=ws)
    entry = wh.memory.save("the okapi eats leaves at dawn")
    assert f"^{entry.id}" in (folder / "MEMORY.md").read_text()
    assert entry.id in (folder / "memory_meta.json").read_text()
    assert entry.id not in indexed_ids(folder)  # the index file could not take it...
    assert [h.entry_id for h in wh.memory.search("okapi")] == [entry.id]  # ...reads still do
    wh.memory.close()

    for path in fillers:
        path.unlink()
    wh = Workhearth(home=home, workspace=ws)
    wh.memory.index()
    wh.memory.close()  # Why: indexed_ids reads the file alone, without its -wal
    assert entry.id in indexed_ids(folder)  # caught up at the next index
    assert [h.entry_id for h in wh.memory.search("okapi")] == [entry.id]


def test_stale_temp_files_of_killed_writers_are_cleaned_at_index(tmp_path: Path) -> None:
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    entry = wh.memory.save("the tapir sleeps in the afternoon")
    wh.memory.log_daily("a note for today", day="2024-05-01")
    folder = wh.memory.folder("project")
    stale = [
        folder / ".MEMORY.md.k2x9q1za.tmp",
        folder / ".memory_meta.json.a8d_3kq0.tmp",
        folder / ".hash-state.json.zz81mmq4.tmp",
        folder / "daily" / ".2024-05-01.md.p0p0p0p0.tmp",
    ]
    fresh = folder / ".MEMORY.md.justnow1.tmp"  # as if a saver were writing it right now
    unrelated = [folder / ".my-editor.tmp", folder / "notes.tmp"]
    old = time.time() - 120
    for path in stale:
        path.write_text("half a write")
        os.utime(path, (old, old))
    for path in [fresh, *unrelated]:
        path.write_text("keep me")
    for path in unrelated:
        os.utime(path, (old, old))

    wh.memory.index()
    assert [p for p in stale if p.exists()] == []
    assert fresh.exists() and all(p.exists() for p in unrelated)
    assert wh.memory.get(entry.id).content == "the tapir sleeps in the afternoon"
