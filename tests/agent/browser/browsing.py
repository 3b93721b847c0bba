"""Shared parts of the browser tool tests: Debian's Chromium, the environment, a call."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from workhearth.agent.tools import ToolContext, ToolRegistry, ToolResult

CHROMIUM = Path("/usr/bin/chromium")
needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed"
)
# Why --no-sandbox: the tests may run as root, where Chromium refuses its sandbox.
TEST_ARGS = ("--no-sandbox",)

MakeCtx = Callable[..., ToolContext]
_ids = itertools.count(1)


def browser_env(home: Path) -> dict[str, str]:
    """The browser's whole environment: a private HOME, so a test shows what it writes there."""
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def call(reg: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> ToolResult:
    """One call through the registry, as the agent loop makes it."""
    return reg.call(name, args, ctx.for_call(f"call_{next(_ids)}"))


def ref_of(snapshot: str, label: str) -> int:
    """The ref the snapshot gives the element named ``label``."""
    found = re.search(r"\[(\d+)\] \S+ \"" + re.escape(label) + '"', snapshot)
    assert found, f"no element {label!r} in:\n{snapshot}"
    return int(found.group(1))
