"""The change detector: what a task changed on disk, by whichever tool (issue 18 item 5).

Real files, a real session, real bash; the tools run through the registry as the
agent loop runs them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import Tree
from tests.agent.test_approval import Scripted
from workhearth.agent.approval import allow_all
from workhearth.agent.changes import COLLAPSE, MAX_RECORDED, ChangeDetector, diff
from workhearth.agent.fences import fences_for
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import ToolContext, ToolRegistry, ToolResult, default_registry, tool
from workhearth.config import Config
from workhearth.sessions.session import Session
from workhearth.sessions.state import BusinessState
from workhearth.sessions.store import SessionStore
from workhearth.trash import Trash


def make_ctx(
    session: Session, fs: SafeFS, tmp_path: Path, approver: Any = allow_all
) -> ToolContext:
    home = tmp_path / "user home"
    home.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "SHELL": shutil.which("bash") or "/bin/bash",
        "LANG": "C.UTF-8",
    }
    ctx = ToolContext(session=session, fs=fs, mode="agent", approver=approver, env=env)
    ChangeDetector.for_context(ctx)
    return ctx


@pytest.fixture
def ctx(session: Session, fs: SafeFS, tmp_path: Path) -> ToolContext:
    return make_ctx(session, fs, tmp_path)


@pytest.fixture
def reg() -> ToolRegistry:
    return default_registry()


def call(reg: ToolRegistry, ctx: ToolContext, name: str, call_id: str, **args: Any) -> ToolResult:
    return reg.call(name, args, ctx.for_call(call_id))


def listed(result: ToolResult) -> list[tuple[str, str]]:
    return [(c.path, c.kind) for c in result.changes]


def recorded(store: SessionStore, session: Session) -> list[dict[str, Any]]:
    return store.files_changed(session.id).changes


# ------------------------------------------------------------------ each tool


def test_each_tool_lists_exactly_what_it_changed(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree, store: SessionStore, session: Session
) -> None:
    (tree.root / "b.txt").write_text("old\n")
    r = call(reg, ctx, "write_file", "call_w", path="notes/a.md", content="one\n")
    assert not r.is_error and listed(r) == [("notes/a.md", "created")]
    r = call(reg, ctx, "edit_file", "call_e", path="notes/a.md", old_string="one", new_string="1")
    assert listed(r) == [("notes/a.md", "modified")]
    r = call(reg, ctx, "shell", "call_s", command="echo x > a.txt; rm b.txt")
    assert not r.is_error, r.content
    assert listed(r) == [("a.txt", "created"), ("b.txt", "deleted")]
    r = call(reg, ctx, "delete", "call_d", path="README.md")
    assert listed(r) == [("README.md", "deleted")]
    # A read changes nothing and is not walked.
    walks = ctx.changes.walks  # type: ignore[union-attr]
    assert call(reg, ctx, "read_file", "call_r", path="a.txt").changes == ()
    assert ctx.changes.walks == walks  # type: ignore[union-attr]

    assert [(c["path"], c["kind"], c["tool"], c["call_id"]) for c in recorded(store, session)] == [
        ("notes/a.md", "created", "write_file", "call_w"),
        ("notes/a.md", "modified", "edit_file", "call_e"),
        ("a.txt", "created", "shell", "call_s"),
        ("b.txt", "deleted", "shell", "call_s"),
        ("README.md", "deleted", "delete", "call_d"),
    ]


def test_one_walk_per_call_and_the_first_is_taken_lazily(
    reg: ToolRegistry, ctx: ToolContext
) -> None:
    detector = ctx.changes
    assert detector is not None
    call(reg, ctx, "read_file", "call_r", path="README.md")
    assert detector.walks == 0
    call(reg, ctx, "shell", "call_1", command="true")
    assert detector.walks == 2  # before (lazily) and after
    call(reg, ctx, "shell", "call_2", command="true")
    call(reg, ctx, "shell", "call_3", command="true")
    assert detector.walks == 4  # the previous after-walk is the next before-walk


def test_a_denied_or_unasked_write_changes_nothing_and_is_not_walked(
    reg: ToolRegistry, session: Session, fs: SafeFS, tmp_path: Path, store: SessionStore
) -> None:
    class Nobody:
        human = False

        def ask(self, request: Any) -> str:
            raise AssertionError("nobody to ask")

    for approver in (Scripted("deny"), Nobody()):
        ctx = make_ctx(session, fs, tmp_path, approver)
        r = call(reg, ctx, "write_file", "call_n", path="no.txt", content="no")
        assert r.is_error and r.changes == ()
        assert ctx.changes.walks == 0  # type: ignore[union-attr]
    assert not (fs.roots[0].path / "no.txt").exists()
    assert recorded(store, session) == []


def test_a_write_refused_by_the_tool_itself_lists_nothing(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree
) -> None:
    r = call(reg, ctx, "write_file", "call_o", path="../outside/x.txt", content="no")
    assert r.is_error and r.changes == ()
    r = call(reg, ctx, "edit_file", "call_e", path="README.md", old_string="nope", new_string="x")
    assert r.is_error and r.changes == ()


def test_an_interrupted_call_still_records_what_it_changed(
    session: Session, fs: SafeFS, tmp_path: Path, store: SessionStore, tree: Tree
) -> None:
    @tool(read_only=False)
    def half_done(ctx: ToolContext) -> str:
        """Writes one file, then the user presses Ctrl-C."""
        (tree.root / "half.txt").write_text("started")
        raise KeyboardInterrupt

    reg = ToolRegistry([half_done])
    ctx = make_ctx(session, fs, tmp_path)
    with pytest.raises(KeyboardInterrupt):
        call(reg, ctx, "half_done", "call_h")
    assert [(c["path"], c["kind"]) for c in recorded(store, session)] == [("half.txt", "created")]


# ------------------------------------------------------------------ what is walked


def test_hearths_own_home_inside_the_workspace_is_not_listed(
    reg: ToolRegistry, tmp_path: Path, tree: Tree
) -> None:
    from workhearth.config import load_config

    config = load_config({"HEARTH_HOME": str(tree.root / ".hearth")})
    store = SessionStore(config, tree.root)
    session = store.create(mode="agent")
    try:
        fs = SafeFS([tree.root], trash=Trash(config.paths.trash), protected=[config.home])
        ctx = make_ctx(session, fs, tmp_path)
        # The call writes the session's transcript, audit and trash under the home.
        r = call(reg, ctx, "delete", "call_d", path="README.md")
        assert listed(r) == [("README.md", "deleted")]
        r = call(reg, ctx, "shell", "call_s", command="seq 1 20000 > big.txt")
        assert listed(r) == [("big.txt", "created")]  # the full output went to the home
    finally:
        session.close()


def test_what_the_mode_fences_off_is_not_listed(
    reg: ToolRegistry, session: Session, tmp_path: Path, tree: Tree, config: Config
) -> None:
    hidden = tree.root / "private"
    hidden.mkdir()
    fs = SafeFS(
        [tree.root],
        trash=Trash(config.paths.trash),
        protected=[config.home],
        fences=fences_for("quest", [tree.root], {"HOME": str(tmp_path)}, [str(hidden)]),
    )
    ctx = make_ctx(session, fs, tmp_path)
    r = call(reg, ctx, "shell", "call_s", command="echo s > private/key; echo p > public.txt")
    assert listed(r) == [("public.txt", "created")]


def test_a_second_folder_is_listed_with_its_full_path_and_a_nested_one_once(
    reg: ToolRegistry, session: Session, tmp_path: Path, tree: Tree, config: Config
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    fs = SafeFS(
        [tree.root, tree.root / "src", other],
        trash=Trash(config.paths.trash),
        protected=[config.home],
    )
    ctx = make_ctx(session, fs, tmp_path)
    r = call(reg, ctx, "shell", "call_s", command=f"echo 1 > src/new.py; echo 2 > '{other}/x'")
    assert listed(r) == [(str(other / "x"), "created"), ("src/new.py", "created")]


# ------------------------------------------------------------------ folders


def test_folders_are_listed_by_their_files_unless_empty_or_large(
    reg: ToolRegistry, ctx: ToolContext, tree: Tree
) -> None:
    many = COLLAPSE + 5
    r = call(
        reg,
        ctx,
        "shell",
        "call_mk",
        command=f"mkdir -p small/sub empty big && echo x > small/sub/a.txt "
        f"&& for i in $(seq 1 {many}); do echo $i > big/f$i; done && echo z > big-2",
    )
    assert listed(r) == [
        ("big", "created"),
        ("big-2", "created"),
        ("empty", "created"),
        ("small/sub/a.txt", "created"),
    ]
    entries = {c.path: c.entries for c in r.changes}
    assert entries == {"big": many, "big-2": None, "empty": 0, "small/sub/a.txt": None}
    # Adding a file to a folder does not list the folder as modified.
    r = call(reg, ctx, "shell", "call_add", command="echo y > small/b.txt")
    assert listed(r) == [("small/b.txt", "created")]
    r = call(reg, ctx, "shell", "call_rm", command="rm -r big small")
    assert [(c.path, c.kind, c.entries) for c in r.changes] == [
        ("big", "deleted", many),
        ("small/b.txt", "deleted", None),
        ("small/sub/a.txt", "deleted", None),
    ]


def test_diff_sees_a_rewrite_of_the_same_size_and_a_file_turned_folder() -> None:
    before = {"a": ("file", 3, 100, 7), "b": ("file", 3, 100, 8), "d": ("dir", 0, 5, 9)}
    after = {"a": ("file", 3, 100, 7), "b": ("file", 3, 101, 8), "d": ("file", 0, 5, 10)}
    assert diff(before, after) == [("b", "modified", None), ("d", "modified", None)]
    assert diff(before, dict(before)) == []


# ------------------------------------------------------------------ bounds


def test_too_many_files_is_said_once_and_tracking_stops(
    reg: ToolRegistry, session: Session, fs: SafeFS, tmp_path: Path, store: SessionStore
) -> None:
    ctx = make_ctx(session, fs, tmp_path)
    ctx.changes = ChangeDetector(fs, limit=2)  # the tree holds 3 entries
    r = call(reg, ctx, "shell", "call_1", command="echo 1 > x")
    assert not r.is_error and r.changes == ()
    call(reg, ctx, "shell", "call_2", command="echo 2 > y")
    assert ctx.changes.walks == 1  # no walk after tracking stopped
    shown = store.files_changed(session.id)
    assert shown.changes == [] and shown.untracked is not None
    assert "too many files" in shown.untracked and "2" in shown.untracked
    assert sum('"changes_untracked"' in line for line in open(session.transcript)) == 1


def test_the_record_is_capped_and_counts_what_it_left_out(
    reg: ToolRegistry, ctx: ToolContext, store: SessionStore, session: Session
) -> None:
    n = MAX_RECORDED + 7
    # Why a script: file by file under COLLAPSE-sized folders, so nothing folds.
    cmd = f"for i in $(seq 1 {n}); do echo $i > f$i; done"
    r = call(reg, ctx, "shell", "call_many", command=cmd)
    assert len(r.changes) == n  # the call's own result is whole
    shown = store.files_changed(session.id)
    assert len(shown.changes) == MAX_RECORDED and shown.omitted == 7


# ------------------------------------------------------------------ durable record


def test_changes_survive_a_restart_and_old_checkpoints_read_as_none(
    reg: ToolRegistry, ctx: ToolContext, store: SessionStore, session: Session, config: Config
) -> None:
    call(reg, ctx, "write_file", "call_w", path="kept.txt", content="k")
    session.close()
    again = SessionStore(config, ctx.workspace)
    assert [c["path"] for c in again.files_changed(session.id).changes] == ["kept.txt"]
    # The loop's own checkpoint keeps them (it rewrites the business state it loads).
    reopened = again.open(session.id)
    business = reopened.load().business
    reopened.checkpoint(business.replace(mode="quest"))
    reopened.close()
    assert [c["path"] for c in again.files_changed(session.id).changes] == ["kept.txt"]

    old = BusinessState.from_event({"tasks": [], "files": {}, "mode": "agent", "model": "m"})
    assert old.changes == [] and old.changes_omitted is None and "changes" not in old.as_event()
    odd = BusinessState.from_event({"changes": "not a list"})
    assert odd.changes == [] and odd.as_event()["changes"] == "not a list"


def test_a_damaged_change_record_is_left_out(store: SessionStore, session: Session) -> None:
    good = {"path": "a", "kind": "created", "tool": "shell", "call_id": "c1"}
    session.checkpoint({"changes": [good, {"path": 3}, "x", {**good, "kind": "renamed"}]})
    session.close()
    assert store.files_changed(session.id).changes == [good]


def test_a_call_that_changes_nothing_adds_no_checkpoint(
    reg: ToolRegistry, ctx: ToolContext, session: Session
) -> None:
    def checkpoints() -> int:
        return sum('"checkpoint"' in line for line in open(session.transcript))

    call(reg, ctx, "shell", "call_1", command="true")
    before = checkpoints()
    call(reg, ctx, "shell", "call_2", command="ls > /dev/null")
    assert checkpoints() == before
