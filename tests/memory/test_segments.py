"""A save writes a bounded amount of the index, however big the index is.

Each small update adds a segment to every FTS5 table and FTS5's bounded merge folds
them together (index.MERGE_PAGES, schema.FTS_USERMERGE). The index is in WAL mode,
so the frames one update appends to the WAL are the pages it wrote.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from workhearth.memory.index import MemoryIndex
from workhearth.memory.schema import FTS_TABLES
from workhearth.memory.search import Searcher

# FTS5 numbers the rows of ``<table>_data`` as segment id << 37 | height | page (0: not a segment).
SEGMENT_SHIFT = 37
OLD = time.time_ns() - 3600 * 10**9


def _segments(ix: MemoryIndex, table: str) -> int:
    rows = ix.db.execute(f"SELECT id FROM {table}_data").fetchall()
    return len({rowid >> SEGMENT_SHIFT for (rowid,) in rows} - {0})


def _save(folder: Path, ix: MemoryIndex, i: int) -> int:
    """Append an entry and index it; returns the pages the update wrote."""
    ix.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = folder / "MEMORY.md"
    with path.open("a", encoding="utf-8") as f:
        f.write(f"- note {i} about the deploy pipeline and the {i * 7} invoice ^m-{i:08d}\n")
    os.utime(path, ns=(OLD + i, OLD + i))
    ix.update(only=["MEMORY.md"])
    _busy, frames, _done = ix.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(frames)


def test_a_save_writes_a_few_pages_not_the_whole_index(tmp_path: Path) -> None:
    folder = tmp_path / "awareness"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(
        "# Memory\n\n"
        + "".join(
            f"- Seed fact {k}: the {k % 13} budget and the {k % 7} roadmap ^m-s{k:07d}\n"
            for k in range(3000)
        ),
        encoding="utf-8",
    )
    ix = MemoryIndex(folder)
    ix.update()
    pages = ix.db.execute("PRAGMA page_count").fetchone()[0]
    written = [_save(folder, ix, i) for i in range(40)]
    # Why the median: now and then a merge folds older segments together (bounded by
    # MERGE_PAGES); merging all of a small index into one segment after every save
    # (hearth's rule up to 20,000 chunks before) wrote ~130 pages each time here.
    assert statistics.median(written) <= 40, (written, pages)
    assert sum(written) < 40 * pages / 4, (written, pages)
    for table in FTS_TABLES:
        assert _segments(ix, table) <= 4, table
    hits = Searcher(ix.db).search("pipeline and the 273", limit=3)
    assert hits and "note 39 " in hits[0].text
    ix.close()
