"""The server in-process (TestClient) over a temporary HEARTH_HOME and workspace."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.fake_providers import FakeProvider, Reply
from tests.server.tasks_helpers import Api, running_api
from workhearth.app import Workhearth
from workhearth.config import Config, load_config
from workhearth.server.app import create_app
from workhearth.server.security import load_or_create_token

BASE = "http://127.0.0.1:8765"


@dataclass
class Served:
    app: FastAPI
    client: TestClient  # no credentials
    api: TestClient  # with the bearer token
    config: Config
    token: str
    home: Path
    workspace: Path

    def library(self, workspace: Path | None = None) -> Workhearth:
        return Workhearth(config=self.config, workspace=workspace or self.workspace)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    workspace.mkdir()
    config = load_config({"HEARTH_HOME": str(home)})
    token = load_or_create_token(home)
    app = create_app(config, token=token, workspace=workspace)
    client = TestClient(app, base_url=BASE)
    # Why only this one entered: it runs the app's lifespan (start and shutdown) once.
    with TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {token}"}) as api:
        yield Served(app, client, api, config, token, home, workspace)


@pytest.fixture
def api_for(
    tmp_path: Path, serve: Callable[[list[Reply]], FakeProvider]
) -> Iterator[Callable[..., Api]]:
    """``api_for(replies)`` -> a running API whose model plays ``replies``."""
    stack: list[Any] = []

    def make(replies: list[Reply] | None, **kw: Any) -> Api:
        fake = serve(replies) if replies is not None else None
        (tmp_path / "workspace").mkdir(exist_ok=True)
        cm = running_api(tmp_path / "home", tmp_path / "workspace", fake, **kw)
        stack.append(cm)
        api = cm.__enter__()
        api.fake = fake  # type: ignore[attr-defined]
        return api

    yield make
    for cm in reversed(stack):
        cm.__exit__(None, None, None)
