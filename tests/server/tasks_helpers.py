"""A real ``create_app`` server on loopback (uvicorn in a thread) and an SSE reader, for task tests.

Every request goes over a real socket, so the event stream is read as a browser
reads it: event by event, while the task runs.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import uvicorn

from tests import ports
from tests.fake_providers import FakeProvider
from workhearth.config import load_config
from workhearth.server.app import create_app

TOKEN = "t" * 43
MODEL = "openai:qwen-plus"


@dataclass
class Event:
    name: str
    data: dict[str, Any]
    id: str | None


def read_events(lines: Iterator[str]) -> Iterator[Event]:
    """Parse SSE lines into events (comments and ``retry:`` lines skipped)."""
    name, data, eid = "message", "", None
    for line in lines:
        if line == "":
            if data:
                yield Event(name, orjson.loads(data), eid)
            name, data, eid = "message", "", None
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if key == "event":
                name = value
            elif key == "data":
                data += value
            elif key == "id":
                eid = value


def free_port() -> int:
    return ports.free_port()  # a block per xdist worker (tests/ports.py)


@dataclass
class Api:
    client: httpx.Client
    app: Any

    def start(self, **body: Any) -> str:
        answer = self.client.post("/v1/tasks", json=body)
        assert answer.status_code == 201, answer.text
        return str(answer.json()["session_id"])

    @contextlib.contextmanager
    def events(self, session_id: str, **headers: str) -> Iterator[Iterator[Event]]:
        with self.client.stream(
            "GET", f"/v1/tasks/{session_id}/events", headers=headers, timeout=30
        ) as answer:
            assert answer.status_code == 200, answer.read()
            assert answer.headers["content-type"].startswith("text/event-stream")
            yield read_events(answer.iter_lines())

    def until(self, events: Iterator[Event], name: str) -> list[Event]:
        """Events up to and including the first named ``name``."""
        seen = []
        for event in events:
            seen.append(event)
            if event.name == name:
                return seen
        raise AssertionError(f"the stream ended before {name!r}: {seen}")

    def wait_status(self, session_id: str, status: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            info = self.client.get(f"/v1/tasks/{session_id}").json()
            if info["status"] == status or time.monotonic() > deadline:
                assert info["status"] == status, info
                return dict(info)
            time.sleep(0.05)


def model_env(home: Path, fake: FakeProvider | None) -> dict[str, str]:
    env = {"HEARTH_HOME": str(home)}
    if fake is not None:
        env |= {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}
    return env


@contextlib.contextmanager
def running_api(
    home: Path, workspace: Path, fake: FakeProvider | None, *, heartbeat: float | None = None
) -> Iterator[Api]:
    """``create_app`` for ``home`` served by uvicorn on a free port, with a logged-in client."""
    home.mkdir(parents=True, exist_ok=True)
    config_file = home / "config.toml"
    if not config_file.exists():
        # Why: a bug that calls the fake once too often should fail fast, not back off.
        config_file.write_text("[models]\nmax_retries = 0\n")
    config = load_config(model_env(home, fake))
    app = create_app(config, token=TOKEN, workspace=workspace)
    app.state.tasks.env = {"PATH": "/usr/bin:/bin", "HOME": str(home.parent)}
    if heartbeat is not None:
        app.state.tasks.heartbeat = heartbeat
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=20
        ) as client:
            yield Api(client, app)
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
