"""Authorized folders: persisted in workspaces.json; the current folder is authorized by default."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from workhearth.agent.workspace import Workspaces
from workhearth.config import Config
from workhearth.errors import CorruptDataError, NotFoundError, UsageError


def test_add_list_remove_persist(config: Config, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    ws = Workspaces(config.paths)
    assert ws.list() == []
    ws.add(a)
    ws.add(b)
    ws.add(a)  # twice: no duplicate
    again = Workspaces(config.paths)
    assert [f.path for f in again.list()] == [str(a), str(b)]
    raw = json.loads((config.home / "workspaces.json").read_text())
    assert raw["version"] == 1 and len(raw["workspaces"]) == 2
    removed = again.remove(a)
    assert removed.path == str(a)
    assert [f.path for f in Workspaces(config.paths).list()] == [str(b)]
    with pytest.raises(NotFoundError):
        again.remove(a)


def test_add_refuses_missing_folders_files_and_the_home(config: Config, tmp_path: Path) -> None:
    ws = Workspaces(config.paths)
    with pytest.raises(UsageError, match="not an existing folder"):
        ws.add(tmp_path / "missing")
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError):
        ws.add(tmp_path / "f")
    (config.home / "projects").mkdir(parents=True)
    for inside in (config.home, config.home / "projects"):
        with pytest.raises(UsageError, match="own data folder"):
            ws.add(inside)


def test_roots_put_the_current_workspace_first(config: Config, tmp_path: Path) -> None:
    cur, extra, gone = tmp_path / "cur", tmp_path / "extra", tmp_path / "gone"
    for d in (cur, extra, gone):
        d.mkdir()
    Workspaces(config.paths).add(extra)
    Workspaces(config.paths).add(gone)
    Workspaces(config.paths).add(cur)
    gone.rmdir()
    assert Workspaces(config.paths, current=cur).roots() == [cur, extra]
    assert Workspaces(config.paths).roots() == [extra, cur]
    assert Workspaces(config.paths, current=config.home).roots() == [extra, cur]
    assert Workspaces(config.paths).protected() == [config.home]


def test_concurrent_adds_are_not_lost(config: Config, tmp_path: Path) -> None:
    folders = [tmp_path / f"d{i}" for i in range(12)]
    for d in folders:
        d.mkdir()
    threads = [threading.Thread(target=Workspaces(config.paths).add, args=(d,)) for d in folders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {f.path for f in Workspaces(config.paths).list()} == {str(d) for d in folders}


def test_a_damaged_file_is_reported(config: Config) -> None:
    config.home.mkdir(parents=True)
    (config.home / "workspaces.json").write_text("{not json")
    with pytest.raises(CorruptDataError, match=r"workspaces\.json"):
        Workspaces(config.paths).list()
