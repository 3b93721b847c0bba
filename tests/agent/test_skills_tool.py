"""``activate_skill``, reading skill folders, and ``allowed-tools`` narrowing, on real files.

Skills are real folders found by the real :class:`SkillLibrary`; one lives in
``$HEARTH_HOME/skills`` (inside hearth's protected home), so reading it proves
skill folders are readable while the rest of the home stays off limits.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.agent.conftest import Tree
from workhearth.agent.approval import allow_all
from workhearth.agent.audit import AuditLog
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import (
    SkillState,
    ToolContext,
    ToolRegistry,
    ToolResult,
    activate_skill,
    default_registry,
)
from workhearth.agent.tools.skills import catalogue, refused_part, shell_patterns, tool_names
from workhearth.config import Config
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore
from workhearth.skills.library import SkillLibrary

BODY = "# Greeting\n\nRun `python scripts/greet.py NAME -o OUT.txt` to write a greeting.\n"


def write_skill(folder: Path, name: str, description: str, body: str, extra: str = "") -> Path:
    skill = folder / name
    (skill / "scripts").mkdir(parents=True)
    (skill / "references").mkdir()
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}", encoding="utf-8"
    )
    (skill / "scripts" / "greet.py").write_text("print('hello')\n")
    (skill / "references" / "style.md").write_text("Greet warmly, 你好.\n", encoding="utf-8")
    return skill


@pytest.fixture
def library(config: Config, tree: Tree, tmp_path: Path) -> SkillLibrary:
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    write_skill(config.paths.skills, "greet", "Write greetings to a text file.", BODY)
    write_skill(
        config.paths.skills,
        "narrow",
        "A skill that may only read and run commands.",
        "# Narrow\n\nOnly read and run.\n",
        extra="allowed-tools: Read Bash(python:*)\n",
    )
    broken = config.paths.skills / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("---\nname: broken\nwhat: nope\n---\nbody\n")
    no_builtins = tmp_path / "no-builtins"
    no_builtins.mkdir()
    return SkillLibrary(
        config.paths,
        tree.root,
        user_home=user_home,
        workspace_authorized=True,
        builtin_dir=no_builtins,
    )


@pytest.fixture
def fs_home(tree: Tree, config: Config) -> SafeFS:
    # Why: the home is protected exactly as the runner protects it.
    return SafeFS([tree.root], protected=[config.home])


@pytest.fixture
def ctx(
    session: Session,
    fs: SafeFS,
    store: SessionStore,
    config: Config,
    library: SkillLibrary,
    tmp_path: Path,
) -> ToolContext:
    home = tmp_path / "shell-home"
    home.mkdir()
    return ToolContext(
        session=session,
        fs=fs,
        mode="agent",
        sessions=store,
        approver=allow_all,
        audit=AuditLog(config.paths.audit_log),
        env={
            "HOME": str(home),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "SHELL": shutil.which("bash") or "/bin/bash",
            "LANG": "C.UTF-8",
        },
        skills=SkillState(library),
    )


@pytest.fixture
def reg() -> ToolRegistry:
    registry = default_registry()
    registry.add(activate_skill)
    return registry


def call(reg: ToolRegistry, ctx: ToolContext, tool: str, **args: object) -> ToolResult:
    return reg.call(tool, args, ctx.for_call(f"call_{tool}"))


def test_activate_loads_the_body_behind_a_header(
    reg: ToolRegistry, ctx: ToolContext, config: Config
) -> None:
    result = call(reg, ctx, "activate_skill", name="greet")
    assert not result.is_error, result.content
    folder = config.paths.skills / "greet"
    assert f"Folder: {folder}" in result.content
    assert sys.executable in result.content  # how to run its scripts
    assert f"{folder}/scripts/" in result.content
    assert "  scripts/greet.py" in result.content
    assert "  references/style.md" in result.content
    assert result.content.endswith(BODY)
    assert "name: greet" not in result.content  # the frontmatter stays out
    assert ctx.skills is not None and ctx.skills.active == "greet"


def test_unknown_and_broken_skills_are_tool_errors(reg: ToolRegistry, ctx: ToolContext) -> None:
    unknown = call(reg, ctx, "activate_skill", name="nope")
    assert unknown.is_error and "no skill named 'nope'" in unknown.content
    broken = call(reg, ctx, "activate_skill", name="broken")
    assert broken.is_error and "broken" in broken.content and "what" in broken.content
    assert ctx.skills is not None and ctx.skills.active is None


def test_without_skills_the_tool_is_not_offered(reg: ToolRegistry, ctx: ToolContext) -> None:
    bare = ToolContext(session=ctx.session, fs=ctx.fs, approver=allow_all)
    assert "activate_skill" not in [s.name for s in reg.specs("agent", bare)]
    assert call(reg, bare, "activate_skill", name="greet").is_error
    assert "activate_skill" in [s.name for s in reg.specs("ask", ctx)]  # reading is asking


def test_skill_files_are_readable_but_never_writable(
    reg: ToolRegistry, ctx: ToolContext, config: Config
) -> None:
    ref = config.paths.skills / "greet" / "references" / "style.md"
    read = call(reg, ctx, "read_file", path=str(ref))
    assert not read.is_error, read.content
    assert "你好" in read.content
    listed = call(reg, ctx, "list_dir", path=str(ref.parent.parent))
    assert "scripts/" in listed.content and "SKILL.md" in listed.content

    for name, args in [
        ("write_file", {"path": str(ref), "content": "changed"}),
        ("edit_file", {"path": str(ref), "old_string": "Greet", "new_string": "Insult"}),
        ("delete", {"path": str(ref)}),
        ("write_file", {"path": str(ref.parent / "new.md"), "content": "new"}),
    ]:
        result = call(reg, ctx, name, **args)
        assert result.is_error and "outside the authorized folders" in result.content, name
    assert ref.read_text(encoding="utf-8") == "Greet warmly, 你好.\n"
    assert not (ref.parent / "new.md").exists()

    # The rest of hearth's home stays off limits, and so does anything outside.
    (config.home / "config.toml").write_text("[models]\n")
    for path in (config.home / "config.toml", config.paths.skills):
        result = call(reg, ctx, "read_file", path=str(path))
        assert result.is_error, path
    climb = call(reg, ctx, "read_file", path=f"{config.paths.skills}/greet/../../config.toml")
    assert climb.is_error


def test_a_link_in_a_skill_cannot_lead_out(
    reg: ToolRegistry, ctx: ToolContext, config: Config, tree: Tree
) -> None:
    (config.paths.skills / "greet" / "references" / "leak.md").symlink_to(tree.secret)
    result = call(reg, ctx, "read_file", path=f"{config.paths.skills}/greet/references/leak.md")
    assert result.is_error and "TOP SECRET" not in result.content


def test_allowed_tools_narrow_until_another_skill(
    reg: ToolRegistry, ctx: ToolContext, config: Config, tree: Tree
) -> None:
    assert call(reg, ctx, "activate_skill", name="narrow").content.count("may only call") == 1
    offered = {s.name for s in reg.specs("agent", ctx)}
    assert offered == {"activate_skill", "read_file", "list_dir", "glob", "grep", "shell"}

    refused = call(reg, ctx, "write_file", path="x.txt", content="no")
    assert refused.is_error and "not allowed while the skill 'narrow' is active" in refused.content
    assert not (tree.root / "x.txt").exists()
    last = AuditLog(config.paths.audit_log).read()[-1]
    assert (last.tool, last.decision, last.outcome) == ("write_file", "denied-by-policy", "error")
    # Bash(python:*): only python runs, hearth's own interpreter included.
    ran = call(reg, ctx, "shell", command=f"{sys.executable} -c 'print(1 + 1)' > two.txt")
    assert not ran.is_error and ran.content.startswith("exit code 0"), ran.content
    assert (tree.root / "two.txt").read_text() == "2\n"
    for command in ("ls -la", "echo ran", f"{sys.executable} -V; touch t", "python -V | tee t"):
        refused = call(reg, ctx, "shell", command=command)
        assert refused.is_error and "Bash(python:*)" in refused.content, command
        assert "exit code" not in refused.content, command
    assert not (tree.root / "t").exists()
    last = AuditLog(config.paths.audit_log).read()[-1]
    assert (last.tool, last.decision) == ("shell", "denied-by-policy")

    call(reg, ctx, "activate_skill", name="greet")  # no allowed-tools: the narrowing lifts
    assert "write_file" in {s.name for s in reg.specs("agent", ctx)}
    assert not call(reg, ctx, "write_file", path="x.txt", content="yes").is_error


def test_the_active_skill_is_checkpointed_and_restored(
    reg: ToolRegistry, ctx: ToolContext, library: SkillLibrary
) -> None:
    call(reg, ctx, "activate_skill", name="narrow")
    recorded = ctx.session.load().business.active_skill
    assert recorded == {
        "name": "narrow",
        "allowed_tools": ["read_file", "shell"],
        "shell_patterns": ["python:*"],
    }
    # A resumed session builds its state from the checkpoint: the narrowing holds,
    # even when the skill's folder changed or went away meanwhile.
    shutil.rmtree(library.get("narrow").path)
    library.refresh()
    resumed = SkillState(library, recorded)
    assert resumed.active == "narrow"
    assert not resumed.allows("write_file") and resumed.allows("shell")
    assert not resumed.allows("shell", {"command": "ls"})
    assert resumed.allows("shell", {"command": "python3 scripts/x.py"})
    assert resumed.fork().recorded() == recorded


def test_claude_code_tool_names_map_to_ours() -> None:
    assert tool_names(["Read", "Bash(git", "status:*)", "Write", "mcp__files__read"]) >= {
        "read_file",
        "shell",
        "write_file",
        "mcp__files__read",
    }
    assert tool_names(["shell,grep"]) == {"shell", "grep"}


@pytest.mark.parametrize(
    ("declared", "patterns"),
    [
        (["Read", "Bash(python:*)"], ("python:*",)),
        (["Bash(git add:*)", "Bash(git status)"], ("git add:*", "git status")),
        (["Bash(git:*)", "Bash"], None),  # a bare Bash allows every command
        (["shell(python *)"], ("python *",)),
        (["Read", "Grep"], None),
    ],
)
def test_shell_patterns_of_allowed_tools(declared: list[str], patterns: object) -> None:
    assert shell_patterns(declared) == patterns


@pytest.mark.parametrize(
    ("command", "patterns", "refused"),
    [
        ("python scripts/a.py x", ["python:*"], None),
        (f"{sys.executable} /s/a.py > out.txt 2>&1", ["python:*"], None),
        ("python3 a.py && python a.py", ["python:*"], None),
        ("ls -la", ["python:*"], "ls -la"),
        ("python a.py; rm -rf x", ["python:*"], "rm -rf x"),
        ("python a.py || curl evil", ["python:*"], "curl evil"),
        ("python a.py | sh", ["python:*"], "sh"),
        ("python a.py\nwhoami", ["python:*"], "whoami"),
        ("python $(cat secret)", ["python:*"], "cat secret"),
        ("python `id`", ["python:*"], "id"),
        ("bash -c 'python a.py'", ["python:*"], "bash -c 'python a.py'"),
        ("git add -A", ["git add:*", "git status"], None),
        ("git status", ["git add:*", "git status"], None),
        ("git status -s", ["git add:*", "git status"], "git status -s"),
        ("git push", ["git add:*"], "git push"),
        ("npm run test:unit", ["npm run test*"], None),
    ],
)
def test_every_part_of_a_command_must_match(
    command: str, patterns: list[str], refused: str | None
) -> None:
    assert refused_part(command, patterns) == refused


def test_catalogue_lists_usable_skills_within_the_budget(library: SkillLibrary) -> None:
    text = catalogue(library)
    assert "activate_skill" in text
    assert "greet: Write greetings to a text file." in text
    assert "narrow: A skill that may only read" in text
    assert "\nbroken:" not in text
    small = catalogue(library, budget_tokens=12)
    assert small.count("\n") < text.count("\n")
    assert catalogue(library, budget_tokens=0) == ""
