"""Authorized folders: the only places agent file tools may touch (DESIGN §5 Workspaces).

``hearth workspace add|list|remove DIR`` keeps a list in
``$HEARTH_HOME/workspaces.json`` (atomic replace, under a lock so two processes
never lose each other's change). The folder a session starts in (the current
workspace) is authorized for that session without being added: running
``hearth`` in a folder is the user's way of saying "work here". Added folders
are authorized for every session, in any workspace.

Workhearth's own home is never authorized: it holds the trash, the audit log
and every session, which the agent must not be able to rewrite.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from workhearth.errors import CorruptDataError, NotFoundError, UsageError
from workhearth.fsutil import atomic_write, file_lock, make_private_dir
from workhearth.paths import HearthPaths

WORKSPACES_FILE = "workspaces.json"
_VERSION = 1


@dataclass(frozen=True)
class AuthorizedFolder:
    path: str
    added: float

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "added": self.added}


def _norm(folder: str | Path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(str(folder))))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class Workspaces:
    """The persisted list plus the session's current workspace."""

    def __init__(self, paths: HearthPaths, current: str | Path | None = None) -> None:
        self.paths = paths
        self.file = paths.home / WORKSPACES_FILE
        self.current = _norm(current) if current is not None else None

    # ------------------------------------------------------------ persisted
    def list(self) -> list[AuthorizedFolder]:
        """Folders added with ``hearth workspace add``, in the order they were added."""
        try:
            raw = orjson.loads(self.file.read_bytes())
        except FileNotFoundError:
            return []
        except orjson.JSONDecodeError:
            raise CorruptDataError(f"{self.file} is not valid JSON; fix or remove it") from None
        if not isinstance(raw, dict) or raw.get("version") != _VERSION:
            raise CorruptDataError(f"{self.file}: unknown format (version {raw.get('version')!r})")
        return [
            AuthorizedFolder(str(item["path"]), float(item.get("added", 0)))
            for item in raw.get("workspaces", [])
            if isinstance(item, dict) and item.get("path")
        ]

    def _save(self, folders: builtins.list[AuthorizedFolder]) -> None:
        data = {"version": _VERSION, "workspaces": [f.as_dict() for f in folders]}
        atomic_write(self.file, orjson.dumps(data, option=orjson.OPT_INDENT_2))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        make_private_dir(self.paths.home)
        with file_lock(self.paths.home / f".{WORKSPACES_FILE}.lock"):
            yield

    def add(self, folder: str | Path) -> AuthorizedFolder:
        """Authorize an existing folder for every session (no change if already there)."""
        path = _norm(folder)
        if not path.is_dir():
            raise UsageError(f"{path} is not an existing folder")
        if self._in_home(path):
            raise UsageError(f"{path} is inside workhearth's own data folder; pick another")
        with self._locked():
            folders = self.list()
            for existing in folders:
                if existing.path == str(path):
                    return existing
            entry = AuthorizedFolder(str(path), time.time())
            self._save([*folders, entry])
        return entry

    def _in_home(self, path: Path) -> bool:
        home = _norm(self.paths.home)
        homes = (home, Path(os.path.realpath(home)))
        return any(_inside(p, h) for p in (path, Path(os.path.realpath(path))) for h in homes)

    def remove(self, folder: str | Path) -> AuthorizedFolder:
        """Stop authorizing a folder added before (the current workspace cannot be removed)."""
        path = str(_norm(folder))
        with self._locked():
            folders = self.list()
            kept = [f for f in folders if f.path != path]
            if len(kept) == len(folders):
                raise NotFoundError(f"{path} is not an authorized folder")
            self._save(kept)
        return next(f for f in folders if f.path == path)

    # -------------------------------------------------------------- session
    def roots(self) -> builtins.list[Path]:
        """Folders this session may touch: the current workspace first, then the added ones.

        Folders that no longer exist are left out (an open walk needs a folder),
        and so is anything inside workhearth's home, even as the current folder.
        """
        out: builtins.list[Path] = []
        candidates = [self.current] if self.current is not None else []
        candidates += [Path(f.path) for f in self.list()]
        for path in candidates:
            if path not in out and path.is_dir() and not self._in_home(path):
                out.append(path)
        return out

    def protected(self) -> builtins.list[Path]:
        """Folders refused even inside a root: workhearth's home (trash, audit, sessions)."""
        return [self.paths.home]
