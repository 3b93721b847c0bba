"""The outbox: saves for the team bank, kept on disk until the server has them.

Every save goes through here, sent or not (issue #13): it is written first, with
a client-made idempotency key (uuid4), and only then sent. A crash at any point
leaves it queued under the same key, so the next send of it is recognised by
the server and lands once. Saves leave in the order they were queued.

SQLite in WAL mode with ``synchronous=FULL``: a queued save survives a killed
process and a power cut, and marking one sent is one small transaction. A save
the server refuses for what it is (a 4xx about the save itself) is moved to a
dead-letter file, ``dead-letters.jsonl``, which a person reads: it is never
dropped silently.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import StorageError
from workhearth.fsutil import append_line, file_lock, make_private_dir, make_private_file

OUTBOX_FILE = "outbox.sqlite"
DEAD_FILE = "dead-letters.jsonl"
LOCK_FILE = "outbox.lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    queued REAL NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT
)
"""


@dataclass(frozen=True)
class QueuedSave:
    """One save waiting for the server: ``body`` is the POST /v1/memory body."""

    seq: int
    key: str
    url: str
    body: dict[str, Any]
    queued: float
    attempts: int = 0
    last_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "url": self.url,
            "content": self.body.get("content", ""),
            "queued": self.queued,
            "attempts": self.attempts,
            "last_error": self.last_error,
        }


class Outbox:
    """The durable queue of saves under ``folder`` (``$HEARTH_HOME/bank``)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / OUTBOX_FILE
        self.dead_path = folder / DEAD_FILE
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                # Why private: queued saves are the user's memories in clear.
                make_private_dir(self.folder)
                make_private_file(self.path)
                conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute(_SCHEMA)
            except (OSError, sqlite3.Error) as exc:
                raise StorageError(f"cannot open the bank outbox {self.path}: {exc}") from None
            self._conn = conn
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def add(self, url: str, body: dict[str, Any]) -> QueuedSave:
        """Queue a save (durably, before any attempt to send it) under a new key."""
        key = str(uuid.uuid4())
        now = time.time()
        data = orjson.dumps(body).decode("utf-8")
        try:
            cur = self._db().execute(
                "INSERT INTO outbox (key, url, body, queued) VALUES (?, ?, ?, ?)",
                (key, url, data, now),
            )
        except sqlite3.Error as exc:
            raise StorageError(f"cannot queue the save in {self.path}: {exc}") from None
        return QueuedSave(int(cur.lastrowid or 0), key, url, body, now)

    def pending(self, url: str | None = None) -> list[QueuedSave]:
        """Queued saves, oldest first (only those for ``url`` when given)."""
        if not self.path.exists():
            return []
        sql = "SELECT seq, key, url, body, queued, attempts, last_error FROM outbox"
        args: tuple[str, ...] = ()
        if url is not None:
            sql += " WHERE url = ?"
            args = (url,)
        rows = self._db().execute(sql + " ORDER BY seq", args).fetchall()
        return [
            QueuedSave(seq, key, u, orjson.loads(body), queued, attempts, err)
            for seq, key, u, body, queued, attempts, err in rows
        ]

    def sent(self, key: str) -> None:
        """The server has it: forget it."""
        self._db().execute("DELETE FROM outbox WHERE key = ?", (key,))

    def failed(self, key: str, error: str) -> None:
        """A try that did not reach the server, or an answer that says try later."""
        self._db().execute(
            "UPDATE outbox SET attempts = attempts + 1, last_error = ? WHERE key = ?",
            (error, key),
        )

    def bury(self, item: QueuedSave, status: int, error: str) -> None:
        """Move a save the server refused to the dead letters, then out of the queue.

        Why in that order: a crash between the two leaves it in both, and the next
        send is refused again and recognised here as already buried.
        """
        if item.key not in {d.get("key") for d in self.dead()}:
            record = {**item.as_dict(), "body": item.body, "status": status, "error": error}
            record["buried"] = time.time()
            try:
                append_line(self.dead_path, orjson.dumps(record) + b"\n")
            except OSError as exc:
                raise StorageError(
                    f"cannot write the dead letter to {self.dead_path}: {exc.strerror}"
                ) from None
        self.sent(item.key)

    def dead(self) -> list[dict[str, Any]]:
        """Refused saves, oldest first (a torn last line from a crash is skipped)."""
        try:
            lines = self.dead_path.read_bytes().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict):
                out.append(record)
        return out

    @contextmanager
    def draining(self) -> Iterator[None]:
        """One sender at a time on this machine, so saves leave in queue order."""
        make_private_dir(self.folder)
        with file_lock(self.folder / LOCK_FILE):
            yield
