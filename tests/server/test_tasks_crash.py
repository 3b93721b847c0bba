"""SIGKILL the real ``hearth serve`` while a task streams; the task continues afterwards.

Once with ``hearth resume --last`` in a terminal, once from a restarted server with
``POST /v1/tasks/{id}/resume``. Nothing the page was shown before the kill is lost:
every tool call and result streamed over SSE is in the transcript and reaches the
model again on resume.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth
from tests.e2e.test_agent_crash import messages_in, transcript_events
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
from tests.server.tasks_helpers import Event, read_events, wait_for
from workhearth.server.tasks import transcript_status

Serve = Callable[[list[Reply]], FakeProvider]
TASK = "write step1.txt, then explain"


@pytest.fixture
def hearth(tmp_path: Path) -> Hearth:
    return make_hearth(tmp_path / "one")


@dataclass
class Served:
    """A ``hearth serve`` process, its port, and a client holding the token."""

    proc: subprocess.Popen[bytes]
    client: httpx.Client
    out: list[str]

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        assert self.proc.returncode == -signal.SIGKILL


@contextlib.contextmanager
def hearth_serve(agent: Agent) -> Iterator[Served]:
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", "0", "--no-open"],
        cwd=agent.hearth.workspace,
        env=agent.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line.decode("utf-8", "replace"))

    threading.Thread(target=read, daemon=True).start()
    try:
        url = wait_for(
            "the server's address",
            lambda: next((m[1] for o in out if (m := re.search(r" on (http://\S+?)/?$", o))), None),
            timeout=30,
        )
        token = (agent.hearth.home / "server.token").read_text().strip()
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=20
        ) as client:
            yield Served(proc, client, out)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def until(events: Iterator[Event], check: Callable[[Event], bool], seen: list[Event]) -> Event:
    for event in events:
        seen.append(event)
        if check(event):
            return event
    raise AssertionError(f"the stream ended early: {seen}")


@pytest.mark.parametrize("how", ["cli", "server"])
def test_kill_the_server_mid_task_then_continue(hearth: Hearth, serve: Serve, how: str) -> None:
    write_config(hearth)
    wire = stream_pieces("openai", "Half of ", "the answer, ", "then the rest.")
    # Why: the model stops mid-reply (after its first words) long enough to be killed.
    stalled = Reply(pieces=[*wire[:2], 20.0, *wire[2:]])
    write = calls_reply("openai", ("call_k1", "write_file", {"path": "step1.txt", "content": "1"}))
    first = Agent(hearth, "openai", serve([write, stalled]))
    seen: list[Event] = []
    with hearth_serve(first) as served:
        started = served.client.post("/v1/tasks", json={"task": TASK, "mode": "agent"})
        assert started.status_code == 201, started.text
        sid = started.json()["session_id"]
        with served.client.stream("GET", f"/v1/tasks/{sid}/events", timeout=30) as answer:
            events = read_events(answer.iter_lines())
            until(events, lambda e: e.name == "approval", seen)
            ok = served.client.post(f"/v1/tasks/{sid}/approvals/call_k1", json={"answer": "once"})
            assert ok.status_code == 204
            until(events, lambda e: e.name == "text" and "Half of" in e.data["text"], seen)
            served.kill9()
    assert len(first.fake.bodies) == 2

    # Nothing acknowledged is lost: what the page was shown is in the transcript.
    before = messages_in(transcript_events(hearth))
    assert [m["role"] for m in before] == ["user", "assistant", "user"]
    shown = [e for e in seen if e.name in ("tool_call", "tool_result")]
    assert [e.name for e in shown] == ["tool_call", "tool_result"]
    assert before[1]["content"][-1]["id"] == shown[0].data["id"] == "call_k1"
    assert before[2]["content"][0]["tool_use_id"] == shown[1].data["id"] == "call_k1"
    assert (hearth.workspace / "step1.txt").read_text() == "1"
    assert "Half of" not in str(before)  # an unfinished reply is never stored

    fresh = Agent(hearth, "openai", serve([text_reply("openai", "Resumed ", "and finished.")]))
    if how == "cli":
        result = fresh.run("resume", "--last")
        assert result.code == 0, result.err
        assert "and finished." in result.out
    else:
        with hearth_serve(fresh) as served:
            listed = served.client.get("/v1/sessions").json()["sessions"]
            assert [(s["session_id"], s["status"]) for s in listed] == [(sid, "stopped")]
            with served.client.stream("GET", f"/v1/tasks/{sid}/events") as answer:
                standing = list(read_events(answer.iter_lines()))
            assert [(e.name, e.data) for e in standing[1:]] == [
                ("status", {"status": "stopped"}),
                ("done", {"reason": "stopped", "status": "stopped"}),
            ]
            # The whole history is in the transcript: the page shows all of it, then these.
            assert standing[0].name == "run"
            assert standing[0].data["messages_before"] == len(before)
            resumed = served.client.post(f"/v1/tasks/{sid}/resume")
            assert resumed.status_code == 202, resumed.text
            with served.client.stream("GET", f"/v1/tasks/{sid}/events", timeout=30) as answer:
                after = list(read_events(answer.iter_lines()))
            text = "".join(e.data["text"] for e in after if e.name == "text")
            assert text == "Resumed and finished."
            assert after[-1].data == {"reason": "done", "status": "done"}
            assert served.client.get(f"/v1/tasks/{sid}").json()["status"] == "done"

    assert_valid_requests("openai", fresh.fake)
    (body,) = fresh.fake.bodies
    assert TASK in all_text(body)
    assert tool_results("openai", body)["call_k1"][0].startswith("Created step1.txt")
    after_messages = messages_in(transcript_events(hearth))
    assert after_messages[: len(before)] == before
    assert after_messages[-1]["role"] == "assistant"
    assert "and finished." in str(after_messages[-1])


def test_ctrl_c_stops_the_server_while_a_page_watches_a_task(hearth: Hearth, serve: Serve) -> None:
    write_config(hearth)
    write = calls_reply("openai", ("call_i1", "write_file", {"path": "a.txt", "content": "1"}))
    agent = Agent(hearth, "openai", serve([write]))
    seen: list[Event] = []
    with hearth_serve(agent) as served:
        started = served.client.post("/v1/tasks", json={"task": TASK, "mode": "agent"})
        sid = started.json()["session_id"]
        with served.client.stream("GET", f"/v1/tasks/{sid}/events", timeout=30) as answer:
            events = read_events(answer.iter_lines())
            until(events, lambda e: e.name == "approval", seen)
            served.proc.send_signal(signal.SIGINT)
            served.proc.wait(timeout=15)
            list(events)
    output = "".join(served.out)
    assert "Traceback" not in output and "ERROR" not in output, output
    # The open stream ended with the server, not after uvicorn's forced cancel (which
    # says so in the log): by its words, not by a clock that a loaded machine can miss.
    assert "graceful shutdown exceeded" not in output
    # The question was withdrawn, not answered: the call did not run, and resumes ask again.
    assert not (hearth.workspace / "a.txt").exists()
    records = [r for r in agent.audit() if r["call_id"] == "call_i1"]
    assert [r["decision"] for r in records] == ["not-asked"]
    with hearth.store().open(sid) as session:
        assert transcript_status(session) == ("stopped", None)
