"""Arguments the REST API and the MCP tools both take, checked with the same rules and words."""

from __future__ import annotations

import os
from pathlib import Path

from workhearth.errors import UsageError

_PROC = Path("/proc")


def checked_workspace(workspace: str, home: Path) -> Path:
    """A workspace named in a request: absolute, an existing folder, normalised.

    Refused too, as given and once links are resolved: hearth's own data folder
    (``home``, HEARTH_HOME) and anything inside it, and anything under ``/proc``.
    Why: a caller naming them would read or write hearth's own files (sessions,
    tokens, the trust list) as if they were a project, and ``/proc/self/root/…``
    reaches any path by another spelling. The caller decides what an absent or blank
    argument means (its default folder). Messages name no path.
    """
    if "\x00" in workspace or not os.path.isabs(workspace):
        raise UsageError("workspace must be an absolute path", code="workspace_not_absolute")
    path = Path(os.path.normpath(workspace))
    real = Path(os.path.realpath(path))
    if _within(path, _PROC) or _within(real, _PROC):
        raise UsageError("workspace must not be under /proc", code="workspace_refused")
    homes = {Path(os.path.normpath(home)), Path(os.path.realpath(home))}
    if any(_within(p, h) for p in (path, real) for h in homes):
        raise UsageError(
            "workspace must not be hearth's own data folder (HEARTH_HOME) or inside it",
            code="workspace_refused",
        )
    if not path.is_dir():
        raise UsageError("workspace must be an existing folder", code="workspace_missing")
    return path


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
