"""A real PostgreSQL server for the team store's tests.

``.ci/run`` starts one and exports ``HEARTH_TEST_PG`` (a superuser URL) and
``HEARTH_TEST_PG_DATA`` (its data directory). Without them, when Debian's
PostgreSQL binaries are installed, the session starts its own throwaway cluster
in a temporary folder on a free loopback port and stops it at the end (under
pytest-xdist, one per worker). Each test gets a database of its own, so workers
sharing ``HEARTH_TEST_PG`` never meet; a test that stops PostgreSQL makes its own
cluster (``pg_cluster.Cluster``).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.bank.pg_cluster import Cluster, Server, pg_bindir
from tests.ports import worker_tag

psycopg = pytest.importorskip("psycopg", reason="the team extra (psycopg) is not installed")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    url = os.environ.get("HEARTH_TEST_PG")
    if url:
        data = os.environ.get("HEARTH_TEST_PG_DATA")
        yield Server(url, Path(data) if data else None)
        return
    bindir = pg_bindir()
    if bindir is None:
        pytest.skip("no PostgreSQL: set HEARTH_TEST_PG or install Debian's postgresql")
    cluster = Cluster(bindir, extra="-c fsync=off")
    try:
        cluster.start()
        yield Server(cluster.url, cluster.data)
    finally:
        cluster.remove()


@pytest.fixture
def new_db(pg_server: Server) -> Iterator[Callable[[], str]]:
    """Make fresh, empty databases on the test server; all are dropped after the test."""
    made: list[str] = []

    def make() -> str:
        # Why the worker's tag: under pytest-xdist the workers share HEARTH_TEST_PG's
        # server; the random part keeps them apart, the tag says whose a database is.
        name = f"hearth_{worker_tag()}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(pg_server.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        made.append(name)
        return pg_server.url_for(name)

    yield make
    for name in made:
        for _ in range(50):
            try:
                with psycopg.connect(pg_server.url, autocommit=True) as conn:
                    conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                break
            except psycopg.Error:
                time.sleep(0.1)


@pytest.fixture
def pg_url(new_db: Callable[[], str]) -> str:
    """A fresh, empty database on the test server, dropped after the test."""
    return new_db()
