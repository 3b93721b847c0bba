"""``.index.sqlite``: a rebuildable full-text index over a layer's Markdown.

Tables: ``files`` (path, hash, mtime, size; no content), ``chunks`` (heading-aware
chunks of whole lines with their positions), ``fts_tri`` (FTS5 trigram, for CJK
and substrings), ``fts_word`` (FTS5 word tokenizer with stemming, for Latin
scripts) and ``fts_cjk`` (contentless FTS5 over CJK bigrams, for two-character
words the trigram index cannot find). Deleting the file loses nothing.

Indexing is incremental: only files whose mtime or size changed are read and
hashed (``hash-state.json`` remembers the rest), and only files whose hash
changed are chunked again.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from workhearth.errors import CorruptDataError
from workhearth.fsutil import atomic_write
from workhearth.memory.entries import entry_id_of
from workhearth.memory.files import HASH_STATE_FILE, INDEX_FILE, markdown_files
from workhearth.memory.text import cjk_grams
from workhearth.models.tokens import count_tokens

CHUNK_CHARS = 700
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass
class IndexReport:
    files_seen: int
    files_changed: int
    chunks: int
    files_removed: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "files_seen": self.files_seen,
            "files_changed": self.files_changed,
            "chunks": self.chunks,
            "files_removed": self.files_removed,
        }


@dataclass
class Chunk:
    line_start: int  # 1-based, inclusive
    line_end: int  # 1-based, inclusive
    heading: str
    text: str
    entry_id: str | None


# ------------------------------------------------------------------ migrations
def _m001_initial(db: sqlite3.Connection) -> None:
    db.executescript(
        """
        CREATE TABLE files(
            path TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL
        );
        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY, path TEXT NOT NULL, line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
            entry_id TEXT, tokens INTEGER NOT NULL
        );
        CREATE INDEX chunks_path ON chunks(path);
        CREATE INDEX chunks_entry ON chunks(entry_id) WHERE entry_id IS NOT NULL;
        CREATE VIRTUAL TABLE fts_tri USING fts5(
            text, content='chunks', content_rowid='id', tokenize='trigram', detail='none'
        );
        CREATE VIRTUAL TABLE fts_word USING fts5(
            text, content='chunks', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE fts_cjk USING fts5(grams, content='', tokenize='unicode61');
        CREATE VIRTUAL TABLE fts_word_vocab USING fts5vocab(fts_word, 'row');
        """
    )


MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None]]] = [
    (1, "initial", _m001_initial),
]


def migrate(db: sqlite3.Connection) -> None:
    """Apply every migration not yet recorded, in order (old indexes follow one path)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS migrations(version INTEGER PRIMARY KEY, name TEXT, applied REAL)"
    )
    done = {row[0] for row in db.execute("SELECT version FROM migrations")}
    for version, name, apply in MIGRATIONS:
        if version in done:
            continue
        with db:
            apply(db)
            db.execute("INSERT INTO migrations VALUES (?, ?, ?)", (version, name, time.time()))


def connect(folder: Path) -> sqlite3.Connection:
    path = folder / INDEX_FILE
    try:
        db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # a cache: losing the last commit costs a re-index
        migrate(db)
    except sqlite3.DatabaseError as exc:
        raise CorruptDataError(f"{path}: {exc}") from None
    return db


# -------------------------------------------------------------------- chunking
def chunk_lines(lines: list[str], limit: int = CHUNK_CHARS) -> list[Chunk]:
    """Split a file into chunks of whole lines under ``limit`` characters.

    A heading starts a new chunk and is remembered for the chunks under it; an
    entry hearth wrote (a list item with an id) is kept whole in its own chunk.
    """
    chunks: list[Chunk] = []
    heading = ""
    buf: list[str] = []
    start = 0
    size = 0

    def flush(end: int) -> None:
        nonlocal buf, size
        text = "\n".join(buf).strip("\n")
        # Why: a heading alone says nothing; it is kept as the heading of what follows.
        if text.strip() and not all(_HEADING.match(x) for x in buf if x.strip()):
            chunks.append(Chunk(start + 1, end, heading, text, None))
        buf, size = [], 0

    i = 0
    n = len(lines)
    while i < n:
        line = lines[i]
        m = _HEADING.match(line)
        if m:
            flush(i)
            heading = m.group(2).strip()
            start, buf, size = i, [line], len(line) + 1
            i += 1
            continue
        if line.startswith("- "):
            j = i + 1
            while (
                j < n
                and lines[j].startswith("  ")
                and lines[j].strip()
                and not entry_id_of(lines[j - 1])
            ):
                j += 1
            eid = entry_id_of(lines[j - 1])
            if eid:
                flush(i)
                text = "\n".join(lines[i:j])
                chunks.append(Chunk(i + 1, j, heading, text[: max(limit, len(text))], eid))
                start, i = j, j
                continue
        if size and size + len(line) + 1 > limit:
            flush(i)
            start = i
        if not buf:
            start = i
        if len(line) > limit:
            # Why: one enormous line still has to be found; it becomes its own chunks.
            flush(i)
            for k in range(0, len(line), limit):
                chunks.append(Chunk(i + 1, i + 1, heading, line[k : k + limit], None))
            start = i + 1
            i += 1
            continue
        buf.append(line)
        size += len(line) + 1
        i += 1
    flush(n)
    return chunks


# -------------------------------------------------------------------- indexing
def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class MemoryIndex:
    """The index of one layer folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._db: sqlite3.Connection | None = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._db = connect(self.folder)
        return self._db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _hash_state(self) -> dict[str, list]:
        try:
            data = orjson.loads((self.folder / HASH_STATE_FILE).read_bytes())
            return data if isinstance(data, dict) else {}
        except (OSError, orjson.JSONDecodeError):
            return {}

    def update(self, only: Iterable[str] | None = None) -> IndexReport:
        """Bring the index up to date with the Markdown files (``only``: just these paths)."""
        db = self.db
        state = self._hash_state()
        new_state: dict[str, list] = {}
        indexed = {row[0]: row[1] for row in db.execute("SELECT path, hash FROM files")}
        seen = 0
        changed: list[tuple[str, str, int, int, list[str]]] = []
        wanted = set(only) if only is not None else None
        on_disk: set[str] = set()
        for rel, st in markdown_files(self.folder):
            on_disk.add(rel)
            if wanted is not None and rel not in wanted:
                if rel in state:
                    new_state[rel] = state[rel]
                continue
            seen += 1
            cached = state.get(rel)
            if cached and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
                digest = cached[2]
                lines = None
            else:
                try:
                    data = (self.folder / rel).read_bytes()
                except OSError:
                    continue
                digest = _hash(data)
                lines = data.decode("utf-8", errors="replace").splitlines()
            new_state[rel] = [st.st_mtime_ns, st.st_size, digest]
            if indexed.get(rel) != digest:
                if lines is None:
                    lines = (
                        (self.folder / rel)
                        .read_bytes()
                        .decode("utf-8", errors="replace")
                        .splitlines()
                    )
                changed.append((rel, digest, st.st_mtime_ns, st.st_size, lines))
        removed = [p for p in indexed if p not in on_disk and (wanted is None or p in wanted)]
        n_chunks = 0
        if changed or removed:
            db.execute("BEGIN IMMEDIATE")
            try:
                for rel in removed:
                    self._drop_file(rel)
                for rel, digest, mtime, size, lines in changed:
                    self._drop_file(rel)
                    n_chunks += self._add_file(rel, lines)
                    db.execute(
                        "INSERT OR REPLACE INTO files(path, hash, mtime_ns, size) VALUES (?,?,?,?)",
                        (rel, digest, mtime, size),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        if new_state != state:
            atomic_write(self.folder / HASH_STATE_FILE, orjson.dumps(new_state))
        total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        return IndexReport(seen, len(changed), total, len(removed))

    def _drop_file(self, rel: str) -> None:
        db = self.db
        rows = db.execute("SELECT id, text FROM chunks WHERE path = ?", (rel,)).fetchall()
        for cid, text in rows:
            db.execute(
                "INSERT INTO fts_tri(fts_tri, rowid, text) VALUES('delete', ?, ?)", (cid, text)
            )
            db.execute(
                "INSERT INTO fts_word(fts_word, rowid, text) VALUES('delete', ?, ?)", (cid, text)
            )
            grams = cjk_grams(text)
            if grams:
                db.execute(
                    "INSERT INTO fts_cjk(fts_cjk, rowid, grams) VALUES('delete', ?, ?)",
                    (cid, grams),
                )
        db.execute("DELETE FROM chunks WHERE path = ?", (rel,))
        db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def _add_file(self, rel: str, lines: list[str]) -> int:
        db = self.db
        count = 0
        for chunk in chunk_lines(lines):
            cur = db.execute(
                "INSERT INTO chunks(path, line_start, line_end, heading, text, entry_id, tokens)"
                " VALUES (?,?,?,?,?,?,?)",
                (
                    rel,
                    chunk.line_start,
                    chunk.line_end,
                    chunk.heading,
                    chunk.text,
                    chunk.entry_id,
                    count_tokens(chunk.text),
                ),
            )
            cid = cur.lastrowid
            db.execute("INSERT INTO fts_tri(rowid, text) VALUES (?, ?)", (cid, chunk.text))
            db.execute("INSERT INTO fts_word(rowid, text) VALUES (?, ?)", (cid, chunk.text))
            grams = cjk_grams(chunk.text)
            if grams:
                db.execute("INSERT INTO fts_cjk(rowid, grams) VALUES (?, ?)", (cid, grams))
            count += 1
        return count
