"""The tool registry and the built-in tools, on real files, a real session and real bash."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent.conftest import Tree
from tests.agent.test_approval import Scripted
from workhearth.agent.approval import allow_all
from workhearth.agent.audit import AuditLog
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import (
    BUILTIN_TOOLS,
    ToolContext,
    ToolRegistry,
    ToolResult,
    default_registry,
    tool,
)
from workhearth.config import Config
from workhearth.memory.api import Memory
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore

CONTRACT = [
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "glob",
    "grep",
    "shell",
    "delete",
    "memory_search",
    "memory_save",
    "session_list",
    "session_read",
]


@pytest.fixture
def memory(config: Config, tree: Tree) -> Iterator[Memory]:
    m = Memory(config.paths, tree.root, config.memory)
    yield m
    m.close()


@pytest.fixture
def make_ctx(
    session: Session,
    fs: SafeFS,
    memory: Memory,
    store: SessionStore,
    config: Config,
    tmp_path: Path,
):
    home = tmp_path / "user home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "SHELL": shutil.which("bash") or "/bin/bash",
        "LANG": "C.UTF-8",
    }

    def make(mode: str = "agent", approver=allow_all) -> ToolContext:
        return ToolContext(
            session=session,
            fs=fs,
            mode=mode,  # type: ignore[arg-type]
            memory=memory,
            sessions=store,
            approver=approver,
            audit=AuditLog(config.paths.audit_log),
            env=env,
        )

    return make


@pytest.fixture
def ctx(make_ctx) -> ToolContext:
    return make_ctx()


@pytest.fixture
def reg() -> ToolRegistry:
    return default_registry()


def call(
    reg: ToolRegistry, ctx: ToolContext, name: str, call_id: str = "call_1", **args
) -> ToolResult:
    return reg.call(name, args, ctx.for_call(call_id))


# ------------------------------------------------------------------ registry


def test_names_schemas_and_descriptions(reg: ToolRegistry) -> None:
    assert reg.names() == CONTRACT and len(BUILTIN_TOOLS) == len(CONTRACT)
    specs = {s.name: s for s in reg.specs()}
    read = specs["read_file"].parameters
    assert read["type"] == "object" and read["required"] == ["path"]
    assert set(read["properties"]) == {"path", "offset", "limit"}  # no ctx
    assert read["properties"]["offset"] == {
        "default": 1,
        "description": "First line to show, 1-based",
        "minimum": 1,
        "type": "integer",
    }
    assert "title" not in read and read["additionalProperties"] is False
    assert specs["edit_file"].description.startswith("Replace an exact piece of text")
    assert specs["memory_save"].parameters["properties"]["level"]["enum"] == [
        "critical",
        "normal",
        "low",
    ]
    ask_names = [s.name for s in reg.specs("ask")]
    assert ask_names == [
        "read_file",
        "list_dir",
        "glob",
        "grep",
        "memory_search",
        "session_list",
        "session_read",
    ]
    assert reg.read_only("grep") and not reg.read_only("shell") and not reg.read_only("nope")


def test_bound_tools_is_what_the_loop_calls(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree
) -> None:
    box = reg.bind(ctx)
    assert [s.name for s in box.specs()] == CONTRACT
    assert box.read_only("read_file")
    result = box.call("read_file", {"path": "README.md"}, "toolu_01")
    assert result == ToolResult("     1\t# readme")
    assert AuditLog(ctx.audit.path).read()[-1].call_id == "toolu_01"  # type: ignore[union-attr]


def test_bad_calls_become_error_results(reg: ToolRegistry, ctx: ToolContext) -> None:
    unknown = call(reg, ctx, "rm_everything")
    assert unknown.is_error and "unknown tool 'rm_everything'" in unknown.content
    missing = call(reg, ctx, "read_file")
    assert missing.is_error and "path: Field required" in missing.content
    extra = call(reg, ctx, "read_file", path="README.md", colour="red")
    assert extra.is_error and "colour" in extra.content
    wrong = call(reg, ctx, "read_file", path="README.md", offset="first")
    assert wrong.is_error and "offset" in wrong.content
    assert reg.call("read_file", ["README.md"], ctx).is_error  # type: ignore[arg-type]
    denied = call(reg, ctx, "read_file", path="../outside/secret.txt")
    assert denied.is_error and "climbs out" in denied.content
    gone = call(reg, ctx, "read_file", path="nope.txt")
    assert gone.is_error and "no such file" in gone.content
    decisions = [r.decision for r in ctx.audit.read()]  # type: ignore[union-attr]
    assert decisions == ["denied-by-policy"] * 5 + ["allowed-by-mode", "allowed-by-mode"]


def test_a_crashing_tool_is_an_error_result_and_big_output_is_bounded(ctx: ToolContext) -> None:
    @tool(read_only=True)
    def boom(ctx: ToolContext) -> str:
        """Fails."""
        raise RuntimeError("kaput")

    @tool(read_only=True)
    def flood(ctx: ToolContext, n: int = 50_000) -> str:
        """Prints a lot."""
        return "".join(f"line {i}\n" for i in range(n))

    reg = ToolRegistry([boom, flood])
    result = call(reg, ctx, "boom")
    assert result.is_error and "internal error in boom: RuntimeError: kaput" in result.content
    big = call(reg, ctx, "flood", call_id="call_big")
    assert len(big.content) < 9_000 and big.content.startswith("line 0\n")
    assert big.content.rstrip().endswith("line 49999")
    full = ctx.session.tool_output_path("call_big")
    assert str(full) in big.content
    assert ctx.session.read_tool_output("call_big").count("\n") == 50_000
    # The model can page through the saved output with read_file.
    page = call(reg := default_registry(), ctx, "read_file", path=str(full), offset=25_000, limit=2)
    assert (
        page.content
        == " 25000\tline 24999\n 25001\tline 25000\n[more lines follow; continue with offset=25002]"
    )
    assert reg


# ------------------------------------------------------------------ files


def test_read_file_pages_and_marks_binary(reg: ToolRegistry, ctx: ToolContext, tree: Tree) -> None:
    (tree.root / "many.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    assert call(reg, ctx, "read_file", path="many.txt", offset=3, limit=2).content == (
        "     3\tl3\n     4\tl4\n[more lines follow; continue with offset=5]"
    )
    assert call(reg, ctx, "read_file", path="many.txt", offset=10).content == "    10\tl10"
    assert "fewer than 20" in call(reg, ctx, "read_file", path="many.txt", offset=20).content
    (tree.root / "blob.bin").write_bytes(b"\x00\x01" * 10)
    assert "binary file (20 bytes)" in call(reg, ctx, "read_file", path="blob.bin").content
    (tree.root / "empty").write_text("")
    assert call(reg, ctx, "read_file", path="empty").content == "(empty file)"
    (tree.root / "wide.txt").write_text("x" * 5000)
    assert "line cut, 5000 characters" in call(reg, ctx, "read_file", path="wide.txt").content


def test_write_file_creates_and_keeps_the_previous_version(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree
) -> None:
    created = call(reg, ctx, "write_file", path="docs/new.md", content="hello\n")
    assert created == ToolResult("Created docs/new.md (6 bytes)")
    replaced = call(reg, ctx, "write_file", call_id="call_2", path="README.md", content="# new\n")
    assert "file-history #1" in replaced.content
    assert (tree.root / "README.md").read_text() == "# new\n"
    assert ctx.history.read(1) == b"# readme\n"  # type: ignore[union-attr]
    assert ctx.history.list()[0].call_id == "call_2"  # type: ignore[union-attr]
    outside = call(reg, ctx, "write_file", path=str(tree.secret), content="pwned")
    assert outside.is_error and tree.secret.read_text() == "TOP SECRET\n"


def test_edit_file(reg: ToolRegistry, ctx: ToolContext, tree: Tree) -> None:
    (tree.root / "a.py").write_text("x = 1\ny = 1\nx = 1\n")
    none = call(reg, ctx, "edit_file", path="a.py", old_string="z = 1", new_string="z = 2")
    assert none.is_error and "not found" in none.content
    two = call(reg, ctx, "edit_file", path="a.py", old_string="x = 1", new_string="x = 2")
    assert two.is_error and "occurs 2 times" in two.content and "lines 1, 3" in two.content
    one = call(reg, ctx, "edit_file", path="a.py", old_string="y = 1", new_string="y = 2")
    assert one.content.startswith("Edited a.py: 1 replacement at line 2")
    every = call(
        reg, ctx, "edit_file", path="a.py", old_string="x = 1", new_string="x = 3", replace_all=True
    )
    assert "2 replacements" in every.content
    assert (tree.root / "a.py").read_text() == "x = 3\ny = 2\nx = 3\n"
    assert [ctx.history.read(i.n) for i in ctx.history.list()] == [  # type: ignore[union-attr]
        b"x = 1\ny = 1\nx = 1\n",
        b"x = 1\ny = 2\nx = 1\n",
    ]
    same = call(reg, ctx, "edit_file", path="a.py", old_string="x", new_string="x")
    assert same.is_error and "the same" in same.content
    (tree.root / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    crlf = call(reg, ctx, "edit_file", path="crlf.txt", old_string="a\nb", new_string="c")
    assert crlf.is_error and "CRLF" in crlf.content


def test_edit_refuses_when_the_file_changes_underneath(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tree.root / "race.txt"
    target.write_text("old\n")
    real = SafeFS.read_bytes

    def read_then_someone_saves(self, path, max_bytes=None):
        data = real(self, path, max_bytes)
        target.write_text("old\nthe user's line\n")
        return data

    monkeypatch.setattr(SafeFS, "read_bytes", read_then_someone_saves)
    result = call(reg, ctx, "edit_file", path="race.txt", old_string="old", new_string="new")
    assert result.is_error and "changed while" in result.content
    assert target.read_text() == "old\nthe user's line\n"


def test_list_glob_grep_and_delete(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree, config: Config
) -> None:
    (tree.root / "link").symlink_to("src")
    (tree.root / "node_modules" / "pkg").mkdir(parents=True)
    (tree.root / "node_modules" / "pkg" / "x.py").write_text("print('hi')\n")
    assert call(reg, ctx, "list_dir").content.splitlines() == [
        "README.md  (9 bytes)",
        "link -> src",
        "node_modules/",
        "src/",
    ]
    assert call(reg, ctx, "glob", pattern="**/*.py").content == "src/app.py"
    assert "No paths" in call(reg, ctx, "glob", pattern="*.rs").content
    assert call(reg, ctx, "grep", pattern=r"print\(").content == "src/app.py:1: print('hi')"
    assert call(
        reg, ctx, "grep", pattern="HI", ignore_case=True, include="*.md"
    ).content.startswith("No matches")
    assert (
        call(reg, ctx, "grep", pattern="readme", path="README.md").content
        == "README.md:1: # readme"
    )
    bad = call(reg, ctx, "grep", pattern="(")
    assert bad.is_error and "bad regular expression" in bad.content
    assert call(reg, ctx, "grep", pattern="x", path=str(tree.outside)).is_error
    deleted = call(reg, ctx, "delete", path="src/app.py")
    assert "hearth trash restore" in deleted.content and not (tree.root / "src" / "app.py").exists()
    assert any(config.paths.trash.iterdir())


def test_side_effects_wait_for_a_durable_transcript(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = []
    monkeypatch.setattr(
        ctx.session, "before_side_effect", lambda: seen.append((tree.root / "n.txt").exists())
    )
    call(reg, ctx, "write_file", path="n.txt", content="x")
    call(reg, ctx, "read_file", path="n.txt")
    assert seen == [False]  # once, for the write, before the file existed


# ------------------------------------------------------------------ modes and audit


@pytest.mark.parametrize("name", ["write_file", "shell", "delete", "rm_everything"])
def test_ask_mode_errors_list_only_the_tools_the_model_was_given(
    make_ctx, reg: ToolRegistry, tree: Tree, name: str
) -> None:
    ask = make_ctx("ask")
    refused = call(reg, ask, name, path="x.txt", content="x", command="true")
    assert refused.is_error and not (tree.root / "x.txt").exists()
    listed = refused.content.split("available: ", 1)[1].split("\n")[0].split(", ")
    assert listed == [s.name for s in reg.specs("ask", ask)]
    assert not {"write_file", "shell", "delete", "edit_file", "memory_save"} & set(listed)


def test_ask_mode_refuses_writes_and_agent_mode_asks(
    make_ctx, reg: ToolRegistry, tree: Tree
) -> None:
    ask = make_ctx("ask")
    refused = call(reg, ask, "write_file", path="x.txt", content="x")
    assert refused.is_error and "Refused by policy" in refused.content
    user = Scripted("deny", "once")
    agent = make_ctx("agent", user)
    denied = call(reg, agent, "delete", path="README.md")
    assert denied.is_error and "denied" in denied.content and (tree.root / "README.md").exists()
    assert call(reg, agent, "write_file", path="x.txt", content="hello").content.startswith(
        "Created"
    )
    assert "create" in user.asked[1].summary and "hello" in user.asked[1].summary
    records = agent.audit.read()
    assert [(r.tool, r.decision, r.outcome) for r in records] == [
        ("write_file", "denied-by-policy", "error"),
        ("delete", "denied-by-user", "error"),
        ("write_file", "allowed-by-user", "ok"),
    ]
    assert records[-1].arguments == {"path": "x.txt", "content": "hello"}
    # The model is told what to do next; the audit, read by people, says what happened.
    assert "Do not retry it unchanged" in denied.content
    assert records[1].summary == "denied by the user"


# ------------------------------------------------------------------ shell


def test_shell_runs_in_the_users_shell(reg: ToolRegistry, ctx: ToolContext, tree: Tree) -> None:
    out = call(reg, ctx, "shell", command="echo hi; echo oops >&2; pwd; exit 3")
    assert out.content == (
        f"exit code 3: oops\n--- stdout ---\nhi\n{tree.root}\n--- stderr ---\noops"
    )
    assert out.is_error  # DESIGN §6: a non-zero exit is a failed call
    inside = call(reg, ctx, "shell", command="pwd", cwd="src")
    assert inside.content.endswith(f"{tree.root / 'src'}")
    escaped = call(reg, ctx, "shell", command="pwd", cwd=str(tree.outside))
    assert escaped.is_error and "outside" in escaped.content
    slow = call(reg, ctx, "shell", command="sleep 5", timeout=1)
    assert slow.is_error and "timed out" in slow.content


def test_a_quest_deadline_bounds_a_long_command(make_ctx, reg: ToolRegistry) -> None:
    import dataclasses
    import time

    quest = dataclasses.replace(make_ctx("quest"), deadline=time.monotonic() + 1.5)
    started = time.monotonic()
    out = call(reg, quest, "shell", command="sleep 30; echo finished", timeout=60)
    assert time.monotonic() - started < 10
    assert "timed out" in out.content and "finished" not in out.content


def test_shell_output_is_bounded_and_kept_whole(reg: ToolRegistry, ctx: ToolContext) -> None:
    out = call(reg, ctx, "shell", call_id="call_seq", command="seq 1 100000")
    assert len(out.content) < 9_000 and "100000" in out.content
    assert ctx.session.read_tool_output("call_seq").count("\n") >= 100_000


def test_shell_is_asked_for_and_denied_commands_refused_in_quest(
    make_ctx, reg: ToolRegistry, tree: Tree
) -> None:
    user = Scripted("deny")
    agent = make_ctx("agent", user)
    res = call(reg, agent, "shell", command="touch marker")
    assert res.is_error and not (tree.root / "marker").exists()
    assert "touch marker" in user.asked[0].summary
    quest = make_ctx("quest", Scripted())
    res = call(reg, quest, "shell", command="echo ok && sudo touch marker")
    assert (
        res.is_error and "denied rule 'sudo'" in res.content and not (tree.root / "marker").exists()
    )
    assert call(reg, quest, "shell", command="echo fine").content.endswith("fine")


# ------------------------------------------------------------------ memory and sessions


def test_memory_save_asks_for_the_exact_sentence(
    make_ctx, reg: ToolRegistry, memory: Memory
) -> None:
    user = Scripted("once")
    agent = make_ctx("agent", user)
    saved = call(reg, agent, "memory_save", content="The user prefers tabs.", tags=["style"])
    assert "confirmed by the user" in saved.content
    assert user.asked[0].summary == 'remember (normal tags: style): "The user prefers tabs."'
    assert not user.asked[0].allow_always
    found = call(reg, agent, "memory_search", query="tabs")
    assert "The user prefers tabs." in found.content
    quest = make_ctx("quest")
    pending = call(reg, quest, "memory_save", content="Builds run with make.")
    assert "pending" in pending.content
    entries = {e.content: e.pending for e in memory.list()[0]}
    assert entries == {"The user prefers tabs.": False, "Builds run with make.": True}
    secret = call(reg, quest, "memory_save", content="key sk-proj-" + "a1B2c3D4e5" * 4)
    assert secret.is_error and "secret" in secret.content
    assert call(reg, make_ctx("ask"), "memory_save", content="x").is_error
    assert "No memory matches" in call(reg, agent, "memory_search", query="zebra").content


def test_session_tools(reg: ToolRegistry, ctx: ToolContext) -> None:
    ctx.session.append_message(
        {"role": "user", "content": [{"type": "text", "text": "fix the bug"}]}
    )
    listed = call(reg, ctx, "session_list")
    assert ctx.session.id in listed.content and "(this session)" in listed.content
    read = call(reg, ctx, "session_read", session_id=ctx.session.id)
    assert "fix the bug" in read.content and "## user" in read.content
    missing = call(reg, ctx, "session_read", session_id="nope")
    assert missing.is_error and "no session" in missing.content


def test_quest_shell_is_confined_by_the_sandbox(
    make_ctx, reg: ToolRegistry, tree: Tree, tmp_path: Path, config: Config
) -> None:
    from workhearth.agent.approval import Policy
    from workhearth.agent.tools import quest_sandbox
    from workhearth.shell.sandbox import sandbox_status

    nowhere = {"PATH": "/nonexistent"}
    assert quest_sandbox(make_ctx().fs, tmp_path / "t", nowhere, Policy(), config.paths) is None
    if not sandbox_status("/usr/bin:/bin").available:
        pytest.skip("bubblewrap cannot create a sandbox here")
    quest = make_ctx("quest")
    quest.sandbox = quest_sandbox(
        quest.fs, tmp_path / "sandbox-tmp", quest.env, Policy(), config.paths
    )
    assert quest.sandbox is not None
    inside = call(reg, quest, "shell", command="echo in > made-inside.txt && echo ok")
    assert inside.content.endswith("ok") and (tree.root / "made-inside.txt").exists()
    outside = call(reg, quest, "shell", command=f"echo x > '{tree.outside}/made-outside.txt'")
    # Read-only, or hidden behind the private /tmp: either way, nothing is written there.
    assert outside.content.startswith("exit code 1")
    assert not (tree.outside / "made-outside.txt").exists()
    # The same command in agent mode is not confined (the sandbox is for quest mode).
    assert not make_ctx("agent").sandbox


# ------------------------------------------------------------------ path limits


def test_file_tools_refuse_paths_too_deep_or_too_long(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree
) -> None:
    deep = "/".join(["d"] * 2_000) + "/f.txt"
    long = "x" * 4_097
    for path, limit in ((deep, "the limit is 64"), (long, "the limit is 4096 bytes")):
        for name, args in (
            ("write_file", {"content": "x"}),
            ("read_file", {}),
            ("edit_file", {"old_string": "a", "new_string": "b"}),
            ("list_dir", {}),
            ("delete", {}),
            ("glob", {"pattern": "*"}),
            ("grep", {"pattern": "x"}),
        ):
            result = call(reg, ctx, name, path=path, **args)
            assert result.is_error and limit in result.content, (name, result.content[:300])
    assert not (tree.root / "d").exists()
    ok = "/".join(["d"] * 63) + "/f.txt"  # 64 components: the most allowed
    assert not call(reg, ctx, "write_file", path=ok, content="deep\n").is_error
    assert (tree.root.joinpath(*ok.split("/"))).read_text() == "deep\n"
