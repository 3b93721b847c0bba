"""``kill -9`` a running ``hearth run``, then ``hearth resume --last`` finishes the task.

Two crash points (DESIGN §3 Resume): (a) between a tool call and its result — the
transcript holds the ``tool_use`` of a ``shell`` command still running; (b) while
a reply streams — the provider pauses mid-stream. After each, a fresh provider
must receive a conversation its API accepts, holding every earlier message and,
for (a), a synthetic "interrupted" result for the killed call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth
from tests.e2e.test_agent_run import (
    Agent,
    all_text,
    assert_valid_requests,
    calls_reply,
    stream_pieces,
    text_reply,
    tool_results,
    write_config,
)
from tests.fake_providers import FakeProvider, Reply
from workhearth.sessions.reconstruct import INTERRUPTED_TOOL_TEXT

TASK = "write step1.txt, then run the slow check, then report"
SLEEP = "sleep 29.5"  # a command no other process on the machine is running


def wait_for(what: str, check: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def descendants(pid: int) -> dict[int, str]:
    """``pid -> command line`` of every live descendant of ``pid`` (from /proc)."""
    parent: dict[int, int] = {}
    cmdline: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = (entry / "stat").read_text()
            parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            cmdline[int(entry.name)] = (
                (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child, ppid in parent.items():
            if ppid == current and child not in found:
                found[child] = cmdline.get(child, "")
                frontier.append(child)
    return found


def transcript_events(hearth: Hearth) -> list[dict[str, Any]]:
    """The events of the only session's transcript (lines that parse; a torn tail is skipped)."""
    paths = list(hearth.home.glob("projects/*/sessions/*/transcript.jsonl"))
    if not paths:
        return []
    (path,) = paths
    events = []
    for line in path.read_bytes().splitlines():
        with contextlib.suppress(orjson.JSONDecodeError):
            events.append(orjson.loads(line))
    return events


def messages_in(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["message"] for e in events if e.get("type") == "message"]


def has_tool_use(events: list[dict[str, Any]], call_id: str) -> bool:
    return any(
        b.get("type") == "tool_use" and b.get("id") == call_id
        for m in messages_in(events)
        for b in m["content"]
    )


class Running:
    """``hearth ARGS`` started in the background, its stdout collected as it comes."""

    def __init__(self, agent: Agent, *args: str) -> None:
        self.proc = subprocess.Popen(
            [*HEARTH_CMD, *args],
            cwd=agent.hearth.workspace,
            env=agent.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.out = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := os.read(self.proc.stdout.fileno(), 4096):
            self.out += chunk

    def kill9(self) -> None:
        """SIGKILL hearth alone (as the OOM killer would), then reap what it left running."""
        left = descendants(self.proc.pid)
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        for pid in left:
            # Why: shell commands run in their own process group; nothing kills them for us.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self._reader.join(timeout=5)
        assert self.proc.returncode == -signal.SIGKILL


@pytest.fixture
def fakes(serve: Callable[[list[Reply]], FakeProvider]) -> Callable[[list[Reply]], FakeProvider]:
    return serve


@pytest.fixture(params=["openai", "anthropic"])
def api(request: pytest.FixtureRequest) -> str:
    return request.param


def resume_and_check(
    hearth: Hearth, api: str, fakes: Callable[[list[Reply]], FakeProvider], before: list[dict]
) -> tuple[Agent, dict[str, Any]]:
    """``hearth resume --last --yes`` against a fresh provider; the request it got is checked."""
    fresh = Agent(hearth, api, fakes([text_reply(api, "Resumed ", "and finished.")]))
    result = fresh.run("resume", "--last", "--yes", timeout=30)
    assert result.code == 0, result.err
    assert "and finished." in result.out
    assert_valid_requests(api, fresh.fake)
    (body,) = fresh.fake.bodies
    sent = all_text(body)
    # Every message the killed run had written reaches the model again.
    for message in before:
        for block in message["content"]:
            if block.get("type") == "text":
                assert block["text"] in sent
            elif block.get("type") == "tool_use":
                assert block["id"] in sent
            elif block.get("type") == "tool_result":
                assert block["tool_use_id"] in tool_results(api, body)
    return fresh, body


def test_kill_between_a_tool_call_and_its_result(
    hearth: Hearth, api: str, fakes: Callable[[list[Reply]], FakeProvider]
) -> None:
    write_config(hearth)
    first = Agent(
        hearth,
        api,
        fakes(
            [
                calls_reply(api, ("call_c1", "write_file", {"path": "step1.txt", "content": "1"})),
                calls_reply(api, ("call_c2", "shell", {"command": SLEEP, "timeout": 60})),
                text_reply(api, "never sent"),
            ]
        ),
    )
    run = Running(first, "run", TASK, "--mode", "agent", "--yes")
    try:
        wait_for(
            "the shell call in the transcript",
            lambda: has_tool_use(transcript_events(hearth), "call_c2"),
        )
        # Why: kill while the command really runs, not while hearth is still preparing it.
        wait_for("the slow command", lambda: SLEEP in " ".join(descendants(run.proc.pid).values()))
    finally:
        run.kill9()

    events = transcript_events(hearth)
    before = messages_in(events)
    assert (hearth.workspace / "step1.txt").read_text() == "1"
    assert [m["role"] for m in before] == ["user", "assistant", "user", "assistant"]
    assert not any(
        b.get("type") == "tool_result" and b.get("tool_use_id") == "call_c2"
        for m in before
        for b in m["content"]
    )
    assert len(first.fake.bodies) == 2

    fresh, body = resume_and_check(hearth, api, fakes, before)
    text, is_error = tool_results(api, body)["call_c2"]
    assert text == INTERRUPTED_TOOL_TEXT
    assert is_error in (True, None)
    assert tool_results(api, body)["call_c1"][0].startswith("Created step1.txt")
    assert TASK in all_text(body)

    # The transcript now says what the model was told, once, and ends on the answer.
    after = messages_in(transcript_events(hearth))
    assert after[: len(before)] == before
    closures = [
        b
        for m in after
        for b in m["content"]
        if b.get("type") == "tool_result" and b.get("tool_use_id") == "call_c2"
    ]
    assert len(closures) == 1
    assert after[-1]["role"] == "assistant"
    # The killed shell call was recorded nowhere as finished: the audit says it started.
    assert [r["outcome"] for r in fresh.audit() if r["call_id"] == "call_c2"] == ["started"]


def test_kill_while_a_reply_streams(
    hearth: Hearth, api: str, fakes: Callable[[list[Reply]], FakeProvider]
) -> None:
    write_config(hearth)
    wire = stream_pieces(api, "Half of ", "the answer, ", "then the rest.")
    # Why: the provider stops mid-reply (after the first text piece) long enough to be killed.
    split_at = 2 if api == "openai" else 4
    streaming = Reply(pieces=[*wire[:split_at], 20.0, *wire[split_at:]])
    first = Agent(
        hearth,
        api,
        fakes(
            [
                calls_reply(api, ("call_s1", "write_file", {"path": "step1.txt", "content": "1"})),
                streaming,
            ]
        ),
    )
    run = Running(first, "run", TASK, "--mode", "agent", "--yes")
    try:
        wait_for("the first streamed words", lambda: b"Half of" in run.out)
    finally:
        run.kill9()
    assert b"then the rest" not in run.out
    assert len(first.fake.bodies) == 2

    before = messages_in(transcript_events(hearth))
    assert [m["role"] for m in before] == ["user", "assistant", "user"]
    assert "Half of" not in orjson.dumps(before).decode()

    fresh, body = resume_and_check(hearth, api, fakes, before)
    assert "Half of" not in all_text(body)
    assert INTERRUPTED_TOOL_TEXT not in all_text(body)
    after = messages_in(transcript_events(hearth))
    assert after[: len(before)] == before
    assert after[-1]["role"] == "assistant"
    assert (hearth.workspace / "step1.txt").read_text() == "1"
    assert [r["call_id"] for r in fresh.audit()] == ["call_s1"]


# --------------------------------------------------------------------------- Ctrl-C


def _interrupt_the_shell_call(hearth: Hearth, fakes, command: str) -> tuple[Running, dict]:
    """Start a run whose shell call runs ``command``, send SIGINT (Ctrl-C) once it runs."""
    write_config(hearth)
    agent = Agent(
        hearth,
        "openai",
        fakes([calls_reply("openai", ("call_i1", "shell", {"command": command, "timeout": 60}))]),
    )
    run = Running(agent, "run", "run the slow check", "--mode", "agent", "--yes")
    wait_for("the slow command", lambda: command in " ".join(descendants(run.proc.pid).values()))
    left = descendants(run.proc.pid)
    run.proc.send_signal(signal.SIGINT)
    run.proc.wait(timeout=15)
    return run, left


def _running(pid: int) -> bool:
    """Alive and not a zombie (a container's PID 1 may never reap what it inherits)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def _reap(left: dict[int, str]) -> list[str]:
    """Kill what is still alive of ``left``; the command lines that were still alive."""
    alive = [cmd for pid, cmd in left.items() if _running(pid)]
    for pid in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return alive


def test_ctrl_c_during_a_tool_stops_with_130_and_resumes(
    hearth: Hearth, fakes: Callable[[list[Reply]], FakeProvider]
) -> None:
    run, left = _interrupt_the_shell_call(hearth, fakes, "sleep 29.25")
    _reap(left)
    assert run.proc.returncode == 130
    assert run.proc.stderr is not None
    err = run.proc.stderr.read().decode()
    assert "hearth: stopped;" in err and "hearth resume" in err
    assert "Traceback" not in err

    before = messages_in(transcript_events(hearth))
    _fresh, body = resume_and_check(hearth, "openai", fakes, before)
    assert tool_results("openai", body)["call_i1"][0] == INTERRUPTED_TOOL_TEXT


def test_ctrl_c_during_a_tool_leaves_no_command_running(
    hearth: Hearth, fakes: Callable[[list[Reply]], FakeProvider]
) -> None:
    run, left = _interrupt_the_shell_call(hearth, fakes, "sleep 29.75")
    assert run.proc.returncode == 130
    time.sleep(0.5)  # a fair grace period for a TERM-then-KILL of the group
    assert _reap(left) == []
