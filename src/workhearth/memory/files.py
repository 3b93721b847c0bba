"""The Markdown side of memory: layer folders and the files in them.

Every ``*.md`` file under a layer's folder is memory, subfolders included;
anything hidden (a name starting with ``.``, at any depth) is not.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

Layer = Literal["user", "project"]
LAYERS: tuple[Layer, ...] = ("user", "project")
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


def _entries(folder: Path) -> Iterator[os.DirEntry[str]]:
    """Every entry of ``folder`` and of its visible subfolders (hidden ones are not memory).

    Nothing for a folder that does not exist (or is not a folder): ``scandir`` says so.
    """
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            yield entry


def markdown_files(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Yield (path relative to ``folder`` with ``/``, stat) for every visible ``.md`` file."""
    # Why strings: ``hearth serve`` looks at every layer before each request.
    skip = len(os.path.join(folder, ""))
    for entry in _entries(folder):
        if entry.name.startswith(".") or not entry.name.endswith(".md"):
            continue
        if entry.is_file(follow_symlinks=True):
            try:
                st = entry.stat()
            except OSError:
                continue
            rel = entry.path[skip:]
            yield (rel if os.sep == "/" else rel.replace(os.sep, "/")), st


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
