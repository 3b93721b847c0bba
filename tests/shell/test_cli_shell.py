"""``hearth shell snapshot``, driven through its Typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.shell.conftest import UserShell
from workhearth.cli.context import hearth
from workhearth.cli.shell import app


@pytest.fixture
def cli(bash_user: UserShell, monkeypatch: pytest.MonkeyPatch):
    for key, value in bash_user.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HEARTH_HOME", str(bash_user.paths.home))
    monkeypatch.chdir(bash_user.workspace)
    bash_user.rc("alias hello='echo hello'\n")
    hearth.cache_clear()
    yield CliRunner(), bash_user
    hearth.cache_clear()


def test_snapshot_prints_its_path_and_shows_it(cli) -> None:
    runner, user = cli
    result = runner.invoke(app, ["snapshot", "--show"])
    assert result.exit_code == 0, result.output
    first, rest = result.stdout.split("\n", 1)
    path = Path(first)
    assert path.parent == user.paths.project(user.workspace) / "shell-snapshots"
    assert path.name.startswith("snapshot-bash-")
    assert "alias hello='echo hello'" in rest


def test_snapshot_json(cli) -> None:
    runner, user = cli
    (user.home / ".bashrc").write_text("exit 1\n")
    result = runner.invoke(app, ["snapshot", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"path", "shell", "warning"}
    assert data["shell"] == "bash" and Path(data["path"]).is_file()
    assert "clean environment" in data["warning"]
