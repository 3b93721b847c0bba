"""Fold transcript events into the state a session resumes from.

The log is linear, so folding is one pass: ``message`` events append, ``compact``
replaces every message up to a seq with its summary, ``rewind`` drops messages
after a seq, ``checkpoint`` and ``title`` overwrite. The folded state is what the
snapshot caches; API repair happens later, on the way out (:mod:`.reconstruct`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from workhearth.models.messages import Message

COMPACT_PREFIX = "[Summary of the earlier conversation]\n"


@dataclass
class SessionState:
    meta: dict[str, Any] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)  # seq of each message, parallel list
    checkpoint: dict[str, Any] | None = None
    title: str | None = None
    last_seq: int = 0
    updated: float = 0.0
    events: int = 0

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        seq = event["seq"]
        self.last_seq = seq
        self.events += 1
        ts = event.get("ts")
        if isinstance(ts, int | float):
            self.updated = ts
        if kind == "message":
            msg = event.get("message")
            if isinstance(msg, dict) and msg.get("role") in ("user", "assistant"):
                self.messages.append(msg)  # type: ignore[arg-type]
                self.seqs.append(seq)
        elif kind == "checkpoint":
            state = event.get("state")
            if isinstance(state, dict):
                self.checkpoint = state
        elif kind == "compact":
            self._compact(event)
        elif kind == "rewind":
            to_seq = event.get("to_seq")
            if isinstance(to_seq, int):
                keep = _count_at_or_below(self.seqs, to_seq)
                del self.messages[keep:]
                del self.seqs[keep:]
        elif kind == "title":
            if isinstance(event.get("title"), str):
                self.title = event["title"]
        elif kind == "meta" and not self.meta:
            self.meta = event

    def _compact(self, event: dict[str, Any]) -> None:
        upto = event.get("upto_seq")
        summary = event.get("summary")
        if not isinstance(upto, int) or not isinstance(summary, str):
            return
        cut = _count_at_or_below(self.seqs, upto)
        summary_msg: Message = {
            "role": "user",
            "content": [{"type": "text", "text": COMPACT_PREFIX + summary}],
            "id": f"compact-{event['seq']}",
        }
        self.messages[:cut] = [summary_msg]
        self.seqs[:cut] = [upto]  # the summary stands at the end of the range it replaces

    @property
    def business(self) -> dict[str, Any]:
        """Tasks, file cache, mode and model: from the last checkpoint, else the meta."""
        base: dict[str, Any] = {
            "tasks": [],
            "files": {},
            "mode": self.meta.get("mode"),
            "model": self.meta.get("model"),
        }
        if self.checkpoint:
            base.update(self.checkpoint)
        return base

    def to_dict(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            "messages": self.messages,
            "seqs": self.seqs,
            "checkpoint": self.checkpoint,
            "title": self.title,
            "last_seq": self.last_seq,
            "updated": self.updated,
            "events": self.events,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SessionState:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _count_at_or_below(seqs: list[int], limit: int) -> int:
    """How many leading messages have seq ≤ limit (seqs is increasing)."""
    return bisect.bisect_right(seqs, limit)
