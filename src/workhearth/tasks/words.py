"""Words for what a task did: the one-line forms every surface shows (terminal, page, audit).

A tool call's subject (:func:`brief`) and its outcome (:func:`outcome_text`) are worded
once here, so the terminal's progress line and the page's tool pills never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NO_MODEL = (
    "no model configured: set OPENAI_API_KEY (with OPENAI_BASE_URL) or ANTHROPIC_API_KEY and "
    "HEARTH_MODEL=openai:NAME (or anthropic:NAME), or add [models.NAME] to config.toml; "
    "memory and sessions commands work without one"
)

# Which argument of a tool call names what it works on, in order of preference.
_SUBJECT_KEYS = ("path", "command", "pattern", "query", "prompt", "name", "id", "content")


def one_line(text: str, limit: int = 80) -> str:
    """``text`` with its whitespace folded, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def brief(arguments: Mapping[str, Any], limit: int = 80) -> str:
    """What a tool call works on, in one short line: its path, command, pattern or query."""
    for key in _SUBJECT_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return one_line(value, limit)
    return ""


def outcome_text(content: str, is_error: bool, limit: int = 160) -> str:
    """``ok``, or why the call failed, from the first line of its result."""
    if not is_error:
        return "ok"
    first = next((ln.strip() for ln in content.splitlines() if ln.strip()), "")
    if first.startswith("The user denied"):
        return "denied by you"
    if first.startswith("Not run:"):
        return "not run: it needs approval and nobody could give it"
    label, reason = "error", first
    if first.startswith("Refused by policy: "):
        label, reason = "refused", first.removeprefix("Refused by policy: ")
    if len(reason) > limit:
        reason = reason[: limit - 1] + "…"
    return f"{label}: {reason}" if reason else label


__all__ = ["NO_MODEL", "brief", "one_line", "outcome_text"]
