"""The Repowiki pages as a read-only source of the project's memory (issue 24).

``hearth wiki`` writes one Markdown page per module or document group into
``projects/<ws>/wiki/``; memory search and context injection find them by words
like any memory, at level ``low``, as ``wiki/<name>.md`` with the page file's own
line numbers. Memory never writes a page: it only reads them.

What is indexed: every ``*.md`` directly in the folder except ``*.update.md`` (an
update waiting for the user to merge it: the page itself says what is current)
and hidden files; of each page, the body only. The YAML front matter (between the
first two ``---`` lines) holds titles, dates and source hashes that would match
queries for nothing a reader wants, so its lines are read as empty: they are never
indexed, and the body keeps its line numbers.

Why a hidden index of its own inside ``wiki/`` (``.index.sqlite``,
``.hash-state.json``) rather than the pages in the project layer's index: that
index belongs to the layer's folder, and everything around it (entry meta,
orphan cleaning, eviction, the layer's capacity, the layer lock) is about
entries a person confirmed; none of it applies to pages ``hearth wiki`` rewrites
on its own. The same :class:`~workhearth.memory.index.MemoryIndex` (chunking,
incremental updates, search) serves both; a
:class:`~workhearth.memory.corpus.Corpus` says which files and lines. Deleting
``wiki/`` takes its index with it, and deleting the index loses nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from workhearth.memory.corpus import Corpus
from workhearth.memory.decode import text_lines
from workhearth.memory.index import MemoryIndex

WIKI: Literal["wiki"] = "wiki"
WIKI_LEVEL = "low"
PATH_PREFIX = "wiki/"  # a hit's path: wiki/<name>.md (relative to the project's folder)
UPDATE_SUFFIX = ".update.md"
STATE_FILE = ".hash-state.json"  # Why hidden: the wiki folder is the user's to read
FRONT_MATTER = "---"


def wiki_pages(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(file name, stat) of every page in ``folder``: visible ``*.md`` files directly
    in it, except ``*.update.md``. Nothing when the folder does not exist.

    Why not subfolders: a page's name is flat (``src-workhearth-memory``), and a hit
    names a file ``hearth wiki show`` can open.
    """
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if name.startswith(".") or not name.endswith(".md") or name.endswith(UPDATE_SUFFIX):
            continue
        try:
            if not entry.is_file(follow_symlinks=True):
                continue
            st = entry.stat()
        except OSError:
            continue
        yield name, st


def front_matter_lines(lines: list[str]) -> int:
    """How many lines the front matter takes, both ``---`` lines included; 0 when the
    page has none (its first line is not ``---``, or no second ``---`` closes it)."""
    if not lines or lines[0].lstrip("\ufeff").strip() != FRONT_MATTER:
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() == FRONT_MATTER:
            return i + 1
    return 0


def body_lines(data: bytes) -> list[str]:
    """A page's lines as the index reads them: the front matter's lines empty."""
    lines = text_lines(data)
    skip = front_matter_lines(lines)
    return [""] * skip + lines[skip:] if skip else lines


WIKI_PAGES = Corpus(
    files=wiki_pages,
    lines=body_lines,
    state_file=STATE_FILE,
    analysis="wiki pages: top-level *.md but *.update.md, front matter read as empty (1)",
)


class WikiSource:
    """The wiki folder's pages as memory reads them: an index, one level, shown paths."""

    layer: Literal["wiki"] = WIKI

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.index = MemoryIndex(folder, WIKI_PAGES)

    def exists(self) -> bool:
        """Whether there is a wiki at all (no folder: no index, no work)."""
        return os.path.isdir(self.folder)

    def level(self, entry_id: str | None) -> str:
        """Every page chunk is ``low``: a summary the model wrote, below what a person confirmed."""
        return WIKI_LEVEL

    def shown(self, rel: str) -> str:
        """A page's path as hits and context markers name it: ``wiki/<name>.md``."""
        return PATH_PREFIX + rel

    def close(self) -> None:
        self.index.close()
