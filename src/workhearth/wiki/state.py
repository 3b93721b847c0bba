"""``wiki/.state.json``: what a build remembers between runs, none of it precious.

- ``stat``: the stat cache (:class:`workhearth.wiki.sources.StatCache`);
- ``overview``: the pages the overview was written from (name → the hash of the page's
  front matter, which changes when hearth rewrites the page and not when the user edits
  its text), so it is rewritten only when a page it links was written, or pages
  appeared or vanished;
- ``kept``: for a page the user edited, the source hashes its waiting update
  (``<name>.update.md``) was written from, so the same update is not asked of the model
  again at every run.

Why losing it is harmless: the pages' front matter is the truth about what each page was
written from; without this file a run hashes every file again and rewrites the overview
once. It is written atomically, at the end of a run and after each page.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import BusyError
from workhearth.fsutil import atomic_write, make_private_dir

STATE_FILE = ".state.json"
LOCK_FILE = ".lock"
VERSION = 1


@dataclass
class WikiState:
    stat: dict[str, list[Any]] = field(default_factory=dict)
    overview: dict[str, str] | None = None
    kept: dict[str, dict[str, str | None]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> WikiState:
        try:
            raw = orjson.loads((folder / STATE_FILE).read_bytes())
        except (FileNotFoundError, orjson.JSONDecodeError):
            return cls()
        if not isinstance(raw, dict) or raw.get("version") != VERSION:
            return cls()  # Why: a cache of another format is rebuilt, never trusted
        overview = raw.get("overview")
        return cls(
            stat=dict(raw.get("stat") or {}),
            overview=dict(overview) if isinstance(overview, dict) else None,
            kept={k: dict(v) for k, v in (raw.get("kept") or {}).items() if isinstance(v, dict)},
        )

    def save(self, folder: Path) -> None:
        data = {
            "version": VERSION,
            "overview": self.overview,
            "kept": self.kept,
            "stat": self.stat,
        }
        make_private_dir(folder)
        # Why not durable: a cache that can be rebuilt needs no fsync (a power loss
        # costs one rehash); the rename still keeps it whole after a kill.
        atomic_write(folder / STATE_FILE, orjson.dumps(data), durable=False)


@contextlib.contextmanager
def writing(folder: Path) -> Iterator[None]:
    """Hold the wiki folder's lock for a build or update; BusyError if another holds it.

    Also removes the temporary files a killed run's atomic writes left behind (hidden,
    so never a page, but litter)."""
    make_private_dir(folder)
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BusyError(
                "another wiki build or update is running for this folder; try again when it ends"
            ) from None
        for tmp in folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()
        yield
    finally:
        os.close(fd)
