"""The real ``hearth run`` using skills, against a scripted OpenAI-compatible server.

What a user and the model can see: the skills catalogue in the system prompt the
server received, ``activate_skill`` returning a skill's instructions, the skill's
script run through the ``shell`` tool (and not in ``ask`` mode), the file it
wrote, ``allowed-tools`` narrowing, and ``hearth run --skill … --example …``.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (  # noqa: F401 - agent_for is a fixture
    Agent,
    agent_for,
    assert_valid_requests,
    calls_reply,
    text_reply,
    tool_names,
    tool_results,
)
from tests.fake_providers import json_reply
from workhearth.skills.library import BUILTIN_DIR

API = "openai"
DOCX = BUILTIN_DIR / "docx"
SHOUT_SCRIPT = """\
import argparse, pathlib, sys
p = argparse.ArgumentParser(prog="shout.py")
p.add_argument("input")
p.add_argument("-o", "--output", required=True)
a = p.parse_args()
out = pathlib.Path(a.output)
if out.exists():
    sys.exit("shout.py: " + a.output + " exists")
out.write_text(pathlib.Path(a.input).read_text(encoding="utf-8").upper(), encoding="utf-8")
print("wrote " + a.output)
"""
SHOUT_MD = """\
---
name: shout
description: Turn a text file into upper case (a skill written for another agent).
---
# Shout

Run `python scripts/shout.py INPUT -o OUTPUT` from this folder. SHOUT-BODY-MARKER
"""
NARROW_MD = """\
---
name: narrow
description: Look at files only.
allowed-tools: Read Grep
---
# Narrow

Only look. NARROW-BODY-MARKER
"""
SHOUT_EXAMPLES = """\
examples:
  - id: shout-file
    title: {zh: 大写文件, en: Shout a file}
    description: {zh: 把文件变成大写, en: Upper-case a file}
    prompt: "Shout {{input}} into {{output}}."
    variables:
      - {name: input, type: file, required: true}
      - {name: output, required: true}
"""


def claude_skills(hearth: Hearth) -> Path:
    """Skills under the workspace's ``.claude/skills``, in the Agent Skills format, unchanged."""
    root = hearth.workspace / ".claude" / "skills"
    (root / "shout" / "scripts").mkdir(parents=True)
    (root / "shout" / "SKILL.md").write_text(SHOUT_MD)
    (root / "shout" / ".skill-metadata.yaml").write_text(SHOUT_EXAMPLES)
    (root / "shout" / "scripts" / "shout.py").write_text(SHOUT_SCRIPT)
    (root / "narrow").mkdir()
    (root / "narrow" / "SKILL.md").write_text(NARROW_MD)
    # Why: a folder's own skills load once the user trusts it (tests/e2e/test_trust_folder.py).
    trusted = hearth.run("workspace", "trust", str(hearth.workspace))
    assert trusted.code == 0, trusted.err
    return root


def system_of(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return first["content"] if isinstance(first["content"], str) else json.dumps(first["content"])


def run_script(folder: Path, script: str, *args: str) -> str:
    """The command a model builds from the activation header: hearth's Python, the script path."""
    return shlex.join([sys.executable, str(folder / "scripts" / script), *args])


def checkpoint_state(agent: Agent, session_id: str) -> dict[str, Any]:
    with agent.hearth.store().open(session_id) as session:
        return session.load().business.as_event()


# ----------------------------------------------------------------- the docx skill


def docx_replies(command: str) -> list:
    return [
        calls_reply(API, ("call_a", "activate_skill", {"name": "docx"})),
        calls_reply(API, ("call_s", "shell", {"command": command})),
        text_reply(API, "Wrote ", "report.docx."),
    ]


def test_the_agent_writes_a_docx_with_the_docx_skill(hearth: Hearth, agent_for) -> None:  # noqa: F811
    from docx import Document

    (hearth.workspace / "report.md").write_text(
        "# 季度报告\n\n收入增长 **20%**。\n\n- 第一项\n- 第二项\n", encoding="utf-8"
    )
    command = run_script(DOCX, "md_to_docx.py", "report.md", "-o", "report.docx")
    agent = agent_for(API, docx_replies(command))
    result = agent.run("run", "把 report.md 变成 Word 文档", "--mode", "agent", "--yes")

    assert result.code == 0, result.err
    assert_valid_requests(API, agent.fake)
    first, after_activate, after_shell = agent.fake.bodies
    assert "\ndocx: " in system_of(first)  # the catalogue, one line per skill
    assert {"activate_skill", "shell"} <= tool_names(first)
    body, _ = tool_results(API, after_activate)["call_a"]
    assert f"Folder: {DOCX}" in body and sys.executable in body
    assert "scripts/md_to_docx.py" in body
    skill_md = (DOCX / "SKILL.md").read_text(encoding="utf-8")
    assert skill_md.split("---", 2)[2].strip()[:200] in body  # the body, frontmatter left out
    out, _ = tool_results(API, after_shell)["call_s"]
    assert out.startswith("exit code 0"), out
    doc = Document(str(hearth.workspace / "report.docx"))
    text = "\n".join(p.text for p in doc.paragraphs)
    assert "季度报告" in text and "第二项" in text
    audit = [(r["tool"], r["decision"]) for r in agent.audit()]
    assert audit == [("activate_skill", "allowed-by-mode"), ("shell", "allowed-by-flag")]


def test_in_ask_mode_the_docx_script_is_not_run(hearth: Hearth, agent_for) -> None:  # noqa: F811
    (hearth.workspace / "report.md").write_text("# 报告\n", encoding="utf-8")
    command = run_script(DOCX, "md_to_docx.py", "report.md", "-o", "report.docx")
    agent = agent_for(API, docx_replies(command))
    result = agent.run("run", "make report.docx", "--mode", "ask")

    assert result.code == 0, result.err
    first, after_activate, after_shell = agent.fake.bodies
    assert "\ndocx: " in system_of(first)
    assert "activate_skill" in tool_names(first) and "shell" not in tool_names(first)
    assert "Folder: " in tool_results(API, after_activate)["call_a"][0]
    refused, _ = tool_results(API, after_shell)["call_s"]
    assert "exit code" not in refused
    assert not (hearth.workspace / "report.docx").exists()


# ------------------------------------------------ a skill written for another agent


def test_a_claude_skill_is_catalogued_activated_and_its_script_run(
    hearth: Hearth,
    agent_for,  # noqa: F811
) -> None:
    root = claude_skills(hearth)
    (hearth.workspace / "note.txt").write_text("quiet words\n")
    command = run_script(root / "shout", "shout.py", "note.txt", "-o", "loud.txt")
    replies = [
        calls_reply(API, ("call_a", "activate_skill", {"name": "shout"})),
        calls_reply(API, ("call_s", "shell", {"command": command})),
        text_reply(API, "Done."),
    ]
    agent = agent_for(API, replies)
    result = agent.run("run", "shout note.txt into loud.txt", "--yes")

    assert result.code == 0, result.err
    assert_valid_requests(API, agent.fake)
    first, after_activate, after_shell = agent.fake.bodies
    system = system_of(first)
    assert "shout: Turn a text file into upper case" in system
    assert "narrow: Look at files only." in system
    body, _ = tool_results(API, after_activate)["call_a"]
    assert f"Folder: {root / 'shout'}" in body and "SHOUT-BODY-MARKER" in body
    assert "  scripts/shout.py" in body
    out, _ = tool_results(API, after_shell)["call_s"]
    assert out.startswith("exit code 0") and "wrote loud.txt" in out
    assert (hearth.workspace / "loud.txt").read_text() == "QUIET WORDS\n"


def test_run_with_skill_and_example_renders_activates_and_narrows(
    hearth: Hearth,
    agent_for,  # noqa: F811
) -> None:
    claude_skills(hearth)
    (hearth.workspace / "note.txt").write_text("quiet\n")
    replies = [
        calls_reply(API, ("call_w", "write_file", {"path": "x.txt", "content": "no"})),
        text_reply(API, "Could not write."),
    ]
    agent = agent_for(API, replies)
    result = agent.run("run", "--skill", "narrow", "look at note.txt", "--yes")
    assert result.code == 0, result.err
    first, second = agent.fake.bodies
    # Pre-activated: the user's words stay the prompt; the skill's body reaches the model
    # as its own activate_skill call and result (issue #18 item 6); its allowed-tools hold
    # from the start, and the terminal shows the skill in use.
    assert first["messages"][1] == {"role": "user", "content": "look at note.txt"}
    (call,) = first["messages"][2]["tool_calls"]
    assert call["function"]["name"] == "activate_skill"
    assert json.loads(call["function"]["arguments"]) == {"name": "narrow"}
    assert "NARROW-BODY-MARKER" in first["messages"][3]["content"]
    assert "[activate_skill narrow] ok" in result.out
    assert tool_names(first) == {"activate_skill", "read_file", "list_dir", "glob", "grep"}
    refused, _ = tool_results(API, second)["call_w"]
    assert "not allowed while the skill 'narrow' is active" in refused
    assert not (hearth.workspace / "x.txt").exists()
    (session_id,) = agent.session_ids()
    state = checkpoint_state(agent, session_id)
    assert state["active_skill"] == {"name": "narrow", "allowed_tools": ["grep", "read_file"]}
    listed = agent.run("sessions", "list", "--json")
    (row,) = [r for r in json.loads(listed.out) if r["session_id"] == session_id]
    assert row["title"] == "look at note.txt", row

    # --example renders the example's prompt with the --set values, then runs it.
    agent2 = agent_for(API, [text_reply(API, "ok")])
    result = agent2.run(
        "run", "--skill", "shout", "--example", "shout-file", "--set", "input=note.txt",
        "--set", "output=loud.txt", "--yes",
    )  # fmt: skip
    assert result.code == 0, result.err
    sent = agent2.fake.bodies[0]["messages"]
    assert sent[1]["content"].startswith("Shout note.txt into loud.txt.")
    assert "SHOUT-BODY-MARKER" not in sent[1]["content"]
    assert "SHOUT-BODY-MARKER" in sent[3]["content"]


def test_a_resumed_session_keeps_its_skill_and_narrowing(
    hearth: Hearth,
    agent_for,  # noqa: F811
) -> None:
    claude_skills(hearth)
    first = agent_for(
        API,
        [
            calls_reply(API, ("call_a", "activate_skill", {"name": "narrow"})),
            json_reply(500, {"error": {"message": "server fell over"}}),
        ],
    )
    stopped = first.run("run", "tidy the folder", "--yes")
    assert stopped.code != 0
    (session_id,) = first.session_ids()
    assert checkpoint_state(first, session_id)["active_skill"]["name"] == "narrow"

    again = agent_for(
        API,
        [
            calls_reply(API, ("call_w", "write_file", {"path": "x.txt", "content": "no"})),
            text_reply(API, "Stopped."),
        ],
    )
    result = again.run("resume", session_id, "--yes")
    assert result.code == 0, result.err
    assert "write_file" not in tool_names(again.fake.bodies[0])
    refused, _ = tool_results(API, again.fake.bodies[1])["call_w"]
    assert "not allowed while the skill 'narrow' is active" in refused
    assert not (hearth.workspace / "x.txt").exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--skill", "nope", "do it"], "no skill named 'nope'"),
        (["--skill", "shout", "--example", "nope"], "has no example 'nope'"),
        (["--skill", "shout", "--example", "shout-file", "--set", "output=o.txt"], "'input'"),
        (
            [
                "--skill",
                "shout",
                "--example",
                "shout-file",
                "--set",
                "input=note.txt",
                "--set",
                "output=o",
                "--set",
                "color=red",
            ],
            "unknown variable 'color'",
        ),
        (
            [
                "--skill",
                "shout",
                "--example",
                "shout-file",
                "--set",
                "input=../elsewhere/x",
                "--set",
                "output=o",
            ],
            "outside the authorized workspace",
        ),
        (["--skill", "shout", "--example", "shout-file", "--set", "input"], "NAME=VALUE"),
        (["--example", "shout-file"], "--example needs --skill"),
        (["--set", "a=b", "task"], "give --example"),
        (["--skill", "shout", "--example", "shout-file", "and a task"], "not both"),
        (["--skill", "broken", "do it"], "broken"),
        ([], "give a TASK"),
    ],
)
def test_bad_skill_input_is_one_line_and_no_session(
    hearth: Hearth,
    agent_for,  # noqa: F811
    args: list[str],
    says: str,
) -> None:
    root = claude_skills(hearth)
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    assert hearth.run("workspace", "trust", str(hearth.workspace)).code == 0  # as changed
    (hearth.workspace / "note.txt").write_text("quiet\n")
    (hearth.elsewhere / "x").write_text("outside\n")
    agent = agent_for(API, [])
    result = agent.run("run", *args)
    assert result.code != 0
    assert len(result.err_lines) == 1 and says in result.err, result.err
    assert "Traceback" not in result.err
    assert agent.session_ids() == []
    assert agent.fake.bodies == []
