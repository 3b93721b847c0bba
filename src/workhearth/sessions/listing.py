"""What a session listing shows beyond the snapshot summary: a title and a time.

A listing of 30 sessions must stay cheap, so nothing here folds a whole transcript:
the title of a session that never got one is its first prompt (as Claude Code's
``/resume`` shows it), read from the first few events only.
"""

from __future__ import annotations

import itertools
import re
from datetime import datetime
from typing import Any

from workhearth.sessions.log import scan
from workhearth.sessions.session import Session

TITLE_LIMIT = 120
# Why a bound: a session whose first events are all tool traffic must not be read whole.
_TITLE_EVENTS = 64
_TAG = re.compile(r"<([a-z][a-z0-9-]*)>(.*?)</\1>", re.DOTALL)
_WRAPPERS = ("command-message", "local-command-stdout", "local-command-stderr", "system-reminder")


def one_line(text: str, limit: int = TITLE_LIMIT) -> str:
    """``text`` on one line, whitespace runs collapsed, cut to ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def first_prompt(session: Session) -> str | None:
    """The text of the first user message that has text, from the first events only."""
    events = scan(session.transcript, session.id, opener=session._opener())
    for event in itertools.islice(events, _TITLE_EVENTS):
        msg = event.get("message") if event.get("type") == "message" else None
        if not isinstance(msg, dict) or msg.get("role") != "user":
            continue
        texts = [
            b.get("text", "")
            for b in msg.get("content", [])
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        text = one_line(prompt_text(" ".join(t for t in texts if isinstance(t, str))))
        if text:
            return text
    return None


def prompt_text(text: str) -> str:
    """A prompt as a person typed it: ``/cmd args`` for a wrapped slash command.

    Why: Claude Code records a slash command as ``<command-name>`` and
    ``<command-args>`` tags around Claude Code's own notes; a title shows the command.
    """
    tags = {name: body.strip() for name, body in _TAG.findall(text)}
    if "command-name" in tags:
        return f"{tags['command-name']} {tags.get('command-args', '')}".strip()
    for name in _WRAPPERS:
        text = re.sub(rf"<{name}>.*?</{name}>", " ", text, flags=re.DOTALL)
    return text


def parse_time(value: Any) -> float | None:
    """An ISO-8601 timestamp (``2026-02-10T10:00:00.123Z``) or epoch number as epoch seconds."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        # Why: some tools write milliseconds.
        return float(value) / 1000 if value > 1e11 else float(value)
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if stamp.tzinfo is None:
        return None  # a time without zone could be anywhere; do not guess
    return stamp.timestamp()
