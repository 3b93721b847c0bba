"""Issue #17 hole 9: when PostgreSQL stops, the team server answers 503 at once, and it
answers 200 again within seconds of PostgreSQL's return — busy or idle meanwhile.

The real ``hearth serve --store`` on a PostgreSQL cluster of the test's own (the
session's shared server must never stop). The bounds are generous: the design
answers in well under a second both ways; the code before it took 30 s per request
and 78 s (busy) to ~4 minutes (idle) to recover.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.bank.pg_cluster import Cluster, pg_bindir
from tests.bank.team_server import TeamServer
from workhearth.bank.server.pool import StorePool, StoreUnreachable
from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user

DOWN_BOUND = 10.0  # seconds a request may take while the database is down
BACK_BOUND = 15.0  # seconds until the first 200 once the database is back


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    bindir = pg_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries: this test stops and starts a cluster of its own")
    own = Cluster(bindir, extra="-c fsync=off")
    own.start()
    yield own
    own.remove()


@pytest.fixture
def served(tmp_path: Path, cluster: Cluster) -> Iterator[tuple[TeamServer, dict[str, str]]]:
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE bank")
    store = cluster.url.rsplit("/", 1)[0] + "/bank"
    PgBank(store).close()
    with connect(store) as conn:
        headers = {"Authorization": f"Bearer {add_user(conn, 'ann')}"}
    srv = TeamServer(store, tmp_path / "home", tmp_path / "serve.log")
    srv.start()
    yield srv, headers
    srv.stop()


def _timed(c: httpx.Client, method: str, path: str, **kw: object) -> tuple[int, float, str]:
    t0 = time.monotonic()
    r = c.request(method, path, **kw)  # type: ignore[arg-type]
    return r.status_code, time.monotonic() - t0, r.text


def _until_200(c: httpx.Client, path: str) -> tuple[float, list[int]]:
    """Seconds until ``path`` answers 200 (polled every 0.1 s), and the statuses seen."""
    t0 = time.monotonic()
    seen: list[int] = []
    while time.monotonic() - t0 < 120:
        seen.append(c.get(path).status_code)
        if seen[-1] == 200:
            return time.monotonic() - t0, seen
        time.sleep(0.1)
    return float("inf"), seen


def test_a_busy_server_fails_fast_while_postgresql_is_down_and_recovers_at_once(
    cluster: Cluster, served: tuple[TeamServer, dict[str, str]]
) -> None:
    srv, h = served
    with httpx.Client(base_url=srv.url, headers=h, timeout=120) as c:
        assert c.post("/v1/memory", json={"content": "before the outage"}).status_code == 201
        cluster.stop()
        for method, path, body in (
            ("GET", "/v1/memory", None),
            ("POST", "/v1/memory", {"content": "during the outage"}),
            ("GET", "/v1/memory/search?q=outage", None),
            ("GET", "/v1/memory", None),
            ("GET", "/v1/info", None),
        ):
            status, took, text = _timed(c, method, path, json=body)
            assert status == 503, (path, status, text)
            assert "the team store is unreachable" in text and "127.0.0.1" not in text
            assert took < DOWN_BOUND, (path, took)
        cluster.start()
        took, seen = _until_200(c, "/v1/memory")
        assert took < BACK_BOUND, (took, seen)
        assert c.post("/v1/memory", json={"content": "after the outage"}).status_code == 201
    assert srv.contents() == ["before the outage", "after the outage"]
    log = srv.log.read_text()
    assert "Traceback" not in log, log[-3000:]


def test_an_idle_server_answers_its_first_request_after_postgresql_returns(
    cluster: Cluster, served: tuple[TeamServer, dict[str, str]]
) -> None:
    srv, h = served
    with httpx.Client(base_url=srv.url, headers=h, timeout=120) as c:
        # Several connections in the pool, all of which die with the database.
        threads = [
            threading.Thread(target=lambda: c.get("/v1/memory/search", params={"q": "x"}))
            for _ in range(6)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cluster.stop()
        time.sleep(2)  # no request while it is down
        cluster.start()
        status, took, text = _timed(c, "GET", "/v1/memory")
        assert (status, text) == (200, '{"entries":[],"next_cursor":null}')
        assert took < DOWN_BOUND, took
        for _ in range(8):
            assert c.get("/v1/memory").status_code == 200


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A TCP port that accepts connections and never says a word (a host that hangs)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(64)
        yield s.getsockname()[1]


@pytest.mark.parametrize(("query", "expected"), [("", 2), ("?connect_timeout=3", 3)])
def test_connecting_gives_up_after_the_connect_timeout(
    silent_port: int, query: str, expected: int
) -> None:
    pool = StorePool(f"postgresql://ann@127.0.0.1:{silent_port}/bank{query}")
    t0 = time.monotonic()
    with pytest.raises(StoreUnreachable, match="the team store is unreachable"), pool.connection():
        pass
    took = time.monotonic() - t0
    assert expected - 0.5 < took < expected + 3, took
    # Right after a failure, the next request does not wait for the same refusal.
    t0 = time.monotonic()
    with pytest.raises(StoreUnreachable), pool.connection():
        pass
    assert time.monotonic() - t0 < 0.4
    pool.close()
