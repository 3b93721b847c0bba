"""Which files of a folder a wiki summarizes, and their content hashes, cheaply.

A folder inside a git repository gives the files git knows plus the untracked ones it
does not ignore (``git ls-files --cached --others --exclude-standard``): the user's own
idea of "the project". Elsewhere a walk skips hidden folders, ``node_modules``,
``__pycache__`` and virtualenvs (a folder holding ``pyvenv.cfg``). Of those files the
wiki takes text files (no NUL byte in the first 8 KB) and office files (.docx .xlsx
.pptx .pdf); other binaries are not sources. Links are never followed out of the
folder, and hearth's own home is never a source even when it lies inside.

Why a stat cache: ``hearth wiki update`` on an unchanged 2,000-file project must answer
in well under a second, so a file whose (size, mtime_ns, inode) did not move keeps the
hash it had; only files that moved are read again. An entry whose mtime was within
:data:`RACY_SECONDS` of the scan is not trusted next time (a write in the same clock
tick would leave its stat unchanged: git's "racy" problem).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

OFFICE_SUFFIXES = frozenset({".docx", ".xlsx", ".pptx", ".pdf"})
SKIP_FOLDERS = frozenset({"node_modules", "__pycache__", "site-packages"})
PROBE_BYTES = 8192
# Why a cap: a multi-megabyte text file is data or a log, not something to summarize;
# it is named as unreadable so the user sees why it is not in a page.
MAX_TEXT_BYTES = 2_000_000
MAX_OFFICE_BYTES = 100_000_000
RACY_SECONDS = 2.0
READ_CHUNK = 1 << 20
GIT_TIMEOUT = 60.0

Kind = Literal["text", "office", "binary"]


@dataclass(frozen=True)
class Source:
    """One file the wiki summarizes: workspace-relative POSIX ``path``, content hash
    (None when the bytes could not be read), and ``problem`` when it cannot be used."""

    path: str
    kind: Kind
    sha256: str | None
    size: int
    problem: str | None = None

    @property
    def folder(self) -> str:
        """The folder holding it (``.`` for the top level): the page it belongs to."""
        head, _, _ = self.path.rpartition("/")
        return head or "."


class StatCache:
    """``path -> (size, mtime_ns, inode, kind, sha256)`` kept in the wiki's ``.state.json``."""

    def __init__(self, entries: dict[str, list[Any]] | None = None) -> None:
        self.entries: dict[str, list[Any]] = dict(entries or {})
        self.hashed = 0  # files read this scan (for tests and the bench)

    def lookup(self, path: str, st: os.stat_result) -> tuple[Kind, str | None] | None:
        entry = self.entries.get(path)
        if entry is None or len(entry) != 5:
            return None
        size, mtime_ns, ino, kind, sha = entry
        if (size, mtime_ns, ino) != (st.st_size, st.st_mtime_ns, st.st_ino):
            return None
        return kind, sha

    def remember(self, path: str, st: os.stat_result, kind: Kind, sha: str | None) -> None:
        racy = st.st_mtime_ns >= (time.time() - RACY_SECONDS) * 1e9
        # Why -1: an entry written in the same tick as the file must be re-read next time.
        mtime = -1 if racy else st.st_mtime_ns
        self.entries[path] = [st.st_size, mtime, st.st_ino, kind, sha]

    def as_json(self) -> dict[str, list[Any]]:
        return self.entries


def list_files(root: Path, scope: str, excluded: Iterable[Path] = ()) -> list[str]:
    """Workspace-relative POSIX paths of the candidate files under ``root/scope``, sorted."""
    found = _git_files(root, scope)
    if found is None:
        found = list(_walk(root, root / scope if scope != "." else root))
    shut_out = [p for p in excluded if _inside(p, root)]
    prefixes = [p.relative_to(root).as_posix() + "/" for p in shut_out]
    kept = {p for p in found if p and not any(p.startswith(x) for x in prefixes)}
    return sorted(kept)


def _inside(path: Path, root: Path) -> bool:
    return path != root and root in path.parents


def _git_files(root: Path, scope: str) -> list[str] | None:
    """The files git lists (None: not a git repository, or no git on this machine)."""
    try:
        proc = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
                "--",
                scope,
            ],
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return [os.fsdecode(p) for p in proc.stdout.split(b"\0") if p]


def _walk(root: Path, start: Path) -> Iterator[str]:
    for folder, dirs, files in os.walk(start, followlinks=False):
        # Why in place: os.walk then skips the pruned folders entirely.
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in SKIP_FOLDERS
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
        )
        rel = Path(folder).relative_to(root).as_posix()
        for name in files:
            if not name.startswith("."):
                yield name if rel == "." else f"{rel}/{name}"


def scan(root: Path, paths: Iterable[str], cache: StatCache) -> list[Source]:
    """The sources among ``paths`` (binaries dropped), hashed unless the cache knows them."""
    out: list[Source] = []
    for rel in paths:
        source = source_at(root, rel, cache)
        if source is not None and source.kind != "binary":
            out.append(source)
    return out


def source_at(root: Path, rel: str, cache: StatCache) -> Source | None:
    """The source at ``rel`` (None: gone, or not a regular file), hashed unless cached."""
    full = root / rel
    try:
        st = os.lstat(full)
    except OSError:
        return None  # listed by git but deleted from the folder: not a source
    if not stat.S_ISREG(st.st_mode):
        return None  # links (never followed out of the folder), sockets, submodules
    office = Path(rel).suffix.lower() in OFFICE_SUFFIXES
    known = cache.lookup(rel, st)
    if known is not None:
        kind, sha = known
    else:
        try:
            kind, sha = _read_kind_and_hash(full, office)
        except OSError as exc:
            reason = f"cannot be read ({exc.strerror or exc.__class__.__name__})"
            return Source(rel, "office" if office else "text", None, st.st_size, reason)
        cache.hashed += 1
        cache.remember(rel, st, kind, sha)
    return Source(rel, kind, sha, st.st_size, _size_problem(kind, st.st_size))


def _read_kind_and_hash(full: Path, office: bool) -> tuple[Kind, str | None]:
    digest = hashlib.sha256()
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        first = fh.read(PROBE_BYTES)
        if not office and b"\0" in first:
            return "binary", None
        digest.update(first)
        while chunk := fh.read(READ_CHUNK):
            digest.update(chunk)
    return ("office" if office else "text"), digest.hexdigest()


def _size_problem(kind: Kind, size: int) -> str | None:
    limit = MAX_OFFICE_BYTES if kind == "office" else MAX_TEXT_BYTES
    if size > limit:
        return f"larger than {limit // 1_000_000} MB (the wiki reads files up to that size)"
    return None
