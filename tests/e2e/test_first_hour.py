"""A new user's first hour with ``hearth run``, ``hearth resume`` and interactive ``hearth``.

Each test runs the real command against a local server that speaks the OpenAI or
Anthropic stream (tests/fake_providers.py), with no ``HEARTH_MODEL`` unless it
says so: what a person who just typed ``--model openai:NAME`` meets.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import orjson
import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, Result
from tests.e2e.test_agent_run import calls_reply, text_reply, write_config
from tests.fake_providers import (
    FakeProvider,
    Reply,
    json_reply,
    openai_sse,
    openai_text,
)

MODEL = "openai:qwen-plus"


def hearth_run(
    hearth: Hearth,
    fake: FakeProvider | None,
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 30,
) -> Result:
    """``hearth ARGS`` with the OpenAI variables pointing at ``fake`` (and no HEARTH_MODEL)."""
    full = dict(hearth.env)
    if fake is not None:
        full.update(OPENAI_BASE_URL=fake.url, OPENAI_API_KEY="sk-test-dummy")
    full.update(env or {})
    proc = subprocess.run(
        [*HEARTH_CMD, *args],
        cwd=hearth.workspace,
        env=full,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def session_ids(hearth: Hearth) -> list[str]:
    return sorted(p.name for p in hearth.home.glob("projects/*/sessions/*"))


def audit(hearth: Hearth) -> list[tuple[str, str, str]]:
    result = hearth_run(hearth, None, "audit", "--json")
    assert result.code == 0, result.err
    return [(r["tool"], r["decision"], r["outcome"]) for r in orjson.loads(result.out)]


@pytest.fixture
def home(hearth: Hearth) -> Hearth:
    write_config(hearth)  # max_retries = 0: a wrong extra call fails fast
    return hearth


# ----------------------------------------------------------------- 1. resume keeps the model


def test_the_printed_resume_command_continues_with_the_model_the_run_used(home: Hearth) -> None:
    write_config(home, "[quest]\nmax_steps = 1\n")
    (home.workspace / "a.txt").write_text("a\n")
    with FakeProvider([calls_reply("openai", ("call_1", "list_dir", {"path": "."}))]) as fake:
        stopped = hearth_run(home, fake, "run", "look around", "--model", MODEL, "--mode", "quest")
    assert stopped.code == 3, stopped.err
    printed = re.search(r"`hearth (resume [^`]+)`", stopped.err)
    assert printed, stopped.err

    with FakeProvider([text_reply("openai", "Looked.")]) as fake:
        resumed = hearth_run(home, fake, *printed.group(1).split())
        bodies = list(fake.bodies)
    assert resumed.code == 0, resumed.err
    assert "Looked." in resumed.out
    assert [b["model"] for b in bodies] == ["qwen-plus"]


def test_resume_last_after_a_failed_reply_uses_the_sessions_model_and_model_switches(
    home: Hearth,
) -> None:
    # The first request fails (as a killed run leaves it): the prompt has no answer yet.
    with FakeProvider([json_reply(500, {"error": {"message": "boom"}})]) as fake:
        failed = hearth_run(home, fake, "run", "say hi", "--model", MODEL)
    assert failed.code == 1 and "Traceback" not in failed.err
    with FakeProvider([text_reply("openai", "hi")]) as fake:
        resumed = hearth_run(home, fake, "resume", "--last")
        first = [b["model"] for b in fake.bodies]
    assert resumed.code == 0, resumed.err
    assert first == ["qwen-plus"]

    # --model switches, from now on (a later resume keeps the new one).
    (sid,) = session_ids(home)
    with home.store().open(sid) as session:
        session.append_message({"role": "user", "content": [{"type": "text", "text": "again"}]})
    with FakeProvider([text_reply("openai", "ok"), text_reply("openai", "ok")]) as fake:
        switched = hearth_run(home, fake, "resume", sid, "--model", "openai:qwen-max")
        with home.store().open(sid) as session:
            session.append_message(
                {"role": "user", "content": [{"type": "text", "text": "once more"}]}
            )
        later = hearth_run(home, fake, "resume", sid)
        models = [b["model"] for b in fake.bodies]
    assert switched.code == 0 and later.code == 0, (switched.err, later.err)
    assert models == ["qwen-max", "qwen-max"]


def test_a_killed_interactive_session_resumes_with_its_model(home: Hearth) -> None:
    with FakeProvider([json_reply(500, {"error": {"message": "boom"}})]) as fake:
        hearth_run(home, fake, "--model", MODEL, input="hello\n")
    with FakeProvider([text_reply("openai", "Hello again.")]) as fake:
        resumed = hearth_run(home, fake, "resume", "--last")
        models = [b["model"] for b in fake.bodies]
    assert resumed.code == 0, resumed.err
    assert "Hello again." in resumed.out and models == ["qwen-plus"]


# ----------------------------------------------------------------- 2. the REPL survives mistakes


def say(text: str) -> Reply:
    return Reply(pieces=openai_sse(openai_text([text])))


def test_the_repl_reports_mistakes_in_one_line_and_keeps_going(home: Hearth) -> None:
    saved = hearth_run(home, None, "memory", "save", "The user prefers tabs.")
    assert saved.code == 0, saved.err
    lines = [
        "/model",
        "/mode",
        "/memory",
        "/resume nosuch",
        "/model bogus-name",
        "first",
        "/mode ask",
        "/mode",
        "second",
    ]
    with FakeProvider([say("one"), say("two")]) as fake:
        done = hearth_run(home, fake, "--model", MODEL, input="\n".join(lines) + "\n")
        bodies = list(fake.bodies)
    assert done.code == 0, done.err
    assert "Traceback" not in done.err
    assert f"model: {MODEL}" in done.out
    assert "mode: agent" in done.out and "mode: ask" in done.out
    assert "prefers tabs" in done.out
    errors = done.err_lines
    assert any("nosuch" in e for e in errors), errors
    assert any("bogus-name" in e for e in errors), errors
    assert all(e.startswith("hearth: ") for e in errors), errors
    assert "one" in done.out and "two" in done.out
    assert [b["model"] for b in bodies] == ["qwen-plus", "qwen-plus"]


# ----------------------------------------------------------------- 3. global options


def test_global_mode_and_model_apply_to_subcommands_and_bad_values_fail(home: Hearth) -> None:
    bogus = hearth_run(home, None, "--mode", "bogus", "run", "x", "--model", MODEL)
    assert bogus.code != 0 and len(bogus.err_lines) == 1 and "bogus" in bogus.err
    assert session_ids(home) == []
    unknown = hearth_run(home, None, "--model", "nosuch", "run", "x")
    assert unknown.code != 0 and len(unknown.err_lines) == 1 and "nosuch" in unknown.err

    with FakeProvider([text_reply("openai", "Read only.")]) as fake:
        ran = hearth_run(home, fake, "--mode", "ask", "--model", MODEL, "run", "look")
        tools = {t["function"]["name"] for t in fake.bodies[0]["tools"]}
    assert ran.code == 0, ran.err
    assert "read_file" in tools and "write_file" not in tools


# ----------------------------------------------------------------- 4. nobody to ask


def test_agent_mode_without_a_terminal_stops_and_says_how_to_go_on(home: Hearth) -> None:
    replies = [calls_reply("openai", ("call_w", "write_file", {"path": "x.txt", "content": "x"}))]
    with FakeProvider(replies) as fake:
        result = hearth_run(home, fake, "run", "write x", "--mode", "agent", "--model", MODEL)
        asked = len(fake.bodies)
    assert result.code not in (0, 130), result.err
    assert "--yes" in result.err and "quest" in result.err
    assert "Done." not in result.out
    assert asked == 1  # the model was not told a made-up denial
    assert not (home.workspace / "x.txt").exists()
    assert audit(home) == [("write_file", "not-asked", "error")]


def test_the_audit_records_who_allowed_a_call(home: Hearth) -> None:
    (home.workspace / "r.txt").write_text("r\n")
    replies = [
        calls_reply("openai", ("call_r", "read_file", {"path": "r.txt"})),
        calls_reply("openai", ("call_w", "write_file", {"path": "y.txt", "content": "y"})),
        text_reply("openai", "Done."),
        calls_reply("openai", ("call_q", "write_file", {"path": "q.txt", "content": "q"})),
        text_reply("openai", "Done."),
    ]
    with FakeProvider(replies) as fake:
        yes = hearth_run(home, fake, "run", "write y", "--yes", "--model", MODEL)
        quest = hearth_run(home, fake, "run", "write q", "--mode", "quest", "--model", MODEL)
    assert yes.code == 0 and quest.code == 0, (yes.err, quest.err)
    assert audit(home) == [
        ("read_file", "allowed-by-mode", "ok"),
        ("write_file", "allowed-by-flag", "ok"),
        ("write_file", "allowed-by-mode", "ok"),
    ]


# ----------------------------------------------------------------- 8. missing keys


def test_a_missing_key_is_named_before_any_request(home: Hearth) -> None:
    started = time.monotonic()
    result = hearth_run(home, None, "run", "hi", "--model", "anthropic:claude-sonnet-4-5")
    assert time.monotonic() - started < 10
    assert result.code != 0
    assert result.err_lines == [result.err_lines[0]] and "ANTHROPIC_API_KEY" in result.err
    assert session_ids(home) == []


def test_a_loopback_server_runs_without_a_key(home: Hearth) -> None:
    with FakeProvider([text_reply("openai", "local ok")]) as fake:
        result = hearth_run(
            home, None, "run", "hi", "--model", MODEL, env={"OPENAI_BASE_URL": fake.url}
        )
        headers = fake.received[0].headers
    assert result.code == 0, result.err
    assert "local ok" in result.out and "authorization" not in headers


# ----------------------------------------------------------------- 9. what a run shows


def test_run_output_names_the_path_the_command_and_the_reason(home: Hearth) -> None:
    replies = [
        calls_reply("openai", ("call_w", "write_file", {"path": "notes/a.txt", "content": "a"})),
        calls_reply("openai", ("call_s", "shell", {"command": "sudo ls"})),
        text_reply("openai", "Done."),
    ]
    with FakeProvider(replies) as fake:
        result = hearth_run(home, fake, "run", "work", "--mode", "quest", "--model", MODEL)
    assert result.code == 0, result.err
    assert "[write_file notes/a.txt] ok" in result.out
    shell_line = next(line for line in result.out.splitlines() if line.startswith("[shell"))
    assert "sudo ls" in shell_line and "denied rule" in shell_line, shell_line

    (sid,) = session_ids(home)
    shown = hearth_run(home, None, "sessions", "show", sid, "--count", "30")
    assert shown.code == 0, shown.err
    assert "write_file" in shown.out and "notes/a.txt" in shown.out and "sudo ls" in shown.out


def test_sessions_show_marks_thinking_as_thinking(home: Hearth) -> None:
    reply = Reply(pieces=openai_sse(openai_text(["The answer."], reasoning=["Let me ponder."])))
    with FakeProvider([reply]) as fake:
        assert hearth_run(home, fake, "run", "think", "--model", MODEL).code == 0
    (sid,) = session_ids(home)
    shown = hearth_run(home, None, "sessions", "show", sid)
    assert "[thinking] Let me ponder." in shown.out, shown.out


# ----------------------------------------------------------------- 10. small surprises


def test_resume_of_a_finished_session_says_so(home: Hearth) -> None:
    with FakeProvider([text_reply("openai", "All done.")]) as fake:
        assert hearth_run(home, fake, "run", "hi", "--model", MODEL).code == 0
        again = hearth_run(home, fake, "resume", "--last")
    assert again.code == 0, again.err
    assert "finished" in again.out + again.err
    assert again.out.strip() != "" or again.err.strip() != ""


def test_a_failed_start_leaves_no_empty_session(home: Hearth) -> None:
    result = hearth_run(home, None, "run", "hi", "--model", "bogus")
    assert result.code != 0 and "bogus" in result.err
    assert session_ids(home) == []
    listed = hearth_run(home, None, "sessions", "list", "--json")
    assert json.loads(listed.out) == []


@pytest.mark.parametrize("command", [(), ("run",), ("resume",)])
def test_help_shows_plain_names_and_describes_every_option(
    home: Hearth, command: tuple[str, ...]
) -> None:
    result = hearth_run(home, None, *command, "--help")
    assert result.code == 0, result.err
    for odd in ("{TASK}", "[[ID]]", "<str>", "<list[str]>"):
        assert odd not in result.out, result.out
    options = result.out.split("Options:", 1)[1].split("Commands:", 1)[0]
    for line in options.splitlines():
        if line.strip().startswith("--"):
            assert re.match(r"\s+--\S+(?: [A-Z]+)?\s{2,}\S", line), f"no description: {line}"
