"""Issue #18: one task service, and every outcome reported as it happened.

A model that fails ends the task ``failed`` with the reason in words — on the page's
stream, in ``GET /v1/tasks/{id}``, in the session list, after a server restart (the end is
kept in the transcript) and in the terminal — and Continue retries it. Web tasks get the
same MCP tools a ``hearth run`` gets.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.e2e.conftest import make_hearth
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, tool_names
from tests.fake_providers import FakeProvider, Reply
from tests.mcp.test_client import SMALL
from tests.server.tasks_helpers import Api
from workhearth.config import load_config
from workhearth.sessions.store import SessionStore
from workhearth.tasks.service import transcript_status

Serve = Callable[[list[Reply]], FakeProvider]
DOWN = Reply(
    status=503,
    pieces=[b'{"error": {"message": "the model is overloaded"}}'],
    content_type="application/json",
)


def test_a_model_error_fails_the_task_with_its_reason_everywhere(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    api = api_for([DOWN, text_reply("openai", "Back and answering.")])
    sid = api.start(task="summarize the notes", mode="ask")
    with api.events(sid) as events:
        seen = api.until(events, "done")
    done = seen[-1].data
    assert done["status"] == "failed" and done["reason"] == "error"
    assert "503" in done["message"] or "overloaded" in done["message"], done
    assert seen[-2].name == "status" and seen[-2].data["status"] == "failed"
    info = api.client.get(f"/v1/tasks/{sid}").json()
    assert info["status"] == "failed" and info["reason"] == done["message"]
    listed = {s["session_id"]: s for s in api.client.get("/v1/sessions").json()["sessions"]}
    assert listed[sid]["status"] == "failed"

    # The end is in the transcript: a fresh reader (a restarted server) tells the same.
    store = SessionStore(load_config({"HEARTH_HOME": str(tmp_path / "home")}), tmp_path)
    with store.open(sid) as session:
        assert transcript_status(session) == ("failed", done["message"])

    # Continue retries the prompt the model never answered, and the task ends done.
    assert api.client.post(f"/v1/tasks/{sid}/resume").status_code == 202
    api.wait_status(sid, "done")
    assert "summarize the notes" in json.dumps(api.fake.bodies[-1])  # type: ignore[attr-defined]
    with store.open(sid) as session:
        assert transcript_status(session) == ("done", None)


def test_the_terminal_says_failed_with_the_session_and_how_to_continue(
    tmp_path: Path, serve: Serve
) -> None:
    hearth = make_hearth(tmp_path / "one")
    hearth.home.mkdir(parents=True, exist_ok=True)
    (hearth.home / "config.toml").write_text("[models]\nmax_retries = 0\n")
    agent = Agent(hearth, "openai", serve([DOWN]))
    result = agent.run("run", "summarize the notes", "--mode", "ask")
    assert result.code == 1
    assert result.out == ""  # no empty line for an answer that never came
    (line,) = result.err_lines
    (sid,) = agent.session_ids()
    assert f"session {sid} failed:" in line and f"hearth resume {sid}" in line


def test_a_web_task_gets_the_mcp_tools_a_terminal_run_gets(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    script = tmp_path / "small_server.py"
    script.write_text(SMALL)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        "[models]\nmax_retries = 0\n\n[mcp]\nstart_budget = 30\n\n[mcp.servers.small]\n"
        f"command = {json.dumps(sys.executable)}\nargs = {json.dumps([str(script)])}\n"
        'read_only_tools = ["weather"]\n'
    )
    api = api_for(
        [
            calls_reply("openai", ("call_1", "mcp__small__weather", {"city": "杭州"})),
            text_reply("openai", "Sunny."),
        ]
    )
    sid = api.start(task="weather in Hangzhou?", mode="ask")
    with api.events(sid) as events:
        seen = api.until(events, "done")
    assert seen[-1].data["status"] == "done", seen
    bodies = api.fake.bodies  # type: ignore[attr-defined]
    assert "mcp__small__weather" in tool_names(bodies[0])
    results = [e.data for e in seen if e.name == "tool_result"]
    assert results and results[0]["ok"] and results[0]["name"] == "mcp__small__weather"


def test_a_skill_task_keeps_the_users_words_as_prompt_and_title(
    api_for: Callable[..., Api], tmp_path: Path
) -> None:
    from tests.mcp.server_fixtures import add_skill

    add_skill(tmp_path / "home")
    api = api_for([text_reply("openai", "Here is the card.")])
    answer = api.client.post(
        "/v1/tasks", json={"skill": "greet", "example": "card", "values": {"who": "Ana"}}
    )
    assert answer.status_code == 201, answer.text
    sid = answer.json()["session_id"]
    with api.events(sid) as events:
        seen = api.until(events, "done")
    calls = [e.data for e in seen if e.name == "tool_call"]
    assert calls and calls[0]["name"] == "activate_skill" and calls[0]["summary"] == "greet"
    sent = api.fake.bodies[0]["messages"]  # type: ignore[attr-defined]
    assert "Ana" in sent[1]["content"] and "warm greeting card" not in sent[1]["content"]
    assert "warm greeting card" in sent[3]["content"]  # the skill's body, as its own part
    listed = {s["session_id"]: s for s in api.client.get("/v1/sessions").json()["sessions"]}
    assert "Ana" in listed[sid]["title"] and "Skill" not in listed[sid]["title"]


def test_stop_cancels_a_silent_model_at_once(api_for: Callable[..., Api]) -> None:
    """Issue #18 item 4: a stop while the model is silent takes effect now, not when the
    reply arrives, and every view says ``stopped``."""
    silent = Reply(pieces=[b"data: ", 30.0, b"[DONE]\n\n"])
    api = api_for([silent])
    sid = api.start(task="think hard", mode="ask")
    with api.events(sid) as events:
        api.until(events, "status")  # running
        time.sleep(0.5)  # the request is under way, the server says nothing
        stopped_at = time.monotonic()
        assert api.client.post(f"/v1/tasks/{sid}/stop").status_code == 202
        rest = list(events)
    took = time.monotonic() - stopped_at
    assert rest[-1].data == {"reason": "stopped", "status": "stopped"}, rest
    assert took < 5, f"the stop took {took:.1f} s"
    assert api.client.get(f"/v1/tasks/{sid}").json()["status"] == "stopped"
    listed = {s["session_id"]: s for s in api.client.get("/v1/sessions").json()["sessions"]}
    assert listed[sid]["status"] == "stopped"


def test_stop_ends_a_running_command_at_once(api_for: Callable[..., Api], tmp_path: Path) -> None:
    """A stop while a long command runs ends the command (its group gets SIGTERM) instead of
    waiting for it; the task says ``stopped`` and the command never finishes its work."""
    late = tmp_path / "workspace" / "late.txt"
    command = f"sleep 30; echo late > {late}"
    api = api_for(
        [
            calls_reply("openai", ("call_s", "shell", {"command": command, "timeout": 60})),
            text_reply("openai", "never asked"),
        ]
    )
    sid = api.start(task="wait a while", mode="agent")
    with api.events(sid) as events:
        (approval,) = [e for e in api.until(events, "approval") if e.name == "approval"]
        url = f"/v1/tasks/{sid}/approvals/{approval.data['call_id']}"
        assert api.client.post(url, json={"answer": "once"}).status_code == 204
        api.until(events, "status")  # running again: the command starts
        time.sleep(1.0)
        stopped_at = time.monotonic()
        assert api.client.post(f"/v1/tasks/{sid}/stop").status_code == 202
        rest = list(events)
    took = time.monotonic() - stopped_at
    assert rest[-1].data == {"reason": "stopped", "status": "stopped"}, rest
    assert took < 10, f"the stop took {took:.1f} s"
    (result,) = [e.data for e in rest if e.name == "tool_result"]
    assert not result["ok"] and "SIGTERM" in result["summary"], result
    assert not late.exists()
