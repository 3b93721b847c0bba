"""The ``task`` tool: a subagent in its own linked session, built by the runner.

The parent and the subagent are real routers talking HTTP to one local fake
OpenAI server (tests/fake_providers.py); the parent blocks while its subagent
works, so the scripted replies are answered in order: parent, subagent…, parent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import Tree
from tests.agent.test_approval import Scripted
from tests.agent.test_loop import calls, results_in, say
from tests.fake_providers import FakeProvider, Reply, json_reply
from workhearth.agent import runner
from workhearth.agent.approval import allow_all
from workhearth.agent.audit import AuditLog
from workhearth.agent.runner import RunOptions, build_agent, run_task
from workhearth.app import Workhearth
from workhearth.config import load_config
from workhearth.models.validate import openai_problems

API = "openai"
WRITE_TOOLS = {"write_file", "edit_file", "delete", "shell", "memory_save"}
SUBTASK = "Find which file under src prints hi and report its path."


@pytest.fixture
def hearth(
    tmp_path: Path, tree: Tree
) -> Iterator[Callable[[list[Reply], str], tuple[Workhearth, FakeProvider]]]:
    """A Workhearth whose one configured model is a fake server scripted with ``replies``."""
    made: list[tuple[Workhearth, FakeProvider]] = []

    def make(replies: list[Reply], prices: str = "") -> tuple[Workhearth, FakeProvider]:
        fake = FakeProvider(replies).__enter__()
        home = tmp_path / "hearth-home"
        home.mkdir(exist_ok=True)
        (home / "config.toml").write_text(
            '[models]\nmax_retries = 0\ndefault = "fake"\n\n[models.fake]\n'
            f'provider = "openai"\nmodel = "qwen-plus"\nbase_url = "{fake.url}"\n{prices}'
        )
        config = load_config({"HEARTH_HOME": str(home), "OPENAI_API_KEY": "sk-test"})
        wh = Workhearth(config=config, workspace=tree.root)
        made.append((wh, fake))
        return wh, fake

    yield make
    for wh, fake in made:
        fake.__exit__(None, None, None)
        if "memory" in wh.__dict__:
            wh.memory.close()


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}


def text_of(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else json.dumps(content)


def child_of(wh: Workhearth, parent_id: str) -> str:
    (child,) = [
        info.session_id
        for info in wh.sessions.list()
        if wh.sessions.open(info.session_id).meta.parent_session == parent_id
    ]
    return child


def test_the_parent_gets_the_subagent_report_and_both_sessions_are_linked(hearth, tree) -> None:
    wh, fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": SUBTASK})),
            calls(API, ("call_c1", "grep", {"pattern": "hi"})),
            say(API, "src/app.py prints hi (line 1)."),
            say(API, "The greeting is in src/app.py."),
        ],
        "price_in = 1000.0\nprice_out = 1000.0\n",
    )
    result = run_task(wh, "Where is hi printed?", RunOptions(mode="agent", approver=allow_all))

    assert (result.status, result.text) == ("done", "The greeting is in src/app.py.")
    assert len(fake.bodies) == 4 and fake.unscripted == 0
    for body in fake.bodies:
        assert openai_problems(body["messages"]) == []
    parent_first, child_first, child_second, parent_second = fake.bodies

    # The parent is offered task; the subagent gets the same tools minus task.
    assert "task" in tool_names(parent_first)
    assert tool_names(child_first) == tool_names(parent_first) - {"task"}
    assert WRITE_TOOLS <= tool_names(child_first)

    # The subagent's conversation is its own: a subagent system prompt, then the sub-task.
    system, first = child_first["messages"][:2]
    assert system["role"] == "system" and "subagent" in system["content"]
    assert (first["role"], text_of(first)) == ("user", SUBTASK)
    assert len(child_first["messages"]) == 2
    assert "Where is hi printed?" not in json.dumps(child_first)
    assert "src/app.py:1" in json.dumps(child_second["messages"])  # its grep result

    # The parent gets the final text and the subagent's session id as the task result.
    child_id = child_of(wh, result.session_id)
    ((call_id, report),) = results_in(parent_second, API)
    assert call_id == "call_t1"
    assert report.startswith("src/app.py prints hi (line 1).")
    assert child_id in report and f"hearth sessions show {child_id}" in report

    # The child session is linked, in the same workspace and mode, and listed with the parent.
    child = wh.sessions.open(child_id)
    assert child.meta.parent_session == result.session_id
    assert child.meta.parent_call_id == "call_t1"
    assert child.meta.workspace == str(tree.root)
    assert child.meta.mode == "agent"
    assert [m["role"] for m in child.messages()] == ["user", "assistant", "user", "assistant"]
    assert child.load().business.mode == "agent"
    assert {i.session_id for i in wh.sessions.list()} == {result.session_id, child_id}
    assert wh.sessions.open(result.session_id).meta.parent_session is None

    # Every call is audited under the session that made it.
    audit = [(r.session, r.tool) for r in AuditLog(wh.paths.audit_log).read()]
    assert audit == [(child_id, "grep"), (result.session_id, "task")]

    # The parent's cost counts the subagent's: four calls at 0.04 each.
    assert result.cost == pytest.approx(0.16)
    assert wh.sessions.open(result.session_id).load().business.cost == pytest.approx(0.16)


def test_an_ask_mode_subagent_only_reads(hearth, tree) -> None:
    wh, fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": "Write notes.txt."})),
            calls(API, ("call_c1", "write_file", {"path": "notes.txt", "content": "x"})),
            say(API, "I could not write: ask mode."),
            say(API, "The subagent could not write."),
        ]
    )
    result = run_task(wh, "make notes", RunOptions(mode="ask", approver=allow_all))
    assert result.status == "done"
    parent_first, child_first, child_second, _ = fake.bodies
    assert "task" in tool_names(parent_first)
    assert not WRITE_TOOLS & tool_names(parent_first)
    assert tool_names(child_first) == tool_names(parent_first) - {"task"}
    assert not WRITE_TOOLS & tool_names(child_first)
    ((_, refused),) = results_in(child_second, API)
    assert "ask mode" in refused
    assert not (tree.root / "notes.txt").exists()
    child = wh.sessions.open(child_of(wh, result.session_id))
    assert child.meta.mode == "ask"


def test_an_agent_mode_subagent_asks_the_same_approver(hearth, tree) -> None:
    user = Scripted("once")
    wh, _fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": "Write notes.txt saying hello."})),
            calls(API, ("call_c1", "write_file", {"path": "notes.txt", "content": "hello\n"})),
            say(API, "Wrote notes.txt."),
            say(API, "Done."),
        ]
    )
    result = run_task(wh, "make notes", RunOptions(mode="agent", approver=user))
    assert result.status == "done"
    assert [(r.tool, r.call_id) for r in user.asked] == [("write_file", "call_c1")]
    assert (tree.root / "notes.txt").read_text() == "hello\n"


def test_a_failed_subagent_comes_back_as_an_error_result(hearth) -> None:
    wh, fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": SUBTASK})),
            json_reply(400, {"error": {"message": "the subagent's model refused"}}),
            say(API, "The subagent failed."),
        ]
    )
    result = run_task(wh, "find hi", RunOptions(mode="agent", approver=allow_all))
    assert result.status == "done"
    tool_message = [m for m in fake.bodies[2]["messages"] if m["role"] == "tool"]
    (report,) = [m["content"] for m in tool_message]
    assert "stopped before finishing" in report and "refused" in report
    child_id = child_of(wh, result.session_id)
    assert child_id in report
    parent = wh.sessions.open(result.session_id).messages()
    (block,) = [b for b in parent[2]["content"] if b.get("type") == "tool_result"]
    assert block["is_error"] is True


def test_a_subagent_stops_at_its_own_step_limit(hearth, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "SUBAGENT_STEPS", 2)
    wh, fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": SUBTASK})),
            calls(API, ("call_c1", "list_dir", {"path": "."})),
            calls(API, ("call_c2", "list_dir", {"path": "src"})),
            say(API, "The subagent ran out of steps."),
        ]
    )
    result = run_task(wh, "find hi", RunOptions(mode="agent", approver=allow_all))
    assert result.status == "done" and fake.unscripted == 0
    ((_, report),) = results_in(fake.bodies[3], API)
    assert "stopped before finishing (max steps)" in report


def test_ctrl_c_in_a_subagent_stops_the_whole_run(hearth, tree) -> None:
    class Interrupting:
        human = True

        def ask(self, request):
            raise KeyboardInterrupt

    wh, fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": "Write notes.txt."})),
            calls(API, ("call_c1", "write_file", {"path": "notes.txt", "content": "x"})),
            say(API, "never asked"),
        ]
    )
    result = run_task(wh, "make notes", RunOptions(mode="agent", approver=Interrupting()))
    assert result.status == "interrupted"
    assert len(fake.bodies) == 2
    assert not (tree.root / "notes.txt").exists()


def test_a_resumed_subagent_session_is_not_offered_task(hearth, tmp_path: Path) -> None:
    wh, _fake = hearth(
        [
            calls(API, ("call_t1", "task", {"prompt": SUBTASK})),
            say(API, "src/app.py."),
            say(API, "Done."),
        ]
    )
    result = run_task(wh, "find hi", RunOptions(mode="agent", approver=allow_all))
    child = wh.sessions.open(child_of(wh, result.session_id))
    with child:
        agent = build_agent(wh, child, RunOptions(approver=allow_all), None, tmp_path)
        try:
            names = {s.name for s in agent.tools.specs()}
            assert "task" not in names and "read_file" in names
            assert "subagent" in agent.system  # it keeps the prompt it started with
        finally:
            agent.model.close()
    with wh.sessions.open(result.session_id) as parent:
        agent = build_agent(wh, parent, RunOptions(approver=allow_all), None, tmp_path)
        try:
            assert "task" in {s.name for s in agent.tools.specs()}
        finally:
            agent.model.close()


def test_without_a_subagent_task_is_neither_offered_nor_callable(session, fs) -> None:
    from workhearth.agent.tools import ToolContext, default_registry, task

    registry = default_registry()
    registry.add(task)
    ctx = ToolContext(session=session, fs=fs, approver=allow_all)
    box = registry.bind(ctx)
    assert "task" not in {s.name for s in box.specs()}
    refused = box.call("task", {"prompt": "anything"}, "call_1")
    assert refused.is_error and "unknown tool 'task'" in refused.content
    assert "task" not in refused.content.split("available:")[1]
    assert not box.read_only("task")  # never runs side by side with other calls
