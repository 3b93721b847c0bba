"""Issue 23 through the real ``hearth`` with a scripted model server that answers by who
asks (the lead, or the specialist of a step): questions, answers from a file, a plan that
waits for approval, a nudge in the terminal, specialists in parallel whose work is merged
back, a conflict detected, and a run killed in the middle that resumes without redoing a
finished step."""

from __future__ import annotations

import os
import pty
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, write_config
from tests.fake_providers import RoutedProvider
from tests.server.wiki_pages import write_page
from workhearth.config import load_config

API = "openai"
LEAD = "You lead a small team"


def step_marker(title: str) -> str:
    return f"Your step of the team's plan: {title}"


def plan_call(call_id: str, steps: list[dict[str, Any]], goal: str = "A short deck") -> Any:
    return calls_reply(
        API,
        (
            call_id,
            "write_plan",
            {
                "goal": goal,
                "deliverables": [{"path": "deck.md", "format": "md", "what": "the deck"}],
                "steps": steps,
            },
        ),
    )


def step(sid: str, title: str, owner: str = "writer", **more: Any) -> dict[str, Any]:
    return {"id": sid, "title": title, "owner": owner, **more}


def session_folder(hearth: Hearth) -> Path:
    folders = [
        p
        for p in hearth.home.glob("projects/*/sessions/*")
        if b'"team"' in (p / "transcript.jsonl").read_bytes()[:2000]
    ]
    (folder,) = folders
    return folder


def team_state(folder: Path) -> dict[str, Any]:
    return orjson.loads((folder / "team" / "state.json").read_bytes())


@pytest.fixture
def routed(hearth: Hearth):
    made: list[RoutedProvider] = []
    write_config(hearth)

    def make(routes: list[tuple[str, list[Any]]]) -> Agent:
        fake = RoutedProvider(routes).__enter__()
        made.append(fake)
        return Agent(hearth, API, fake)

    yield make
    for fake in made:
        fake.__exit__(None, None, None)


def test_questions_answers_plan_nudge_and_report(hearth: Hearth, routed, tmp_path: Path) -> None:
    questions = {
        "questions": [
            {
                "id": "audience",
                "text": "Who reads it?",
                "choices": ["board", "team"],
                "default": "board",
            },
            {"id": "slides", "text": "How many slides?", "default": "5"},
        ]
    }
    v1 = [step("outline", "Outline the deck"), step("figures", "Gather figures", "analyst")]
    v2 = [*v1, step("budget", "Add a budget sheet", "analyst", depends_on=["figures"])]
    agent = routed(
        [
            (
                LEAD,
                [
                    calls_reply(API, ("q1", "ask_questions", questions)),
                    plan_call("p1", v1),
                    plan_call("p2", v2),
                ],
            ),
            (step_marker("Outline the deck"), [text_reply(API, "Outline in deck.md.")]),
            (step_marker("Gather figures"), [text_reply(API, "Figures gathered.")]),
            (step_marker("Add a budget sheet"), [text_reply(API, "Budget added.")]),
        ]
    )
    asked = agent.run("run", "--team", "make a deck for the quarter", "--json")
    assert asked.code == 4, asked.err
    assert orjson.loads(asked.out) == [
        {
            "id": "audience",
            "text": "Who reads it?",
            "choices": ["board", "team"],
            "default": "board",
        },
        {"id": "slides", "text": "How many slides?", "choices": [], "default": "5"},
    ]
    folder = session_folder(hearth)
    sid = folder.name
    assert f"hearth resume {sid} --answers" in asked.err

    bad = tmp_path / "bad.json"
    bad.write_text('{"audience": "everyone"}')
    refused = agent.run("resume", sid, "--answers", str(bad))
    assert refused.code != 0 and "board, team" in refused.err and len(refused.err_lines) == 1

    answers = tmp_path / "answers.json"
    answers.write_text('{"audience": "team", "slides": "7"}')
    planned = agent.run("resume", sid, "--answers", str(answers))
    assert planned.code == 4, planned.err
    assert "approval" in planned.err
    plan_v1 = (folder / "plan.md").read_text()
    assert "Who reads it? — team" in plan_v1 and "### 2. Gather figures {#figures}" in plan_v1

    # A person at the terminal nudges the plan, then approves the revised one.
    master, slave = pty.openpty()
    os.write(master, b"add a budget sheet\n\n")
    try:
        done = agent.run("resume", sid, stdin=slave, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert done.code == 0, done.err
    assert (folder / "team" / "plan-1.md").read_text() == plan_v1
    assert "Add a budget sheet" in (folder / "plan.md").read_text()
    assert (folder / "team" / "plan-2.md").read_text() == (folder / "plan.md").read_text()
    lead_bodies = [b for b in agent.fake.bodies if LEAD in str(b)]
    assert "add a budget sheet" in str(lead_bodies[-1]["messages"])
    state = team_state(folder)
    assert state["phase"] == "done"
    assert {k: v["status"] for k, v in state["steps"].items()} == {
        "outline": "done",
        "figures": "done",
        "budget": "done",
    }
    # the budget step ran after the figures it depends on, and was told what they said
    assert state["steps"]["budget"]["started"] >= state["steps"]["figures"]["ended"]
    budget_body = next(b for b in agent.fake.bodies if step_marker("Add a budget sheet") in str(b))
    assert "Figures gathered." in str(budget_body["messages"])
    report = (folder / "team" / "report.md").read_text()
    assert "Add a budget sheet (analyst): done" in report


def sleeper(title: str, name: str, seconds: float) -> list[Any]:
    return [
        calls_reply(
            API, (f"c-{name}", "shell", {"command": f"sleep {seconds} && echo {name} > {name}.txt"})
        ),
        text_reply(API, f"Wrote {name}.txt."),
    ]


def test_independent_steps_run_in_parallel_and_merge_back(hearth: Hearth, routed) -> None:
    fact = "Files in this project end with a newline"
    assert hearth.run("memory", "save", fact).code == 0
    config = load_config({"HEARTH_HOME": str(hearth.home)})
    wiki = "The project keeps one text file per Greek letter."
    write_page(config, hearth.workspace, "overview", "Overview", f"# Overview\n\n{wiki}\n")
    steps = [step(n, f"Write {n}", produces=[f"{n}.txt"]) for n in ("alpha", "beta", "gamma")]
    agent = routed(
        [
            (LEAD, [plan_call("p1", steps)]),
            *(
                (step_marker(f"Write {n}"), sleeper(f"Write {n}", n, 2))
                for n in ("alpha", "beta", "gamma")
            ),
        ]
    )
    done = agent.run("run", "--team", "write three files", "--mode", "quest", timeout=90)
    assert done.code == 0, done.err
    assert "quest mode: the plan is taken as written" in done.err
    ws = hearth.workspace
    for n in ("alpha", "beta", "gamma"):
        assert (ws / f"{n}.txt").read_text() == f"{n}\n"
    state = team_state(session_folder(hearth))
    spans = [(s["started"], s["ended"]) for s in state["steps"].values()]
    assert len(spans) == 3
    for start, _end in spans:  # each starts before any other ends
        assert all(start < end for _s, end in spans)
    assert "[team] writer" in done.err  # the board
    # Each specialist works in a scratch copy of the project, yet is of the project: its
    # session sits with the project's and it knows what the project's memory holds.
    (project,) = {p.parent.parent for p in hearth.home.glob("projects/*/sessions/*")}
    assert orjson.loads((project / "workspace.json").read_bytes())["path"] == str(ws)
    sides = [s["session"] for s in state["steps"].values()]
    assert all((project / "sessions" / sid).is_dir() for sid in sides)
    firsts = [b for b in agent.fake.bodies if step_marker("Write") in orjson.dumps(b).decode()]
    assert len(firsts) >= 3 and all(fact in orjson.dumps(b).decode() for b in firsts)
    assert all(wiki in orjson.dumps(b).decode() for b in firsts)  # the wiki's overview first


def test_a_file_two_specialists_change_is_a_conflict(hearth: Hearth, routed) -> None:
    ws = hearth.workspace
    (ws / "shared.txt").write_text("title: draft\nbody\n")
    steps = [
        step("one", "Edit one", files=["shared.txt"]),
        step("two", "Edit two", files=["shared.txt"]),
    ]

    def editor(word: str, pause: float) -> list[Any]:
        command = f"sleep {pause} && sed -i 's/draft/{word}/' shared.txt"
        return [
            calls_reply(API, (f"c-{word}", "shell", {"command": command})),
            text_reply(API, "Edited."),
        ]

    agent = routed(
        [
            (LEAD, [plan_call("p1", steps)]),
            (step_marker("Edit one"), editor("first", 0.2)),
            (step_marker("Edit two"), editor("second", 1.5)),
        ]
    )
    done = agent.run("run", "--team", "edit the title twice", "--mode", "quest", timeout=90)
    assert done.code != 0
    assert (ws / "shared.txt").read_text() == "title: first\nbody\n", "never silently overwritten"
    state = team_state(session_folder(hearth))
    assert state["steps"]["one"]["status"] == "done"
    assert state["steps"]["two"]["status"] == "conflict"
    assert state["steps"]["two"]["conflicts"][0]["path"] == "shared.txt"
    report = (session_folder(hearth) / "team" / "report.md").read_text()
    assert "conflict: shared.txt" in report


def test_a_killed_team_resumes_without_redoing_finished_steps(hearth: Hearth, routed) -> None:
    steps = [
        step("quick", "Write quick"),
        step("slow", "Write second"),
        step("slower", "Write third"),
    ]
    agent = routed(
        [
            (LEAD, [plan_call("p1", steps)]),
            (step_marker("Write quick"), sleeper("Write quick", "quick", 0)),
            (
                step_marker("Write second"),
                [*sleeper("", "slow", 6)[:1], text_reply(API, "slow done")],
            ),
            (
                step_marker("Write third"),
                [*sleeper("", "slower", 6)[:1], text_reply(API, "slower done")],
            ),
        ]
    )
    proc = subprocess.Popen(
        [*HEARTH_CMD, "run", "--team", "three files", "--mode", "quest"],
        cwd=hearth.workspace,
        env=agent.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                steps_now = team_state(session_folder(hearth))["steps"]
            except (ValueError, FileNotFoundError):
                steps_now = {}
            if steps_now.get("quick", {}).get("status") == "done" and all(
                steps_now.get(n, {}).get("status") == "running" for n in ("slow", "slower")
            ):
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"never got to the middle: {steps_now}")
        time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    quick_requests = agent.fake.asked.count(step_marker("Write quick"))
    assert quick_requests == 2
    resumed = agent.run("resume", "--last", "--mode", "quest", timeout=90)
    assert resumed.code == 0, resumed.err
    assert agent.fake.asked.count(step_marker("Write quick")) == quick_requests, "not redone"
    state = team_state(session_folder(hearth))
    assert {k: v["status"] for k, v in state["steps"].items()} == dict.fromkeys(
        ("quick", "slow", "slower"), "done"
    )


CLAUDE_AGENT = """---
name: copywriter
description: Writes short marketing copy. Use for slogans and taglines.
tools: Read, Write, Bash
model: haiku
color: blue
---

You are a copywriter. Write crisp copy; never more than two lines per slogan.
"""


def test_a_claude_role_and_a_review_that_sends_work_back(hearth: Hearth, routed) -> None:
    ws = hearth.workspace
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "copywriter.md").write_text(CLAUDE_AGENT)
    trusted = hearth.run("workspace", "trust", str(ws))
    assert trusted.code == 0, trusted.err
    steps = [
        step(
            "slogan",
            "Write the slogan",
            "copywriter",
            produces=["slogan.txt"],
            checks=["the slogan names the product"],
        )
    ]

    def write(text: str, call_id: str) -> Any:
        return calls_reply(
            API, (call_id, "write_file", {"path": "slogan.txt", "content": text + "\n"})
        )

    agent = routed(
        [
            (LEAD, [plan_call("p1", steps, goal="A slogan")]),
            ("Review the step 'Write the slogan'", [
                text_reply(API, "FAIL\n1. slogan.txt does not name the product (Hearth)."),
                text_reply(API, "PASS\nIt names Hearth."),
            ]),
            (step_marker("Write the slogan"), [
                write("Warm up your work.", "w1"),
                text_reply(API, "Wrote slogan.txt."),
                write("Hearth: warm up your work.", "w2"),
                text_reply(API, "Named the product."),
            ]),
        ]
    )  # fmt: skip
    done = agent.run("run", "--team", "a slogan", "--mode", "quest", timeout=90)
    assert done.code == 0, done.err
    assert (ws / "slogan.txt").read_text() == "Hearth: warm up your work.\n"
    state = team_state(session_folder(hearth))
    slogan = state["steps"]["slogan"]
    assert slogan["status"] == "done" and slogan["rounds"] == 1
    assert slogan["review"]["verdict"] == "PASS"
    # the Claude role ran unchanged: its prompt, and only the tools it names
    first = next(b for b in agent.fake.bodies if step_marker("Write the slogan") in str(b))
    system = first["messages"][0]["content"]
    assert "You are a copywriter." in system
    tools = {t["function"]["name"] for t in first["tools"]}
    assert tools == {"read_file", "write_file", "shell"}
    # the fix round told the owner what the reviewer found
    fix = [b for b in agent.fake.bodies if step_marker("Write the slogan") in str(b)][2]
    assert "does not name the product" in str(fix["messages"])


def test_mcp_team_start_returns_at_once_and_the_team_delivers(hearth: Hearth, routed) -> None:
    import anyio

    from mcp import Client
    from workhearth.config import load_config
    from workhearth.mcp.server.tools import build_server

    agent = routed(
        [
            (LEAD, [plan_call("p1", [step("note", "Write the note", produces=["note.txt"])])]),
            (step_marker("Write the note"), sleeper("", "note", 1)),
        ]
    )
    env = {k: v for k, v in agent.env.items() if k.startswith(("HEARTH_", "OPENAI_"))}
    server = build_server(load_config(env), hearth.workspace)

    async def go() -> str:
        async with Client(server) as client:
            began = time.monotonic()
            started = await client.call_tool("team_start", {"task": "write a note"})
            assert not started.is_error, started.content
            assert time.monotonic() - began < 5  # at once, not after the team's work
            sid = started.structured_content["session_id"]
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if (hearth.workspace / "note.txt").exists():
                    break
                await anyio.sleep(0.1)
            return str(sid)

    sid = anyio.run(go)
    assert (hearth.workspace / "note.txt").read_text() == "note\n"
    deadline = time.monotonic() + 30
    while team_state(session_folder(hearth))["phase"] != "done" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert team_state(session_folder(hearth))["phase"] == "done"
    assert session_folder(hearth).name == sid
