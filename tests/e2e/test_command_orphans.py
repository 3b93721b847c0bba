"""A killed ``hearth run`` leaves no command running and says what it cannot know (issue #18, 3).

``kill -9`` of the real ``hearth run`` while an approved command runs: the command's
whole process group (a grandchild included) ends at once, nothing it would have written
later appears, the audit holds the command's "started" line, and ``hearth resume --last``
tells the model the outcome is unknown. A group recorded for the session whose hearth is
gone is ended on resume, but only when its start time still matches the record (a reused
PID is never signalled).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth, text
from tests.e2e.test_agent_crash import Running, _running, descendants, wait_for
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, tool_results, write_config
from tests.fake_providers import FakeProvider, Reply
from workhearth.procgroups import boot_id, start_time
from workhearth.sessions.reconstruct import INTERRUPTED_TOOL_TEXT

Serve = Callable[[list[Reply]], FakeProvider]
DELAY = 4.25  # seconds before the command would write late.txt (a unique sleep to find it)
# Why a subshell in the background: it outlives its shell, as any grandchild can.
COMMAND = f"(sleep {DELAY}; echo late > late.txt) & wait"


def _reap(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_run_leaves_no_command_running(hearth: Hearth, serve: Serve) -> None:
    write_config(hearth)
    api = "openai"
    first = Agent(
        hearth,
        api,
        serve(
            [
                calls_reply(api, ("call_k1", "shell", {"command": COMMAND, "timeout": 60})),
                text_reply(api, "never sent"),
            ]
        ),
    )
    run = Running(first, "run", "run the slow writer", "--mode", "agent", "--yes")
    left: dict[int, str] = {}
    try:
        wait_for(
            "the command", lambda: f"sleep {DELAY}" in " ".join(descendants(run.proc.pid).values())
        )
        started = time.monotonic()
        left = descendants(run.proc.pid)
        run.proc.send_signal(signal.SIGKILL)  # hearth alone, as the OOM killer would
        run.proc.wait(timeout=10)
        # At once: every process of the command, the grandchild too, is gone.
        wait_for("the command's processes to end", lambda: not any(map(_running, left)), 2.0)
        time.sleep(max(0.0, started + DELAY + 3.0 - time.monotonic()))
        assert not (hearth.workspace / "late.txt").exists()
    finally:
        _reap(list(left))

    # The audit says the command started and nothing more.
    records = [r for r in first.audit() if r["call_id"] == "call_k1"]
    assert [(r["tool"], r["decision"], r["outcome"]) for r in records] == [
        ("shell", "allowed-by-flag", "started")
    ]
    assert records[0]["summary"] == "started, outcome unknown"
    assert records[0]["arguments"]["command"] == COMMAND

    # Resume tells the model exactly that.
    fresh = Agent(hearth, api, serve([text_reply(api, "I will check late.txt first.")]))
    resumed = fresh.run("resume", "--last", "--yes")
    assert resumed.code == 0, resumed.err
    told, _ = tool_results(api, fresh.fake.bodies[0])["call_k1"]
    assert told == INTERRUPTED_TOOL_TEXT
    assert "outcome is unknown" in told and "partly, fully or not at all" in told
    # The session's record of the running command is gone too.
    (session,) = hearth.home.glob("projects/*/sessions/*")
    assert list((session / "running").glob("*.json")) == []


@pytest.fixture
def groups() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Process groups started by the test (each a ``sleep`` leading its own session)."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        _reap([proc.pid])
        proc.wait(timeout=5)


def _record(folder: Path, proc: subprocess.Popen[bytes], start: int, owner: int) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    row = {
        "pgid": proc.pid,
        "pid": proc.pid,
        "start": start,
        "owner_pid": owner,
        "owner_start": start_time(owner) or 1,
        "boot": boot_id(),
    }
    (folder / f"{proc.pid}.json").write_text(json.dumps(row))


def test_resume_ends_a_recorded_group_but_never_a_reused_pid(
    hearth: Hearth, serve: Serve, groups: list[subprocess.Popen[bytes]]
) -> None:
    write_config(hearth)
    session_id = hearth.seed([text("user", "is the build still running?")])
    records = hearth.session_dir(session_id) / "running"
    gone = subprocess.Popen(["true"])
    gone.wait()  # the hearth that recorded the groups: dead
    orphan = subprocess.Popen(["sleep", "60.25"], start_new_session=True)
    stranger = subprocess.Popen(["sleep", "60.5"], start_new_session=True)
    groups += [orphan, stranger]
    wait_for("both to start", lambda: start_time(orphan.pid) and start_time(stranger.pid))
    _record(records, orphan, start_time(orphan.pid) or 0, gone.pid)
    # The record's PID now names another process (another start time): never signalled.
    _record(records, stranger, (start_time(stranger.pid) or 0) - 1, gone.pid)

    agent = Agent(hearth, "openai", serve([text_reply("openai", "It has stopped.")]))
    resumed = agent.run("resume", "--last", "--yes")
    assert resumed.code == 0, resumed.err

    assert orphan.wait(timeout=5) == -signal.SIGKILL
    assert stranger.poll() is None
    assert list(records.glob("*.json")) == []
