"""A session's meta line (the transcript's first event, DESIGN §3) as one typed value.

The line on disk stays a plain JSON object: :class:`SessionMeta` reads it and keeps
it whole in ``event``, so a bundle export writes back exactly what was read, keys
this version does not know included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SessionMeta:
    """What the meta line says about its session.

    Reading never fails on odd values: a field holding a value of the wrong type
    reads as absent (``encrypted`` still says whether the line claims encryption,
    so a malformed record is reported by the cipher instead of read as clear text).
    """

    session_id: str
    workspace: str = ""
    created: float | None = None
    model: str | None = None
    mode: str | None = None
    encrypted: bool = False
    encryption: dict[str, Any] | None = None  # the key record, when it is an object
    parent_session: str | None = None  # set on a sidechain (subagent run)
    parent_call_id: str | None = None
    imported_from: dict[str, Any] | None = None  # set on a session imported from another tool
    rebuilt: bool = False  # the line was damaged and rebuilt (see :mod:`.header`)
    event: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_event(cls, event: Mapping[str, Any], session_id: str) -> SessionMeta:
        """The meta of session ``session_id`` from its meta event (``{}`` when unreadable)."""
        created = event.get("created")
        return cls(
            session_id=session_id,
            workspace=_text(event.get("workspace")) or "",
            created=created if _is_number(created) else None,
            model=_text(event.get("model")),
            mode=_text(event.get("mode")),
            encrypted=bool(event.get("encryption")),
            encryption=_object(event.get("encryption")),
            parent_session=_text(event.get("parent_session")),
            parent_call_id=_text(event.get("parent_call_id")),
            imported_from=_object(event.get("imported_from")),
            rebuilt=bool(event.get("rebuilt")),
            event=dict(event),
        )

    @property
    def source_updated(self) -> float | None:
        """For a session imported from another tool: when its source transcript last changed."""
        value = (self.imported_from or {}).get("updated")
        return float(value) if isinstance(value, int | float) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _object(value: object) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
