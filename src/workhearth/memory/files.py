"""The Markdown side of memory: layer folders and the files in them.

Every ``*.md`` file under a layer's folder is memory, subfolders included;
anything hidden (a name starting with ``.``, at any depth) is not.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

Layer = Literal["user", "project"]
LAYERS: tuple[Layer, ...] = ("user", "project")
# Why apart from Layer: the wiki is searched and injected like a layer, but only
# ``hearth wiki`` writes it (:mod:`workhearth.memory.wiki_source`).
SearchLayer = Literal["user", "project", "wiki"]
USER_FILE = "USER.md"
MEMORY_FILE = "MEMORY.md"
DAILY_DIR = "daily"
INDEX_FILE = ".index.sqlite"
META_FILE = "memory_meta.json"
HASH_STATE_FILE = "hash-state.json"
EVICTED_LOG = ".memory_evicted.log"
REFLECTION_BACKUPS = ".reflection-bak"
# What an atomic write names its temporary file: ``.MEMORY.md.k2x9_q1z.tmp``.
_TEMP_FILE = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]+\.tmp$")


def _entries(
    folder: Path, dirs: list[tuple[str, int, int]] | None = None
) -> Iterator[os.DirEntry[str]]:
    """Every entry of ``folder`` and of its visible subfolders (hidden ones are not memory).

    Nothing for a folder that does not exist (or is not a folder): ``scandir`` says so.
    ``dirs`` gets (path, inode, mtime_ns) of each folder read, as it was just before.
    """
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            # Why before the scan: a change during it moves the mtime past this one.
            st = os.stat(current) if dirs is not None else None
            entries = list(os.scandir(current))
        except OSError:
            continue
        if dirs is not None and st is not None:
            dirs.append((os.fspath(current), st.st_ino, st.st_mtime_ns))
        for entry in entries:
            if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            yield entry


def markdown_files(
    folder: Path, dirs: list[tuple[str, int, int]] | None = None
) -> Iterator[tuple[str, os.stat_result]]:
    """Yield (path relative to ``folder`` with ``/``, stat) for every visible ``.md`` file.

    ``dirs``: see :func:`_entries`.
    """
    # Why strings: ``hearth serve`` looks at every layer before each request.
    skip = len(os.path.join(folder, ""))
    for entry in _entries(folder, dirs):
        if entry.name.startswith(".") or not entry.name.endswith(".md"):
            continue
        if entry.is_file(follow_symlinks=True):
            try:
                st = entry.stat()
            except OSError:
                continue
            rel = entry.path[skip:]
            yield (rel if os.sep == "/" else rel.replace(os.sep, "/")), st


# Why: file times tick coarsely (a jiffy, up to 10 ms): a file or folder stat'ed this
# close to its last change may change again without its mtime moving, so that look
# is not trusted (Memory.stale, FolderLook).
RACY_NS = 10_000_000
# Why: a folder walk at least this often, should a file system not move a folder's
# mtime when a name is added to it.
LOOK_SECONDS = 1.0
_MISSING = -1  # the mtime of a folder that was not there


class FolderLook:
    """A layer folder's Markdown files and meta, as :meth:`Memory.sync` compares them.

    Why: ``hearth serve`` looks at every layer before each request, and a walk
    (``scandir`` of each folder, a ``stat`` per file) cost a search ~0.05-0.08 ms
    under load. Files are added, removed and renamed only through their folder,
    which moves its mtime: while no folder's mtime moved, a ``stat`` of each known
    folder and file says what a walk would (an edit in place or an atomic replace
    moves the file's own mtime, size or inode). A folder whose mtime is too recent
    to be sure of is walked again, and so is every folder once a second.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._meta = os.path.join(folder, META_FILE)
        self._dirs: list[tuple[str, int, int]] | None = None  # None: walk next time
        self._files: list[tuple[str, str]] = []  # (rel, path), in rel order
        self._until = 0.0

    def state(self, taken_ns: int) -> tuple[tuple[tuple[str, int, int, int], ...], tuple[Any, ...]]:
        """((rel, inode, mtime_ns, size) of each Markdown file in rel order, the meta's
        ("", inode, mtime_ns, size) or ``()``); ``taken_ns``: the time before the look."""
        if self._dirs is not None and time.monotonic() < self._until:
            files = self._again()
            if files is not None:
                missing = self._dirs[0][2] == _MISSING
                return files, () if missing else _stat_of(self._meta)
        return self._walk(taken_ns), _stat_of(self._meta)

    def _walk(self, taken_ns: int) -> tuple[tuple[str, int, int, int], ...]:
        dirs: list[tuple[str, int, int]] = []
        files = sorted(
            (rel, st.st_ino, st.st_mtime_ns, st.st_size)
            for rel, st in markdown_files(self.folder, dirs)
        )
        if not dirs:
            dirs = [(os.fspath(self.folder), 0, _MISSING)]
        trusted = all(mtime < taken_ns - RACY_NS for _, _, mtime in dirs)
        self._dirs = dirs if trusted else None
        self._files = [(f[0], os.path.join(self.folder, f[0])) for f in files]
        self._until = time.monotonic() + LOOK_SECONDS
        return tuple(files)

    def _again(self) -> tuple[tuple[str, int, int, int], ...] | None:
        """The files by a ``stat`` of each, or None when a folder changed (or a file went)."""
        assert self._dirs is not None
        for path, ino, mtime in self._dirs:
            try:
                st = os.stat(path)
            except OSError:
                if mtime == _MISSING:
                    continue
                return None
            if st.st_ino != ino or st.st_mtime_ns != mtime:
                return None
        files = []
        for rel, path in self._files:
            try:
                st = os.stat(path)
            except OSError:
                return None
            files.append((rel, st.st_ino, st.st_mtime_ns, st.st_size))
        return tuple(files)


def _stat_of(path: str) -> tuple[Any, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return ("", st.st_ino, st.st_mtime_ns, st.st_size)


def daily_file(day: str) -> str:
    """The relative path of the daily log for ``YYYY-MM-DD``."""
    return f"{DAILY_DIR}/{day}.md"


def leftover_temps(folder: Path) -> Iterator[Path]:
    """Temporary files of hearth's atomic writes in a layer: Markdown, meta, hash-state.

    Each is either being written right now or was left by a writer killed mid-way.
    """
    for entry in _entries(folder):
        m = _TEMP_FILE.match(entry.name)
        if m and (m["name"].endswith(".md") or m["name"] in (META_FILE, HASH_STATE_FILE)):
            if entry.is_file(follow_symlinks=False):
                yield Path(entry.path)
