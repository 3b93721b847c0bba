"""What the REST API (``server/``), the MCP servers (``mcp/``) and the CLI's ``--json`` share.

Why one module below all three: they were written apart and each had its own copy of
the output shapes, the workspace-argument check and the skill detail; one copy keeps
their answers (field names, types, messages) from drifting apart.
"""

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
