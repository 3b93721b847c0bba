"""``SessionBackend``: what the agent needs of a session, as a small Protocol.

A run reads the session's folded state and appends events to it; nothing more. The
file-backed :class:`~workhearth.sessions.session.Session` (an append-only JSONL log)
is the one backend today; code typed with this Protocol (compaction, change
recording) works with any other that keeps the same promises: an append is durable
when it returns, and :meth:`load` folds every event appended so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from workhearth.models.messages import Message
from workhearth.sessions.state import BusinessState, SessionState


class SessionBackend(Protocol):
    @property
    def id(self) -> str: ...

    def load(self) -> SessionState:
        """The folded state of every event appended so far."""
        ...

    def append(self, event_type: str, payload: dict[str, Any]) -> int:
        """Append one event (durable when this returns); its sequence number."""
        ...

    def append_message(self, message: Message) -> int: ...

    def checkpoint(self, state: BusinessState | Mapping[str, Any]) -> int:
        """Record the business state (files changed, mode, tasks)."""
        ...

    def turn_end(self) -> None: ...

    def before_side_effect(self) -> None:
        """Make what was appended durable before a tool changes the world."""
        ...

    def close(self) -> None: ...


__all__ = ["SessionBackend"]
