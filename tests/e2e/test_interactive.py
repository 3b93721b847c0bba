"""Interactive ``hearth``: one session, a prompt per turn, slash commands, Ctrl-D to leave."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text, openai_tool_calls
from workhearth.config import load_config
from workhearth.models.validate import openai_problems
from workhearth.sessions.store import SessionStore


def say(text: str) -> Reply:
    return Reply(pieces=openai_sse(openai_text([text])))


def run_interactive(
    tmp_path: Path, fake: FakeProvider, lines: list[str]
) -> subprocess.CompletedProcess:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "HEARTH_"))
    }
    env.update(
        HEARTH_HOME=str(tmp_path / "home"),
        OPENAI_BASE_URL=fake.url,
        OPENAI_API_KEY="test-key",
        HEARTH_MODEL="openai:qwen-plus",
    )
    return subprocess.run(
        [sys.executable, "-m", "workhearth"],
        input="".join(line + "\n" for line in lines),
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_two_turns_share_one_session_and_slash_commands_work(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "plan.txt").write_text("ship on friday\n")
    replies = [
        say("Hello! What shall we do?"),
        Reply(
            pieces=openai_sse(
                openai_tool_calls([("call_1", "read_file", ['{"path": "plan.txt"}'])])
            )
        ),
        say("The plan says: ship on friday."),
    ]
    with FakeProvider(replies) as fake:
        done = run_interactive(
            tmp_path,
            fake,
            ["hello", "/mode ask", "/help", "/nope", "what does plan.txt say?", "/quit"],
        )
        bodies = list(fake.bodies)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "Hello! What shall we do?" in done.stdout
    assert "ship on friday" in done.stdout
    assert "mode: ask" in done.stdout and "unknown command /nope" in done.stdout
    # /mode ask took effect: the second turn offered no write tools
    second_tools = {t["function"]["name"] for t in bodies[1]["tools"]}
    assert "read_file" in second_tools and "write_file" not in second_tools
    # one session holds both turns, and every request was a valid conversation
    assert all(not openai_problems(b["messages"]) for b in bodies)
    assert [m["content"] for m in bodies[1]["messages"] if m["role"] == "user"][:2] == [
        "hello",
        "what does plan.txt say?",
    ]
    store = SessionStore(load_config({"HEARTH_HOME": str(tmp_path / "home")}), tmp_path / "ws")
    (info,) = store.list()
    assert info.messages == 6  # two user turns, a tool call, its result and two answers


def test_end_of_input_leaves_cleanly(tmp_path: Path) -> None:
    with FakeProvider([]) as fake:
        done = run_interactive(tmp_path, fake, [])
    assert done.returncode == 0
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("line", ["/mode bogus"])
def test_a_bad_mode_is_one_clear_line_and_the_session_goes_on(tmp_path: Path, line: str) -> None:
    with FakeProvider([say("still here")]) as fake:
        done = run_interactive(tmp_path, fake, [line, "hi", "/quit"])
    assert done.returncode == 0
    assert "still here" in done.stdout
    assert done.stderr.strip() == "hearth: mode must be one of ask, agent, quest"
