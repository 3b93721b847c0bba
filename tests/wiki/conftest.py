"""Library-level wiki fixtures: a home, a workspace, and ``wh`` wired to a scripted model
server (tests/wiki/model.py) that counts the calls."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.wiki.model import WikiModel, model_env
from workhearth.app import Workhearth
from workhearth.config import load_config


@dataclass
class WikiSetup:
    home: Path
    workspace: Path
    fake: WikiModel

    def hearth(self, *, model: bool = True, workspace: Path | None = None) -> Workhearth:
        env = {"HEARTH_HOME": str(self.home), **(model_env(self.fake) if model else {})}
        return Workhearth(config=load_config(env), workspace=workspace or self.workspace)

    def write(self, rel: str, text: str | bytes) -> Path:
        path = self.workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[WikiSetup]:
    home = tmp_path / "home"
    home.mkdir()
    # Why no retries: a call hearth should not make must show as a count, not a back-off.
    (home / "config.toml").write_text("[models]\nmax_retries = 0\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with WikiModel() as fake:
        yield WikiSetup(home, workspace, fake)


@pytest.fixture
def code_repo(setup: WikiSetup) -> WikiSetup:
    """A small git repository: a package, its tests, docs, and a top-level README."""
    git_init(setup.workspace)
    setup.write("README.md", "# Demo\n\nA tiny project.\n")
    setup.write(".gitignore", "build/\n*.log\n")
    setup.write("src/demo/__init__.py", '"""The demo package."""\n')
    setup.write("src/demo/core.py", "def add(a, b):\n    return a + b\n")
    setup.write("src/demo/cli.py", "from demo.core import add\n\nprint(add(1, 2))\n")
    setup.write("tests/test_core.py", "def test_add():\n    assert 1 + 1 == 2\n")
    setup.write("docs/guide.md", "# Guide\n\nRun it.\n")
    setup.write("build/out.txt", "generated\n")
    setup.write("run.log", "noise\n")
    return setup


Writer = Callable[[str, str], Path]
