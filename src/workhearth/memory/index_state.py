"""What decides whether an index is current: file digests, ``hash-state.json``, the analysis.

``hash-state.json`` maps each Markdown file to ``[mtime_ns, size, digest]`` (``[..., 1]``
when it was modified just before it was hashed) and names the index generation it
describes; :func:`fingerprint` digests the text analysis an index was built by.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import orjson

from workhearth.fsutil import atomic_write
from workhearth.memory.chunking import CHUNK_CHARS, chunk_lines
from workhearth.memory.decode import DECODER_VERSION
from workhearth.memory.files import HASH_STATE_FILE
from workhearth.memory.text import CJK_RUN, cjk_grams
from workhearth.models.tokens import count_tokens

STATE_VERSION = 2


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def latin_text(text: str) -> str:
    """What ``fts_word`` indexes: the text with its CJK runs blanked out."""
    return CJK_RUN.sub(" ", text)


@functools.cache
def fingerprint(analysis: str = "") -> str:
    """A digest of what decides the index contents: chunking, tokens and derived texts.

    Why: ``fts_word`` and ``fts_cjk`` are contentless, so removing a chunk must
    repeat exactly what was inserted; an index built by other text analysis (or
    another chunker) is emptied and rebuilt instead of being patched wrongly.
    ``analysis``: what a corpus does to files beyond a memory layer's reading
    (:class:`~workhearth.memory.corpus.Corpus`); empty for a memory layer.
    """
    probe = [
        "# Probe 记忆索引",
        "",
        "Crash recovery: 崩溃后可以恢复, café naïve don't 2024-05-01 `code_span` ｱｲ 한국어.",
        "- an entry hearth wrote ^m-23456789",
        "  " + "long line " * (CHUNK_CHARS // 5),
    ]
    chunks = chunk_lines(probe)
    text = "\n".join(probe)
    parts = [
        STATE_VERSION,
        DECODER_VERSION,
        [(c.line_start, c.line_end, c.text, c.entry_id) for c in chunks],
        [count_tokens(c.text) for c in chunks],
        cjk_grams(text),
        latin_text(text),
    ]
    if analysis:
        parts.append(analysis)
    return digest_of(orjson.dumps(parts))


# One file's record in ``hash-state.json``: [mtime_ns, size, digest] (see :func:`valid_entry`).
FileState = list[Any]


def load_state(
    folder: Path, name: str = HASH_STATE_FILE
) -> tuple[str | None, dict[str, FileState]]:
    """(generation it describes or None, path → [mtime_ns, size, digest(, racy)]);
    ``name``: the hash-state's file name in ``folder``."""
    try:
        data = orjson.loads((folder / name).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None, {}
    if not isinstance(data, dict):
        return None, {}
    if data.get("version") == STATE_VERSION and isinstance(data.get("files"), dict):
        gen = data.get("index")
        files = {k: v for k, v in data["files"].items() if valid_entry(v)}
        if len(files) != len(data["files"]):
            gen = None  # Why: damaged; it cannot stand in for the index's own records
        return (gen if isinstance(gen, str) else None), files
    # Why: the first format was a bare {path: [mtime_ns, size, digest]}.
    return None, {k: v for k, v in data.items() if valid_entry(v) and len(v) == 3}


def save_state(
    folder: Path,
    generation: str | None,
    files: dict[str, FileState],
    name: str = HASH_STATE_FILE,
) -> None:
    state = {"version": STATE_VERSION, "index": generation, "files": files}
    atomic_write(folder / name, orjson.dumps(state))


def valid_entry(entry: object) -> bool:
    """[mtime_ns, size, digest] or, for a file modified just before it was hashed, [..., 1]."""
    return (
        isinstance(entry, list)
        and len(entry) in (3, 4)
        and isinstance(entry[0], int)
        and isinstance(entry[1], int)
        and isinstance(entry[2], str)
    )
