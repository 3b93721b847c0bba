from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.config import Config, load_config
from workhearth.sessions.store import SessionStore


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return load_config({"HEARTH_HOME": str(tmp_path / "home")})


@pytest.fixture
def store(config: Config, tmp_path: Path) -> SessionStore:
    ws = tmp_path / "work"
    ws.mkdir()
    return SessionStore(config, ws)


def user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}
