"""``.index.sqlite``: a rebuildable full-text index over a layer's Markdown.

Tables: ``files`` (path, hash, mtime, size and the range of its chunk ids; no
content), ``chunks`` (heading-aware chunks of whole lines with their positions;
a file's chunks have consecutive ids), ``fts_tri`` (FTS5 trigram over the
chunk texts, for CJK and substrings), ``fts_word`` (contentless FTS5 with a word
tokenizer and stemming over the chunks' non-CJK text, for Latin scripts),
``fts_cjk`` (contentless FTS5 over CJK bigrams, for two-character words the
trigram index cannot find) and ``state`` (one row: the index generation, its
chunk count and a fingerprint of the text analysis that built it). Deleting the
file loses nothing; a damaged one is set aside and built again.

Indexing is incremental: only files whose mtime or size changed are read and
hashed (``hash-state.json`` remembers the rest), and only files whose hash
changed are chunked again. When ``hash-state.json`` names the generation of the
index it describes, an update that finds nothing changed reads one SQLite row.

Reading never needs to write: when the folder cannot be written (read-only
media, a full disk), the index is copied into memory and updated there; the file
catches up at the first update that can write again.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from workhearth.errors import CorruptDataError, HearthError
from workhearth.fsutil import file_lock, make_private_dir
from workhearth.memory.chunking import CHUNK_CHARS, Chunk, chunk_lines, chunk_tail
from workhearth.memory.corpus import MEMORY_LAYER, Corpus
from workhearth.memory.files import INDEX_FILE
from workhearth.memory.index_state import (  # noqa: F401  (STATE_VERSION, digest_of: API)
    STATE_VERSION,
    FileState,
    digest_of,
    fingerprint,
    latin_text,
    load_state,
    save_state,
)
from workhearth.memory.schema import (
    FTS_TABLES,
    busy_error,
    cannot_write,
    connect,
    connect_copy,
    is_busy,
    is_damage,
)
from workhearth.memory.search import Searcher, TermStats
from workhearth.memory.text import cjk_grams
from workhearth.models.tokens import count_tokens


@dataclass
class IndexReport:
    files_seen: int
    files_changed: int
    chunks: int
    files_removed: int = 0
    pruned: int = 0  # metadata of entries no file holds, dropped by ``index --prune``

    def add(self, other: IndexReport) -> None:
        """Count another index's update in this one (the layers' and the wiki's)."""
        self.files_seen += other.files_seen
        self.files_changed += other.files_changed
        self.chunks += other.chunks
        self.files_removed += other.files_removed

    def as_dict(self) -> dict[str, int]:
        return {
            "files_seen": self.files_seen,
            "files_changed": self.files_changed,
            "chunks": self.chunks,
            "files_removed": self.files_removed,
            "pruned": self.pruned,
        }


# -------------------------------------------------------------------- indexing
# Why: a file changed twice within the file system's timestamp granularity keeps
# its mtime and maybe its size; one modified this recently is hashed again next time.
RACY_NS = 2_000_000_000
# Why: the bytes read to hash changed files are kept for chunking up to this
# much; beyond it (a first build of a huge layer) they are read again.
KEEP_BYTES = 128 << 20
BATCH_CHUNKS = 5_000
# Why: after an update that adds this many chunks and at least half the index,
# each FTS5 table is merged into one segment ('optimize': 7-10 % smaller, for
# about 10 % more build time) and the pages freed on the way are given back.
BIG_BUILD_CHUNKS = 5_000
# Why: after any other update, FTS5 merges at most about this many pages of
# segments ('merge'), so a save costs the same at 500 entries as at 100k while
# the segments its predecessors left are folded together (schema.FTS_USERMERGE):
# two or three segments per table stay. Merging a small index into one segment
# after every save instead (as hearth did up to 20,000 chunks) rewrote all of it
# each time: at 700 entries a save cost ~5 ms more CPU (a third of it) to make a
# search ~2 % cheaper (bench/README.md, server_load).
MERGE_PAGES = 64
DAMAGED_SUFFIX = ".corrupt"  # the one damaged index kept aside, for a bug report
# Why: an index served from memory tries its file again this often (a disk was freed).
RETRY_WRITE_SECONDS = 30.0


@dataclass
class _Changed:
    rel: str
    digest: str
    mtime_ns: int
    size: int
    data: bytes | None  # None: read it again when indexing


@dataclass
class _Plan:
    generation: str  # of the index the plan was made against
    chunks: int
    reset: bool  # the index was built by other text analysis: empty it first
    files: dict[str, FileState]  # the next hash-state
    changed: list[_Changed] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    seen: int = 0
    complete: bool = True  # every file was read: the hash-state may name the generation
    big: bool = False

    @property
    def writes(self) -> bool:
        return self.reset or bool(self.changed or self.removed)


class MemoryIndex:
    """The index of one layer folder (``corpus``: of another folder of Markdown, by its rules)."""

    def __init__(self, folder: Path, corpus: Corpus = MEMORY_LAYER) -> None:
        self.folder = folder
        self.corpus = corpus
        self._fingerprint = fingerprint(corpus.analysis)
        self._db: sqlite3.Connection | None = None
        self._inode: int | None = None
        # Why the file could not be written, while an in-memory copy stands in for it.
        self.unwritable: str | None = None
        self._retry_at = 0.0
        self._term_stats = TermStats()

    @property
    def path(self) -> Path:
        return self.folder / INDEX_FILE

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            before = _inode(self.path)
            if self.unwritable is not None and time.monotonic() < self._retry_at:
                self._db = connect_copy(self.folder)
            else:
                try:
                    self._db = self._connect_file(before)
                    self.unwritable = None
                except (HearthError, sqlite3.Error, OSError) as exc:
                    if not cannot_write(exc):
                        raise
                    self._go_memory(exc)
                    self._db = connect_copy(self.folder)
            self._inode = before if self.unwritable is not None else _inode(self.path)
        return self._db

    def _connect_file(self, before: int | None) -> sqlite3.Connection:
        make_private_dir(self.folder)
        try:
            return connect(self.folder)
        except CorruptDataError:
            # Why: the index is a cache of the Markdown: set it aside, build anew.
            self._set_aside(before)
            return connect(self.folder)

    def _go_memory(self, exc: BaseException) -> None:
        self.close()
        self.unwritable = str(exc) or type(exc).__name__
        self._retry_at = time.monotonic() + RETRY_WRITE_SECONDS

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _set_aside(self, inode: int | None) -> None:
        """Move a damaged index (and its WAL) aside, unless another process already did."""
        with file_lock(self.folder / f"{INDEX_FILE}.lock"):
            if inode is None or _inode(self.path) != inode:
                return  # gone, or already replaced by a fresh index
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{self.path}{suffix}", f"{self.path}{DAMAGED_SUFFIX}{suffix}")

    # -------------------------------------------------------------- queries
    # Why here: the schema is this module's (and schema.py's) business; the bank,
    # eviction and context read the index through these methods, not through SQL.
    def entry_ids(self) -> set[str]:
        """Ids of the entries the indexed Markdown holds."""
        return {
            row[0]
            for row in self.db.execute("SELECT entry_id FROM chunks WHERE entry_id IS NOT NULL")
        }

    def entry_path(self, entry_id: str) -> str | None:
        """The file an entry is indexed in, if it is."""
        row = self.db.execute(
            "SELECT path FROM chunks WHERE entry_id = ? LIMIT 1", (entry_id,)
        ).fetchone()
        return row[0] if row else None

    def entry_chunk(self, entry_id: str) -> tuple[str, int, int, str] | None:
        """(path, line_start, line_end, text) of an entry's first chunk."""
        row = self.db.execute(
            "SELECT path, line_start, line_end, text FROM chunks WHERE entry_id = ? LIMIT 1",
            (entry_id,),
        ).fetchone()
        return (row[0], row[1], row[2], row[3]) if row else None

    def entry_tokens(self) -> list[tuple[str, int]]:
        """(entry id, its tokens) of every indexed entry."""
        return self.db.execute(
            "SELECT entry_id, sum(tokens) FROM chunks WHERE entry_id IS NOT NULL GROUP BY entry_id"
        ).fetchall()

    def entry_starts(self) -> list[tuple[str, str, int]]:
        """(entry id, path, first line) of every indexed entry."""
        return self.db.execute(
            "SELECT entry_id, path, min(line_start) FROM chunks"
            " WHERE entry_id IS NOT NULL GROUP BY entry_id"
        ).fetchall()

    def chunks(self) -> list[tuple[int, str, int, str, str | None, int]]:
        """(id, path, line_start, text, entry_id, tokens) of every chunk."""
        return self.db.execute(
            "SELECT id, path, line_start, text, entry_id, tokens FROM chunks"
        ).fetchall()

    def total_tokens(self) -> int:
        return int(self.db.execute("SELECT coalesce(sum(tokens), 0) FROM chunks").fetchone()[0])

    def counts(self) -> tuple[int, int]:
        """(files, chunks) indexed."""
        files = self.db.execute("SELECT count(*) FROM files").fetchone()[0]
        return int(files), int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])

    def searcher(self) -> Searcher:
        """The full-text search over this index (its queries live in :mod:`.search`)."""
        return Searcher(self.db, self._term_stats)

    # -------------------------------------------------------------- update
    def update(self, only: Iterable[str] | None = None) -> IndexReport:
        """Bring the index up to date with the Markdown files (``only``: just these paths)."""
        wanted = set(only) if only is not None else None
        if self._db is not None and (
            _inode(self.path) != self._inode
            or (self.unwritable is not None and time.monotonic() >= self._retry_at)
        ):
            # Why: deleted, or set aside by another process: our handle is on an orphan
            # (or, for a copy in memory, it is time to try writing the file again).
            self.close()
        try:
            return self._update_file(wanted)
        except (HearthError, sqlite3.Error, OSError) as exc:
            if self.unwritable is not None or not cannot_write(exc):
                raise
            # Why: a full or read-only disk must not stop a search or a save: the
            # Markdown is the truth, the file catches up at the next update that can write.
            self._go_memory(exc)
        return self._update(wanted)

    def _update_file(self, wanted: set[str] | None) -> IndexReport:
        try:
            return self._update(wanted)
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
        self.close()
        self._set_aside(self._inode)
        try:
            return self._update(wanted)
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise CorruptDataError(f"{self.path}: {exc}", path=str(self.path)) from None
            if is_busy(exc):
                raise busy_error() from exc
            raise

    def _update(self, wanted: set[str] | None) -> IndexReport:
        db = self.db
        old_gen, old_files = load_state(self.folder, self.corpus.state_file)
        plan = self._plan(wanted, old_gen, old_files)
        generation = plan.generation
        if plan.writes:
            db.execute("BEGIN IMMEDIATE")
            try:
                current = db.execute("SELECT generation FROM state").fetchone()[0]
                if current != plan.generation:
                    # Why: another process wrote since we looked; decide again under the lock.
                    plan = self._plan(wanted, old_gen, old_files)
                generation = self._apply(plan)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            free = db.execute("PRAGMA freelist_count").fetchone()[0]
            if plan.big or free * 4 > pages:
                # Why: one step frees one page; sqlite3_exec (executescript) runs it to the end.
                db.executescript("PRAGMA incremental_vacuum;")
        claim = generation if plan.complete else None
        if self.unwritable is None and (claim != old_gen or plan.files != old_files):
            save_state(self.folder, claim, plan.files, self.corpus.state_file)
        return IndexReport(plan.seen, len(plan.changed), plan.chunks, len(plan.removed))

    def _plan(
        self, wanted: set[str] | None, old_gen: str | None, old: dict[str, FileState]
    ) -> _Plan:
        """Stat every file, hash those whose stat changed, and list what to re-index."""
        walk_ns = time.time_ns()
        plan, indexed, trusted = self._indexed(old_gen, old)
        on_disk = self._walk(plan, wanted, old, indexed, walk_ns)
        plan.removed = [p for p in indexed if p not in on_disk and (wanted is None or p in wanted)]
        if wanted is not None:
            # Why: a file gone from disk but not asked about stays indexed, so it stays listed.
            for rel, entry in old.items():
                if rel not in on_disk and rel not in wanted:
                    plan.files[rel] = entry
        # Why: the next hash-state may name the new generation only if it describes the
        # whole index: every file was read, and files not asked about were described by
        # a hash-state that named the generation this update started from.
        plan.complete = plan.complete and (wanted is None or trusted)
        return plan

    def _indexed(
        self, old_gen: str | None, old: dict[str, FileState]
    ) -> tuple[_Plan, dict[str, str], bool]:
        """An empty plan against the index as it is, the digest of each file it holds,
        and whether the hash-state ``old`` was written for exactly this index."""
        db = self.db
        # Why: one read transaction, so the generation and the file hashes agree.
        outer = db.in_transaction
        if not outer:
            db.execute("BEGIN")
        try:
            gen, total, fp = db.execute(
                "SELECT generation, chunks, fingerprint FROM state"
            ).fetchone()
            plan = _Plan(gen, total, fp != self._fingerprint, {})
            trusted = not plan.reset and old_gen == gen
            if plan.reset:
                indexed: dict[str, str] = {}
            elif trusted:
                # Why: this hash-state was written for exactly this index: its digests
                # are the indexed ones, so no row of ``files`` needs reading.
                indexed = {rel: entry[2] for rel, entry in old.items()}
            else:
                indexed = dict(db.execute("SELECT path, hash FROM files"))
        finally:
            if not outer:
                db.execute("COMMIT")
        return plan, indexed, trusted

    def _walk(
        self,
        plan: _Plan,
        wanted: set[str] | None,
        old: dict[str, FileState],
        indexed: dict[str, str],
        walk_ns: int,
    ) -> set[str]:
        """Fill the plan's next hash-state and changed files from the Markdown on disk
        (only ``wanted`` ones looked at); returns every file found."""
        kept = 0
        on_disk: set[str] = set()
        for rel, st in self.corpus.files(self.folder):
            on_disk.add(rel)
            cached = old.get(rel)
            if wanted is not None and rel not in wanted:
                if cached:
                    plan.files[rel] = cached
                continue
            plan.seen += 1
            looked = self._look(rel, st, cached)
            if looked is None:
                plan.complete = False
                continue
            digest, data = looked
            entry = [st.st_mtime_ns, st.st_size, digest]
            if st.st_mtime_ns >= walk_ns - RACY_NS:
                entry.append(1)
            plan.files[rel] = entry
            if indexed.get(rel) != digest:
                if data is not None and kept + len(data) > KEEP_BYTES:
                    data = None
                kept += len(data or b"")
                plan.changed.append(_Changed(rel, digest, st.st_mtime_ns, st.st_size, data))
        return on_disk

    def _look(
        self, rel: str, st: os.stat_result, cached: FileState | None
    ) -> tuple[str, bytes | None] | None:
        """(digest, the bytes read or None) of a file; None when it cannot be read.

        The digest comes from the hash-state when the file's stat did not change
        (and it was not racy then: a fourth element marks that).
        """
        if cached and len(cached) == 3 and cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
            return cached[2], None
        try:
            data = (self.folder / rel).read_bytes()
        except OSError:
            return None
        return digest_of(data), data

    def _apply(self, plan: _Plan) -> str:
        """Write the plan inside the caller's transaction; returns the new generation."""
        db = self.db
        if plan.reset:
            for table in FTS_TABLES:
                db.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
            db.execute("DELETE FROM chunks")
            db.execute("DELETE FROM files")
            total = 0
            fresh = plan.changed
        else:
            tail = self._tail(plan.changed)
            fresh = [c for c in plan.changed if c is not tail]
            total = plan.chunks - self._drop(plan.removed + [c.rel for c in fresh])
            if tail is not None:
                total += self._patch_tail(tail)
        added = self._add(fresh)
        total += added
        for item in plan.changed:
            if item.rel in plan.files:
                plan.files[item.rel][2] = item.digest  # what was indexed, if it was read again
        plan.big = added >= BIG_BUILD_CHUNKS and added * 2 >= total
        for table in FTS_TABLES:
            if plan.big:
                db.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
            else:
                db.execute(
                    f"INSERT INTO {table}({table}, rank) VALUES ('merge', ?)", (MERGE_PAGES,)
                )
        generation = secrets.token_hex(8)
        db.execute(
            "UPDATE state SET generation = ?, chunks = ?, fingerprint = ?",
            (generation, total, self._fingerprint),
        )
        plan.chunks = total
        return generation

    def _tail(self, changed: list[_Changed]) -> _Changed | None:
        """The changed file whose chunks end the id space, if any: it can be patched in place."""
        if not changed:
            return None
        row = self.db.execute(
            "SELECT path FROM files WHERE chunks > 0"
            " AND first_id + chunks - 1 = (SELECT max(id) FROM chunks)"
        ).fetchone()
        return next((c for c in changed if row and c.rel == row[0]), None)

    def _patch_tail(self, item: _Changed) -> int:
        """Re-chunk the last file but keep its leading chunks that did not change.

        Why: a save appends to a file that is usually the last one indexed
        (``MEMORY.md``); replacing only its changed tail costs a few rows instead
        of the whole file's. When the file grew by an append (its old bytes are
        its start), only the lines after its last entry are chunked again
        (:func:`chunk_tail`). The result is what :meth:`_add` would make: the
        file's chunks are ``chunk_lines`` of its lines, with consecutive ids in
        line order (ids above the last one are free). Returns the change in chunks.
        """
        db = self.db
        row: tuple[int, int, int, str] = db.execute(
            "SELECT first_id, chunks, size, hash FROM files WHERE path = ?", (item.rel,)
        ).fetchone()
        first, count, old_size, old_hash = row
        data = item.data
        if data is None:
            data = _read(self.folder / item.rel)
            item.digest = digest_of(data)  # Why: the hash of what is indexed (as _batches)
        item.data = None
        lines = self.corpus.lines(data)
        kept, new = self._appended(first, count, data[:old_size], old_hash, lines)
        if new is None:
            kept, new = 0, chunk_lines(lines)
        old = db.execute(
            "SELECT line_start, line_end, text, entry_id FROM chunks"
            " WHERE id BETWEEN ? AND ? ORDER BY id",
            (first + kept, first + count - 1),
        )
        keep = kept
        for was, now in zip(old, new, strict=False):
            if was != (now.line_start, now.line_end, now.text, now.entry_id):
                break
            keep += 1
        self._drop_ranges([(first + keep, first + count - 1)] if keep < count else [])
        self._insert(_rows(item.rel, new[keep - kept :], first + keep - 1))
        db.execute(
            "UPDATE files SET hash = ?, mtime_ns = ?, size = ?, chunks = ? WHERE path = ?",
            (item.digest, item.mtime_ns, item.size, kept + len(new), item.rel),
        )
        return kept + len(new) - count

    def _appended(
        self, first: int, count: int, head: bytes, old_hash: str, lines: list[str]
    ) -> tuple[int, list[Chunk] | None]:
        """(chunks kept, the chunks after them) when the file only grew since it was
        indexed, its chunks up to its last entry staying; else (0, None)."""
        if not head or digest_of(head) != old_hash:
            return 0, None
        if lines[: len(old := self.corpus.lines(head))] != old:
            return 0, None  # Why: the new bytes changed how the old ones decode
        row = self.db.execute(
            "SELECT id, line_end FROM chunks WHERE id BETWEEN ? AND ?"
            " AND entry_id IS NOT NULL ORDER BY id DESC LIMIT 1",
            (first, first + count - 1),
        ).fetchone()
        if row is None:
            return 0, None
        last_entry, restart = row
        tail = chunk_tail(lines, restart)
        return (0, None) if tail is None else (last_entry - first + 1, tail)

    def _drop(self, paths: list[str]) -> int:
        """Remove these files' chunks from every table, one id range per file; returns how many."""
        if not paths:
            return 0
        db = self.db
        db.execute("CREATE TEMP TABLE IF NOT EXISTS dropping(path TEXT PRIMARY KEY)")
        db.execute("DELETE FROM temp.dropping")
        db.executemany("INSERT OR IGNORE INTO temp.dropping VALUES (?)", ((p,) for p in paths))
        ranges = db.execute(
            "SELECT first_id, first_id + chunks - 1 FROM files"
            " WHERE path IN (SELECT path FROM temp.dropping) AND chunks > 0"
        ).fetchall()
        dropped = self._drop_ranges(ranges)
        db.execute("DELETE FROM files WHERE path IN (SELECT path FROM temp.dropping)")
        return dropped

    def _drop_ranges(self, ranges: list[tuple[int, int]]) -> int:
        """Remove the chunks with ids in these inclusive ranges from every table."""
        if not ranges:
            return 0
        db = self.db
        db.executemany(
            "INSERT INTO fts_tri(fts_tri, rowid, text)"
            " SELECT 'delete', id, text FROM chunks WHERE id BETWEEN ? AND ?",
            ranges,
        )
        rows = [
            row
            for lo, hi in ranges
            for row in db.execute("SELECT id, text FROM chunks WHERE id BETWEEN ? AND ?", (lo, hi))
        ]
        db.executemany(
            "INSERT INTO fts_word(fts_word, rowid, text) VALUES ('delete', ?, ?)",
            _derived(rows, latin_text),
        )
        db.executemany(
            "INSERT INTO fts_cjk(fts_cjk, rowid, grams) VALUES ('delete', ?, ?)",
            _derived(rows, cjk_grams),
        )
        return db.executemany("DELETE FROM chunks WHERE id BETWEEN ? AND ?", ranges).rowcount

    def _add(self, changed: list[_Changed]) -> int:
        """Chunk and insert these files, in batches; returns the number of chunks added.

        A file's chunks get consecutive ids in line order (``files`` keeps the
        range; search reads a hit's neighbours by id).
        """
        db = self.db
        next_id = db.execute("SELECT coalesce(max(id), 0) FROM chunks").fetchone()[0]
        added = 0
        for batch in _batches(changed, self.folder, self.corpus):
            rows = []
            files = []
            for item, lines in batch:
                made = _rows(item.rel, chunk_lines(lines), next_id)
                rows += made
                files.append(
                    (item.rel, item.digest, item.mtime_ns, item.size, next_id + 1, len(made))
                )
                next_id += len(made)
            self._insert(rows)
            db.executemany(
                "INSERT INTO files(path, hash, mtime_ns, size, first_id, chunks)"
                " VALUES (?,?,?,?,?,?)",
                files,
            )
            added += len(rows)
        return added

    def _insert(self, rows: list[tuple[int, str, int, int, str, str | None, int]]) -> None:
        """Insert chunk rows (consecutive ids) into ``chunks`` and every FTS table."""
        if not rows:
            return
        db = self.db
        db.executemany(
            "INSERT INTO chunks(id, path, line_start, line_end, text, entry_id, tokens)"
            " VALUES (?,?,?,?,?,?,?)",
            rows,
        )
        db.execute(
            "INSERT INTO fts_tri(rowid, text) SELECT id, text FROM chunks WHERE id BETWEEN ? AND ?",
            (rows[0][0], rows[-1][0]),
        )
        texts = [(r[0], r[4]) for r in rows]
        db.executemany(
            "INSERT INTO fts_word(rowid, text) VALUES (?, ?)", _derived(texts, latin_text)
        )
        db.executemany(
            "INSERT INTO fts_cjk(rowid, grams) VALUES (?, ?)", _derived(texts, cjk_grams)
        )


def _rows(
    rel: str, chunks: list[Chunk], after: int
) -> list[tuple[int, str, int, int, str, str | None, int]]:
    """``chunks`` rows of a file's chunks, numbered from ``after + 1`` in line order."""
    return [
        (
            after + k,
            rel,
            chunk.line_start,
            chunk.line_end,
            chunk.text,
            chunk.entry_id,
            count_tokens(chunk.text),
        )
        for k, chunk in enumerate(chunks, 1)
    ]


def _derived(
    rows: Iterable[tuple[int, str]], derive: Callable[[str], str]
) -> Iterator[tuple[int, str]]:
    """(id, derived text) for the chunks whose derived text is not blank.

    Why: inserting and deleting must skip exactly the same chunks in contentless tables.
    """
    for cid, text in rows:
        value = derive(text)
        if value.strip():
            yield cid, value


def _batches(
    changed: list[_Changed], folder: Path, corpus: Corpus
) -> Iterator[list[tuple[_Changed, list[str]]]]:
    """Changed files with their lines, about ``BATCH_CHUNKS`` chunks' worth at a time."""
    batch: list[tuple[_Changed, list[str]]] = []
    size = 0
    for item in changed:
        data = item.data
        if data is None:
            data = _read(folder / item.rel)
            # Why: record the hash of what is indexed, even if the file changed since.
            item.digest = digest_of(data)
        item.data = None
        batch.append((item, corpus.lines(data)))
        size += len(data)
        if size >= BATCH_CHUNKS * CHUNK_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _read(path: Path) -> bytes:
    """A file's bytes; empty when it cannot be read (it is indexed as empty)."""
    try:
        return path.read_bytes()
    except OSError:
        return b""


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except FileNotFoundError:
        return None
