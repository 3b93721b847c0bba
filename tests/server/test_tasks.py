"""Tasks over the real API: start, stream (SSE), approve or deny, stop, resume, re-attach.

The model is a scripted OpenAI-compatible server (tests/fake_providers.py); the
API is the real ``create_app`` served by uvicorn on loopback, read event by event.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from tests.e2e.test_agent_run import calls_reply, stream_pieces, text_reply
from tests.fake_providers import FakeProvider, Reply
from tests.server.tasks_helpers import MODEL, Api, model_env
from workhearth.config import load_config
from workhearth.sessions.reconstruct import INTERRUPTED_TOOL_TEXT
from workhearth.sessions.store import SessionStore
from workhearth.tasks.words import NO_MODEL

Serve = Callable[[list[Reply]], FakeProvider]


def audit(home: Path) -> list[dict[str, Any]]:
    path = home / "audit.jsonl"
    return [orjson.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def write_call(call_id: str, name: str = "note.txt") -> Reply:
    return calls_reply("openai", (call_id, "write_file", {"path": name, "content": "hi"}))


def test_a_task_streams_its_answer_to_done(api_for: Callable[..., Api], tmp_path: Path) -> None:
    api = api_for([text_reply("openai", "Hello ", "from ", "the task.")])
    sid = api.start(task="say hello", mode="ask")
    with api.events(sid) as events:
        seen = list(events)  # the stream ends after ``done``
    names = [e.name for e in seen]
    # First the run the events belong to, with where the transcript stands before it.
    hello, seen = seen[0], seen[1:]
    assert hello.name == "run" and hello.id is None
    assert hello.data["messages_before"] == 0 and hello.data["after"] == 0
    run = hello.data["run"]
    names = [e.name for e in seen]
    assert names[:2] == ["status", "prompt"] and seen[0].data == {"status": "running"}
    assert seen[1].data == {"text": "say hello"}
    assert "".join(e.data["text"] for e in seen if e.name == "text") == "Hello from the task."
    assert names[-2:] == ["status", "done"]
    assert seen[-2].data == {"status": "done"} and seen[-1].data == {
        "reason": "done",
        "status": "done",
    }
    assert [e.id for e in seen] == [f"{run}-{n}" for n in range(1, len(seen) + 1)]
    assert api.client.get(f"/v1/tasks/{sid}").json() == {
        "session_id": sid,
        "status": "done",
        "reason": None,
        "pending_approval": None,
        "run": None,
        "messages_before": None,
    }
    listed = {s["session_id"]: s for s in api.client.get("/v1/sessions").json()["sessions"]}
    assert listed[sid]["status"] == "done"
    messages = api.client.get(f"/v1/sessions/{sid}/messages").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"]


def test_agent_mode_waits_for_approval_and_once_lets_it_run(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    api = api_for([write_call("call_w1"), text_reply("openai", "Wrote it.")])
    sid = api.start(task="write note.txt", mode="agent")
    with api.events(sid) as events:
        before = api.until(events, "approval")
        assert [e.name for e in before][-2:] == ["tool_call", "approval"]
        assert before[-2].data == {"id": "call_w1", "name": "write_file", "summary": "note.txt"}
        question = before[-1].data
        assert question["call_id"] == "call_w1" and question["tool"] == "write_file"
        assert "note.txt" in question["summary"]
        waiting = api.wait_status(sid, "waiting")
        assert waiting["pending_approval"] == question
        listed = api.client.get("/v1/sessions").json()["sessions"]
        assert [(s["session_id"], s["status"]) for s in listed] == [(sid, "waiting")]
        assert not (tmp_path / "workspace" / "note.txt").exists()

        answer = api.client.post(f"/v1/tasks/{sid}/approvals/call_w1", json={"answer": "once"})
        assert answer.status_code == 204, answer.text
        rest = list(events)
    result = next(e for e in rest if e.name == "tool_result")
    changes = result.data.pop("changes")
    assert result.data == {
        "id": "call_w1",
        "name": "write_file",
        "subject": "note.txt",
        "ok": True,
        "summary": "ok",
    }
    # What changed on disk during the call, as measured (issue #18 item 5).
    assert [(c["path"], c["kind"]) for c in changes] == [("note.txt", "created")]
    assert rest[-1].data == {"reason": "done", "status": "done"}
    assert (tmp_path / "workspace" / "note.txt").read_text() == "hi"
    (record,) = [r for r in audit(tmp_path / "home") if r["call_id"] == "call_w1"]
    assert record["decision"] == "allowed-by-user"
    # The same approval cannot be answered twice.
    again = api.client.post(f"/v1/tasks/{sid}/approvals/call_w1", json={"answer": "once"})
    assert again.status_code == 404


def test_a_deny_from_the_page_is_respected(api_for: Callable[..., Api], tmp_path: Path) -> None:
    api = api_for([write_call("call_d1"), text_reply("openai", "Understood, not writing.")])
    sid = api.start(task="write note.txt", mode="agent")
    with api.events(sid) as events:
        api.until(events, "approval")
        bad = api.client.post(f"/v1/tasks/{sid}/approvals/call_d1", json={"answer": "maybe"})
        assert bad.status_code == 422
        wrong = api.client.post(f"/v1/tasks/{sid}/approvals/call_zz", json={"answer": "deny"})
        assert wrong.status_code == 404
        answer = api.client.post(f"/v1/tasks/{sid}/approvals/call_d1", json={"answer": "deny"})
        assert answer.status_code == 204
        rest = list(events)
    result = next(e for e in rest if e.name == "tool_result")
    assert result.data == {
        "id": "call_d1",
        "name": "write_file",
        "subject": "note.txt",
        "ok": False,
        "summary": "denied by you",
    }
    assert rest[-1].data == {"reason": "done", "status": "done"}
    assert not (tmp_path / "workspace" / "note.txt").exists()
    (record,) = [r for r in audit(tmp_path / "home") if r["call_id"] == "call_d1"]
    assert record["decision"] == "denied-by-user"
    # What the model was told: the user denied it.
    assert "denied" in orjson.dumps(api.fake.bodies[1]["messages"][-1]).decode()  # type: ignore[attr-defined]


def test_stop_while_waiting_for_approval_then_resume(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    api = api_for([write_call("call_s1"), text_reply("openai", "Picked up again.")])
    sid = api.start(task="write note.txt", mode="agent")
    with api.events(sid) as events:
        api.until(events, "approval")
        stopped = api.client.post(f"/v1/tasks/{sid}/stop")
        assert stopped.status_code == 202
        rest = list(events)
    assert rest[-2].data == {"status": "stopped"}
    assert rest[-1].data == {"reason": "stopped", "status": "stopped"}
    assert not (tmp_path / "workspace" / "note.txt").exists()
    # Why not-asked: nobody answered the question; stopping is not the user's "no".
    (record,) = [r for r in audit(tmp_path / "home") if r["call_id"] == "call_s1"]
    assert record["decision"] == "not-asked"
    assert api.client.get(f"/v1/tasks/{sid}").json()["status"] == "stopped"
    assert api.client.post(f"/v1/tasks/{sid}/stop").status_code == 409

    resumed = api.client.post(f"/v1/tasks/{sid}/resume")
    assert resumed.status_code == 202, resumed.text
    with api.events(sid) as events:
        again = list(events)
    assert "".join(e.data["text"] for e in again if e.name == "text") == "Picked up again."
    assert again[-1].data == {"reason": "done", "status": "done"}
    # The model was told the stopped call was interrupted, never that the user denied it.
    body = api.fake.bodies[-1]  # type: ignore[attr-defined]
    (told,) = [m["content"] for m in body["messages"] if m.get("tool_call_id") == "call_s1"]
    assert told == INTERRUPTED_TOOL_TEXT


def test_stop_while_the_reply_streams(api_for: Callable[..., Api], tmp_path: Path) -> None:
    wire = stream_pieces("openai", *[f"word{i} " for i in range(40)])
    slow: list[bytes | float] = []
    for piece in wire:
        slow += [piece, 0.25]
    api = api_for([Reply(pieces=slow)])
    sid = api.start(task="talk slowly", mode="ask")
    with api.events(sid) as events:
        api.until(events, "text")
        assert api.client.post(f"/v1/tasks/{sid}/stop").status_code == 202
        rest = list(events)
    assert rest[-1].data == {"reason": "stopped", "status": "stopped"}
    streamed = "".join(e.data["text"] for e in rest if e.name == "text")
    assert "word39" not in streamed
    info = api.client.get(f"/v1/tasks/{sid}").json()
    assert info["status"] == "stopped"
    messages = api.client.get(f"/v1/sessions/{sid}/messages").json()["messages"]
    assert [m["role"] for m in messages] == ["user"]  # nothing half-written was stored


def test_reopening_the_page_replays_then_goes_on_live(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    api = api_for([write_call("call_r1"), text_reply("openai", "Done after the replay.")])
    sid = api.start(task="write note.txt", mode="agent")
    with api.events(sid) as events:
        first = api.until(events, "approval")
    # The page was closed: the task goes on waiting in the server.
    assert api.wait_status(sid, "waiting")["pending_approval"]["call_id"] == "call_r1"
    with api.events(sid) as events:
        replay = api.until(events, "approval")
        assert replay[0].data["run"] == first[0].data["run"]  # the same run, replayed whole
        assert replay[0].data["status"] == "waiting"
        assert [(e.id, e.name, e.data) for e in replay[1:]] == [
            (e.id, e.name, e.data) for e in first[1:]
        ]
        api.client.post(f"/v1/tasks/{sid}/approvals/call_r1", json={"answer": "always"})
        live = list(events)
    assert live[-1].data == {"reason": "done", "status": "done"}
    # A reconnect with Last-Event-ID gets only what came after it.
    assert live[-3].id is not None
    with api.events(sid, **{"Last-Event-ID": live[-3].id}) as events:
        hello, *tail = list(events)
    assert hello.name == "run" and hello.data["after"] == int(live[-3].id.rsplit("-", 1)[1])
    assert [e.id for e in tail] == [live[-2].id, live[-1].id]
    # One naming another run (a restarted server's) gets this run from its start.
    run = live[-1].id.rsplit("-", 1)[0]
    for stale in ("0000beef-7", f"{run}-x", f"{run}-", "7"):
        with api.events(sid, **{"Last-Event-ID": stale}) as events:
            hello, *again = list(events)
        assert hello.data["after"] == 0
        assert [e.id for e in again] == [e.id for e in first[1:]] + [e.id for e in live]


def test_bad_requests_get_one_clear_message(api_for: Callable[..., Api], tmp_path: Path) -> None:
    api = api_for(None)  # no model configured at all
    answer = api.client.post("/v1/tasks", json={"task": "anything"})
    assert answer.status_code == 400
    assert answer.json() == {"detail": NO_MODEL, "code": "model_none", "params": {}}
    assert list((tmp_path / "home").glob("projects/*/sessions/*")) == []
    assert api.client.post("/v1/tasks", json={"task": "x", "mode": "yolo"}).status_code == 422
    for path in ("/v1/tasks/nope", "/v1/tasks/nope/events"):
        assert api.client.get(path).status_code == 404
    for path in ("/v1/tasks/nope/resume", "/v1/tasks/nope/stop"):
        assert api.client.post(path).status_code == 404
    gone = api.client.post("/v1/tasks/nope/approvals/c1", json={"answer": "once"})
    assert gone.status_code == 404
    assert (
        api.client.get("/v1/tasks/nope", headers={"Authorization": "Bearer x"}).status_code == 401
    )


def test_a_finished_session_resumes_only_with_a_next_instruction(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    api = api_for([text_reply("openai", "First answer."), text_reply("openai", "Second answer.")])
    empty = api.client.post("/v1/tasks", json={"task": "   "})
    assert empty.status_code == 422 and empty.json()["detail"] == "the task is empty"
    sid = api.start(task="first question", mode="ask")
    with api.events(sid) as events:
        list(events)
    refused = api.client.post(f"/v1/tasks/{sid}/resume")
    assert refused.status_code == 409 and "finished" in refused.json()["detail"]
    again = api.client.post(f"/v1/tasks/{sid}/resume", json={"task": "second question"})
    assert again.status_code == 202
    with api.events(sid) as events:
        seen = list(events)
    assert "".join(e.data["text"] for e in seen if e.name == "text") == "Second answer."
    messages = api.client.get(f"/v1/sessions/{sid}/messages").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


def test_a_quiet_stream_gets_heartbeats(api_for: Callable[..., Api], tmp_path: Path) -> None:
    api = api_for([write_call("call_h1"), text_reply("openai", "ok")], heartbeat=0.2)
    sid = api.start(task="write note.txt", mode="agent")
    api.wait_status(sid, "waiting")
    comments = 0
    with api.client.stream("GET", f"/v1/tasks/{sid}/events") as answer:
        assert answer.headers["cache-control"] == "no-cache"
        for line in answer.iter_lines():
            comments += line.startswith(":")
            if comments == 2:
                break
    api.client.post(f"/v1/tasks/{sid}/approvals/call_h1", json={"answer": "deny"})
    assert api.app.state.tasks.wait(sid, 20)


def test_a_session_held_by_another_writer_is_a_409(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    api = api_for([text_reply("openai", "never sent")])
    config = load_config(model_env(tmp_path / "home", api.fake))  # type: ignore[attr-defined]
    store = SessionStore(config, tmp_path / "workspace")
    session = store.create(model=MODEL, mode="ask")
    with session:
        # As a `hearth resume` in a terminal does: it holds the transcript's lock.
        session.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        assert api.client.get(f"/v1/tasks/{session.id}").json()["status"] == "stopped"
        busy = api.client.post(f"/v1/tasks/{session.id}/resume")
        assert busy.status_code == 409, busy.text
    assert api.fake.bodies == []  # type: ignore[attr-defined]
    assert api.client.post(f"/v1/tasks/{session.id}/resume").status_code == 202
    assert api.app.state.tasks.wait(session.id, 20)
    assert api.client.get(f"/v1/tasks/{session.id}").json()["status"] == "done"
