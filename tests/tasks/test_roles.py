"""Team roles (issue #23 item 3): built-ins, Claude Code's agent files read unchanged once
the folder is trusted, precedence by name, narrowing that never widens, broken files listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.errors import ConfigError, NotFoundError, UsageError
from workhearth.paths import HearthPaths
from workhearth.tasks.team.roles import BUILTIN_DIR, Role, RoleLibrary, parse_role
from workhearth.trust import TrustStore

BUILTINS = {"researcher", "analyst", "writer", "reviewer", "architect", "developer", "tester"}
RUN_TOOLS = (
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "shell",
    "delete",
    "memory_search",
    "mcp__github__create_issue",
    "mcp__jira__search",
)
# Claude Code's documented subagent example (code.claude.com/docs/en/sub-agents), as a
# user would copy it into .claude/agents/: a name unlike the file's, Claude's tool names.
CLAUDE_REVIEWER = """\
---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability. Use immediately after writing or modifying code.
tools: Read, Grep, Glob, Bash
model: inherit
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.

When invoked:
1. Run git diff to see recent changes
2. Focus on modified files
3. Begin review immediately

Review checklist:
- Code is clear and readable
- Functions and variables are well-named
- No duplicated code
- Proper error handling
- No exposed secrets or API keys
- Input validation implemented
- Good test coverage
- Performance considerations addressed

Provide feedback organized by priority:
- Critical issues (must fix)
- Warnings (should fix)
- Suggestions (consider improving)

Include specific examples of how to fix issues.
"""


def role(front: str, body: str = "Do the work.\n") -> Role:
    if "description:" not in front:
        front += "description: a role\n"
    return parse_role(f"---\n{front}---\n{body}", stem="r", source="folder")


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def paths(tmp_path: Path) -> HearthPaths:
    return HearthPaths(tmp_path / "hearth")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_builtins_load_with_prompts_and_no_warnings(paths: HearthPaths, ws: Path) -> None:
    lib = RoleLibrary(paths, ws)
    roles = {r.name: r for r in lib.list()}
    assert set(roles) == BUILTINS
    assert {p.stem for p in BUILTIN_DIR.glob("*.md")} == BUILTINS
    for r in roles.values():
        assert r.ok and r.warnings == (), (r.name, r.problem, r.warnings)
        assert r.source == "builtin" and r.path == BUILTIN_DIR / f"{r.name}.md"
        assert len(r.description) > 60 and len(r.prompt) > 600
        assert "report" in r.prompt.lower()  # every specialist says how it reports back
    # The reviewer judges, it does not edit; the architect and reviewer think hard.
    mode, tools = roles["reviewer"].narrow("agent", RUN_TOOLS)
    assert mode == "agent" and "write_file" not in tools and "shell" in tools
    assert roles["architect"].tier == roles["reviewer"].tier == "strong"
    assert roles["writer"].tools is None  # all the run allows
    for office in ("analyst", "writer"):
        assert "checked automatically" in roles[office].prompt
    assert lib.get("tester").name == "tester"
    assert lib.pending() == [] and lib.warnings() == []


def test_claude_agent_file_is_pending_until_trusted_then_loads_unchanged(
    paths: HearthPaths, ws: Path
) -> None:
    path = write(ws / ".claude" / "agents", "reviewer.md", CLAUDE_REVIEWER)
    lib = RoleLibrary(paths, ws)  # trust read from $HEARTH_HOME/trust.json
    assert "code-reviewer" not in {r.name for r in lib.list()}
    [note] = lib.pending()
    assert note.startswith(".claude/agents/reviewer.md: not loaded")
    assert f"hearth workspace trust {ws}" in note
    with pytest.raises(NotFoundError, match="no role named 'code-reviewer'"):
        lib.get("code-reviewer")

    TrustStore(paths).trust(ws)
    lib.refresh()
    got = lib.get("code-reviewer")
    assert lib.pending() == []
    assert got.ok and got.warnings == ()  # color is Claude's, silently ignored
    assert got.source == "claude" and got.path == path
    assert got.prompt == CLAUDE_REVIEWER.split("---\n", 2)[2].strip()
    assert got.description.startswith("Expert code review specialist.")
    assert got.tools == ("read_file", "grep", "glob", "shell")
    assert (got.tier, got.model, got.mode) == (None, None, None)  # inherit: the run's own
    # The run's order, only what the role names.
    assert got.narrow("agent", RUN_TOOLS) == ("agent", ("read_file", "glob", "grep", "shell"))
    # The built-in reviewer is a different name: both are there.
    assert lib.get("reviewer").source == "builtin"

    # Changed after the user trusted it: pending again, never loaded as changed.
    path.write_text(CLAUDE_REVIEWER.replace("Read, Grep", "Read, Write, Grep"), encoding="utf-8")
    fresh = RoleLibrary(paths, ws)
    assert "code-reviewer" not in {r.name for r in fresh.list()}
    assert len(fresh.pending()) == 1


def test_precedence_folder_then_claude_then_user_then_builtin(paths: HearthPaths, ws: Path) -> None:
    def writer(where: str) -> str:
        return f"---\nname: writer\ndescription: the {where} writer\n---\nWrite ({where}).\n"

    folder = write(ws / ".hearth" / "agents", "writer.md", writer("folder"))
    claude = write(ws / ".claude" / "agents", "my-writer.md", writer("claude"))
    user = write(paths.home / "agents", "writer.md", writer("user"))
    both = frozenset({".hearth/agents", ".claude/agents"})

    def lib() -> RoleLibrary:
        return RoleLibrary(paths, ws, trusted=lambda: both)

    assert lib().get("writer").description == "the folder writer"
    hidden = lib().warnings()
    assert len(hidden) == 3 and all("is hidden by the one in" in w for w in hidden)
    assert str(folder) in hidden[0] and str(claude) in hidden[0]
    folder.unlink()
    assert lib().get("writer").source == "claude"
    claude.unlink()
    got = lib().get("writer")
    assert (got.source, got.prompt) == ("user", "Write (user).")
    user.unlink()
    assert lib().get("writer").source == "builtin"
    # Only the trusted folder loads: .claude/agents alone is trusted here.
    write(ws / ".hearth" / "agents", "writer.md", writer("folder"))
    write(ws / ".claude" / "agents", "writer.md", writer("claude"))
    only = RoleLibrary(paths, ws, trusted=lambda: frozenset({".claude/agents"}))
    assert only.get("writer").source == "claude"
    assert [n.split(":")[0] for n in only.pending()] == [".hearth/agents/writer.md"]


def test_hearth_home_agents_inside_the_workspace_are_the_users(tmp_path: Path) -> None:
    # HEARTH_HOME=~/.hearth with the home folder as workspace: .hearth/agents is the user's.
    ws = tmp_path
    paths = HearthPaths(ws / ".hearth")
    write(paths.home / "agents", "scribe.md", "---\nname: scribe\ndescription: d\n---\nx\n")
    lib = RoleLibrary(paths, ws)
    assert lib.get("scribe").source == "user" and lib.pending() == []


def test_mode_only_narrows(paths: HearthPaths) -> None:
    bypass = role("name: r\npermissionMode: bypassPermissions\n")
    assert bypass.ok and bypass.mode is None
    assert bypass.narrow("agent", RUN_TOOLS)[0] == "agent"
    assert bypass.narrow("ask", RUN_TOOLS)[0] == "ask"
    quest = role("name: r\nmode: quest\n")
    assert [quest.narrow(m, ())[0] for m in ("ask", "agent", "quest")] == ["ask", "agent", "quest"]
    ask = role("name: r\nmode: ask\n")
    assert [ask.narrow(m, ())[0] for m in ("ask", "agent", "quest")] == ["ask", "ask", "ask"]
    assert role("name: r\npermissionMode: plan\n").narrow("quest", ())[0] == "ask"
    for claude in ("default", "acceptEdits", "dontAsk"):
        assert role(f"name: r\npermissionMode: {claude}\n").narrow("agent", ())[0] == "agent"
    # Both fields: the narrower wins.
    assert role("name: r\nmode: agent\npermissionMode: plan\n").narrow("quest", ())[0] == "ask"
    with pytest.raises(UsageError, match="unknown mode"):
        quest.narrow("yolo", RUN_TOOLS)


def test_tools_map_from_claude_and_only_narrow() -> None:
    r = role("name: r\ntools: Read, Write, Edit, MultiEdit, Bash, Glob, Grep, LS\n")
    assert r.tools == ("read_file", "write_file", "edit_file", "shell", "glob", "grep", "list_dir")
    assert r.ok and r.warnings == ()
    assert r.narrow("agent", RUN_TOOLS)[1] == (
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "glob",
        "grep",
        "shell",
    )
    # A run without the shell gives none, whatever the role says.
    assert r.narrow("agent", ("read_file", "grep"))[1] == ("read_file", "grep")
    # hearth's own names (a YAML list) pass through; MCP by server or exact name.
    own = role("name: r\ntools: [read_file, mcp__github]\n")
    assert own.narrow("agent", RUN_TOOLS)[1] == ("read_file", "mcp__github__create_issue")
    assert role("name: r\ntools: []\n").narrow("quest", RUN_TOOLS)[1] == ()
    assert role("name: r\n").narrow("quest", RUN_TOOLS)[1] == RUN_TOOLS
    denied = role("name: r\ndisallowedTools: Write, Bash\n")
    assert denied.narrow("agent", RUN_TOOLS)[1] == (
        "read_file",
        "edit_file",
        "list_dir",
        "glob",
        "grep",
        "delete",
        "memory_search",
        "mcp__github__create_issue",
        "mcp__jira__search",
    )


def test_tools_hearth_cannot_honour_are_left_out_with_a_warning() -> None:
    r = role("name: r\ntools: Read, WebFetch, WebSearch, Frobnicate, Bash(git diff:*)\n")
    assert r.ok
    assert r.tools == ("read_file", "Frobnicate")
    text = "\n".join(r.warnings)
    assert "'WebFetch': hearth has no such tool; left out" in text
    assert "'WebSearch'" in text
    assert "unknown tool 'Frobnicate'" in text
    # A shell pattern is never widened to the whole shell.
    assert "patterns are not supported" in text
    assert r.narrow("quest", RUN_TOOLS) == ("quest", ("read_file",))


def test_model_aliases_map_to_tiers() -> None:
    cases = {
        "haiku": ("light", None),
        "sonnet": ("strong", None),
        "opus": ("strong", None),
        "inherit": (None, None),
        "strong": ("strong", None),
        "openai:qwen-max": (None, "openai:qwen-max"),
        "claude-sonnet-4-5": (None, "claude-sonnet-4-5"),
    }
    for value, want in cases.items():
        r = role(f"name: r\nmodel: {value}\n")
        assert (r.tier, r.model) == want, value
    assert role("name: r\n").tier is None


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Just text, no front matter.\n", "no YAML front matter"),
        ("---\nname: [unclosed\n---\nbody\n", "broken.md:3: not valid YAML ("),
        ("---\n- a\n- b\n---\nbody\n", "must be a YAML mapping"),
        ("---\ndescription: no name\n---\nbody\n", "missing required field 'name'"),
        ("---\nname: Code Reviewer\n---\nbody\n", "name 'Code Reviewer' must be"),
        ("---\nname: broken\nmode: admin\n---\nbody\n", "mode 'admin' must be one of"),
        ("---\nname: broken\npermissionMode: yolo\n---\nb\n", "permissionMode 'yolo'"),
        ("---\nname: broken\ntools: 5\n---\nbody\n", "tools must be a comma-separated"),
    ],
)
def test_broken_files_are_listed_with_their_problem(
    paths: HearthPaths, ws: Path, text: str, problem: str
) -> None:
    folder = ws / ".hearth" / "agents"
    write(folder, "broken.md", text)
    write(folder, "fine.md", "---\nname: fine\ndescription: ok\n---\nWork.\n")
    lib = RoleLibrary(paths, ws, trusted=lambda: frozenset({".hearth/agents"}))
    found = {r.name: r for r in lib.list()}
    assert found["fine"].ok and BUILTINS <= set(found)
    bad = found["broken"]  # listed under its file's name
    assert not bad.ok and bad.problem is not None and problem in bad.problem, bad.problem
    assert bad.problem.startswith("broken.md")
    assert bad.as_dict()["status"] == "broken" and bad.as_dict()["problems"][0] == bad.problem
    with pytest.raises(ConfigError, match="role 'broken' is broken") as err:
        lib.get("broken")
    assert err.value.code == "role_broken"
    with pytest.raises(ConfigError):
        bad.narrow("agent", RUN_TOOLS)


def test_unreadable_bytes_and_unknown_names(paths: HearthPaths, ws: Path) -> None:
    folder = ws / ".hearth" / "agents"
    folder.mkdir(parents=True)
    (folder / "latin.md").write_bytes(b"---\nname: latin\n---\ncaf\xe9\n")
    lib = RoleLibrary(paths, ws, trusted=lambda: frozenset({".hearth/agents"}))
    [bad] = [r for r in lib.list() if r.name == "latin"]
    assert bad.problem == "latin.md: not UTF-8 text (bad byte at offset 23)"
    with pytest.raises(NotFoundError) as err:
        lib.get("designer")
    assert "known: analyst, architect, developer" in str(err.value)
    assert "latin" not in str(err.value)  # broken roles are not offered
    assert err.value.code == "role_unknown"


def test_a_broken_file_shadows_the_builtin_rather_than_silently_running_it(
    paths: HearthPaths, ws: Path
) -> None:
    write(paths.home / "agents", "writer.md", "---\nname: writer\nmode: root\n---\nx\n")
    lib = RoleLibrary(paths, ws)
    with pytest.raises(ConfigError, match="mode 'root'"):
        lib.get("writer")
    assert any("builtin" in w for w in lib.warnings())
    # Warnings of a role that loads say what was ignored.
    extra = role("name: r\nskills: [docx]\nmaxTurns: 3\n")
    assert extra.ok and len(extra.warnings) == 2
    assert "field 'skills' is not used by hearth roles" in extra.warnings[0]
    empty = parse_role("---\nname: r\n---\n\n", stem="r", source="user")
    assert empty.ok and any("body" in w for w in empty.warnings)
    assert any("no description" in w for w in empty.warnings)
