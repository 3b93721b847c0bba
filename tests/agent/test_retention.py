"""Retention: old trash, file history, tool outputs and audit lines go; nothing else does.

Files are aged with ``os.utime``, trash items and audit lines by the times they
record, all on a real home with real sessions.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import orjson
import pytest

from tests.agent.conftest import Tree
from tests.e2e.conftest import make_hearth, tree_digest
from workhearth.agent.audit import AuditLog
from workhearth.agent.checkpoints import ContentStore
from workhearth.agent.history import FileHistory
from workhearth.agent.retention import DAY, MARKER, sweep, sweep_if_due
from workhearth.agent.runner import RunOptions, housekeeping
from workhearth.app import Workhearth
from workhearth.config import Config, RetentionConfig, load_config
from workhearth.errors import ConfigError
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore
from workhearth.trash import Trash

NOW = time.time()
KEEP_ALL = RetentionConfig(trash_days=0, file_history_days=0, tool_outputs_days=0, audit_days=0)


def age(path: Path, days: float) -> None:
    stamp = NOW - days * DAY
    os.utime(path, (stamp, stamp))


def trash_item(config: Config, tree: Tree, name: str, days: float) -> str:
    path = tree.root / name
    path.write_text(name)
    item = Trash(config.paths.trash).put(path)
    manifest = config.paths.trash / item.id / "manifest.json"
    data = orjson.loads(manifest.read_bytes())
    data["deleted_at"] = NOW - days * DAY
    manifest.write_bytes(orjson.dumps(data))
    return item.id


def versions(session: Session, *ages: float) -> FileHistory:
    """One kept version per age (days), numbered 1, 2, … in that order: the manifest's
    time moved back, and the content in the store as old."""
    history = FileHistory(session)
    store = ContentStore(session.folder.parent.parent / "checkpoints-store", session.cipher)
    for n, days in enumerate(ages, 1):
        item = history.save(f"/work/file{n}.txt", f"version {n}".encode(), call_id=f"call_{n}")
        age(store.path(item.sha or ""), days)
    lines = [orjson.loads(line) for line in history.manifest.read_bytes().splitlines()]
    for line, days in zip(lines, ages, strict=True):
        line["time"] = NOW - days * DAY
    history.manifest.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return history


def outputs(session: Session, *ages: float) -> list[Path]:
    paths = [session.write_tool_output(f"call_{n}", f"output {n}") for n in range(len(ages))]
    for path, days in zip(paths, ages, strict=True):
        age(path, days)
    return paths


def audit_lines(config: Config, *ages: float) -> list[bytes]:
    """Real audit records, their times moved back by ``ages`` days."""
    log = AuditLog(config.paths.audit_log)
    for n, _ in enumerate(ages):
        log.record(
            session="s", mode="agent", tool="read_file", decision="allowed-by-mode", call_id=str(n)
        )
    lines = config.paths.audit_log.read_bytes().splitlines()
    aged = []
    for line, days in zip(lines, ages, strict=True):
        record = orjson.loads(line)
        record["time"] = NOW - days * DAY
        aged.append(orjson.dumps(record))
    config.paths.audit_log.write_bytes(b"".join(line + b"\n" for line in aged))
    return aged


# ------------------------------------------------------------------- each kind


def test_old_trash_items_go_and_recent_ones_stay(config: Config, tree: Tree) -> None:
    old = trash_item(config, tree, "old.txt", 40)
    recent = trash_item(config, tree, "recent.txt", 5)
    report = sweep(config.paths, RetentionConfig(trash_days=30), NOW)
    assert report.trash == 1
    assert [i.id for i in Trash(config.paths.trash).list()] == [recent]
    assert not (config.paths.trash / old).exists()


def test_old_file_history_versions_go_with_their_manifest_lines(session: Session) -> None:
    history = versions(session, 45, 31, 2)
    report = sweep(session.config.paths, RetentionConfig(file_history_days=30), NOW)
    assert report.file_history == 2
    assert [i.n for i in history.list()] == [3]
    assert history.read(3) == b"version 3"
    assert sorted(p.name for p in history.folder.iterdir()) == ["manifest.jsonl"]
    # Numbering goes on after the kept version.
    assert history.save("/work/x", b"next").n == 4


def test_when_every_version_is_old_the_history_folder_goes(session: Session) -> None:
    history = versions(session, 40, 35)
    assert sweep(session.config.paths, RetentionConfig(), NOW).file_history == 2
    assert not history.folder.exists()
    assert history.list() == []
    assert history.save("/work/x", b"fresh").n == 1
    assert [i.n for i in history.list()] == [1]


def test_encrypted_file_history_is_pruned_by_version_number(tmp_path: Path, tree: Tree) -> None:
    config = load_config(
        {"HEARTH_HOME": str(tmp_path / "h"), "HEARTH_ENCRYPT": "1", "HEARTH_PASSPHRASE": "pw"}
    )
    with SessionStore(config, tree.root).create() as session:
        history = versions(session, 50, 1)
        assert b"file1" not in history.manifest.read_bytes()  # sealed lines
        assert sweep(config.paths, RetentionConfig(), NOW).file_history == 1
        assert [i.n for i in history.list()] == [2]
        assert history.read(2) == b"version 2"


def test_old_tool_outputs_go(session: Session) -> None:
    old, recent = outputs(session, 31, 29)
    report = sweep(session.config.paths, RetentionConfig(tool_outputs_days=30), NOW)
    assert report.tool_outputs == 1
    assert not old.exists() and recent.read_text() == "output 1"


def test_old_audit_lines_go_and_unreadable_ones_stay(config: Config) -> None:
    lines = audit_lines(config, 120, 91, 89, 0)
    path = config.paths.audit_log
    garbage = b"{not json"
    no_time = orjson.dumps({"tool": "x"})
    torn = lines[0][:25]  # a crash mid-write: the last line has no newline
    path.write_bytes(
        lines[0] + b"\n" + garbage + b"\n" + b"".join(x + b"\n" for x in lines[1:]) + no_time
    )
    path.write_bytes(path.read_bytes() + b"\n" + torn)

    report = sweep(config.paths, RetentionConfig(audit_days=90), NOW)
    assert report.audit == 2
    assert path.read_bytes() == garbage + b"\n" + lines[2] + b"\n" + lines[3] + b"\n" + (
        no_time + b"\n" + torn
    )
    assert [r.call_id for r in AuditLog(path).read()] == ["2", "3"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # Nothing old left: the file is not rewritten at all.
    inode = path.stat().st_ino
    assert sweep(config.paths, RetentionConfig(audit_days=90), NOW).audit == 0
    assert path.stat().st_ino == inode


def test_zero_days_keeps_everything(config: Config, tree: Tree, session: Session) -> None:
    trash_item(config, tree, "old.txt", 4000)
    versions(session, 4000)
    outputs(session, 4000)
    audit_lines(config, 4000)
    before = tree_digest(config.home)
    assert sweep(config.paths, KEEP_ALL, NOW).as_dict() == {
        "trash": 0,
        "file_history": 0,
        "tool_outputs": 0,
        "audit": 0,
        "checkpoints": 0,
    }
    assert tree_digest(config.home) == before


def test_transcripts_and_memory_are_never_touched(tmp_path: Path, tree: Tree) -> None:
    wh = Workhearth(config=load_config({"HEARTH_HOME": str(tmp_path / "h")}), workspace=tree.root)
    wh.memory.save("The user prefers tabs.")
    with wh.sessions.create() as session:
        session.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        versions(session, 100)
        outputs(session, 100)
    wh.memory.close()
    for path in wh.home.rglob("*"):
        if path.is_file():
            age(path, 1000)
    kept = {
        p: p.read_bytes()
        for p in wh.home.rglob("*")
        if p.is_file() and ("awareness" in p.parts or p.name == "transcript.jsonl")
    }
    assert any("awareness" in p.parts for p in kept) and any(
        p.name == "transcript.jsonl" for p in kept
    )
    report = sweep(wh.paths, RetentionConfig(), NOW)
    assert (report.file_history, report.tool_outputs) == (1, 1)
    assert {p: p.read_bytes() for p in kept} == kept


def test_a_session_being_written_is_left_for_the_next_sweep(
    store: SessionStore, config: Config
) -> None:
    session = store.create()
    session.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    (old,) = outputs(session, 60)  # the writer holds the transcript lock now
    assert sweep(config.paths, RetentionConfig(), NOW).tool_outputs == 0
    assert old.exists()
    session.close()
    assert sweep(config.paths, RetentionConfig(), NOW).tool_outputs == 1
    assert not old.exists()
    # The sweep let go of the lock: the session can be written again.
    with store.open(session.id) as again:
        again.append_message({"role": "user", "content": [{"type": "text", "text": "more"}]})


# ------------------------------------------------------------------- once a day


def test_the_sweep_runs_at_most_once_a_day(config: Config, tree: Tree, session: Session) -> None:
    config.home.mkdir(parents=True, exist_ok=True)
    trash_item(config, tree, "first.txt", 40)
    first = sweep_if_due(config.paths, RetentionConfig(), now=NOW)
    assert first is not None and first.trash == 1
    marker = config.home / MARKER
    assert orjson.loads(marker.read_bytes())["time"] == NOW
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600

    trash_item(config, tree, "second.txt", 40)
    assert sweep_if_due(config.paths, RetentionConfig(), now=NOW + DAY - 60) is None
    assert len(Trash(config.paths.trash).list()) == 1
    again = sweep_if_due(config.paths, RetentionConfig(), now=NOW + DAY + 1)
    assert again is not None and again.trash == 1

    # A marker from the future (a clock set back) does not stop sweeps for good.
    marker.write_bytes(orjson.dumps({"time": NOW + 100 * DAY}))
    assert sweep_if_due(config.paths, RetentionConfig(), now=NOW) is not None
    # A damaged marker means: sweep now.
    marker.write_bytes(b"\x00garbage")
    assert sweep_if_due(config.paths, RetentionConfig(), now=NOW) is not None


def test_a_fresh_home_is_not_created_by_the_sweep(tmp_path: Path) -> None:
    config = load_config({"HEARTH_HOME": str(tmp_path / "never")})
    assert sweep_if_due(config.paths, RetentionConfig(), now=NOW) is None
    assert not config.home.exists()


def test_a_run_starts_with_the_daily_sweep(tmp_path: Path, tree: Tree) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "config.toml").write_text("[retention]\ntrash_days = 7\n")
    wh = Workhearth(config=load_config({"HEARTH_HOME": str(home)}), workspace=tree.root)
    old = trash_item(wh.config, tree, "old.txt", 8)
    recent = trash_item(wh.config, tree, "recent.txt", 6)
    housekeeping(wh, RunOptions())
    assert [i.id for i in Trash(wh.paths.trash).list()] == [recent]
    assert old not in {i.id for i in Trash(wh.paths.trash).list()}
    assert (home / MARKER).is_file()


# ------------------------------------------------------------------- config and CLI


def test_retention_is_read_from_config_toml(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    assert load_config({"HEARTH_HOME": str(home)}).retention == RetentionConfig(30, 30, 30, 90)
    (home / "config.toml").write_text("[retention]\ntrash_days = 7\naudit_days = 0\n")
    assert load_config({"HEARTH_HOME": str(home)}).retention == RetentionConfig(7, 30, 30, 0)
    for bad in ("trash_days = -1", 'audit_days = "90"', "trash_days = 1.5", "trash_day = 3"):
        (home / "config.toml").write_text(f"[retention]\n{bad}\n")
        with pytest.raises(ConfigError, match=r"\[retention\]"):
            load_config({"HEARTH_HOME": str(home)})


def test_trash_empty_older_than_keeps_recent_items(tmp_path: Path) -> None:
    hearth = make_hearth(tmp_path / "cli")
    config = load_config({"HEARTH_HOME": str(hearth.home)})
    tree = Tree(hearth.workspace, hearth.elsewhere, hearth.elsewhere / "none")
    old = trash_item(config, tree, "old.txt", 10)
    recent = trash_item(config, tree, "recent.txt", 2)
    done = hearth.run("trash", "empty", "--older-than", "7", "--yes")
    assert (done.code, done.out.strip()) == (0, "removed 1 items"), done.err
    assert [i.id for i in Trash(config.paths.trash).list()] == [recent]
    assert not (config.paths.trash / old).exists()
    bad = hearth.run("trash", "empty", "--older-than", "-1", "--yes")
    assert bad.code != 0 and "Traceback" not in bad.err
    assert hearth.run("trash", "empty", "--yes").out.strip() == "removed 1 items"
