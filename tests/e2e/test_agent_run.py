"""The real ``hearth run`` against local servers speaking the OpenAI and Anthropic streams.

Each test scripts a provider (tests/fake_providers.py) to ask for tool calls, runs
``hearth run`` as a subprocess in a temporary ``HEARTH_HOME``, and checks what a
user can see: files on disk, the trash, ``hearth audit --json``, the exit code,
and every request the provider received (it must be a conversation the real API
accepts: models/validate.py).
"""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, Result, tree_digest
from tests.fake_providers import (
    FakeProvider,
    Reply,
    anthropic_message,
    anthropic_text_block,
    anthropic_tool_block,
    openai_sse,
    openai_text,
    openai_tool_calls,
    split,
)
from workhearth.models.validate import anthropic_problems, openai_problems

APIS = ("openai", "anthropic")
MODELS = {"openai": "openai:qwen-plus", "anthropic": "anthropic:claude-sonnet-4-5"}
WRITE_TOOLS = {"write_file", "edit_file", "delete", "shell", "memory_save"}
Call = tuple[str, str, dict[str, Any]]  # (id, tool name, input)


# --------------------------------------------------------------------------- scripts


def fragments(arguments: dict[str, Any]) -> list[str]:
    """The JSON of ``arguments`` cut in three, mid-token, as providers stream it."""
    raw = json.dumps(arguments)
    third = max(1, len(raw) // 3)
    return [raw[:third], raw[third : 2 * third], raw[2 * third :]]


def calls_reply(api: str, *calls: Call, cut: int | None = 41) -> Reply:
    """One assistant turn asking for ``calls``; ``cut`` re-cuts the bytes mid-line."""
    if api == "openai":
        pieces = openai_sse(openai_tool_calls([(i, n, fragments(a)) for i, n, a in calls]))
    else:
        blocks = [anthropic_tool_block(k, i, n, fragments(a)) for k, (i, n, a) in enumerate(calls)]
        pieces = anthropic_message(*blocks, stop_reason="tool_use")
    return Reply(pieces=split(pieces, cut) if cut else pieces)


def text_reply(api: str, *pieces: str) -> Reply:
    if api == "openai":
        return Reply(pieces=openai_sse(openai_text(list(pieces))))
    return Reply(pieces=anthropic_message(anthropic_text_block(0, list(pieces))))


def stream_pieces(api: str, *pieces: str) -> list[bytes]:
    """The wire bytes of a plain text reply (to insert pauses between them)."""
    if api == "openai":
        return openai_sse(openai_text(list(pieces)))
    return anthropic_message(anthropic_text_block(0, list(pieces)))


def request_problems(api: str, body: dict[str, Any]) -> list[str]:
    if api == "openai":
        return openai_problems(body["messages"])
    return anthropic_problems(body)


def assert_valid_requests(api: str, fake: FakeProvider) -> None:
    """Every body the provider got is a conversation its API accepts, and none went unanswered."""
    assert fake.bodies, "the provider was never called"
    for n, body in enumerate(fake.bodies):
        assert request_problems(api, body) == [], f"request {n}: {json.dumps(body)[:2000]}"
    assert fake.unscripted == 0, "hearth asked the provider more often than scripted"


def tool_names(body: dict[str, Any]) -> set[str]:
    tools = body.get("tools") or []
    return {t["function"]["name"] if "function" in t else t["name"] for t in tools}


def tool_results(api: str, body: dict[str, Any]) -> dict[str, tuple[str, bool | None]]:
    """``call id -> (text, is_error)`` of every tool result in a request (None: format has no flag)."""
    out: dict[str, tuple[str, bool | None]] = {}
    for msg in body["messages"]:
        if api == "openai":
            if msg["role"] == "tool":
                out[msg["tool_call_id"]] = (msg["content"], None)
            continue
        content = msg["content"]
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                text = block["content"]
                if isinstance(text, list):
                    text = "".join(part.get("text", "") for part in text)
                out[block["tool_use_id"]] = (text, bool(block.get("is_error")))
    return out


def all_text(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], ensure_ascii=False)


# --------------------------------------------------------------------------- running


@dataclass
class Agent:
    """One home + workspace wired to one fake provider speaking ``api``."""

    hearth: Hearth
    api: str
    fake: FakeProvider

    @property
    def env(self) -> dict[str, str]:
        prefix = "OPENAI" if self.api == "openai" else "ANTHROPIC"
        return {
            **self.hearth.env,
            f"{prefix}_BASE_URL": self.fake.url,
            f"{prefix}_API_KEY": "sk-test-dummy",
            "HEARTH_MODEL": MODELS[self.api],
        }

    def run(
        self,
        *args: str,
        stdin: Any = subprocess.DEVNULL,
        input: str | None = None,
        shell_suffix: str | None = None,
        timeout: float = 30,
    ) -> Result:
        """``hearth ARGS`` as a user runs it (stdin is never the test runner's terminal).

        ``shell_suffix`` runs the command through ``sh -c`` with that redirection.
        """
        argv = [*HEARTH_CMD, *args]
        if shell_suffix:
            argv = ["/bin/sh", "-c", f"{shlex.join(argv)} {shell_suffix}"]
        proc = subprocess.run(
            argv,
            cwd=self.hearth.workspace,
            env=self.env,
            stdin=stdin if input is None else None,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def audit(self) -> list[dict[str, Any]]:
        result = self.run("audit", "--json")
        assert result.code == 0, result.err
        return orjson.loads(result.out)

    def session_ids(self) -> list[str]:
        return sorted(p.name for p in self.hearth.home.glob("projects/*/sessions/*"))

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """The canonical messages of a finished session, read through the library."""
        session = self.hearth.store().open(session_id)
        with session:
            return session.messages()


def write_config(hearth: Hearth, text: str = "") -> None:
    hearth.home.mkdir(parents=True, exist_ok=True)
    # Why: a bug that makes hearth call the fake once too often should fail fast, not back off.
    (hearth.home / "config.toml").write_text("[models]\nmax_retries = 0\n\n" + text)


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def agent_for(hearth: Hearth) -> Iterator[Any]:
    """``agent_for(api, replies)`` -> an :class:`Agent` whose provider plays ``replies``."""
    fakes: list[FakeProvider] = []
    write_config(hearth)

    def make(api: str, replies: list[Reply]) -> Agent:
        fake = FakeProvider(replies).__enter__()
        fakes.append(fake)
        return Agent(hearth, api, fake)

    yield make
    for fake in fakes:
        fake.__exit__(None, None, None)


def by_tool(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(r["tool"], r["decision"], r["outcome"]) for r in records]


# --------------------------------------------------------------------------- workspace


def test_files_are_written_only_inside_the_workspace(hearth: Hearth, agent_for, api: str) -> None:
    outside = hearth.workspace.parent / "outside.txt"
    etc = Path("/etc/hearth-e2e-should-not-exist")
    (hearth.workspace / "escape").symlink_to(hearth.elsewhere)  # an in-tree link leading out
    before = tree_digest(hearth.elsewhere)
    replies = [
        calls_reply(api, ("call_w1", "write_file", {"path": "notes/a.txt", "content": "inside"})),
        calls_reply(
            api,
            ("call_w2", "write_file", {"path": "../outside.txt", "content": "escaped"}),
            ("call_w3", "write_file", {"path": str(etc), "content": "escaped"}),
            ("call_w4", "write_file", {"path": "escape/evil.txt", "content": "escaped"}),
        ),
        calls_reply(api, ("call_r1", "read_file", {"path": "notes/a.txt"})),
        text_reply(api, "Wrote ", "notes/a.txt; ", "the other two were refused."),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "write three files", "--mode", "agent", "--yes")

    assert result.code == 0, result.err
    assert "the other two were refused." in result.out
    assert (hearth.workspace / "notes" / "a.txt").read_text() == "inside"
    assert not outside.exists()
    assert not etc.exists()
    assert tree_digest(hearth.elsewhere) == before
    assert_valid_requests(api, agent.fake)
    assert len(agent.fake.bodies) == 4

    results = tool_results(api, agent.fake.bodies[3])
    assert results["call_w1"][0].startswith("Created notes/a.txt")
    assert "climbs out of the authorized folder" in results["call_w2"][0]
    assert "outside the authorized folders" in results["call_w3"][0]
    for call in ("call_w2", "call_w3", "call_w4"):
        assert results[call][1] in (True, None)  # OpenAI tool messages carry no error flag
    assert "inside" in results["call_r1"][0]

    (session_id,) = agent.session_ids()
    errors = {
        b["tool_use_id"]: b.get("is_error", False)
        for m in agent.messages(session_id)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    assert errors == {
        "call_w1": False,
        "call_w2": True,
        "call_w3": True,
        "call_w4": True,
        "call_r1": False,
    }

    audit = agent.audit()
    assert [r["call_id"] for r in audit] == ["call_w1", "call_w2", "call_w3", "call_w4", "call_r1"]
    assert {r["session"] for r in audit} == {session_id}
    assert by_tool(audit) == [
        ("write_file", "allowed-by-flag", "ok"),
        ("write_file", "denied-by-policy", "error"),
        ("write_file", "denied-by-policy", "error"),
        ("write_file", "denied-by-policy", "error"),
        ("read_file", "allowed-by-mode", "ok"),
    ]


def test_ask_mode_offers_no_write_tool_and_refuses_a_write(
    hearth: Hearth, agent_for, api: str
) -> None:
    (hearth.workspace / "README.md").write_text("# project\n")
    replies = [
        calls_reply(api, ("call_a1", "write_file", {"path": "new.txt", "content": "no"})),
        calls_reply(api, ("call_a2", "read_file", {"path": "README.md"})),
        text_reply(api, "I can only read in ask mode."),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "make new.txt", "--mode", "ask", "--yes")

    assert result.code == 0, result.err
    assert not (hearth.workspace / "new.txt").exists()
    assert_valid_requests(api, agent.fake)
    offered = tool_names(agent.fake.bodies[0])
    assert {"read_file", "list_dir", "glob", "grep"} <= offered
    assert not offered & WRITE_TOOLS
    text, is_error = tool_results(api, agent.fake.bodies[1])["call_a1"]
    assert is_error in (True, None)
    assert "ask mode" in text
    assert by_tool(agent.audit()) == [
        ("write_file", "denied-by-policy", "error"),
        ("read_file", "allowed-by-mode", "ok"),
    ]


def _approval_script(api: str) -> list[Reply]:
    return [
        calls_reply(api, ("call_y", "write_file", {"path": "yes.txt", "content": "allowed"})),
        calls_reply(api, ("call_o", "write_file", {"path": "../out.txt", "content": "no"})),
        calls_reply(api, ("call_n", "write_file", {"path": "no.txt", "content": "denied"})),
        text_reply(api, "One written, one denied."),
    ]


def test_agent_mode_asks_on_the_terminal(hearth: Hearth, agent_for, api: str) -> None:
    """A person at a terminal answers "y", then "n"; the write outside is refused unasked."""
    agent = agent_for(api, _approval_script(api))
    master, slave = pty.openpty()
    try:
        # Why: typed ahead; the terminal holds the lines until hearth reads each answer.
        os.write(master, b"y\nn\n")
        result = agent.run("run", "write two files", "--mode", "agent", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)

    assert result.code == 0, result.err
    assert result.err.count("write_file wants to:") == 2, result.err
    assert "Allow? [y]es once, [a]lways this session, [n]o" in result.err
    assert (hearth.workspace / "yes.txt").read_text() == "allowed"
    assert not (hearth.workspace / "no.txt").exists()
    assert not (hearth.workspace.parent / "out.txt").exists()
    assert_valid_requests(api, agent.fake)
    text, _ = tool_results(api, agent.fake.bodies[3])["call_n"]
    assert "denied" in text
    assert by_tool(agent.audit()) == [
        ("write_file", "allowed-by-user", "ok"),
        ("write_file", "denied-by-policy", "error"),
        ("write_file", "denied-by-user", "error"),
    ]


def test_always_on_the_terminal_stops_asking_for_that_tool(hearth: Hearth, agent_for) -> None:
    api = "openai"
    replies = [
        calls_reply(api, ("call_1", "write_file", {"path": "one.txt", "content": "1"})),
        calls_reply(api, ("call_2", "write_file", {"path": "two.txt", "content": "2"})),
        calls_reply(api, ("call_3", "shell", {"command": "echo hi > three.txt"})),
        text_reply(api, "Done."),
    ]
    agent = agent_for(api, replies)
    master, slave = pty.openpty()
    try:
        os.write(master, b"a\nn\n")  # always for write_file; no to the shell command
        result = agent.run("run", "write files", "--mode", "agent", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)

    assert result.code == 0, result.err
    assert result.err.count("wants to:") == 2, result.err
    assert "shell wants to:" in result.err
    assert (hearth.workspace / "two.txt").read_text() == "2"
    assert not (hearth.workspace / "three.txt").exists()
    assert_valid_requests(api, agent.fake)
    assert by_tool(agent.audit()) == [
        ("write_file", "allowed-by-user", "ok"),
        ("write_file", "allowed-by-user", "ok"),
        ("shell", "denied-by-user", "error"),
    ]


@pytest.mark.parametrize("stdin_kind", ["pipe", "devnull", "closed"])
def test_agent_mode_without_a_terminal_stops_without_hanging(
    hearth: Hearth, agent_for, stdin_kind: str
) -> None:
    """ "y" on a pipe is not a person: with nobody to ask, the first write stops the run.

    The model is not told a made-up "the user denied"; the audit says ``not-asked``
    and the message says how to go on.
    """
    api = "openai"
    agent = agent_for(api, _approval_script(api))
    args = ["run", "write two files", "--mode", "agent"]
    started = time.monotonic()
    if stdin_kind == "pipe":
        result = agent.run(*args, stdin=None, input="y\ny\ny\n", timeout=20)
    elif stdin_kind == "devnull":
        result = agent.run(*args, timeout=20)
    else:
        # Why: `<&-` starts hearth with file descriptor 0 closed (sys.stdin is None).
        result = agent.run(*args, timeout=20, shell_suffix="<&-")

    assert time.monotonic() - started < 15
    assert result.code == 1, result.err
    assert "Allow?" not in result.err
    assert "--yes" in result.err and "--mode quest" in result.err, result.err
    (session_id,) = agent.session_ids()
    assert f"hearth resume {session_id} --yes" in result.err
    assert not (hearth.workspace / "yes.txt").exists()
    assert len(agent.fake.bodies) == 1
    assert by_tool(agent.audit()) == [("write_file", "not-asked", "error")]

    # The printed way on: the session goes on (the stopped call is reported as
    # interrupted to the model) and later writes are allowed by the flag.
    resumed = agent.run("resume", session_id, "--yes", timeout=20)
    assert resumed.code == 0, resumed.err
    assert (hearth.workspace / "no.txt").read_text() == "denied"
    assert_valid_requests(api, agent.fake)
    assert "call_y" in tool_results(api, agent.fake.bodies[1])
    assert by_tool(agent.audit())[1:] == [
        ("write_file", "denied-by-policy", "error"),
        ("write_file", "allowed-by-flag", "ok"),
    ]


# --------------------------------------------------------------------------- trash


def test_delete_goes_to_the_trash_and_restores(hearth: Hearth, agent_for, api: str) -> None:
    doomed = hearth.workspace / "old" / "plan.md"
    doomed.parent.mkdir()
    doomed.write_text("the plan\n")
    replies = [
        calls_reply(api, ("call_d1", "delete", {"path": "old/plan.md"})),
        text_reply(api, "Moved it to the trash."),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "delete old/plan.md", "--yes")

    assert result.code == 0, result.err
    assert not doomed.exists()
    assert_valid_requests(api, agent.fake)
    listed = agent.run("trash", "list", "--json")
    (item,) = orjson.loads(listed.out)
    assert Path(item["original"]) == doomed
    said, _ = tool_results(api, agent.fake.bodies[1])["call_d1"]
    assert item["id"] in said

    restored = agent.run("trash", "restore", item["id"])
    assert restored.code == 0, restored.err
    assert doomed.read_text() == "the plan\n"
    assert orjson.loads(agent.run("trash", "list", "--json").out) == []
    assert by_tool(agent.audit()) == [("delete", "allowed-by-flag", "ok")]


def test_an_overwritten_file_is_restorable_from_the_session_history(
    hearth: Hearth, agent_for, api: str
) -> None:
    target = hearth.workspace / "notes.md"
    target.write_text("first draft\n")
    replies = [
        calls_reply(
            api, ("call_w1", "write_file", {"path": "notes.md", "content": "second draft\n"})
        ),
        text_reply(api, "Rewrote notes.md."),
    ]
    agent = agent_for(api, replies)
    assert agent.run("run", "rewrite notes.md", "--yes").code == 0
    assert target.read_text() == "second draft\n"
    (session,) = orjson.loads(agent.run("sessions", "list", "--json").out)
    sid = session["session_id"]
    (version,) = orjson.loads(agent.run("trash", "list", "--session", sid, "--json").out)
    assert Path(version["original"]) == target
    restored = agent.run("trash", "restore", str(version["n"]), "--session", sid)
    assert restored.code == 0, restored.err
    assert target.read_text() == "first draft\n"
    # the version it replaced is kept too, so the restore can be undone
    assert len(orjson.loads(agent.run("trash", "list", "--session", sid, "--json").out)) == 2


# --------------------------------------------------------------------------- limits


def test_quest_stops_at_max_steps_with_a_non_zero_exit(hearth: Hearth, agent_for, api: str) -> None:
    write_config(hearth, "[quest]\nmax_steps = 2\n")
    (hearth.workspace / "a.txt").write_text("a\n")
    replies = [
        calls_reply(api, ("call_q1", "list_dir", {"path": "."})),
        calls_reply(api, ("call_q2", "read_file", {"path": "a.txt"})),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "look around", "--mode", "quest")

    assert result.code != 0
    assert "failed: it reached its step limit" in result.err
    (session_id,) = agent.session_ids()
    assert f"hearth resume {session_id}" in result.err
    assert "Traceback" not in result.err
    assert len(agent.fake.bodies) == 2
    assert_valid_requests(api, agent.fake)
    assert [r["decision"] for r in agent.audit()] == ["allowed-by-mode", "allowed-by-mode"]


def test_a_quest_leaves_no_private_tmp_behind(
    hearth: Hearth, agent_for, api: str, tmp_path: Path
) -> None:
    temp_root = tmp_path / "tmp"
    temp_root.mkdir()
    hearth.env["TMPDIR"] = str(temp_root)
    command = "echo scratch > /tmp/note.txt && cat /tmp/note.txt"
    replies = [
        calls_reply(api, ("call_t1", "shell", {"command": command})),
        text_reply(api, "Done."),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "use a scratch file", "--mode", "quest")

    assert result.code == 0, result.err
    (record,) = agent.audit()
    assert record["outcome"] != "error", record
    assert "scratch" in json.dumps(agent.fake.bodies[-1])  # the command ran; its output came back
    assert not list(temp_root.glob("hearth-quest-*"))


def test_success_exits_zero_and_audit_has_every_call(hearth: Hearth, agent_for, api: str) -> None:
    (hearth.workspace / "src").mkdir()
    (hearth.workspace / "src" / "app.py").write_text("print('hi')\n")
    replies = [
        # Two read-only calls in one turn (they may run side by side).
        calls_reply(
            api,
            ("call_s1", "glob", {"pattern": "**/*.py"}),
            ("call_s2", "grep", {"pattern": "print", "path": "src"}),
        ),
        calls_reply(
            api,
            (
                "call_s3",
                "edit_file",
                {"path": "src/app.py", "old_string": "hi", "new_string": "ho"},
            ),
        ),
        calls_reply(api, ("call_s4", "shell", {"command": "cat src/app.py"})),
        text_reply(api, "Changed ", "hi to ho."),
    ]
    agent = agent_for(api, replies)
    result = agent.run("run", "change hi to ho", "--yes")

    assert result.code == 0, result.err
    assert (hearth.workspace / "src" / "app.py").read_text() == "print('ho')\n"
    assert_valid_requests(api, agent.fake)
    results = tool_results(api, agent.fake.bodies[3])
    assert "src/app.py" in results["call_s1"][0]
    assert "src/app.py:1:" in results["call_s2"][0]
    assert "print('ho')" in results["call_s4"][0]
    audit = agent.audit()
    assert sorted(r["call_id"] for r in audit) == ["call_s1", "call_s2", "call_s3", "call_s4"]
    decided = {r["call_id"]: (r["tool"], r["decision"], r["outcome"]) for r in audit}
    assert decided == {
        "call_s1": ("glob", "allowed-by-mode", "ok"),
        "call_s2": ("grep", "allowed-by-mode", "ok"),
        "call_s3": ("edit_file", "allowed-by-flag", "ok"),
        "call_s4": ("shell", "allowed-by-flag", "ok"),
    }
    assert all(r["mode"] == "agent" for r in audit)
