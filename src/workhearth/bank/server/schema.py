"""The team bank's schema: numbered migrations run on start, and its search indexes.

Migrations are plain functions applied in order and recorded in ``hearth_schema``;
opening the database migrates it, so a fresh install and an upgrade follow one path.

The search indexes are created by :func:`ensure_search_indexes` and nowhere else,
called only when migrations ran (a fresh install is every migration pending). At
every other start :func:`check_search_indexes` only looks: a missing index means
something is wrong with the database (a search would silently find nothing, or
scan every row), so start-up fails naming it instead of quietly re-creating it.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg

from workhearth.errors import HearthError

# Why: one fixed key so that two servers starting together take turns migrating.
_LOCK_KEY = 0x6865617274680001  # "hearth" + 1

# name -> definition; the words index uses the `simple` configuration (no stemming,
# no stopwords), the trigram index serves substring (ILIKE) search of 3+ characters,
# and the terms index serves CJK bigrams (plain banks) and the blind index (encrypted).
SEARCH_INDEXES: dict[str, str] = {
    "entries_content_trgm": "ON entries USING gin (content gin_trgm_ops)",
    "entries_content_words": "ON entries USING gin (to_tsvector('simple', content))",
    "entry_terms_lookup": "ON entry_terms (owner, term, entry_id)",
}


def _m001_initial(cur: psycopg.Cursor) -> None:
    cur.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    cur.execute(
        """
        CREATE TABLE users (
            name text PRIMARY KEY,
            token_hash bytea NOT NULL UNIQUE,
            created timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE settings (
            key text PRIMARY KEY,
            value text NOT NULL
        );
        CREATE TABLE entries (
            id text PRIMARY KEY,
            owner text NOT NULL REFERENCES users(name),
            org text NOT NULL DEFAULT '',
            scope text NOT NULL DEFAULT 'user' CHECK (scope IN ('user', 'org')),
            content text,
            content_enc bytea,
            digest bytea NOT NULL,
            source text NOT NULL DEFAULT 'user',
            tags text[] NOT NULL DEFAULT '{}',
            level text NOT NULL CHECK (level IN ('critical', 'normal', 'low')),
            created timestamptz NOT NULL DEFAULT now(),
            updated timestamptz NOT NULL DEFAULT now(),
            deleted timestamptz,
            CHECK ((content IS NULL) <> (content_enc IS NULL))
        );
        CREATE INDEX entries_owner_created ON entries (owner, created DESC, id);
        CREATE INDEX entries_owner_digest ON entries (owner, digest);
        CREATE TABLE provenance (
            entry_id text NOT NULL REFERENCES entries(id),
            pos integer NOT NULL,
            snippet text,
            snippet_enc bytea,
            session_id text,
            message_id text,
            origin text,
            PRIMARY KEY (entry_id, pos)
        );
        CREATE TABLE entry_terms (
            entry_id text NOT NULL REFERENCES entries(id),
            owner text NOT NULL REFERENCES users(name),
            term bytea NOT NULL
        );
        CREATE INDEX entry_terms_entry ON entry_terms (entry_id);
        CREATE TABLE idempotency (
            owner text NOT NULL REFERENCES users(name),
            key text NOT NULL,
            entry_id text NOT NULL,
            created timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (owner, key)
        );
        """
    )


Migration = Callable[[psycopg.Cursor], None]
MIGRATIONS: list[tuple[int, Migration]] = [(1, _m001_initial)]


def ensure_search_indexes(conn: psycopg.Connection) -> None:
    """Create every search index that is missing; safe to run twice and concurrently.

    Why the lock: two ``CREATE INDEX IF NOT EXISTS`` racing each other can both
    pass the check and one then fails on the catalogue's unique key.
    """
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        for name, definition in SEARCH_INDEXES.items():
            cur.execute(f"CREATE INDEX IF NOT EXISTS {name} {definition}")


def missing_search_indexes(conn: psycopg.Connection) -> list[str]:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND indexname = ANY(%s)",
            (list(SEARCH_INDEXES),),
        )
        have = {row[0] for row in cur.fetchall()}
    return [name for name in SEARCH_INDEXES if name not in have]


def check_search_indexes(conn: psycopg.Connection) -> None:
    missing = missing_search_indexes(conn)
    if missing:
        raise HearthError(
            f"the team store is missing its search index {', '.join(missing)}: "
            "the database was changed outside hearth; restore it, or recreate the index "
            "by hand after checking why it went"
        )


def schema_version(conn: psycopg.Connection) -> int:
    with conn.cursor() as cur:
        cur.execute("SELECT to_regclass('hearth_schema') IS NOT NULL")
        row = cur.fetchone()
        if not row or not row[0]:
            return 0
        cur.execute("SELECT coalesce(max(version), 0) FROM hearth_schema")
        row = cur.fetchone()
        return int(row[0]) if row else 0


def prepare(conn: psycopg.Connection) -> list[int]:
    """Migrate the database to the newest schema, then check the search indexes.

    Returns the migrations applied. The indexes are (re)built only when some ran.
    """
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        cur.execute(
            "CREATE TABLE IF NOT EXISTS hearth_schema ("
            "version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"
        )
        current = schema_version(conn)
        newest = MIGRATIONS[-1][0]
        if current > newest:
            raise HearthError(
                f"the team store has schema version {current}; this hearth knows up to "
                f"{newest}: upgrade hearth"
            )
        applied = []
        for version, migrate in MIGRATIONS:
            if version > current:
                migrate(cur)
                cur.execute("INSERT INTO hearth_schema (version) VALUES (%s)", (version,))
                applied.append(version)
        if applied:
            # Why: the fresh-install path (every migration pending) and the upgrade
            # path both end here, and only here; in the same transaction, so a crash
            # cannot leave a migrated schema without its indexes.
            ensure_search_indexes(conn)
    check_search_indexes(conn)
    return applied
