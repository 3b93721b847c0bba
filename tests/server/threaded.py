"""A real uvicorn server in a thread over a fresh home: one per fuzzed test module.

Why at import time: schemathesis parametrizes a test from the schema when it is collected.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from workhearth.config import load_config
from workhearth.server.app import create_app
from workhearth.server.security import load_or_create_token


@dataclass
class Threaded:
    app: FastAPI
    token: str
    base_url: str
    server: uvicorn.Server
    thread: threading.Thread
    workspace: Path


def serve_in_thread(prefix: str) -> Threaded:
    """Start ``hearth serve``'s app on a free loopback port in a fresh temporary home."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    workspace = root / "workspace"
    workspace.mkdir()
    config = load_config({"HEARTH_HOME": str(root / "home")})
    token = load_or_create_token(root / "home")
    app = create_app(config, token=token, workspace=workspace)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    return Threaded(app, token, base_url, server, thread, workspace)
