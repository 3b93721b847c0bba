"""Heading-aware chunking of a Markdown file into whole-line pieces for the index."""

from __future__ import annotations

import re
from dataclasses import dataclass

from workhearth.memory.entries import ID_RE, find_entries

# Why: a chunk is the unit BM25 ranks; a hit (≤ 700 characters) is the chunk grown
# by whole neighbouring lines, so a chunk well under a hit lets the hit sit around
# its match with context on both sides (measured on LoCoMo: bench/memory_quality.py).
CHUNK_CHARS = 450
PIECE_CHARS = 700  # a line longer than a hit is cut into pieces of this size
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass
class Chunk:
    line_start: int  # 1-based, inclusive
    line_end: int  # 1-based, inclusive
    heading: str
    text: str
    entry_id: str | None


def chunk_lines(lines: list[str], limit: int = CHUNK_CHARS) -> list[Chunk]:
    """Split a file into chunks of whole lines under ``limit`` characters.

    A heading starts a new chunk and is remembered for the chunks under it; an
    entry hearth wrote (a list item with an id) is kept whole in its own chunk; a
    line longer than ``limit`` is a chunk of its own, and one longer than
    ``PIECE_CHARS`` is cut into pieces. A chunk's text is exactly its lines
    ``line_start..line_end`` (empty lines at its edges are left out).
    """
    chunks: list[Chunk] = []
    entries = {span.start: span for span in find_entries(lines).values()}
    heading = ""
    buf: list[str] = []
    start = 0
    size = 0

    def flush() -> None:
        nonlocal buf, size
        filled = [k for k, x in enumerate(buf) if x]
        # Why: a heading alone says nothing; it is kept as the heading of what follows.
        if any(x.strip() for x in buf) and not all(_HEADING.match(x) for x in buf if x.strip()):
            first, last = filled[0], filled[-1]
            text = "\n".join(buf[first : last + 1])
            chunks.append(Chunk(start + first + 1, start + last + 1, heading, text, None))
        buf, size = [], 0

    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        m = _HEADING.match(line)
        if m:
            flush()
            heading = m.group(2).strip()
            start, buf, size = i, [line], len(line) + 1
            i += 1
            continue
        span = entries.get(i)
        if span is not None:
            # Why: the same reading of an entry as the bank's (memory/entries.py), so
            # an entry with blank or indented lines is one chunk with its id.
            flush()
            text = "\n".join(lines[span.start : span.end])
            chunks.append(Chunk(span.start + 1, span.end, heading, text, span.entry_id))
            start, i = span.end, span.end
            continue
        # Why: blank lines never make a chunk of their own, so that the lines between
        # two chunks of a section are always empty (a hit grown across them is exact).
        if size and size + len(line) + 1 > limit and any(x.strip() for x in buf):
            flush()
        if not buf:
            start = i
        if len(line) > PIECE_CHARS:
            # Why: one enormous line still has to be found; it becomes its own chunks.
            flush()
            for k in range(0, len(line), PIECE_CHARS):
                chunks.append(Chunk(i + 1, i + 1, heading, line[k : k + PIECE_CHARS], None))
            start = i + 1
            i += 1
            continue
        buf.append(line)
        size += len(line) + 1
        i += 1
    flush()
    return chunks


def chunk_tail(lines: list[str], restart: int) -> list[Chunk] | None:
    """The chunks ``chunk_lines(lines)`` makes after line ``restart`` (0-based), or None.

    ``restart`` is where an entry ended in an earlier version of the file whose
    lines up to there were the same (the entry was then a chunk of its own): after
    an entry the chunker starts afresh, so the lines after it are chunked alone,
    unless they could change how the lines before them read. That takes an
    indented id at their top, before any list item or other text (its item would
    be looked for above ``restart``), or an id the lines above already hold (the
    later of two equal ids is the entry): then None, and the caller chunks the
    whole file. Why: a save appends an entry to a file of hundreds; chunking
    only what follows the last entry keeps a save's cost from growing with the file.
    """
    tail = lines[restart:]
    for line in tail:
        if line.startswith("- ") or (line.strip() and not line.startswith("  ")):
            break
        if "^m-" in line:
            return None
    # Why every id, not only the chunks' ids: one entry can hide another's (an
    # indented id under an item makes a second entry starting on the same line).
    ids = [m.group(1) for line in tail if "^m-" in line and (m := ID_RE.search(line))]
    if ids:
        head = "\n".join(lines[:restart])
        if any(f"^{entry_id}" in head for entry_id in ids):
            return None
    chunks = chunk_lines(tail)
    for chunk in chunks:
        chunk.line_start += restart
        chunk.line_end += restart
    return chunks
