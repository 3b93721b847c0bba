"""Paths a quest may neither change nor create: what runs code later, outside the sandbox.

A quest command runs confined, but the files it leaves behind are read later by
programs that are not: the next shell's start-up files, a folder's ``.mcp.json``
and agent folders (``.hearth/``, ``.claude/``, ``.agents/``), git's hooks and
config (``core.fsmonitor`` runs on the next ``git status``), direnv's ``.envrc``,
editor tasks, the user's ``~/.local/bin`` and autostart entries. :func:`protected_paths`
lists them for a set of authorized folders and the user's home.

In quest mode the sandbox binds the existing ones read-only. A missing one cannot
be bound: bubblewrap would create an empty file or folder on the host as the mount
point. So :class:`Watch` notes what each of these paths is before a command and,
after it, moves to the trash anything that appeared or was replaced (each with a
one-line warning), and puts back a symlink the command took away.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workhearth.errors import HearthError
from workhearth.trash import Trash

# Relative to each authorized folder and to the user's home.
FOLDER_PATHS: tuple[str, ...] = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".config/fish",
    ".mcp.json",
    ".hearth",
    ".claude",
    ".agents",
    ".git/hooks",
    ".git/config",
    ".envrc",
    ".vscode",
)
# Relative to the user's home only.
HOME_PATHS: tuple[str, ...] = (
    ".gitconfig",
    ".config/git",
    ".local/bin",
    ".config/autostart",
    ".config/systemd/user",
)


_PURPOSES: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".mcp.json",), "the MCP servers a later run starts"),
    ((".hearth", ".claude", ".agents"), "agent settings, skills and servers a later run loads"),
    ((".git/hooks", ".git/config", ".gitconfig", ".config/git"), "git runs what it names"),
    ((".envrc",), "direnv runs it on entering the folder"),
    ((".vscode",), "the editor runs its tasks"),
    ((".local/bin",), "commands on your PATH"),
    ((".config/autostart", ".config/systemd/user"), "programs your session starts"),
)


def purpose(path: Path) -> str:
    """Why ``path`` (one of :func:`protected_paths`) runs code later, in a few words."""
    text = path.as_posix()
    for names, why in _PURPOSES:
        if any(text.endswith("/" + name) for name in names):
            return why
    return "a shell start-up file"


def protected_paths(folders: Sequence[str | Path], home: str | None) -> tuple[Path, ...]:
    """Every protected path for ``folders`` (authorized) and ``home`` (the user's; may be None).

    Each folder is resolved; the protected name under it is not (``~/.bashrc`` may be
    a link, and the link itself is what must stay).
    """
    bases = [Path(os.path.realpath(f)) for f in folders]
    user_home = Path(os.path.realpath(home)) if home and os.path.isabs(home) else None
    out = [base / rel for base in bases for rel in FOLDER_PATHS]
    if user_home is not None:
        out += [user_home / rel for rel in (*FOLDER_PATHS, *HOME_PATHS)]
    return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class _State:
    """What one path was: its identity, and a link's text (None: not a link)."""

    dev: int
    ino: int
    link: str | None


def _state(path: Path) -> _State | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    link = None
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            link = os.readlink(path)
    return _State(st.st_dev, st.st_ino, link)


class Watch:
    """The protected paths as they were before one command; :meth:`sweep` undoes plants."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.before = {path: _state(path) for path in paths}

    def changed(self) -> list[Path]:
        """Paths that appeared, or now name another file, since the watch began."""
        out: list[Path] = []
        for path, was in self.before.items():
            now = _state(path)
            if now is None:
                continue
            # Why: the same inode is the same file (a read-only bind kept it so);
            # a new inode was created or moved in by the command. A link cannot be
            # bound, and a freed inode number is reused at once: compare its text too.
            if was is None or (was.dev, was.ino, was.link) != (now.dev, now.ino, now.link):
                # A folder inside another that is itself new moves with it.
                if not any(p in path.parents for p in out):
                    out.append(path)
        return out

    def sweep(self, trash: Trash | None, *, session: str | None = None) -> list[str]:
        """Move what :meth:`changed` finds to ``trash``; one warning line each."""
        warnings = [self._undo(path, trash, session) for path in self.changed()]
        for path, was in self.before.items():
            if was is not None and _state(path) is None:
                # Why: a read-only bind cannot be removed, but the folder above it can be
                # renamed; say so, as the user's file is no longer where their tools look.
                warnings.append(f"{path} was moved away or removed by the command")
        return warnings

    def _undo(self, path: Path, trash: Trash | None, session: str | None) -> str:
        was = self.before[path]
        what = "created" if was is None else "replaced"
        if trash is None:
            return f"{path} was {what} by the command; quest does not allow that (not undone)"
        try:
            item = trash.put(path, reason="quest plant", session=session)
        except (OSError, HearthError) as exc:
            return f"{path} was {what} by the command and could not be moved to the trash ({exc})"
        restored = ""
        if was is not None and was.link is not None:
            # Why: a link (~/.bashrc -> dotfiles) cannot be bound read-only, only its target.
            with contextlib.suppress(OSError):
                os.symlink(was.link, path)
                restored = f"; the link to {was.link} is back"
        return (
            f"{path} was {what} by the command; quest mode may not change it, so it was "
            f"moved to the trash (item {item.id}, `hearth trash restore {item.id}`){restored}"
        )
