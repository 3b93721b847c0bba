"""Scratch copies for a team's specialists, and merging their work back (issue 23).

A specialist never writes in the user's workspace. :meth:`Scratch.create` gives it
a folder of its own under ``parent`` (a 0700 folder the lead picks outside
HEARTH_HOME and outside the workspace — a worktree inside the user's tree would show
in their ``git status``):

* **Git worktree** when the workspace is inside a git repository that has a commit
  and the step names a tracked path, a path in a tracked folder, or nothing (then it
  gets the whole workspace): ``git worktree add --detach``
  at HEAD — no branch, index or working-tree file of the user's is touched, hooks are
  off. Then the user's *own* state of what the step needs is copied over it: every
  named path that is modified, staged, deleted or untracked (or explicitly named and
  ignored). The step starts from what the user sees, not from HEAD.
* **Plain copy** otherwise: the files the step names (a folder: the files under it),
  without links and ``.git`` folders (named nothing: an empty folder). A name that
  does not exist yet is a file the step will create.

The **base** is kept in the scratch folder: ``base/<sha256>`` holds the bytes of every
file copied in, ``manifest.json`` their hashes (and, for a worktree, the commit),
so a crashed lead finds everything again with :meth:`Scratch.open`. The specialist
works in ``tree/`` (:attr:`Scratch.root`); :meth:`Scratch.changes` compares it with
the base; :meth:`Scratch.remove` deletes the folder (``git worktree remove`` + prune).

**Merging** (:func:`merge`) goes path by path, the scratches in the order given. A
change lands on the workspace's file as it is now: when the file still holds the
change's base it is taken whole; when it holds the same result it is skipped;
otherwise it is merged three-way (``git merge-file``, or a difflib merge that
refuses overlapping or touching hunks when git is missing), so the second
specialist's change is merged into the first's result, and the user's own edits
made meanwhile are kept. Writes are atomic (temp + rename) and keep the file's mode.

**Conflicts** — overlapping text hunks, a binary or office file (``.docx``, ``.xlsx``,
``.pptx``, ``.pdf``, images, anything not UTF-8) changed on two sides, a deletion
against a change, a link — leave that path exactly as it is in the workspace: no
change to it is written, not even the ones that merged cleanly before. Why all or
nothing: the steps ran in parallel, so their order says nothing and no version is
preferred. Each specialist's version is written *beside* the file, as
``<stem>.<step_id>.conflict<ext>`` (``report.docx`` → ``report.s2.conflict.docx``):
it keeps its extension so it opens in the same program, it sits where the user
looks, and it survives :meth:`Scratch.remove`. The user compares, keeps what they
want, and deletes the ``.conflict`` files. :class:`MergeReport` lists them.

Running :func:`merge` again after a crash is safe: a change already applied is
found equal and skipped, a conflict copy already written is reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from workhearth.errors import CorruptDataError, HearthError, NotFoundError, UsageError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.tasks.team.textmerge import is_binary, merge_text

MANIFEST = "manifest.json"
VERSION = 1
STEP_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
Kind = Literal["created", "modified", "deleted"]
Reason = Literal["overlap", "binary", "delete", "not_a_file"]


@dataclass(frozen=True)
class FileChange:
    """One file of a scratch that differs from its base (``path`` relative to the workspace)."""

    path: str
    kind: Kind
    binary: bool


@dataclass(frozen=True)
class Conflict:
    """A path left as it is in the workspace; ``kept`` are the specialists' versions beside it."""

    path: str
    steps: list[str]
    reason: Reason
    workspace_changed: bool
    kept: list[str] = field(default_factory=list)


@dataclass
class MergeReport:
    """What :func:`merge` did; paths are relative to the workspace."""

    written: list[str] = field(default_factory=list)  # one change taken whole
    merged: list[str] = field(default_factory=list)  # combined three-way, then written
    deleted: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.conflicts

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _git(args: Sequence[str], cwd: Path, *, data: bytes | None = None) -> bytes:
    """Run git with hooks off and literal pathspecs; raise ``HearthError`` when it fails."""
    cmd = ["git", "--no-optional-locks", "--literal-pathspecs", "-c", "core.hooksPath=/dev/null"]
    done = subprocess.run(
        [*cmd, *args], cwd=cwd, input=data, capture_output=True, check=False, timeout=300
    )
    if done.returncode != 0:
        raise HearthError(
            f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}",
            code="scratch_git",
        )
    return done.stdout


def _read_file(path: Path) -> bytes | None:
    """The bytes of a regular file, ``None`` when absent; a link or folder is not read."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _NotAFile(path)
    return path.read_bytes()


class _NotAFile(Exception):
    """A link, folder or device where a file was expected."""


def _clean_name(name: str) -> str:
    """A named path as a POSIX path relative to the workspace; refuses ``..`` and absolutes."""
    p = PurePosixPath(name.replace(os.sep, "/"))
    if p.is_absolute() or ".." in p.parts or not name.strip():
        raise UsageError(f"a step names a file outside its workspace: {name}", code="scratch_path")
    if ".git" in p.parts:
        raise UsageError(f"a step cannot work on git's own files: {name}", code="scratch_path")
    return str(p)


def _walk_files(root: Path, rel: str) -> Iterable[str]:
    """Regular files at or under ``root/rel`` (relative to ``root``), skipping links and .git."""
    start = root / rel
    if start.is_symlink() or not start.resolve().is_relative_to(root.resolve()):
        return
    if start.is_file():
        yield rel
        return
    for here, dirs, files in os.walk(start):
        dirs[:] = sorted(d for d in dirs if d != ".git" and not (Path(here) / d).is_symlink())
        for name in sorted(files):
            full = Path(here) / name
            if full.is_file() and not full.is_symlink():
                yield full.relative_to(root).as_posix()


def repo_top(workspace: Path) -> Path | None:
    """The top folder of the git repository ``workspace`` is in; None outside one (or
    without git). A team run asks once: every step's scratch is of the same workspace."""
    if shutil.which("git") is None:
        return None
    try:
        return Path(_git(["rev-parse", "--show-toplevel"], workspace).decode().strip()).resolve()
    except HearthError:
        return None


def _git_top(workspace: Path, top: Path | Literal["find"] | None) -> tuple[Path, str] | None:
    """The repository's top folder and HEAD commit, when ``workspace`` is in a repo with one."""
    top = repo_top(workspace) if top == "find" else top
    if top is None:
        return None
    try:
        commit = _git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], top).decode().strip()
    except HearthError:
        return None
    return top, commit


def _kind(workspace: Path, names: list[str], git: tuple[Path, str] | None) -> dict[str, Any]:
    """The manifest's ``kind`` and, for a worktree, where it comes from.

    A worktree when the step names nothing, or names a tracked path or a path in a
    tracked folder (``src/new.py``); a step that names only untracked things (a
    ``data/`` folder, a new ``deck.pptx``) gets a plain copy, not a checkout of the
    whole repository.
    """
    if git is None:
        return {"kind": "copy"}
    top, commit = git
    prefix = workspace.relative_to(top).as_posix()
    prefix = "" if prefix == "." else prefix
    near = set(names) | {p for n in names if (p := PurePosixPath(n).parent.as_posix()) != "."}
    specs = [f"{prefix}/{n}" if prefix else n for n in sorted(near)]
    if names and not _git(["ls-files", "-z", "--", *specs], top):
        return {"kind": "copy"}
    return {"kind": "worktree", "repo": str(top), "commit": commit, "prefix": prefix}


class Scratch:
    """A specialist's private copy of its step's files; see the module docstring."""

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.step_id: str = manifest["step_id"]
        self.workspace = Path(manifest["workspace"])
        self.kind: Literal["worktree", "copy"] = manifest["kind"]
        self.ready: bool = manifest["ready"]
        self.repo = Path(manifest["repo"]) if manifest.get("repo") else None
        self.commit: str | None = manifest.get("commit")
        self.prefix: str = manifest.get("prefix", "")
        # Why: path -> sha256 of the base bytes, None when the path was absent in the base
        self.files: dict[str, str | None] = dict(manifest.get("files", {}))
        self._manifest = manifest

    # ---- where things are -------------------------------------------------------------

    @property
    def tree(self) -> Path:
        return self.path / "tree"

    @property
    def root(self) -> Path:
        """The folder the specialist works in: the workspace's counterpart."""
        return self.tree / self.prefix if self.prefix else self.tree

    def _top_rel(self, rel: str) -> str:
        """A workspace-relative path as a path relative to the worktree's top."""
        return f"{self.prefix}/{rel}" if self.prefix else rel

    # ---- create / open / remove -----------------------------------------------------

    @classmethod
    def create(
        cls,
        workspace: Path,
        step_id: str,
        *,
        files: Sequence[str],
        parent: Path,
        outside: Sequence[Path] = (),
        repo: Path | Literal["find"] | None = "find",
    ) -> Scratch:
        """Make the scratch for one step. ``outside``: folders it must not be in (HEARTH_HOME);
        ``repo``: the workspace's :func:`repo_top` when the caller knows it."""
        if not STEP_ID.fullmatch(step_id):
            raise UsageError(f"not a usable step id: {step_id!r}", code="scratch_step")
        workspace = workspace.resolve()
        if not workspace.is_dir():
            raise NotFoundError(f"no such workspace folder: {workspace}")
        names = sorted({_clean_name(n) for n in files})
        git = _git_top(workspace, repo)
        parent = parent.resolve()
        for no in [workspace, *(git[:1] if git else ()), *outside]:
            if parent.is_relative_to(no.resolve()):
                raise UsageError(f"a scratch folder cannot be inside {no}", code="scratch_parent")
        make_private_dir(parent)
        st = os.stat(parent)
        if st.st_uid != os.getuid() or st.st_mode & 0o022:
            # Why: whoever else may write there could swap a scratch for a link
            raise UsageError(
                f"the scratch folder {parent} is not private to this user", code="scratch_parent"
            )
        path = Path(tempfile.mkdtemp(prefix=f"{step_id}-", dir=parent))  # mode 0700
        manifest: dict[str, Any] = {
            "version": VERSION,
            "step_id": step_id,
            "workspace": str(workspace),
            "ready": False,
            "created": time.time(),
            "files": {},
        }
        manifest |= _kind(workspace, names, git)
        # Why written before any copy: a crash in the middle leaves a folder that
        # Scratch.open still recognises, so remove() can clean it (and its worktree).
        _write_manifest(path, manifest)
        scratch = cls(path, manifest)
        try:
            scratch._fill(names)
        except BaseException:
            with contextlib.suppress(Exception):
                scratch.remove()
            raise
        return scratch

    def _fill(self, names: list[str]) -> None:
        # Why no fsync of the folders: a scratch copy is made again after a power loss.
        (self.path / "base").mkdir(mode=0o700)
        if self.kind == "worktree":
            assert self.repo is not None and self.commit is not None
            _git(["worktree", "add", "--detach", "-q", str(self.tree), self.commit], self.repo)
            candidates = self._user_edits(names)
        else:
            self.tree.mkdir(mode=0o700)
            candidates = sorted({f for n in names for f in _walk_files(self.workspace, n)})
        for rel in candidates:
            self._copy_in(rel)
        self.ready = True
        self._manifest |= {"ready": True, "files": self.files}
        _write_manifest(self.path, self._manifest)

    def _user_edits(self, names: list[str]) -> list[str]:
        """Paths where the user's working tree may differ from HEAD (status), plus named files."""
        assert self.repo is not None
        specs = [self._top_rel(n) for n in names] or [self.prefix or "."]
        out = _git(
            [
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--no-renames",
                "--",
                *specs,
            ],
            self.repo,
        )
        found = set()
        for entry in out.split(b"\0"):
            top_rel = os.fsdecode(entry[3:]) if len(entry) > 3 else ""
            if top_rel and (not self.prefix or top_rel.startswith(self.prefix + "/")):
                found.add(top_rel[len(self.prefix) + 1 :] if self.prefix else top_rel)
        # Why: an ignored file the step names explicitly (data, .env) is still needed.
        found |= {n for n in names if (self.workspace / n).is_file()}
        return sorted(found)

    def _copy_in(self, rel: str) -> None:
        """Put the workspace's state of ``rel`` into the tree and record it as the base."""
        src, dst = self.workspace / rel, self.root / rel
        try:
            if not _inside(self.workspace, rel):
                raise _NotAFile(src)
            data = _read_file(src)
            there = _read_file(dst)
        except _NotAFile:
            return  # Why: links and folders are not copied (a link may point anywhere)
        if self.kind == "worktree" and data == there:
            return  # HEAD already holds the user's version
        if data is None:
            if there is not None:
                dst.unlink()
            self.files[rel] = None
            return
        digest = _sha(data)
        blob = self.path / "base" / digest
        # Why not durable: a scratch copy is made again after a power loss (its step reruns);
        # a killed process still leaves every copied file whole.
        if not blob.exists():
            atomic_write(blob, data, durable=False)
        dst.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(dst, data, stat.S_IMODE(os.stat(src).st_mode), durable=False)
        self.files[rel] = digest

    @classmethod
    def open(cls, path: Path) -> Scratch:
        """Find a scratch again (after a crash) from its folder."""
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise NotFoundError(f"no scratch folder at {path}") from None
        except ValueError as e:
            raise CorruptDataError(f"unreadable scratch manifest in {path}: {e}") from None
        if not isinstance(manifest, dict) or manifest.get("version") != VERSION:
            raise CorruptDataError(f"unknown scratch manifest version in {path}")
        return cls(path.resolve(), manifest)

    @classmethod
    def find(cls, parent: Path) -> list[Scratch]:
        """Every scratch under ``parent`` (a lead's cleanup after a crash)."""
        if not parent.is_dir():
            return []
        return [cls.open(p) for p in sorted(parent.iterdir()) if (p / MANIFEST).is_file()]

    def remove(self) -> None:
        """Delete the scratch: its worktree from the repository's list, then its folder."""
        if self.kind == "worktree" and self.repo is not None and self.repo.is_dir():
            with contextlib.suppress(HearthError):
                if self.tree.exists():
                    _git(["worktree", "remove", "--force", str(self.tree)], self.repo)
            with contextlib.suppress(HearthError):
                _git(["worktree", "prune"], self.repo)
        shutil.rmtree(self.path, ignore_errors=True)

    # ---- what changed ---------------------------------------------------------------

    def base(self, rel: str) -> bytes | None:
        """The base bytes of ``rel`` (``None``: absent in the base)."""
        if rel in self.files:
            digest = self.files[rel]
            if digest is None:
                return None
            data = (self.path / "base" / digest).read_bytes()
            if _sha(data) != digest:
                raise CorruptDataError(f"the scratch's base copy of {rel} was changed")
            return data
        if self.kind == "worktree":
            return self._head_blobs([rel])[rel]
        return None

    def current(self, rel: str) -> bytes | None:
        """The specialist's bytes of ``rel`` (``None``: absent). Raises ``_NotAFile`` for links."""
        if not _inside(self.root, rel):
            raise _NotAFile(self.root / rel)  # a folder swapped for a link to elsewhere
        return _read_file(self.root / rel)

    def mode(self, rel: str) -> int:
        return stat.S_IMODE(os.stat(self.root / rel).st_mode)

    def _head_blobs(self, rels: Sequence[str]) -> dict[str, bytes | None]:
        """Bytes of ``rels`` at the base commit, in one ``git cat-file --batch``."""
        assert self.repo is not None
        query = b"".join(os.fsencode(f"{self.commit}:{self._top_rel(r)}") + b"\n" for r in rels)
        out = _git(["cat-file", "--batch"], self.repo, data=query)
        found: dict[str, bytes | None] = {}
        pos = 0
        for rel in rels:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if header[-1] == b"missing":
                found[rel] = None
                continue
            size = int(header[2])
            # Why: a folder at that name (a tree object) is no file in the base
            found[rel] = out[pos : pos + size] if header[1] == b"blob" else None
            pos += size + 1
        return found

    def _candidates(self) -> list[str]:
        if self.kind == "copy":
            return sorted(set(_walk_files(self.tree, ".")) | set(self.files))
        specs = [self.prefix or "."]
        diff = _git(
            ["diff", "--name-only", "-z", "--no-renames", self.commit or "HEAD", "--", *specs],
            self.tree,
        )
        new = _git(["ls-files", "-z", "--others", "--exclude-standard", "--", *specs], self.tree)
        out = set()
        for raw in (diff + b"\0" + new).split(b"\0"):
            top_rel = os.fsdecode(raw)
            if top_rel and (not self.prefix or top_rel.startswith(self.prefix + "/")):
                out.add(top_rel[len(self.prefix) + 1 :] if self.prefix else top_rel)
        return sorted(out | set(self.files))

    def changes(self) -> list[FileChange]:
        """Files of the scratch that differ from the base; links are neither read nor reported."""
        if not self.ready:
            raise HearthError(
                f"the scratch {self.path} was not finished (its creation was interrupted)",
                code="scratch_unfinished",
            )
        rels = self._candidates()
        head = (
            self._head_blobs([r for r in rels if r not in self.files])
            if self.kind == "worktree"
            else {}
        )
        found = []
        for rel in rels:
            try:
                now = self.current(rel)
            except _NotAFile:
                continue
            was = self.base(rel) if rel in self.files else head.get(rel)
            if now == was:
                continue
            kind: Kind = "created" if was is None else "deleted" if now is None else "modified"
            found.append(FileChange(rel, kind, is_binary(rel, now if now is not None else was)))
        return found


def _write_manifest(path: Path, manifest: dict[str, Any]) -> None:
    # Why not durable: after a power loss the step runs again in a new scratch copy; a
    # killed process still leaves the manifest whole (the rename is atomic).
    atomic_write(path / MANIFEST, json.dumps(manifest, indent=1).encode(), durable=False)


# ---- merging scratches into the workspace --------------------------------------------------


@dataclass
class _Side:
    step: str
    base: bytes | None
    theirs: bytes | None
    mode: int


def _combine(
    rel: str, now: bytes | None, sides: list[_Side], use_git: bool
) -> tuple[bytes | None, bool, Reason | None]:
    """Apply ``sides`` in order onto ``now``: (result, combined three-way, conflict reason)."""
    result, combined = now, False
    for side in sides:
        if result == side.theirs:
            continue
        if result == side.base:
            result = side.theirs
            continue
        combined = True
        if result is None or side.theirs is None:
            return now, combined, "delete"
        if any(is_binary(rel, d) for d in (side.base, result, side.theirs)):
            return now, combined, "binary"
        merged = merge_text(side.base or b"", result, side.theirs, use_git=use_git)
        if merged is None:
            return now, combined, "overlap"
        result = merged
    return result, combined, None


def _beside(workspace: Path, rel: str, step: str, data: bytes, mode: int) -> str:
    """Write a specialist's version next to ``rel``; the name keeps the extension."""
    p = PurePosixPath(rel)
    stem, ext = p.stem, p.suffix  # ".env" has no suffix in pathlib
    for n in range(1, 1000):
        extra = "" if n == 1 else f"-{n}"
        name = p.with_name(f"{stem}.{step}.conflict{extra}{ext}").as_posix()
        target = workspace / name
        try:
            if _read_file(target) in (None, data):
                break
        except _NotAFile:
            continue
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data, mode)
    return name


def _inside(folder: Path, rel: str) -> bool:
    """Whether ``rel``'s folder really is in ``folder`` (no linked folder on the way)."""
    return (folder / rel).parent.resolve().is_relative_to(folder.resolve())


def _gather(scratches: Sequence[Scratch]) -> dict[str, list[_Side]]:
    by_path: dict[str, list[_Side]] = {}
    for s in scratches:
        for change in s.changes():
            rel = change.path
            if ".git" in PurePosixPath(rel).parts:
                continue  # Why: hooks and config written into .git would run as the user
            theirs = s.current(rel)
            mode = s.mode(rel) if theirs is not None else 0o644
            by_path.setdefault(rel, []).append(_Side(s.step_id, s.base(rel), theirs, mode))
    return by_path


def merge(
    workspace: Path,
    scratches: Sequence[Scratch],
    *,
    discard: Callable[[Path], object] | None = None,
    use_git: bool = True,
) -> MergeReport:
    """Apply every scratch's changes to ``workspace``; see the module docstring for the rules.

    ``discard`` receives a workspace file a specialist deleted (the lead passes the
    trash's ``put``); without it the file is unlinked.
    """
    workspace = workspace.resolve()
    for s in scratches:
        if s.workspace != workspace:
            raise UsageError(f"the scratch of step {s.step_id} belongs to {s.workspace}")
    report = MergeReport()
    for rel, sides in sorted(_gather(scratches).items()):
        _merge_path(workspace, rel, sides, report, discard or Path.unlink, use_git)
    return report


def _merge_path(
    workspace: Path,
    rel: str,
    sides: list[_Side],
    report: MergeReport,
    discard: Callable[[Path], object],
    use_git: bool,
) -> None:
    """Decide one path's result and apply it, or record its conflict."""
    target = workspace / rel
    steps = [s.step for s in sides]
    try:
        if not _inside(workspace, rel):
            raise _NotAFile(target)
        now = _read_file(target)
    except _NotAFile:
        report.conflicts.append(Conflict(rel, steps, "not_a_file", True))
        return
    result, combined, reason = _combine(rel, now, sides, use_git)
    if reason is not None:
        kept = [
            _beside(workspace, rel, s.step, s.theirs, s.mode) for s in sides if s.theirs is not None
        ]
        report.conflicts.append(Conflict(rel, steps, reason, now != sides[0].base, kept))
    elif result is None and now is not None:
        discard(target)
        report.deleted.append(rel)
    elif result is not None and result != now:
        modes = [s.mode for s in sides if s.theirs is not None]
        mode = stat.S_IMODE(os.stat(target).st_mode) if now is not None else modes[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, result, mode)
        (report.merged if combined else report.written).append(rel)
