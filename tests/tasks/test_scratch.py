"""Specialists' scratch copies and the merge back (issue 23, tasks/team/scratch.py).

Real files, real git (a worktree of a real repository), a real second process for
the crash case: nothing of ours is faked.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import docx
import pytest

from workhearth.errors import HearthError, UsageError
from workhearth.tasks.team.scratch import FileChange, Scratch, merge
from workhearth.tasks.team.textmerge import merge_text

LINES = "".join(f"line {i}\n" for i in range(1, 21))
HAS_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAS_GIT, reason="git is not installed")


def _edit(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[line - 1] = new + "\n"
    return "".join(lines)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    (folder / "docs").mkdir(parents=True)
    (folder / "notes.md").write_text(LINES)
    (folder / "docs" / "plan.txt").write_text("plan\n")
    return folder


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    return tmp_path / "scratch"


def _docx(path: Path, text: str) -> None:
    d = docx.Document()
    d.add_paragraph(text)
    d.save(str(path))


def _git(cwd: Path, *args: str) -> str:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60, check=True
    )
    return done.stdout


def _user_state(repo: Path) -> dict[str, str]:
    """What must not move: HEAD, branches, the index, the status, the worktree list."""
    return {
        "head": _git(repo, "rev-parse", "HEAD"),
        "refs": _git(repo, "for-each-ref"),
        "index": _git(repo, "ls-files", "--stage"),
        "status": _git(repo, "status", "--porcelain", "--untracked-files=all"),
        "worktrees": _git(repo, "worktree", "list", "--porcelain"),
    }


# ---- plain folders --------------------------------------------------------------------


def test_a_plain_scratch_is_a_private_copy_of_the_named_files(ws: Path, parent: Path) -> None:
    s = Scratch.create(ws, "s1", files=["notes.md", "docs"], parent=parent)
    assert s.kind == "copy"
    assert stat.S_IMODE(s.path.stat().st_mode) == 0o700
    assert s.path.parent == parent.resolve() and not s.path.is_relative_to(ws)
    assert (s.root / "notes.md").read_text() == LINES
    assert (s.root / "docs" / "plan.txt").read_text() == "plan\n"
    assert s.changes() == []
    s.remove()
    assert not s.path.exists()


def test_two_scratches_editing_different_parts_of_a_file_merge_cleanly(
    ws: Path, parent: Path
) -> None:
    a = Scratch.create(ws, "a", files=["notes.md"], parent=parent)
    b = Scratch.create(ws, "b", files=["notes.md"], parent=parent)
    (a.root / "notes.md").write_text(_edit(LINES, 2, "line 2 by a"))
    (b.root / "notes.md").write_text(_edit(LINES, 18, "line 18 by b"))
    assert a.changes() == [FileChange("notes.md", "modified", False)]

    report = merge(ws, [a, b])

    assert report.ok and report.merged == ["notes.md"]
    assert (ws / "notes.md").read_text() == _edit(
        _edit(LINES, 2, "line 2 by a"), 18, "line 18 by b"
    )
    assert report.as_dict()["conflicts"] == []


def test_two_scratches_editing_the_same_lines_conflict_and_nothing_is_written(
    ws: Path, parent: Path
) -> None:
    a = Scratch.create(ws, "a", files=["notes.md"], parent=parent)
    b = Scratch.create(ws, "b", files=["notes.md"], parent=parent)
    (a.root / "notes.md").write_text(_edit(LINES, 5, "five by a"))
    (b.root / "notes.md").write_text(_edit(LINES, 5, "five by b"))

    report = merge(ws, [a, b])

    assert (ws / "notes.md").read_text() == LINES
    [c] = report.as_dict()["conflicts"]
    assert c["path"] == "notes.md" and c["steps"] == ["a", "b"] and c["reason"] == "overlap"
    assert c["workspace_changed"] is False
    assert c["kept"] == ["notes.a.conflict.md", "notes.b.conflict.md"]
    assert (ws / "notes.a.conflict.md").read_text() == _edit(LINES, 5, "five by a")
    assert (ws / "notes.b.conflict.md").read_text() == _edit(LINES, 5, "five by b")
    # the kept versions outlive the scratches
    a.remove()
    b.remove()
    assert (ws / "notes.b.conflict.md").exists()


def test_a_docx_changed_by_two_is_a_conflict_kept_beside(ws: Path, parent: Path) -> None:
    _docx(ws / "report.docx", "original")
    original = (ws / "report.docx").read_bytes()
    a = Scratch.create(ws, "a", files=["report.docx"], parent=parent)
    b = Scratch.create(ws, "b", files=["report.docx"], parent=parent)
    _docx(a.root / "report.docx", "by a")
    _docx(b.root / "report.docx", "by b")
    assert b.changes() == [FileChange("report.docx", "modified", True)]

    report = merge(ws, [a, b])

    assert (ws / "report.docx").read_bytes() == original
    [c] = report.conflicts
    assert (c.reason, c.steps) == ("binary", ["a", "b"])
    kept_b = docx.Document(str(ws / "report.b.conflict.docx"))
    assert kept_b.paragraphs[0].text == "by b"
    assert docx.Document(str(ws / "report.a.conflict.docx")).paragraphs[0].text == "by a"


def test_a_docx_changed_by_one_specialist_is_written_whole(ws: Path, parent: Path) -> None:
    _docx(ws / "report.docx", "original")
    os.chmod(ws / "report.docx", 0o640)
    a = Scratch.create(ws, "a", files=["report.docx"], parent=parent)
    _docx(a.root / "report.docx", "by a")
    report = merge(ws, [a])
    assert report.written == ["report.docx"] and report.ok
    assert docx.Document(str(ws / "report.docx")).paragraphs[0].text == "by a"
    assert stat.S_IMODE((ws / "report.docx").stat().st_mode) == 0o640


def test_a_file_created_in_a_scratch_appears_and_a_deleted_one_goes(ws: Path, parent: Path) -> None:
    a = Scratch.create(ws, "a", files=["docs", "out/summary.md"], parent=parent)
    (a.root / "out").mkdir()
    (a.root / "out" / "summary.md").write_text("summary\n")
    os.chmod(a.root / "out" / "summary.md", 0o750)
    (a.root / "docs" / "plan.txt").unlink()
    assert sorted(a.changes(), key=lambda c: c.path) == [
        FileChange("docs/plan.txt", "deleted", False),
        FileChange("out/summary.md", "created", False),
    ]
    discarded: list[Path] = []

    def discard(path: Path) -> None:
        discarded.append(path)
        path.unlink()

    report = merge(ws, [a], discard=discard)

    assert report.written == ["out/summary.md"] and report.deleted == ["docs/plan.txt"]
    assert (ws / "out" / "summary.md").read_text() == "summary\n"
    assert stat.S_IMODE((ws / "out" / "summary.md").stat().st_mode) == 0o750
    assert discarded == [ws.resolve() / "docs" / "plan.txt"]


def test_the_workspace_edited_meanwhile_is_merged_three_way(ws: Path, parent: Path) -> None:
    a = Scratch.create(ws, "a", files=["notes.md"], parent=parent)
    (a.root / "notes.md").write_text(_edit(LINES, 19, "nineteen by a"))
    (ws / "notes.md").write_text(_edit(LINES, 1, "one by the user"))

    report = merge(ws, [a])

    assert report.merged == ["notes.md"]
    assert (ws / "notes.md").read_text() == _edit(
        _edit(LINES, 1, "one by the user"), 19, "nineteen by a"
    )


def test_the_user_s_own_edit_is_never_overwritten(ws: Path, parent: Path) -> None:
    a = Scratch.create(ws, "a", files=["notes.md", "docs"], parent=parent)
    (a.root / "notes.md").write_text(_edit(LINES, 3, "three by a"))
    (a.root / "docs" / "plan.txt").unlink()
    (ws / "notes.md").write_text(_edit(LINES, 3, "three by the user"))
    (ws / "docs" / "plan.txt").write_text("plan, edited by the user\n")

    report = merge(ws, [a])

    assert (ws / "notes.md").read_text() == _edit(LINES, 3, "three by the user")
    assert (ws / "docs" / "plan.txt").read_text() == "plan, edited by the user\n"
    reasons = {c.path: (c.reason, c.workspace_changed, c.kept) for c in report.conflicts}
    assert reasons == {
        "docs/plan.txt": ("delete", True, []),
        "notes.md": ("overlap", True, ["notes.a.conflict.md"]),
    }


def test_merging_again_after_a_crash_changes_nothing(ws: Path, parent: Path) -> None:
    a = Scratch.create(ws, "a", files=["notes.md"], parent=parent)
    b = Scratch.create(ws, "b", files=["notes.md"], parent=parent)
    (a.root / "notes.md").write_text(_edit(LINES, 2, "two by a"))
    (b.root / "notes.md").write_text(_edit(LINES, 15, "fifteen by b"))
    merge(ws, [a, b])
    after = (ws / "notes.md").read_text()
    again = merge(ws, [a, b])
    assert (ws / "notes.md").read_text() == after and again.ok


def test_links_are_neither_copied_nor_merged(ws: Path, parent: Path, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("secret\n")
    (ws / "docs" / "link").symlink_to(tmp_path / "secret")
    a = Scratch.create(ws, "a", files=["docs"], parent=parent)
    assert not (a.root / "docs" / "link").exists()
    (a.root / "docs" / "new-link").symlink_to("/etc/hostname")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "plan.txt").write_text("read through a link\n")
    (a.root / "docs" / "plan.txt").unlink()
    (a.root / "docs").rename(a.root / "docs-moved")
    (a.root / "docs").symlink_to(tmp_path / "elsewhere")
    (a.root / "docs-moved" / ".git").mkdir()
    (a.root / "docs-moved" / ".git" / "config").write_text("[core]\n\tfsmonitor = evil\n")
    assert a.changes() == []
    assert merge(ws, [a]).as_dict() == {
        "written": [],
        "merged": [],
        "deleted": [],
        "conflicts": [],
    }
    assert (ws / "docs" / "plan.txt").read_text() == "plan\n"


def test_bad_names_and_places_are_refused(ws: Path, parent: Path) -> None:
    with pytest.raises(UsageError):
        Scratch.create(ws, "a", files=["../outside.txt"], parent=parent)
    with pytest.raises(UsageError):
        Scratch.create(ws, "a", files=["/etc/passwd"], parent=parent)
    with pytest.raises(UsageError):
        Scratch.create(ws, "a", files=[".git/hooks"], parent=parent)
    with pytest.raises(UsageError):
        Scratch.create(ws, "a/b", files=[], parent=parent)
    with pytest.raises(UsageError):
        Scratch.create(ws, "a", files=[], parent=ws / ".scratch")
    shared = parent.parent / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UsageError):
        Scratch.create(ws, "a", files=[], parent=shared)
    home = parent.parent / "home"
    with pytest.raises(UsageError):
        Scratch.create(ws, "a", files=[], parent=home / "tmp", outside=[home])


# ---- text merge without git -----------------------------------------------------------


@pytest.mark.parametrize("use_git", [True, False])
def test_text_merge_with_and_without_git(use_git: bool) -> None:
    if use_git and not HAS_GIT:
        pytest.skip("git is not installed")
    base = LINES.encode()
    ours = _edit(LINES, 2, "two ours").encode()
    theirs = _edit(LINES, 17, "seventeen theirs").encode()
    both = _edit(_edit(LINES, 2, "two ours"), 17, "seventeen theirs").encode()
    assert merge_text(base, ours, theirs, use_git=use_git) == both
    assert merge_text(base, ours, ours, use_git=use_git) == ours
    clash = _edit(LINES, 2, "two theirs").encode()
    assert merge_text(base, ours, clash, use_git=use_git) is None
    next_line = _edit(LINES, 3, "three theirs").encode()
    assert merge_text(base, ours, next_line, use_git=use_git) is None  # touching hunks


# ---- git worktrees ----------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    (r / "src").mkdir(parents=True)
    (r / "notes.md").write_text(LINES)
    (r / "src" / "app.py").write_text("print('hi')\n")
    (r / ".gitignore").write_text("*.log\n")
    (r / "old.txt").write_text("old\n")
    _git(r, "init", "-q", "-b", "main")
    _git(r, "add", ".")
    _git(r, "commit", "-qm", "first")
    return r


@needs_git
def test_a_worktree_starts_from_the_user_s_uncommitted_state_and_leaves_the_repo_alone(
    repo: Path, parent: Path
) -> None:
    user_notes = _edit(LINES, 1, "one, uncommitted")
    (repo / "notes.md").write_text(user_notes)
    (repo / "src" / "app.py").write_text("print('staged')\n")
    _git(repo, "add", "src/app.py")
    (repo / "draft.txt").write_text("untracked draft\n")
    (repo / "run.log").write_text("ignored but named\n")
    (repo / "old.txt").unlink()
    before = _user_state(repo)

    s = Scratch.create(
        repo, "dev", files=["notes.md", "src", "draft.txt", "run.log", "old.txt"], parent=parent
    )

    assert s.kind == "worktree" and s.commit == before["head"].strip()
    assert (s.root / "notes.md").read_text() == user_notes
    assert (s.root / "src" / "app.py").read_text() == "print('staged')\n"
    assert (s.root / "draft.txt").read_text() == "untracked draft\n"
    assert (s.root / "run.log").read_text() == "ignored but named\n"
    assert not (s.root / "old.txt").exists()
    assert s.changes() == []
    assert _user_state(repo) | {"worktrees": ""} == before | {"worktrees": ""}

    (s.root / "notes.md").write_text(_edit(user_notes, 20, "twenty by dev"))
    (s.root / "draft.txt").write_text("draft, finished\n")
    (s.root / "build.log").write_text("ignored output, not merged\n")
    # a specialist that commits in its worktree moves only the worktree's detached HEAD
    _git(s.tree, "commit", "-qam", "specialist commit")
    assert sorted(c.path for c in s.changes()) == ["draft.txt", "notes.md"]

    report = merge(repo, [s])
    s.remove()

    assert report.written == ["draft.txt", "notes.md"] and report.ok
    assert (repo / "notes.md").read_text() == _edit(user_notes, 20, "twenty by dev")
    assert (repo / "draft.txt").read_text() == "draft, finished\n"
    assert not (repo / "build.log").exists()
    assert _user_state(repo) == before
    assert not s.path.exists()


@needs_git
def test_a_workspace_in_a_subfolder_of_a_repository(repo: Path, parent: Path) -> None:
    sub = repo / "src"
    s = Scratch.create(sub, "dev", files=["app.py"], parent=parent)
    assert s.kind == "worktree" and s.root == s.tree / "src"
    (s.root / "app.py").write_text("print('changed')\n")
    (s.root / "extra.py").write_text("x = 1\n")
    (s.tree / "notes.md").write_text("outside the workspace: ignored\n")
    assert sorted(c.path for c in s.changes()) == ["app.py", "extra.py"]
    report = merge(sub, [s])
    assert report.written == ["app.py", "extra.py"]
    assert (repo / "notes.md").read_text() == LINES
    s.remove()
    assert _git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


@needs_git
def test_a_scratch_cannot_sit_inside_the_repository(repo: Path) -> None:
    with pytest.raises(UsageError):
        Scratch.create(repo / "src", "dev", files=["app.py"], parent=repo / "tmp")


@needs_git
def test_untracked_named_files_only_get_a_plain_copy(repo: Path, parent: Path) -> None:
    (repo / "data").mkdir()
    (repo / "data" / "table.csv").write_text("a,b\n")
    s = Scratch.create(repo, "an", files=["data", "deck.pptx"], parent=parent)
    assert s.kind == "copy" and (s.root / "data" / "table.csv").read_text() == "a,b\n"
    # a new file in a tracked folder needs the code around it: a worktree
    s = Scratch.create(repo, "dev", files=["src/new.py"], parent=parent)
    assert s.kind == "worktree" and (s.root / "src" / "app.py").exists()
    s.remove()


# ---- crash safety -----------------------------------------------------------------------

MAKE_AND_DIE = """
import os, sys
from pathlib import Path
from workhearth.tasks.team.scratch import Scratch
s = Scratch.create(Path(sys.argv[1]), "s1", files=["notes.md"], parent=Path(sys.argv[2]))
(s.root / "notes.md").write_text("by a process that died\\n")
print(s.path, flush=True)
os.kill(os.getpid(), 9)
"""


@pytest.mark.parametrize("git_repo", [False, True])
def test_a_scratch_is_found_again_after_its_process_died(
    tmp_path: Path, parent: Path, git_repo: bool
) -> None:
    if git_repo and not HAS_GIT:
        pytest.skip("git is not installed")
    ws = tmp_path / "work"
    ws.mkdir()
    (ws / "notes.md").write_text(LINES)
    if git_repo:
        _git(ws, "init", "-q", "-b", "main")
        _git(ws, "add", ".")
        _git(ws, "commit", "-qm", "first")
    done = subprocess.run(
        [sys.executable, "-c", MAKE_AND_DIE, str(ws), str(parent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -9, done.stderr
    path = Path(done.stdout.strip())

    [found] = Scratch.find(parent)
    s = Scratch.open(path)
    assert found.path == s.path and s.step_id == "s1" and s.ready
    assert s.kind == ("worktree" if git_repo else "copy")
    assert s.changes() == [FileChange("notes.md", "modified", False)]
    assert merge(ws, [s]).written == ["notes.md"]
    assert (ws / "notes.md").read_text() == "by a process that died\n"
    s.remove()
    assert Scratch.find(parent) == []
    if git_repo:
        assert _git(ws, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_an_interrupted_creation_is_recognised_and_removable(ws: Path, parent: Path) -> None:
    s = Scratch.create(ws, "s1", files=["notes.md"], parent=parent)
    manifest = s.path / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"ready": true', '"ready": false'))
    again = Scratch.open(s.path)
    assert not again.ready
    with pytest.raises(HearthError):
        again.changes()
    again.remove()
    assert not s.path.exists()


def test_a_tampered_base_is_detected(ws: Path, parent: Path) -> None:
    s = Scratch.create(ws, "s1", files=["notes.md"], parent=parent)
    [blob] = (s.path / "base").iterdir()
    blob.write_text("changed behind our back\n")
    (s.root / "notes.md").write_text("edited\n")
    with pytest.raises(HearthError):
        merge(ws, [s])
    assert (ws / "notes.md").read_text() == LINES


@needs_git
def test_the_repository_s_hooks_do_not_run(repo: Path, parent: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    s = Scratch.create(repo, "dev", files=["notes.md"], parent=parent)
    assert s.kind == "worktree" and (s.root / "notes.md").exists()
    assert not marker.exists()
    s.remove()
