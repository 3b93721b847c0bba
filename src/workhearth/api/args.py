"""Arguments the REST API and the MCP tools both take, checked with the same rules and words."""

from __future__ import annotations

import os
from pathlib import Path

from workhearth.errors import UsageError


def checked_workspace(workspace: str) -> Path:
    """A workspace named in a request: absolute, an existing folder, normalised.

    The caller decides what an absent or blank argument means (its default folder).
    """
    if "\x00" in workspace or not os.path.isabs(workspace):
        raise UsageError("workspace must be an absolute path")
    path = Path(os.path.normpath(workspace))
    if not path.is_dir():
        raise UsageError("workspace must be an existing folder")
    return path
