"""What a :class:`~workhearth.memory.index.MemoryIndex` reads from its folder.

A memory layer indexes every visible Markdown file whole. The same index serves
other folders of Markdown with their own rules (the Repowiki pages: some files
left out, their front matter not indexed), so those rules live in one value the
index is given rather than in branches inside it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from workhearth.memory.decode import text_lines
from workhearth.memory.files import HASH_STATE_FILE, markdown_files

FileLister = Callable[[Path], Iterable[tuple[str, os.stat_result]]]


@dataclass(frozen=True)
class Corpus:
    """Which files of a folder are indexed, which of their lines, and where the
    index remembers their hashes.

    ``lines`` must keep every line's position (a line left out reads as empty), so
    that a hit's line numbers are the file's own. ``analysis`` names what ``files``
    and ``lines`` do differently from a memory layer: it is part of the index's
    fingerprint, so an index built under other rules is rebuilt, never patched.
    """

    files: FileLister
    lines: Callable[[bytes], list[str]]
    state_file: str
    analysis: str = ""


# Why analysis "": a memory layer's fingerprint stays what it was before corpora
# existed, so no existing index is rebuilt for nothing.
MEMORY_LAYER = Corpus(files=markdown_files, lines=text_lines, state_file=HASH_STATE_FILE)
