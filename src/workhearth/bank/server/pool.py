"""Connections to the team store: fail fast while PostgreSQL is down, recover the moment it is back.

Why not psycopg_pool: it refills in the background with exponential back-off (1, 2,
4 … s, for up to five minutes) and a request waits up to 30 s for a connection. An
adversarial trial (issue #17) measured 30 s per request while the database was down,
the first answer 78 s after it returned, and an idle server answering 503 for four
minutes. Here a request that finds no healthy idle connection opens one itself:

- a connect attempt waits at most ``connect_timeout`` seconds (2 by default; a
  ``connect_timeout`` in the store URL wins), and for ``RETRY_AFTER`` seconds after a
  failed one, requests fail at once instead of each waiting for the same refusal;
- an idle connection is checked with a round trip before it is handed out when it sat
  unused for ``PING_AFTER`` seconds or more (the database may have restarted meanwhile),
  so the first request after PostgreSQL returns gets through instead of a dead socket;
- a connection a request broke is closed, never returned to the pool.

A store that cannot be reached raises :class:`StoreUnreachable` (HTTP 503).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg.pq import TransactionStatus

from workhearth.errors import HearthError

CONNECT_TIMEOUT = 2  # seconds; libpq takes whole seconds and treats less than 2 as 2
PING_AFTER = 1.0  # seconds unused after which an idle connection is checked first
RETRY_AFTER = 0.5  # seconds after a failed connect during which requests fail at once
SLOT_WAIT = 30.0  # seconds a request waits for one of the max_size connections
MAX_IDLE = 600.0  # an idle connection unused this long is closed
MAX_LIFETIME = 3600.0  # a connection this old is closed when it comes back
UNREACHABLE = "the team store is unreachable"


class StoreUnreachable(HearthError):
    """The team store did not answer (down, refusing, or too slow); try again later."""


def connect_timeout_of(url: str) -> int:
    """The store URL's own ``connect_timeout``, else :data:`CONNECT_TIMEOUT`."""
    value = psycopg.conninfo.conninfo_to_dict(url).get("connect_timeout")
    try:
        return max(int(str(value)), 1) if value is not None else CONNECT_TIMEOUT
    except ValueError:
        return CONNECT_TIMEOUT


class StorePool:
    """At most ``max_size`` autocommit connections to ``url``, opened on demand."""

    def __init__(self, url: str, *, max_size: int = 8, connect_timeout: int | None = None) -> None:
        self.url = url
        self.connect_timeout = connect_timeout or connect_timeout_of(url)
        self._slots = threading.BoundedSemaphore(max_size)
        self._lock = threading.Lock()
        self._idle: list[tuple[psycopg.Connection, float, float]] = []  # conn, idle since, born
        self._failed_at = float("-inf")
        self._closed = False

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A working connection for one request; :class:`StoreUnreachable` when there is none."""
        if not self._slots.acquire(timeout=SLOT_WAIT):
            raise StoreUnreachable(f"{UNREACHABLE}: no free connection within {SLOT_WAIT:g} s")
        try:
            conn, born = self._get()
            try:
                yield conn
            finally:
                self._put(conn, born)
        finally:
            self._slots.release()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _, _ in idle:
            conn.close()

    # ------------------------------------------------------------ internals
    def _get(self) -> tuple[psycopg.Connection, float]:
        while True:
            with self._lock:
                if self._closed:
                    raise StoreUnreachable(f"{UNREACHABLE}: the server is stopping")
                found = self._idle.pop() if self._idle else None
            if found is None:
                return self._open(), time.monotonic()
            conn, idle_since, born = found
            if self._usable(conn, idle_since):
                return conn, born
            conn.close()

    def _usable(self, conn: psycopg.Connection, idle_since: float) -> bool:
        idle = time.monotonic() - idle_since
        if conn.closed or conn.broken or idle > MAX_IDLE:
            return False
        if idle < PING_AFTER:
            return True
        # Why a round trip only after a pause: a connection in steady use is checked
        # by that use; one left idle may belong to a server that restarted since.
        try:
            conn.execute("")
        except psycopg.Error:
            return False
        return True

    def _open(self) -> psycopg.Connection:
        if time.monotonic() - self._failed_at < RETRY_AFTER:
            raise StoreUnreachable(UNREACHABLE)
        try:
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=self.connect_timeout)
        except psycopg.OperationalError:
            self._failed_at = time.monotonic()
            raise StoreUnreachable(UNREACHABLE) from None
        self._failed_at = float("-inf")
        return conn

    def _put(self, conn: psycopg.Connection, born: float) -> None:
        now = time.monotonic()
        healthy = (
            not conn.closed
            and not conn.broken
            and conn.info.transaction_status == TransactionStatus.IDLE
            and now - born < MAX_LIFETIME
        )
        stale = []
        with self._lock:
            # Why here: the least recently used sit at the bottom, unused under light load.
            while self._idle and now - self._idle[0][1] > MAX_IDLE:
                stale.append(self._idle.pop(0)[0])
            if healthy and not self._closed:
                self._idle.append((conn, now, born))
            else:
                stale.append(conn)
        for old in stale:
            old.close()
