"""Fold transcript events into the state a session resumes from.

The log is linear, so folding is one pass: ``message`` events append, ``compact``
replaces every message up to a seq with its summary, ``rewind`` drops messages
after a seq (and brings back those an undone rewind dropped), ``checkpoint`` and ``title`` overwrite. The folded state is what the
snapshot caches; API repair happens later, on the way out (:mod:`.reconstruct`).

:class:`BusinessState` is what a ``checkpoint`` event's ``state`` holds, read and
written by the agent layer as one typed value.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workhearth.models.messages import Message

COMPACT_PREFIX = "[Summary of the earlier conversation]\n"
REWIND_PREFIX = "[Summary of turns the user rewound (their changes were undone)]\n"

# Why: the keys every checkpoint carried before this class existed; they are
# written even when empty so a checkpoint stays what DESIGN §5 describes.
_ALWAYS = ("tasks", "files", "mode", "model")


@dataclass(frozen=True)
class BusinessState:
    """A session's business state: the ``state`` of its last ``checkpoint`` event.

    The on-disk form is a plain JSON object (:meth:`from_event` / :meth:`as_event`).
    Keys this version does not know, and known keys holding a value of the wrong
    type, are kept in ``extra`` and written back unchanged, so a checkpoint written
    by a newer hearth survives a run of an older one.
    """

    tasks: list[Any] = field(default_factory=list)
    files: dict[str, Any] = field(default_factory=dict)
    mode: str | None = None  # ask, agent or quest
    model: str | None = None  # the model that last answered
    pinned: str | None = None  # the model chosen with --model, kept on resume
    tier: str | None = None  # the router's tier
    system: str | None = None  # the system prompt the session runs with
    system_prompt_hash: str | None = None
    usage: dict[str, int] | None = None  # input_tokens, output_tokens so far
    cost: float | None = None  # dollars so far, None when unknown
    active_skill: dict[str, Any] | None = None  # name and allowed_tools
    # Files the task changed on disk, one JSON object per change (agent/changes.py);
    # ``changes_omitted`` counts those past the cap, ``changes_untracked`` says why
    # tracking stopped. A checkpoint without them (older sessions) reads as none recorded.
    changes: list[Any] = field(default_factory=list)
    changes_omitted: int | None = None
    changes_untracked: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_event(cls, state: Mapping[str, Any]) -> BusinessState:
        """The state of a ``checkpoint`` event (a JSON object), never failing on odd values."""
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in state.items():
            kinds = _KINDS.get(key)
            if kinds is not None and (value is None or _is(value, kinds)):
                known[key] = value
            else:
                extra[key] = value
        for key in ("tasks", "files", "changes"):
            if known.get(key) is None:
                known.pop(key, None)
        return cls(**known, extra=extra)

    def as_event(self) -> dict[str, Any]:
        """The JSON object a ``checkpoint`` event stores."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or (value is None and f.name not in _ALWAYS):
                continue
            if f.name == "changes" and not value:
                continue  # Why: checkpoints of tasks that changed nothing keep their old shape
            out[f.name] = value
        # Why: a key in ``extra`` that names a field held a value of the wrong type; keep it.
        out.update(self.extra)
        return out

    def replace(self, **changes: Any) -> BusinessState:
        """A copy with ``changes``; a known key given a value of the wrong type goes to ``extra``."""
        merged = {**self.as_event(), **changes}
        return BusinessState.from_event(merged)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    # Why: JSON has no int/float/bool distinction the way Python does; True is no cost.
    return isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)


_KINDS: dict[str, tuple[type, ...]] = {
    "tasks": (list,),
    "files": (dict,),
    "mode": (str,),
    "model": (str,),
    "pinned": (str,),
    "tier": (str,),
    "system": (str,),
    "system_prompt_hash": (str,),
    "usage": (dict,),
    "cost": (int, float),
    "active_skill": (dict,),
    "changes": (list,),
    "changes_omitted": (int,),
    "changes_untracked": (str,),
}


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
            self._rewind(event)
        elif kind == "title":
            if isinstance(event.get("title"), str):
                self.title = event["title"]
        elif kind == "meta" and not self.meta:
            self.meta = event

    def _rewind(self, event: dict[str, Any]) -> None:
        """Drop the messages after ``to_seq``; bring back ``restore``d ones (an undone
        rewind's, with their own seqs); add a ``summary`` of the undone turns."""
        to_seq = event.get("to_seq")
        if isinstance(to_seq, int):
            keep = _count_at_or_below(self.seqs, to_seq)
            del self.messages[keep:]
            del self.seqs[keep:]
        restore = event.get("restore")
        if isinstance(restore, list):
            for item in restore:
                if not isinstance(item, dict):
                    continue
                msg, seq = item.get("message"), item.get("seq")
                if isinstance(msg, dict) and isinstance(seq, int):
                    if not self.seqs or seq > self.seqs[-1]:
                        self.messages.append(msg)  # type: ignore[arg-type]
                        self.seqs.append(seq)
        summary = event.get("summary")
        if isinstance(summary, str) and summary:
            self.messages.append(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": REWIND_PREFIX + summary}],
                    "id": f"rewind-{event['seq']}",
                }
            )
            self.seqs.append(event["seq"])

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
    def business(self) -> BusinessState:
        """Tasks, file cache, mode and model: from the last checkpoint, else the meta."""
        base: dict[str, Any] = {
            "tasks": [],
            "files": {},
            "mode": self.meta.get("mode"),
            "model": self.meta.get("model"),
        }
        if self.checkpoint:
            base.update(self.checkpoint)
        return BusinessState.from_event(base)

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
