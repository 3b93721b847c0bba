"""A small index stays in one FTS5 segment per table, save after save (index.ONE_SEGMENT_CHUNKS)."""

from __future__ import annotations

from pathlib import Path

import pytest

import workhearth.memory.index as index_mod
from workhearth.memory.index import MemoryIndex
from workhearth.memory.schema import FTS_TABLES
from workhearth.memory.search import Searcher

# FTS5 numbers the rows of ``<table>_data`` as segment id << 37 | height | page (0: not a segment).
SEGMENT_SHIFT = 37


def _segments(ix: MemoryIndex, table: str) -> int:
    rows = ix.db.execute(f"SELECT id FROM {table}_data").fetchall()
    return len({rowid >> SEGMENT_SHIFT for (rowid,) in rows} - {0})


def _saves(folder: Path, ix: MemoryIndex, count: int) -> None:
    for i in range(count):
        with (folder / "MEMORY.md").open("a", encoding="utf-8") as f:
            f.write(f"- note {i} about the deploy pipeline and the {i * 7} invoice\n")
        ix.update()


def test_saves_one_by_one_keep_a_small_index_in_one_segment(tmp_path: Path) -> None:
    folder = tmp_path / "awareness"
    folder.mkdir()
    ix = MemoryIndex(folder)
    _saves(folder, ix, 300)
    for table in FTS_TABLES:
        # Why at most 2: the last save's segment may still be on its way in.
        assert _segments(ix, table) <= 2, table
    hits = Searcher(ix.db).search("pipeline and the 2093", limit=3)
    assert hits and "note 299 " in hits[0].text
    ix.close()


def test_a_big_index_merges_only_by_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the threshold, rewriting the largest segment at every save is not worth it."""
    monkeypatch.setattr(index_mod, "ONE_SEGMENT_CHUNKS", 10)
    folder = tmp_path / "awareness"
    folder.mkdir()
    ix = MemoryIndex(folder)
    _saves(folder, ix, 300)
    assert max(_segments(ix, table) for table in FTS_TABLES) > 2
    ix.close()
