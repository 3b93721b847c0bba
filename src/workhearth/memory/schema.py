"""The index database: schema, numbered migrations, and how it is opened.

Opening an index made by an older version migrates it; each migration is a
named function applied in order and recorded in ``migrations``.
"""

from __future__ import annotations

import errno
import secrets
import sqlite3
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from workhearth.errors import BusyError, CorruptDataError, HearthError
from workhearth.fsutil import make_private_file
from workhearth.memory.files import INDEX_FILE

# Why: FTS5 keeps this many bytes of new postings in memory before writing a
# segment; larger means fewer segments to merge in a big build (faster, smaller
# index, faster queries). Only a large update ever fills it.
FTS_HASHSIZE = 32 << 20
# Why: each small update (a save) adds one segment to every FTS5 table, and a query
# reads each term from every segment. With ``usermerge`` 2 the bounded 'merge' run
# after small updates (``index.MERGE_PAGES``) starts as soon as a level holds two
# segments, which keeps a few segments in all: at 500 saves a two-word search took
# 0.53 ms with FTS5's defaults, 0.30 ms so, and 0.25 ms with a full 'optimize'
# after every save (which costs as much as the index is big).
FTS_USERMERGE = 2
# Why 30 s: a big re-index in another process commits in well under that; a reader
# waits for it (SQLite's busy timeout) instead of failing with "database is locked".
BUSY_TIMEOUT_S = 30


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Run DDL statement by statement (``executescript`` would commit the migration)."""
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _m001_initial(db: sqlite3.Connection) -> None:
    _script(
        db,
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
        """,
    )


def _m002_compact(db: sqlite3.Connection) -> None:
    """Smaller tables and a ``state`` row; the next update indexes every file again.

    Why: v1's ``fts_word`` indexed each whole CJK run as one "word" (a third of
    the index, never searched: CJK goes through ``fts_tri`` and ``fts_cjk``),
    ``chunks`` stored a heading nobody read, and an index on ``chunks.path`` only
    served deletes: a file's chunks now have consecutive ids, its range is kept in
    ``files``. The index is a cache, so the tables are re-created empty rather
    than converted.
    """
    _script(
        db,
        """
        DROP TABLE IF EXISTS fts_word_vocab;
        DROP TABLE IF EXISTS fts_cjk_vocab;
        DROP TABLE IF EXISTS fts_word;
        DROP TABLE IF EXISTS fts_tri;
        DROP TABLE IF EXISTS fts_cjk;
        DROP TABLE IF EXISTS chunks;
        DROP TABLE IF EXISTS files;
        CREATE TABLE files(
            path TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL, first_id INTEGER NOT NULL, chunks INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE chunks(
            id INTEGER PRIMARY KEY, path TEXT NOT NULL, line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL, text TEXT NOT NULL, entry_id TEXT, tokens INTEGER NOT NULL
        );
        CREATE INDEX chunks_entry ON chunks(entry_id) WHERE entry_id IS NOT NULL;
        CREATE VIRTUAL TABLE fts_tri USING fts5(
            text, content='chunks', content_rowid='id', tokenize='trigram', detail='none'
        );
        CREATE VIRTUAL TABLE fts_word USING fts5(
            text, content='', tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE VIRTUAL TABLE fts_cjk USING fts5(grams, content='', tokenize='unicode61');
        CREATE VIRTUAL TABLE fts_word_vocab USING fts5vocab(fts_word, 'row');
        CREATE VIRTUAL TABLE fts_cjk_vocab USING fts5vocab(fts_cjk, 'row');
        CREATE TABLE state(
            id INTEGER PRIMARY KEY CHECK (id = 1), generation TEXT NOT NULL,
            chunks INTEGER NOT NULL, fingerprint TEXT
        );
        """,
    )
    for table in FTS_TABLES:
        db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('hashsize', ?)", (FTS_HASHSIZE,))
    db.execute("INSERT INTO state VALUES (1, ?, 0, NULL)", (secrets.token_hex(8),))


def _m003_usermerge(db: sqlite3.Connection) -> None:
    """Merge segments early (:data:`FTS_USERMERGE`); the index itself is kept."""
    for table in FTS_TABLES:
        db.execute(f"INSERT INTO {table}({table}, rank) VALUES ('usermerge', ?)", (FTS_USERMERGE,))


FTS_TABLES = ("fts_tri", "fts_word", "fts_cjk")
MIGRATIONS: list[tuple[int, str, Callable[[sqlite3.Connection], None]]] = [
    (1, "initial", _m001_initial),
    (2, "compact", _m002_compact),
    (3, "usermerge", _m003_usermerge),
]


def migrate(db: sqlite3.Connection) -> None:
    """Apply every migration not yet recorded, in order and in one transaction.

    Old indexes and new ones follow the same path; an index made by a newer
    workhearth (a version this one does not know) is reported as unusable.
    """
    db.execute(
        "CREATE TABLE IF NOT EXISTS migrations(version INTEGER PRIMARY KEY, name TEXT, applied REAL)"
    )
    known = {version for version, _, _ in MIGRATIONS}

    def applied() -> set[int]:
        done = {row[0] for row in db.execute("SELECT version FROM migrations")}
        if done - known:
            raise CorruptDataError(
                f"{INDEX_FILE} was made by a newer workhearth (schema {max(done)})",
                schema=max(done),
            )
        return done

    if known <= applied():
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        done = applied()  # Why: another process may have migrated while we waited
        for version, name, apply in MIGRATIONS:
            if version not in done:
                apply(db)
                db.execute("INSERT INTO migrations VALUES (?, ?, ?)", (version, name, time.time()))
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


# Why: a cache on the user's disk: losing the last commit costs a re-index, so
# synchronous=NORMAL; a big build must not leave a WAL as large as the index.
_PRAGMAS = (
    "PRAGMA auto_vacuum=INCREMENTAL",  # takes effect in a new file only
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA journal_size_limit=67108864",
    "PRAGMA temp_store=MEMORY",
    "PRAGMA cache_size=-32768",
)
_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED
_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_UNWRITABLE_CODES = {8, 10, 13, 14}  # SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN
_UNWRITABLE_ERRNOS = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM}


def busy_error() -> BusyError:
    """What a reader says after waiting the busy timeout in vain, in words, with no path."""
    return BusyError(
        "the memory index is busy: another process held its lock for"
        f" {BUSY_TIMEOUT_S} s; nothing changed, try again"
    )


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite gave up waiting for another connection's lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _BUSY_CODES


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite says the file itself is damaged (not busy, locked or missing)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in _DAMAGE_CODES


def cannot_write(exc: BaseException | None) -> bool:
    """Whether an error means the layer folder cannot be written (read-only, full, denied)."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return code is not None and code & 0xFF in _UNWRITABLE_CODES
    if isinstance(exc, OSError):
        return exc.errno in _UNWRITABLE_ERRNOS
    if isinstance(exc, HearthError):
        return cannot_write(exc.__cause__)
    return False


def connect(folder: Path) -> sqlite3.Connection:
    """Open a layer's index, creating or migrating it.

    Raises :class:`CorruptDataError` when the file is damaged or was made by a
    newer workhearth (:class:`MemoryIndex` then sets it aside and builds anew).
    """
    path = folder / INDEX_FILE
    make_private_file(path)  # before SQLite: its -wal/-shm take this file's mode
    db = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        for pragma in _PRAGMAS:
            db.execute(pragma)
        migrate(db)
    except sqlite3.DatabaseError as exc:
        db.close()
        if is_busy(exc):
            raise busy_error() from exc
        damaged = is_damage(exc)
        kind = CorruptDataError if damaged else HearthError
        # Why no path in the message: REST and MCP answers name no file (DESIGN §6).
        # Why the cause: it tells a read-only or full disk (served from a copy) from a bug.
        raise kind(
            f"the memory index {'is damaged' if damaged else 'cannot be opened'} ({exc})",
            code="memory_index",
            cli_hint=str(path),
            path=str(path),
        ) from exc
    except BaseException:
        db.close()
        raise
    return db


def connect_copy(folder: Path) -> sqlite3.Connection:
    """An in-memory copy of a layer's index, for a folder that cannot be written.

    Why: reading memory never needs to write. The copy starts from the index file
    when it can be read (even on read-only media, where WAL needs ``immutable``),
    otherwise empty; updating it re-indexes in memory what changed since.
    """
    uri = "file:" + urllib.parse.quote(str((folder / INDEX_FILE).absolute()))
    for query in ("mode=ro", "immutable=1"):
        db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        try:
            source = sqlite3.connect(f"{uri}?{query}", uri=True)
            try:
                source.backup(db)
            finally:
                source.close()
            migrate(db)
            return db
        except (sqlite3.Error, HearthError):
            db.close()
    db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    migrate(db)
    return db
