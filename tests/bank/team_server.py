"""The real ``hearth serve --store`` as a subprocess, for the team tests."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests import ports
from tests.e2e.conftest import HEARTH_CMD
from workhearth.bank.server.store import connect


def free_port() -> int:
    # Why not bind(0): a test restarts its server on the same port (tests/ports.py).
    return ports.free_port()


@dataclass
class TeamServer:
    """One ``hearth serve --store`` process; ``start`` waits until it answers."""

    store: str
    home: Path
    log: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self, *args: str) -> list[str]:
        return [*HEARTH_CMD, "serve", "--store", self.store, "--port", str(self.port), *args]

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
        env["HEARTH_HOME"] = str(self.home)
        return env

    def start(self, *args: str) -> None:
        assert self.proc is None
        self.home.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                self.command(*args), cwd=self.home, env=self.env(), stdout=log, stderr=log
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log.read_text()
            try:
                # Why a real request, not a port probe: the socket listens before the app is up.
                httpx.get(f"{self.url}/v1/info", timeout=2)
                return
            except httpx.TransportError:
                time.sleep(0.1)
        raise AssertionError("hearth serve --store did not start: " + self.log.read_text())

    def stop(self, *, kill: bool = True) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            self.proc.wait(30)
            self.proc = None

    def contents(self, owner: str = "ann", *, deleted: bool = False) -> list[str]:
        where = "" if deleted else " AND deleted IS NULL"
        with connect(self.store) as conn:
            rows = conn.execute(
                f"SELECT content FROM entries WHERE owner = %s{where} ORDER BY created, id",
                (owner,),
            ).fetchall()
        return [r[0] for r in rows]
