"""Which ``hearth serve`` runs from a home: ``$HEARTH_HOME/server.json`` (0600).

Written once the server listens, removed when it stops; ``hearth serve --login-url``
reads it to ask that server (with the bearer token) for a fresh one-time login URL.
A file left by a killed server names a process that is gone or a port nobody answers
on: readers check, and say no server runs.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import orjson

from workhearth.fsutil import atomic_write

RUNNING_FILE = "server.json"


def mark_running(home: Path, url: str) -> None:
    """Record that this process serves ``url`` for ``home`` (best effort: a read-only
    home only costs ``--login-url``)."""
    data = {"url": url, "pid": os.getpid()}
    with contextlib.suppress(OSError):
        atomic_write(home / RUNNING_FILE, orjson.dumps(data), 0o600)


def clear_running(home: Path) -> None:
    """Remove the record if it is still this process's (a newer server's stays)."""
    path = home / RUNNING_FILE
    with contextlib.suppress(OSError, orjson.JSONDecodeError):
        data = orjson.loads(path.read_bytes())
        if isinstance(data, dict) and data.get("pid") == os.getpid():
            path.unlink()


def running_url(home: Path) -> str | None:
    """The URL of the server running from ``home`` (None: none recorded, or its process is gone)."""
    try:
        data = orjson.loads((home / RUNNING_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    url, pid = data.get("url"), data.get("pid")
    if not isinstance(url, str) or not isinstance(pid, int) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's: the request below decides
    return url


__all__ = ["RUNNING_FILE", "clear_running", "mark_running", "running_url"]
