"""``PgBank``: the memory bank on a shared PostgreSQL server, one caller at a time.

The same operations as the local bank (save / search / list / get / edit /
delete / restore, DESIGN §4) with the same validation, plus the caller: every
operation takes the ``owner`` and sees only that user's entries. An id that does
not name one of the caller's entries — another user's, unknown or malformed — is
the same :class:`NotFoundError` with the same text, so it leaks nothing.

The store keeps no state of its own between calls: several servers may share one
database behind any load balancer.
"""

from __future__ import annotations

import builtins  # Why: PgBank.list shadows list in the class body's annotations
import hashlib
import math
import re
import secrets
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from workhearth.bank.server import search as terms
from workhearth.bank.server.crypto import BankCipher
from workhearth.errors import EncryptionKeyError, HearthError, NotFoundError, UsageError
from workhearth.memory.bank import (
    LIST_LIMIT_MAX,
    Entry,
    Provenance,
    decode_cursor,
    encode_cursor,
    validate,
)
from workhearth.memory.plain_text import require_plain_text
from workhearth.memory.search import DEFAULT_LIMIT, Hit, check_search
from workhearth.memory.text import like_escape

try:
    import psycopg

    from workhearth.bank.server.pool import StorePool, StoreUnreachable, connect_timeout_of
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

NOT_FOUND = "no such memory entry"
BAD_CURSOR = "bad cursor; use the next_cursor a previous list returned"
VALUE_REFUSED = "the team store cannot hold this value as it is"
# Why 2**53 microseconds (year 2255 either side of 1970): a cursor's time is a float,
# exact up to there, and PostgreSQL's timestamps and int8 overflow not far beyond.
CURSOR_US_MAX = 2**53
ID_RE = re.compile(r"m-[0-9a-z]{8}")
_ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
LAYER = "team"
# Why: how many candidates each source hands the ranking, per result asked; the
# blind index ranks by matched terms only (no BM25), so it gets a wider net.
CANDIDATES_PER_HIT = 4
BLIND_CANDIDATES_PER_HIT = 8

_ENTRY_COLUMNS = (
    "id, owner, content, content_enc, source, tags, level, "
    "extract(epoch FROM created)::float8, extract(epoch FROM updated)::float8"
)


def where(url: str) -> str:
    """A store URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return "postgresql://…"
    host = info.get("host") or "localhost"
    port = f":{info['port']}" if info.get("port") else ""
    return f"postgresql://{host}{port}/{info.get('dbname') or ''}"


def check_url(url: str) -> str:
    if psycopg is None:
        raise HearthError("the team store needs the team extra: pip install 'workhearth[team]'")
    if not url.startswith(("postgresql://", "postgres://")):
        raise UsageError("--store must be a postgresql://… URL")
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        # Why no detail: libpq's parse errors quote the whole URL, password included.
        raise UsageError("--store is not a valid postgresql://… URL") from None
    return url


def connect(url: str, timeout: int | None = None) -> psycopg.Connection:
    """One autocommit connection to the store, or a one-line HearthError.

    ``timeout``: seconds to wait for the server, by default the URL's own
    ``connect_timeout`` or 2.
    """
    check_url(url)
    try:
        return psycopg.connect(
            url, autocommit=True, connect_timeout=timeout or connect_timeout_of(url)
        )
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or ["failed"])[0]
        raise HearthError(f"cannot connect to the team store {where(url)}: {first}") from None


def new_id() -> str:
    return "m-" + "".join(secrets.choice(_ID_CHARS) for _ in range(8))


def page_after(cursor: str) -> tuple[int, str]:
    """The (created in microseconds, id) a list cursor points after; a UsageError when it
    is not one this store made (``inf``, ``nan``, a time out of range, a foreign id)."""
    created, after_id = decode_cursor(cursor)
    if not math.isfinite(created) or abs(created) > CURSOR_US_MAX:
        raise UsageError(BAD_CURSOR)
    if not ID_RE.fullmatch(after_id):
        raise UsageError(BAD_CURSOR)
    return int(created), after_id


class PgBank:
    """The team bank. ``key``: 32 bytes to encrypt content and snippets at rest."""

    def __init__(self, url: str, *, key: bytes | None = None, max_size: int = 8) -> None:
        from workhearth.bank.server.schema import prepare

        self.cipher = BankCipher(key) if key is not None else None
        with connect(url) as conn:
            prepare(conn)
            self._check_key(conn)
        self.url = url
        self._pool = StorePool(url, max_size=max_size)
        self._added = 0  # entries added since the planner's statistics were refreshed
        self._added_lock = threading.Lock()
        self._analyze()

    # Why: right after a burst of saves, before autovacuum refreshes the statistics
    # (it waits a minute or more), the planner picked a bad plan for the keyed term
    # search: 1.4 s instead of 115 ms (bench/team_crypto.py). Refreshing them at start
    # and every ANALYZE_EVERY new entries keeps plans right; ANALYZE samples, so it
    # costs milliseconds even on a large store.
    ANALYZE_EVERY = 200

    def _analyze(self) -> None:
        with connect(self.url) as conn:
            conn.execute("ANALYZE entries, entry_terms")

    def _count_added(self) -> None:
        with self._added_lock:
            self._added += 1
            due = self._added >= self.ANALYZE_EVERY
            if due:
                self._added = 0
        if due:
            try:
                self._analyze()
            except psycopg.Error:
                pass  # Why: statistics are an optimisation; the save itself is done

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> PgBank:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Cursor]:
        try:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                yield cur
        except psycopg.OperationalError:
            # Why: the database went away mid-request; the caller may try again later.
            raise StoreUnreachable("the team store is unreachable") from None
        except psycopg.DataError:
            # Why a UsageError (422, a refused save): PostgreSQL refused a value the
            # checks let through; sending it again can never work.
            raise UsageError(VALUE_REFUSED) from None

    def _check_key(self, conn: psycopg.Connection) -> None:
        """The store is encrypted or not from its first start; a key must match it."""
        mine = self.cipher.key_check() if self.cipher else "none"
        with conn.transaction(), conn.cursor() as cur:
            cur.execute(
                "INSERT INTO settings (key, value) VALUES ('encryption', %s) "
                "ON CONFLICT (key) DO NOTHING",
                (mine,),
            )
            cur.execute("SELECT value FROM settings WHERE key = 'encryption'")
            row = cur.fetchone()
        stored = row[0] if row else mine
        if stored == mine:
            return
        if stored == "none":
            raise EncryptionKeyError(
                "the team store was created without encryption; it cannot be given a key "
                "now (start without one, or use a new database)"
            )
        if self.cipher is None:
            raise EncryptionKeyError("the team store is encrypted: configure its key")
        raise EncryptionKeyError("wrong key for the encrypted team store")

    # ------------------------------------------------------------- users
    def user_for_token(self, token: str) -> str | None:
        from workhearth.bank.server.users import user_for_token

        try:
            with self._pool.connection() as conn:
                return user_for_token(conn, token)
        except psycopg.OperationalError:
            raise StoreUnreachable("the team store is unreachable") from None

    # ------------------------------------------------------------- writes
    def _digest(self, owner: str, content: str) -> bytes:
        if self.cipher:
            return self.cipher.digest(owner, content)
        return hashlib.sha256(content.encode("utf-8")).digest()

    def _index_terms(self, owner: str, content: str) -> list[bytes]:
        if self.cipher:
            return self.cipher.blind(owner, terms.blind_terms(content))
        return [t.encode("utf-8") for t in terms.cjk_terms(content)]

    def _seal(self, owner: str, entry_id: str, content: str) -> tuple[str | None, bytes | None]:
        """The (content, content_enc) columns of a text: one of them holds it."""
        if self.cipher:
            return None, self.cipher.seal(content, entry_id, owner, "content")
        return content, None

    def _write_terms(self, cur: psycopg.Cursor, owner: str, entry_id: str, content: str) -> None:
        cur.execute("DELETE FROM entry_terms WHERE entry_id = %s", (entry_id,))
        cur.execute(
            "INSERT INTO entry_terms (entry_id, owner, term) SELECT %s, %s, unnest(%s::bytea[])",
            (entry_id, owner, self._index_terms(owner, content)),
        )

    def save(
        self,
        owner: str,
        content: str,
        level: str = "normal",
        tags: builtins.list[str] | None = None,
        contexts: Sequence[Provenance | dict[str, Any]] | None = None,
        *,
        source: str = "user",
        redact: bool = False,
        scope: str = "user",
        org: str = "",
        idempotency_key: str | None = None,
    ) -> Entry:
        """Save a confirmed sentence for ``owner``.

        The same ``idempotency_key`` twice gives the first save's entry (a queued
        save sent again after a lost answer lands once); the same sentence already
        saved is returned too, marked ``existed``.
        """
        content, tags, provenance = validate(content, level, tags or [], contexts or [], redact)
        if scope not in ("user", "org"):
            raise UsageError(f"scope must be user or org, not {scope!r}")
        if idempotency_key is not None and not 1 <= len(idempotency_key) <= 128:
            raise UsageError("an idempotency key has 1 to 128 characters")
        digest = self._digest(owner, content)
        with self._tx() as cur:
            # Why: saves of one user take turns, so the same sentence or key sent
            # twice at once is found by the second instead of stored twice.
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (owner,))
            cur.execute("SELECT 1 FROM users WHERE name = %s", (owner,))
            if cur.fetchone() is None:
                raise NotFoundError(f"no team user {owner!r}")
            if idempotency_key is not None:
                cur.execute(
                    "SELECT entry_id FROM idempotency WHERE owner = %s AND key = %s",
                    (owner, idempotency_key),
                )
                row = cur.fetchone()
                if row is not None:
                    return self._replay(cur, owner, row[0])
            cur.execute(
                "SELECT id FROM entries WHERE owner = %s AND digest = %s AND deleted IS NULL "
                "ORDER BY created LIMIT 1",
                (owner, digest),
            )
            row = cur.fetchone()
            existed = row is not None
            entry_id = (
                row[0]
                if row
                else self._insert(
                    cur, owner, content, digest, level, tags, source, scope, org, provenance
                )
            )
            if idempotency_key is not None:
                cur.execute(
                    "INSERT INTO idempotency (owner, key, entry_id) VALUES (%s, %s, %s)",
                    (owner, idempotency_key, entry_id),
                )
            entry = self._load(cur, owner, [entry_id])[0]
        entry.existed = existed
        if not existed:
            self._count_added()
        return entry

    def _replay(self, cur: psycopg.Cursor, owner: str, entry_id: str) -> Entry:
        found = self._load(cur, owner, [entry_id], deleted=True)
        if not found:
            raise NotFoundError(NOT_FOUND)
        # Why deleted ones too: a resend after the user deleted the entry must
        # neither bring it back nor fail; it answers with what the first save made.
        found[0].existed = True
        return found[0]

    def _insert(
        self,
        cur: psycopg.Cursor,
        owner: str,
        content: str,
        digest: bytes,
        level: str,
        tags: builtins.list[str],
        source: str,
        scope: str,
        org: str,
        provenance: builtins.list[dict[str, Any]],
    ) -> str:
        while True:
            entry_id = new_id()
            plain, sealed = self._seal(owner, entry_id, content)
            cur.execute(
                "INSERT INTO entries (id, owner, org, scope, content, content_enc, digest, "
                "source, tags, level) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO NOTHING",
                (entry_id, owner, org, scope, plain, sealed, digest, source, tags, level),
            )
            if cur.rowcount == 1:
                break
        self._write_terms(cur, owner, entry_id, content)
        for pos, item in enumerate(provenance):
            snippet = item["snippet"]
            sealed_snippet = None
            if self.cipher:
                sealed_snippet = self.cipher.seal(snippet, entry_id, owner, f"snippet {pos}")
                snippet = None
            cur.execute(
                "INSERT INTO provenance (entry_id, pos, snippet, snippet_enc, session_id, "
                "message_id, origin) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    entry_id,
                    pos,
                    snippet,
                    sealed_snippet,
                    item["session_id"],
                    item["message_id"],
                    item["origin"],
                ),
            )
        return entry_id

    def edit(self, owner: str, entry_id: str, content: str, redact: bool = False) -> Entry:
        with self._tx() as cur:
            entry = self._one(cur, owner, entry_id, lock=True)
            content, _, _ = validate(content, entry.level, [], [], redact)
            plain, sealed = self._seal(owner, entry_id, content)
            self._write_terms(cur, owner, entry_id, content)
            cur.execute(
                "UPDATE entries SET content = %s, content_enc = %s, digest = %s, "
                "updated = now() WHERE id = %s",
                (plain, sealed, self._digest(owner, content), entry_id),
            )
            return self._load(cur, owner, [entry_id])[0]

    def delete(self, owner: str, entry_id: str) -> None:
        """Delete an entry (restorable with :meth:`restore`)."""
        if not ID_RE.fullmatch(entry_id):
            raise NotFoundError(NOT_FOUND)
        with self._tx() as cur:
            cur.execute(
                "UPDATE entries SET deleted = now() "
                "WHERE id = %s AND owner = %s AND deleted IS NULL",
                (entry_id, owner),
            )
            if cur.rowcount == 0:
                raise NotFoundError(NOT_FOUND)

    def restore(self, owner: str, entry_id: str) -> Entry:
        """Bring back a deleted entry under its id."""
        if not ID_RE.fullmatch(entry_id):
            raise NotFoundError(NOT_FOUND)
        with self._tx() as cur:
            cur.execute(
                "UPDATE entries SET deleted = NULL, updated = now() "
                "WHERE id = %s AND owner = %s AND deleted IS NOT NULL",
                (entry_id, owner),
            )
            if cur.rowcount == 0:
                self._one(cur, owner, entry_id)  # raises NotFoundError when not theirs
                raise UsageError(f"memory entry {entry_id} is not deleted: nothing to restore")
            return self._load(cur, owner, [entry_id])[0]

    # -------------------------------------------------------------- reads
    def get(self, owner: str, entry_id: str) -> Entry:
        with self._tx() as cur:
            return self._one(cur, owner, entry_id)

    def _one(self, cur: psycopg.Cursor, owner: str, entry_id: str, lock: bool = False) -> Entry:
        if not ID_RE.fullmatch(entry_id):
            raise NotFoundError(NOT_FOUND)
        if lock:
            cur.execute(
                "SELECT 1 FROM entries WHERE id = %s AND owner = %s AND deleted IS NULL FOR UPDATE",
                (entry_id, owner),
            )
        found = self._load(cur, owner, [entry_id])
        if not found:
            raise NotFoundError(NOT_FOUND)
        return found[0]

    def list(
        self, owner: str, limit: int = 20, cursor: str | None = None, tag: str | None = None
    ) -> tuple[builtins.list[Entry], str | None]:
        """The caller's entries newest first; pass the returned cursor for the next page."""
        if not 1 <= limit <= LIST_LIMIT_MAX:
            raise UsageError(f"list limit must be between 1 and {LIST_LIMIT_MAX}")
        sql = (
            "SELECT id, (extract(epoch FROM created) * 1000000)::int8 FROM entries "
            "WHERE owner = %s AND deleted IS NULL"
        )
        args: list[Any] = [owner]
        if cursor:
            created, after_id = page_after(cursor)
            at = "to_timestamp(0) + %s::int8 * interval '1 microsecond'"
            sql += f" AND (created < {at} OR (created = {at} AND id > %s))"
            args += [created, created, after_id]
        if tag is not None:
            require_plain_text(tag, "tag")
            sql += " AND EXISTS (SELECT 1 FROM unnest(tags) t WHERE lower(t) = lower(%s))"
            args.append(tag)
        sql += " ORDER BY created DESC, id LIMIT %s"
        args.append(limit + 1)
        with self._tx() as cur:
            cur.execute(sql, args)
            rows = cur.fetchall()
            entries = self._load(cur, owner, [row[0] for row in rows[:limit]])
        next_cursor = None
        if len(rows) > limit:
            # Why: whole microseconds (exact in a float up to 2**53), so a page
            # boundary never falls between two rounded timestamps.
            last_id, created_us = rows[limit - 1]
            next_cursor = encode_cursor(float(created_us), last_id)
        return entries, next_cursor

    def search(self, owner: str, query: str, limit: int = DEFAULT_LIMIT) -> builtins.list[Hit]:
        """Find the caller's entries by words (Chinese included); best first, relative scores."""
        check_search(query, limit)
        if not query.strip():
            return []
        with self._tx() as cur:
            ids = self._candidates(cur, owner, query, limit)
            entries = {e.id: e for e in self._load(cur, owner, ids, provenance=False)}
        ranked = terms.rank(query, {i: e.content for i, e in entries.items()}, limit)
        hits = []
        for entry_id, relative in ranked:
            entry = entries[entry_id]
            text, lines = terms.hit_text(entry.content)
            hits.append(
                Hit("", 1, lines, text, relative, entry.level, entry_id, LAYER, list(entry.tags))
            )
        return hits

    def candidates(self, owner: str, query: str, limit: int) -> builtins.list[str]:
        """The ids the database hands the ranking for ``query`` (for measuring recall)."""
        with self._tx() as cur:
            return self._candidates(cur, owner, query, limit)

    def _candidates(
        self, cur: psycopg.Cursor, owner: str, query: str, limit: int
    ) -> builtins.list[str]:
        live = "owner = %s AND deleted IS NULL"
        if self.cipher:
            blind = self.cipher.blind(owner, terms.query_blind_terms(query))
            cur.execute(
                "SELECT t.entry_id FROM entry_terms t JOIN entries e ON e.id = t.entry_id "
                "WHERE t.owner = %s AND t.term = ANY(%s) AND e.deleted IS NULL "
                "GROUP BY t.entry_id ORDER BY count(*) DESC, max(e.updated) DESC LIMIT %s",
                (owner, blind, limit * BLIND_CANDIDATES_PER_HIT),
            )
            return [row[0] for row in cur.fetchall()]
        n = limit * CANDIDATES_PER_HIT
        ids: dict[str, None] = {}
        words = terms.query_words(query)
        if words:
            # Why: the words are letters and digits only (LATIN_WORD), so quoting
            # them makes a tsquery with no operator a user could slip in.
            tsquery = " | ".join(f"'{w}'" for w in words)
            cur.execute(
                f"SELECT id FROM entries WHERE {live} "
                "AND to_tsvector('simple', content) @@ to_tsquery('simple', %s) "
                "ORDER BY ts_rank(to_tsvector('simple', content), "
                "to_tsquery('simple', %s)) DESC, updated DESC LIMIT %s",
                (owner, tsquery, tsquery, n),
            )
            ids.update(dict.fromkeys(row[0] for row in cur.fetchall()))
        cur.execute(
            f"SELECT id FROM entries WHERE {live} AND content ILIKE %s "
            "ORDER BY updated DESC LIMIT %s",
            (owner, "%" + like_escape(query.strip()) + "%", n),
        )
        ids.update(dict.fromkeys(row[0] for row in cur.fetchall()))
        cjk = [t.encode("utf-8") for t in terms.query_cjk_terms(query)]
        if cjk:
            cur.execute(
                "SELECT t.entry_id FROM entry_terms t JOIN entries e ON e.id = t.entry_id "
                "WHERE t.owner = %s AND t.term = ANY(%s) AND e.deleted IS NULL "
                "GROUP BY t.entry_id ORDER BY count(*) DESC, max(e.updated) DESC LIMIT %s",
                (owner, cjk, n),
            )
            ids.update(dict.fromkeys(row[0] for row in cur.fetchall()))
        return list(ids)

    def _load(
        self,
        cur: psycopg.Cursor,
        owner: str,
        ids: Sequence[str],
        *,
        deleted: bool = False,
        provenance: bool = True,
    ) -> builtins.list[Entry]:
        """The caller's entries of ``ids``, in that order (missing ones left out)."""
        if not ids:
            return []
        cur.execute(
            f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE id = ANY(%s) AND owner = %s"
            + ("" if deleted else " AND deleted IS NULL"),
            (list(ids), owner),
        )
        rows = {row[0]: row for row in cur.fetchall()}
        prov: dict[str, list[dict[str, Any]]] = {}
        if provenance and rows:
            cur.execute(
                "SELECT entry_id, pos, snippet, snippet_enc, session_id, message_id, origin "
                "FROM provenance WHERE entry_id = ANY(%s) ORDER BY entry_id, pos",
                (list(rows),),
            )
            for entry_id, pos, snippet, sealed, session_id, message_id, origin in cur.fetchall():
                if sealed is not None:
                    snippet = self._open(sealed, entry_id, owner, f"snippet {pos}")
                prov.setdefault(entry_id, []).append(
                    {
                        "snippet": snippet,
                        "session_id": session_id,
                        "message_id": message_id,
                        "origin": origin,
                    }
                )
        out = []
        for entry_id in ids:
            row = rows.get(entry_id)
            if row is None:
                continue
            _id, _owner, content, sealed, source, tags, level, created, updated = row
            if sealed is not None:
                content = self._open(sealed, entry_id, owner, "content")
            out.append(
                Entry(
                    id=entry_id,
                    content=content,
                    level=level,
                    tags=list(tags),
                    layer=LAYER,
                    path="",
                    line=0,
                    created=created,
                    updated=updated,
                    source=source,
                    provenance=prov.get(entry_id, []),
                )
            )
        return out

    def _open(self, sealed: bytes, entry_id: str, owner: str, field: str) -> str:
        if self.cipher is None:
            raise EncryptionKeyError("the team store is encrypted: configure its key")
        return self.cipher.open(sealed, entry_id, owner, field)
