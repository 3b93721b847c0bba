"""Issue #17, hole 4: MCP server processes never outlive hearth, through the real ``hearth run``.

A server that never answers (``sleep N``) must cost a run its ``[mcp] start_budget``, not
more, and leave nothing behind: not after a normal exit, not after hearth is SIGKILLed
(the group leader dies with hearth; what it left in its group is ended by the next run),
and a group record whose leader PID now belongs to an unrelated process never gets it
signalled. Each test uses its own marker number, so a process is found by its arguments.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth
from tests.e2e.test_agent_run import Agent, text_reply
from tests.fake_providers import FakeProvider

API = "openai"
BUDGET = 1.0
_markers = itertools.count((os.getpid() % 10_000) * 100 + 7_000_000)


def marker() -> str:
    """A sleep length no other test (or anything else on the machine) uses."""
    return str(next(_markers))


def proc_stat(pid: int) -> list[str] | None:
    """Fields 3… of /proc/PID/stat (state first), or None when the process is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def alive(mark: str) -> list[int]:
    """Live (not zombie) processes with ``mark`` as an argument."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        stat = proc_stat(int(entry.name))
        if mark.encode() in argv and stat is not None and stat[0] != "Z":
            found.append(int(entry.name))
    return found


def wait_until(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return bool(check())


def configure(hearth: Hearth, command: str, args: list[str], budget: float = BUDGET) -> None:
    hearth.home.mkdir(parents=True, exist_ok=True)
    (hearth.home / "config.toml").write_text(
        "[models]\nmax_retries = 0\n\n"
        f"[mcp]\nstart_budget = {budget}\n\n"
        f"[mcp.servers.slow]\ncommand = {json.dumps(command)}\nargs = {json.dumps(args)}\n"
    )


@pytest.fixture
def reaper() -> Iterator[list[str]]:
    """Markers a test started; whatever still carries one is killed afterwards."""
    marks: list[str] = []
    yield marks
    for mark in marks:
        for pid in alive(mark):
            os.kill(pid, signal.SIGKILL)


def one_run(hearth: Hearth, *prompt: str) -> tuple[int, str, float]:
    with FakeProvider([text_reply(API, "Hello.")]) as fake:
        run = Agent(hearth, API, fake)
        started = time.monotonic()
        result = run.run("run", *prompt, "--mode", "ask", timeout=60)
        return result.code, result.err, time.monotonic() - started


def with_a_grandchild(inner: str, leader: str) -> tuple[str, list[str]]:
    """A server that leaves a child in its process group, then becomes ``sleep leader``."""
    return "/bin/sh", ["-c", f"sleep {inner} & exec sleep {leader}"]


@pytest.mark.parametrize("shape", ["sleep", "grandchild"])
def test_a_server_that_never_answers_costs_the_budget_and_leaves_nothing(
    hearth: Hearth, reaper: list[str], shape: str
) -> None:
    leader, inner = marker(), marker()
    reaper += [leader, inner]
    hearth.home.mkdir(parents=True)
    (hearth.home / "config.toml").write_text("[models]\nmax_retries = 0\n")  # no server
    baseline_code, _, baseline = one_run(hearth, "warm up")
    assert baseline_code == 0
    if shape == "sleep":
        configure(hearth, "sleep", [leader])
    else:
        configure(hearth, *with_a_grandchild(inner, leader))
    code, err, took = one_run(hearth, "hi")
    assert code == 0, err
    assert "'slow' is still starting" in err
    assert "Traceback" not in err and "never retrieved" not in err, err
    # Why: the old code waited 8 s more at exit for a server that would never answer.
    assert took < baseline + BUDGET + 3, f"{took:.1f} s for a {BUDGET} s budget ({baseline:.1f})"
    assert not alive(leader), "the server outlived the run"
    assert not alive(inner), "a process the server started outlived the run"
    records = hearth.home / "cache" / "mcp" / "running"
    assert not list(records.glob("*.json"))


def spawn_hearth(hearth: Hearth, fake: FakeProvider) -> subprocess.Popen[bytes]:
    env = Agent(hearth, API, fake).env
    return subprocess.Popen(
        [*HEARTH_CMD, "run", "hi", "--mode", "ask"],
        cwd=hearth.workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_a_sigkilled_hearth_takes_its_starting_server_with_it(
    hearth: Hearth, reaper: list[str]
) -> None:
    leader = marker()
    reaper.append(leader)
    configure(hearth, "sleep", [leader], budget=30)
    with FakeProvider([text_reply(API, "Hello.")]) as fake:
        proc = spawn_hearth(hearth, fake)
        try:
            assert wait_until(lambda: alive(leader), 30), "the server never started"
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(10)
    assert wait_until(lambda: not alive(leader), 5), "the server outlived a SIGKILLed hearth"


def test_what_a_sigkilled_run_left_in_the_group_is_ended_by_the_next_run(
    hearth: Hearth, reaper: list[str]
) -> None:
    leader, inner = marker(), marker()
    reaper += [leader, inner]
    configure(hearth, *with_a_grandchild(inner, leader), budget=30)
    running = hearth.home / "cache" / "mcp" / "running"
    with FakeProvider([text_reply(API, "Hello.")]) as fake:
        proc = spawn_hearth(hearth, fake)
        try:
            assert wait_until(lambda: alive(leader) and alive(inner), 30)
            # Why: the group's record is written just after the server starts (its pid is
            # known only then); a crash in that instant is the one the sweep cannot see.
            assert wait_until(lambda: any(running.glob("*.json")), 10), "no group record"
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(10)
    assert wait_until(lambda: not alive(leader), 5), "the leader outlived a SIGKILLed hearth"
    assert alive(inner)  # a grandchild does not get the leader's death signal
    configure(hearth, "sleep", [marker()], budget=BUDGET)
    code, err, _ = one_run(hearth, "again")
    assert code == 0, err
    assert wait_until(lambda: not alive(inner), 3), "the next run left the orphan alive"


def start_time(pid: int) -> int:
    stat = proc_stat(pid)
    assert stat is not None
    return int(stat[19])


def dead_pid() -> tuple[int, int]:
    """The pid and start time of a process that has exited (an owner that crashed)."""
    proc = subprocess.Popen(["sleep", "30"])
    started = start_time(proc.pid)
    proc.kill()
    proc.wait()
    return proc.pid, started


def record(hearth: Hearth, pid: int, start: int) -> None:
    """A group record as a crashed run left it (the on-disk format hearth writes)."""
    owner, owner_start = dead_pid()
    folder = hearth.home / "cache" / "mcp" / "running"
    folder.mkdir(parents=True, exist_ok=True)
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    row = {
        "pgid": pid,
        "pid": pid,
        "start": start,
        "owner_pid": owner,
        "owner_start": owner_start,
        "boot": boot,
    }
    (folder / f"{pid}.json").write_text(json.dumps(row))


def test_a_reused_pid_is_never_signalled_and_a_real_orphan_is(
    hearth: Hearth, reaper: list[str]
) -> None:
    stranger_mark, orphan_mark = marker(), marker()
    reaper += [stranger_mark, orphan_mark]
    # Both lead their own group, as a server does; only the orphan is the one recorded.
    stranger = subprocess.Popen(["sleep", stranger_mark], start_new_session=True)
    orphan = subprocess.Popen(["sleep", orphan_mark], start_new_session=True)
    try:
        record(hearth, stranger.pid, start_time(stranger.pid) - 1000)  # the pid was reused
        record(hearth, orphan.pid, start_time(orphan.pid))
        configure(hearth, "sleep", [marker()])
        code, err, _ = one_run(hearth, "hi")
        assert code == 0, err
        assert wait_until(lambda: orphan.poll() is not None, 3), "the orphan group was left"
        assert orphan.returncode == -signal.SIGKILL
        time.sleep(0.3)
        assert stranger.poll() is None, "an unrelated process with a reused pid was signalled"
        assert not list((hearth.home / "cache" / "mcp" / "running").glob("*.json"))
    finally:
        for proc in (stranger, orphan):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
