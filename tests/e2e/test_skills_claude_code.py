"""Issue #18 item 9 through the real ``hearth``: a skill written for Claude Code.

Its ``SKILL.md`` carries ``version:`` and ``name: Changelog Writer`` (unlike its
folder, ``changelog``) and ``allowed-tools: Bash(python:*)``. It loads (status ``ok``,
the deviations as warnings), ``hearth skills validate`` still names each deviation,
and while it is active the shell runs only commands every part of which is python.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import (  # noqa: F401 - agent_for is a fixture
    agent_for,
    calls_reply,
    text_reply,
    tool_results,
)

API = "openai"
CHANGELOG_MD = """\
---
name: Changelog Writer
description: Write CHANGELOG.md from the notes in the workspace.
version: 1.0.0
allowed-tools: Bash(python:*)
---
# Changelog

Run `python scripts/changelog.py NOTES` from the workspace. CHANGELOG-BODY-MARKER
"""
SCRIPT = """\
import pathlib, sys
notes = pathlib.Path(sys.argv[1]).read_text(encoding="utf-8").split()
pathlib.Path("CHANGELOG.md").write_text("".join(f"- {n}\\n" for n in notes), encoding="utf-8")
print("wrote CHANGELOG.md")
"""


@pytest.fixture
def changelog(hearth: Hearth, tmp_path: Path) -> Path:
    """The skill in the workspace's ``.claude/skills``, the folder trusted as a user would."""
    hearth.env["HOME"] = str(tmp_path / "user-home")  # not the developer's own skills
    (tmp_path / "user-home").mkdir()
    folder = hearth.workspace / ".claude" / "skills" / "changelog"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(CHANGELOG_MD)
    (folder / "scripts" / "changelog.py").write_text(SCRIPT)
    trusted = hearth.run("workspace", "trust", str(hearth.workspace))
    assert trusted.code == 0, trusted.err
    return folder


def test_a_claude_code_skill_is_listed_ok_with_warnings(hearth: Hearth, changelog: Path) -> None:
    listed = hearth.json("skills", "list")
    (skill,) = [s for s in listed if s["path"] == str(changelog)]
    assert skill["status"] == "ok", skill
    assert skill["name"] == "Changelog Writer" and skill["source"] == "claude-workspace"
    problems = " | ".join(skill["problems"])
    assert "unknown field 'version'" in problems
    assert "differs from its folder name 'changelog'" in problems
    table = hearth.run("skills", "list")
    assert table.code == 0 and "BROKEN" not in table.out
    shown = hearth.run("skills", "show", "changelog")
    assert shown.code == 0 and "CHANGELOG-BODY-MARKER" in shown.out
    assert "warning: SKILL.md:4: unknown field 'version'" in shown.out

    # validate stays strict: every deviation, one line each, exit 1.
    checked = hearth.run("skills", "validate", str(changelog))
    assert checked.code == 1 and "Traceback" not in checked.err
    lines = checked.out.splitlines()
    assert f"{changelog}/SKILL.md:4: unknown field 'version'" in checked.out
    assert sum("name 'Changelog Writer'" in line for line in lines) == 2  # charset, folder
    assert len(lines) == 3, checked.out


def test_a_broken_claude_skill_is_still_broken(hearth: Hearth, changelog: Path) -> None:
    (changelog / "SKILL.md").write_text("---\nname: changelog\nversion: 2\n---\nno description\n")
    assert hearth.run("workspace", "trust", str(hearth.workspace)).code == 0
    (skill,) = [s for s in hearth.json("skills", "list") if s["path"] == str(changelog)]
    assert skill["status"] == "broken"
    assert "missing required field 'description'" in " ".join(skill["problems"])


def test_bash_python_pattern_narrows_every_part_of_a_command(
    hearth: Hearth,
    changelog: Path,
    agent_for,  # noqa: F811
) -> None:
    (hearth.workspace / "notes.txt").write_text("fixed-login added-export\n")
    script = shlex.join([sys.executable, str(changelog / "scripts" / "changelog.py"), "notes.txt"])
    calls = [
        ("call_a", "activate_skill", {"name": "Changelog Writer"}),
        ("call_ls", "shell", {"command": "ls -la"}),
        ("call_mix", "shell", {"command": f"{script} && touch sneaky.txt"}),
        ("call_sub", "shell", {"command": "python -c 'print(1)' $(touch sub.txt)"}),
        ("call_py", "shell", {"command": f"{script} > run.log 2>&1"}),
    ]
    replies = [calls_reply(API, call) for call in calls] + [text_reply(API, "Done.")]
    agent = agent_for(API, replies)
    result = agent.run("run", "write the changelog", "--mode", "agent", "--yes")

    assert result.code == 0, result.err
    texts = {k: v[0] for k, v in tool_results(API, agent.fake.bodies[-1]).items()}
    assert "Every part of a shell command must match: Bash(python:*)" in texts["call_a"]
    for call_id, part in [
        ("call_ls", "ls -la"),
        ("call_mix", "touch sneaky.txt"),
        ("call_sub", "touch sub.txt"),
    ]:
        text = texts[call_id]
        assert "exit code" not in text, text
        assert f"{part!r} is not allowed" in text and "Bash(python:*)" in text, text
    assert not (hearth.workspace / "sneaky.txt").exists()
    assert not (hearth.workspace / "sub.txt").exists()
    assert texts["call_py"].startswith("exit code 0"), texts["call_py"]
    assert (hearth.workspace / "CHANGELOG.md").read_text() == "- fixed-login\n- added-export\n"
    decisions = [(r["tool"], r["decision"]) for r in agent.audit()]
    assert decisions == [
        ("activate_skill", "allowed-by-mode"),
        ("shell", "denied-by-policy"),
        ("shell", "denied-by-policy"),
        ("shell", "denied-by-policy"),
        ("shell", "allowed-by-flag"),
    ]
