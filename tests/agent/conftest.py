"""Agent fixtures: a real home, a workspace with an outside folder beside it, a real session."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from workhearth.agent.safefs import SafeFS
from workhearth.config import Config, load_config
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore
from workhearth.trash import Trash


@dataclass
class Tree:
    """``work/`` is authorized; ``outside/`` beside it holds a secret that must stay unreachable."""

    root: Path
    outside: Path
    secret: Path


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path / "work"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "README.md").write_text("# readme\n")
    secret = outside / "secret.txt"
    secret.write_text("TOP SECRET\n")
    return Tree(root, outside, secret)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return load_config({"HEARTH_HOME": str(tmp_path / "home")})


@pytest.fixture
def fs(tree: Tree, config: Config) -> SafeFS:
    return SafeFS([tree.root], trash=Trash(config.paths.trash), protected=[config.home])


@pytest.fixture
def store(config: Config, tree: Tree) -> SessionStore:
    return SessionStore(config, tree.root)


@pytest.fixture
def session(store: SessionStore) -> Iterator[Session]:
    s = store.create(mode="agent")
    yield s
    s.close()
