"""Running commands through a snapshot: exit codes, output, timeouts, process groups."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.shell.conftest import UserShell
from tests.shell.test_snapshot import _processes_running
from workhearth.shell.runner import base_env, run
from workhearth.shell.snapshot import Snapshot, capture


@pytest.fixture
def snap(bash_user: UserShell) -> Snapshot:
    bash_user.rc("alias hi='echo hi'\n")
    return capture(bash_user.paths, bash_user.workspace, bash_user.env)


def _marker() -> str:
    return f"{time.time_ns() % 10_000_000 + 1000}.25"


def _kill_leftovers(needle: str) -> None:
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if needle.encode() in cmdline:
                os.kill(int(pid), signal.SIGKILL)


def test_exit_code_stdout_and_stderr_are_captured(bash_user: UserShell, snap: Snapshot) -> None:
    result = run("echo out; echo err >&2; exit 3", bash_user.workspace, snap, 10, bash_user.env)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "out\n", "err\n")
    assert not result.timed_out and not result.truncated
    assert 0 < result.duration < 5


def test_quoting_survives_quotes_dollars_newlines_and_spaces(
    bash_user: UserShell, snap: Snapshot
) -> None:
    command = "x='it'\"'\"'s $HOME'\nprintf '%s|' \"$x\" 'a b' $'tab\\there'; pwd"
    result = run(command, bash_user.workspace, snap, 10, bash_user.env)
    assert result.stdout == f"it's $HOME|a b|tab\there|{bash_user.workspace}\n", result.stderr


def test_timeout_kills_the_whole_process_group(bash_user: UserShell, snap: Snapshot) -> None:
    marker = _marker()
    # A background child, and one that ignores SIGTERM, so only SIGKILL on the group ends it.
    command = f"(sleep {marker} &); bash -c \"trap '' TERM; sleep {marker}\"; echo never"
    started = time.monotonic()
    try:
        result = run(command, bash_user.workspace, snap, 1, bash_user.env)
        assert time.monotonic() - started < 5
        assert result.timed_out
        assert result.exit_code < 0
        assert "never" not in result.stdout
        assert "timed out after 1 s" in result.stderr
        deadline = time.monotonic() + 3
        while _processes_running(f"sleep {marker}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _processes_running(f"sleep {marker}")
    finally:
        _kill_leftovers(f"sleep {marker}")


def test_a_background_job_does_not_hold_the_result(bash_user: UserShell, snap: Snapshot) -> None:
    marker = _marker()
    try:
        started = time.monotonic()
        result = run(f"sleep {marker} & echo started", bash_user.workspace, snap, 30, bash_user.env)
        assert time.monotonic() - started < 5
        assert (result.exit_code, result.stdout) == (0, "started\n")
    finally:
        _kill_leftovers(f"sleep {marker}")


def test_huge_output_is_bounded_and_kept_whole_in_a_file(
    bash_user: UserShell, snap: Snapshot, tmp_path: Path
) -> None:
    outputs = tmp_path / "tool-outputs"
    command = "head -c 5000000 /dev/zero | tr '\\0' a; echo; echo END; echo small >&2"
    result = run(
        command, bash_user.workspace, snap, 30, bash_user.env, output_limit=1000, output_dir=outputs
    )
    assert result.exit_code == 0
    assert len(result.stdout) < 1200
    assert result.stdout.startswith("a" * 400) and result.stdout.endswith("END\n")
    assert "bytes omitted" in result.stdout and str(result.stdout_path) in result.stdout
    assert result.truncated and result.stdout_path is not None
    assert result.stdout_path.parent == outputs
    assert result.stdout_path.stat().st_size == 5_000_000 + len("\nEND\n")
    assert result.stderr == "small\n" and result.stderr_path is None
    assert [p.name for p in outputs.iterdir()] == [result.stdout_path.name]  # small ones removed


def test_bytes_that_are_not_utf8_are_replaced(bash_user: UserShell, snap: Snapshot) -> None:
    result = run(r"printf '\377\376ok'", bash_user.workspace, snap, 10, bash_user.env)
    assert result.stdout == "\ufffd\ufffdok"


def test_stdin_is_closed_and_a_missing_cwd_fails_cleanly(
    bash_user: UserShell, snap: Snapshot, tmp_path: Path
) -> None:
    assert run("cat; echo done", bash_user.workspace, snap, 5, bash_user.env).stdout == "done\n"
    result = run("echo ran", tmp_path / "gone", snap, 5, bash_user.env)
    assert result.exit_code == 1 and result.stdout == ""
    assert "gone" in result.stderr


def test_commands_start_from_a_small_environment_the_snapshot_fills(
    bash_user: UserShell, snap: Snapshot
) -> None:
    env = {**bash_user.env, "OPENAI_API_KEY": "from-hearth-process"}
    assert "OPENAI_API_KEY" not in base_env(env)
    result = run('echo "${OPENAI_API_KEY-unset}"; hi', bash_user.workspace, snap, 5, env)
    assert result.stdout == "unset\nhi\n"


def test_the_guard_is_invisible_to_the_command(bash_user: UserShell, snap: Snapshot) -> None:
    """A bare ``wait`` does not wait for the guard; stdin is still empty; the group is
    recorded while the command runs and forgotten after."""
    from workhearth.procgroups import ProcessGroups

    records = bash_user.workspace.parent / "running"
    seen = f"ls {records}"
    started = time.monotonic()
    result = run(
        f"(sleep 0.1; echo child) & wait; cat; {seen}",
        bash_user.workspace,
        snap,
        10,
        bash_user.env,
        groups=ProcessGroups(records),
    )
    assert time.monotonic() - started < 5
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "child" and lines[1].endswith(".json"), lines
    assert list(records.glob("*.json")) == []
