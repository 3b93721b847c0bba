"""Schemathesis on the ``/v1/tasks`` routes: no 5xx and no answer the schema does not describe.

No model is configured, so no request can start a model run: what is fuzzed is
the validation and error paths (bad bodies, ids, answers, Last-Event-ID headers).
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from workhearth.config import load_config
from workhearth.server.app import create_app
from workhearth.server.security import load_or_create_token


def _serve():  # type: ignore[no-untyped-def]
    root = Path(tempfile.mkdtemp(prefix="hearth-tasks-fuzz-"))
    (root / "workspace").mkdir()
    config = load_config({"HEARTH_HOME": str(root / "home")})
    token = load_or_create_token(root / "home")
    app = create_app(config, token=token, workspace=root / "workspace")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    return token, f"http://127.0.0.1:{sock.getsockname()[1]}", server, thread


# Why at import: schemathesis parametrizes the test from the schema when it is collected.
TOKEN, BASE_URL, SERVER, THREAD = _serve()
schema = schemathesis.openapi.from_url(f"{BASE_URL}/openapi.json").include(path_regex="^/v1/tasks")


@pytest.fixture(scope="module", autouse=True)
def _stop_server():  # type: ignore[no-untyped-def]
    yield
    SERVER.should_exit = True
    THREAD.join(timeout=10)


@schema.parametrize()
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_task_routes_conform_to_their_schema(case: schemathesis.Case) -> None:
    case.call_and_validate(
        base_url=BASE_URL,
        headers={"Authorization": f"Bearer {TOKEN}"},
        # Why: "no model configured" and "no such session" are right answers to valid requests.
        excluded_checks=[positive_data_acceptance],
        timeout=20,
    )
