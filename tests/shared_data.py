"""Evaluation data kept outside the repository (``../shared``): real LoCoMo conversations
and real Claude Code transcripts, read from there and never copied in.

A developer without ``../shared`` gets a skip; CI (``CI`` set, as ``.ci/run`` does) gets a
failure, so the tests that need the data always run there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CLAUDE_CODE_FIXTURES = SHARED / "fixtures" / "claude-code"
LOCOMO = SHARED / "eval" / "locomo-dev.json"


def require(path: Path, what: str) -> Path:
    """``path`` when it exists; otherwise a skip, or in CI a failure naming what is missing."""
    if path.exists():
        return path
    reason = f"{what} not found at {path} (../shared is kept outside the repository)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}: CI runs with ../shared beside the clone", pytrace=False)
    pytest.skip(reason)
