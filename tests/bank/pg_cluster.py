"""A throwaway PostgreSQL cluster from Debian's binaries, that a test may stop and start.

The session's shared server (conftest ``pg_server``) must never stop; a test that
takes PostgreSQL away (tests/bank/test_outage.py) makes one of these instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests import ports


def pg_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/*/bin``, or None when PostgreSQL is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def as_postgres(args: list[str]) -> list[str]:
    # Why: PostgreSQL refuses to run as root; CI runs as root, a developer does not.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


def free_port() -> int:
    # Why not bind(0): a stopped cluster's port must stay free until it starts again.
    return ports.free_port()


@dataclass
class Server:
    """The PostgreSQL server the team tests share."""

    url: str  # superuser URL of the maintenance database
    data: Path | None  # the data directory, when this machine can read it

    def url_for(self, dbname: str) -> str:
        return self.url.rsplit("/", 1)[0] + "/" + dbname


@dataclass
class Cluster:
    """``initdb`` in a fresh temporary folder; :meth:`start` / :meth:`stop` as often as needed."""

    bindir: Path
    extra: str = ""  # more ``-c name=value`` server options
    port: int = field(default_factory=free_port)
    root: Path = field(init=False)

    def __post_init__(self) -> None:
        # Why not tmp_path: pytest's folders are private to root, which the postgres
        # user cannot enter.
        self.root = Path(tempfile.mkdtemp(prefix="hearth-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            as_postgres(
                [
                    str(self.bindir / "initdb"),
                    *("-D", str(self.data), "-U", "postgres", "--auth=trust"),
                    *("-E", "UTF8", "--locale=C.UTF-8"),
                ]
            ),
            check=True,
            capture_output=True,
        )

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        """The superuser URL of the maintenance database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            as_postgres([str(self.bindir / "pg_ctl"), "-D", str(self.data), *args]),
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        opts = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} "
            f"-c unix_socket_directories={self.root} {self.extra}"
        )
        self._ctl("-l", str(self.root / "log"), "-w", "-o", opts, "start")

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")

    def remove(self) -> None:
        """Stop the server if it runs, and delete the cluster."""
        subprocess.run(
            as_postgres([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"]),
            capture_output=True,
            timeout=120,
        )
        shutil.rmtree(self.root, ignore_errors=True)
