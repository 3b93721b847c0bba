"""Team users and their tokens.

A token is 32 random bytes shown once; the database keeps only its SHA-256. Why
not a slow password hash: the token is high-entropy, so nobody can guess it from
its hash, and every request checks one, which must stay cheap.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import Any

import psycopg

from workhearth.errors import NotFoundError, UsageError

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
TOKEN_PREFIX = "hth_"


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise UsageError(
            f"a team user name has 1 to 64 letters, digits, '.', '_' or '-' "
            f"(starting with a letter or digit), not {name[:80]!r}"
        )
    return name


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def add_user(conn: psycopg.Connection, name: str) -> str:
    """Create a user; returns their token (the only time it exists in clear)."""
    check_name(name)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute(
            "INSERT INTO users (name, token_hash) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
            (name, token_hash(token)),
        )
        if cur.rowcount == 0:
            raise UsageError(f"team user {name} already exists")
    return token


def remove_user(conn: psycopg.Connection, name: str) -> int:
    """Delete a user and, in the same transaction, every row that holds or derives
    from their content; returns how many entries went.

    Why explicit deletes without ``ON DELETE CASCADE``: the foreign keys then make
    a table this function forgot fail the removal loudly instead of keeping rows.
    """
    check_name(name)
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT 1 FROM users WHERE name = %s FOR UPDATE", (name,))
        if cur.fetchone() is None:
            raise NotFoundError(f"no team user {name!r}")
        cur.execute("DELETE FROM entry_terms WHERE owner = %s", (name,))
        cur.execute(
            "DELETE FROM provenance WHERE entry_id IN (SELECT id FROM entries WHERE owner = %s)",
            (name,),
        )
        cur.execute("DELETE FROM idempotency WHERE owner = %s", (name,))
        cur.execute("DELETE FROM entries WHERE owner = %s", (name,))
        entries = cur.rowcount
        cur.execute("DELETE FROM users WHERE name = %s", (name,))
    return entries


def list_users(conn: psycopg.Connection) -> list[dict[str, Any]]:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT u.name, extract(epoch FROM u.created)::float8, "
            "(SELECT count(*) FROM entries e WHERE e.owner = u.name AND e.deleted IS NULL) "
            "FROM users u ORDER BY u.name"
        )
        return [
            {"name": name, "created": created, "entries": int(count)}
            for name, created, count in cur.fetchall()
        ]


def user_for_token(conn: psycopg.Connection, token: str) -> str | None:
    """The user a bearer token belongs to, or None."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    with conn.cursor() as cur:
        cur.execute("SELECT name FROM users WHERE token_hash = %s", (token_hash(token),))
        row = cur.fetchone()
    return str(row[0]) if row else None
