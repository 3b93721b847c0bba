"""A real PostgreSQL server for the team store's tests.

``.ci/run`` starts one and exports ``HEARTH_TEST_PG`` (a superuser URL) and
``HEARTH_TEST_PG_DATA`` (its data directory). Without them, when Debian's
PostgreSQL binaries are installed, the session starts its own throwaway cluster
in a temporary folder on a free loopback port and stops it at the end. Each test
gets a database of its own.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg", reason="the team extra (psycopg) is not installed")


@dataclass
class Server:
    url: str  # superuser URL of the maintenance database
    data: Path | None  # the data directory, when this machine can read it

    def url_for(self, dbname: str) -> str:
        return self.url.rsplit("/", 1)[0] + "/" + dbname


def _as_postgres(args: list[str]) -> list[str]:
    # Why: PostgreSQL refuses to run as root; CI runs as root, a developer does not.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    url = os.environ.get("HEARTH_TEST_PG")
    if url:
        data = os.environ.get("HEARTH_TEST_PG_DATA")
        yield Server(url, Path(data) if data else None)
        return
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not bins:
        pytest.skip("no PostgreSQL: set HEARTH_TEST_PG or install Debian's postgresql")
    bindir = Path(bins[-1]).parent
    # Why not tmp_path: pytest's folders are private to root, which the postgres
    # user cannot enter.
    root = Path(tempfile.mkdtemp(prefix="hearth-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    subprocess.run(
        _as_postgres(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ]
        ),
        check=True,
        capture_output=True,
    )
    port = _free_port()
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={root} -c fsync=off"
    subprocess.run(
        _as_postgres(
            [
                str(bindir / "pg_ctl"),
                "-D",
                str(data),
                "-l",
                str(root / "log"),
                "-w",
                "-o",
                opts,
                "start",
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield Server(f"postgresql://postgres@127.0.0.1:{port}/postgres", data)
    finally:
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def new_db(pg_server: Server) -> Iterator[Callable[[], str]]:
    """Make fresh, empty databases on the test server; all are dropped after the test."""
    made: list[str] = []

    def make() -> str:
        name = "hearth_" + uuid.uuid4().hex[:12]
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
