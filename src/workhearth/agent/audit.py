"""The audit log: one JSON line per tool call in ``$HEARTH_HOME/audit.jsonl`` (DESIGN §5).

Each line says when, which session and mode, which tool, what was decided and
why (``allowed-by-mode``: a read-only tool, or quest mode; ``allowed-by-flag``:
``--yes``; ``allowed-by-config``: the user's config trusts the tool (an MCP
server with ``trust = true``); ``allowed-by-user`` / ``denied-by-user``: a person answered;
``not-asked``: approval was needed and nobody could answer, so it did not run;
``denied-by-policy``: ask mode, a denied command, a path outside the authorized
folders, invalid input), the arguments, how long it took and how it ended (``ok``
or ``error`` with a one-line summary; never the full output).

A command (the ``shell`` tool) gets a line when it starts, with outcome ``started``,
and its usual line when it ends, so a hearth killed meanwhile leaves "started, outcome
unknown" behind. :meth:`AuditLog.read` shows a started line only while no later line
of the same call ended it.

Arguments are made safe before they are written: every string goes through
:func:`workhearth.memory.secrets.redact`, values under secret-looking keys
(``api_key``, ``token``, ``password``…) are dropped, and long strings are cut,
so a written file's content never lands whole in the log. Each line is appended
with one ``write()`` on an ``O_APPEND`` descriptor and fsynced, so concurrent
writers never interleave and a crash loses at most the line being written.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from workhearth.fsutil import append_line, file_lock, make_private_dir
from workhearth.memory.secrets import redact

Decision = Literal[
    "allowed-by-mode",
    "allowed-by-flag",
    "allowed-by-config",
    "allowed-by-user",
    "denied-by-user",
    "not-asked",
    "denied-by-policy",
]
DECISIONS: tuple[Decision, ...] = (
    "allowed-by-mode",
    "allowed-by-flag",
    "allowed-by-config",
    "allowed-by-user",
    "denied-by-user",
    "not-asked",
    "denied-by-policy",
)
Outcome = Literal["ok", "error", "started"]
STARTED_SUMMARY = "started, outcome unknown"
# Why: what the model is told after these decisions ("Do not retry it unchanged…") is
# addressed to it; the audit, read by people, says what happened.
PEOPLE_SUMMARY: dict[str, str] = {
    "denied-by-user": "denied by the user",
    "not-asked": "not run: it needed approval and nobody was there to give it",
}

MASK = "••••••••"  # a masked secret (a password typed in the browser), of no telling length
STRING_LIMIT = 300
SUMMARY_LIMIT = 200
_REDACT_MARGIN = 4_096
_ITEMS_LIMIT = 50
_DEPTH_LIMIT = 6
_SECRET_KEY = re.compile(
    r"(?i)^(?:.*[_\-.])?(?:api[_\-]?key|apikey|token|access[_\-]?token|refresh[_\-]?token|"
    r"secret|client[_\-]?secret|password|passwd|passphrase|authorization|auth|cookie|"
    r"private[_\-]?key|credentials?)$"
)


@dataclass(frozen=True)
class AuditRecord:
    time: float
    session: str | None
    mode: str
    tool: str
    decision: str
    arguments: dict[str, Any] = field(default_factory=dict)
    duration: float = 0.0
    outcome: str = "ok"
    summary: str = ""
    call_id: str | None = None
    # Why (issue 22): what a command may have done that a rewind cannot undo (agent/reach.py).
    reach: list[str] | None = None

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if self.reach is None:
            del out["reach"]
        return out


def secret_key(key: str) -> bool:
    """True for argument names whose values are credentials (``api_key``, ``x-auth-token``)."""
    return bool(_SECRET_KEY.match(key))


def _safe(text: str, limit: int) -> str:
    """``text`` redacted, then cut to ``limit``.

    Why this order: a key cut in half is still half a key. Only the part that can
    be shown is scanned (with room for a secret that starts near the cut), so a
    file's megabytes of content cost no more than its first lines.
    """
    shown = redact(text[: limit + _REDACT_MARGIN])
    if len(shown) <= limit and len(text) <= limit + _REDACT_MARGIN:
        return shown
    return shown[:limit] + f"…[+{max(len(text) - limit, 1)} chars]"


def redact_arguments(value: Any, _depth: int = 0) -> Any:
    """A copy of ``value`` safe to log: secrets redacted, secret keys dropped, strings cut."""
    if isinstance(value, str):
        return _safe(value, STRING_LIMIT)
    if _depth >= _DEPTH_LIMIT:
        return "[…]"
    if isinstance(value, dict):
        return {
            str(k): redact_arguments(v, _depth + 1)
            for k, v in list(value.items())[:_ITEMS_LIMIT]
            if not secret_key(str(k))
        }
    if isinstance(value, list | tuple):
        return [redact_arguments(v, _depth + 1) for v in value[:_ITEMS_LIMIT]]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _safe(str(value), STRING_LIMIT)


def summarize(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """The first non-empty line of ``text``, redacted and cut: what the audit keeps of an output."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return _safe(line, limit)


class AuditLog:
    """Append-only JSON lines; safe to share between threads and processes."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(
        self,
        *,
        session: str | None,
        mode: str,
        tool: str,
        decision: Decision,
        arguments: dict[str, Any] | None = None,
        duration: float = 0.0,
        outcome: Outcome = "ok",
        summary: str = "",
        call_id: str | None = None,
        reach: list[str] | None = None,
    ) -> AuditRecord:
        """Write one line (one ``write()``, then fsync) and return what was written."""
        if decision not in DECISIONS:
            raise ValueError(f"unknown audit decision {decision!r}")
        rec = AuditRecord(
            time=time.time(),
            session=session,
            mode=mode,
            tool=tool,
            decision=decision,
            arguments=redact_arguments(dict(arguments or {})),
            duration=round(duration, 4),
            outcome=outcome,
            summary=_safe(summary, SUMMARY_LIMIT),
            call_id=call_id,
            reach=[_safe(r, STRING_LIMIT) for r in reach] if reach else None,
        )
        line = orjson.dumps(rec.as_dict()) + b"\n"
        if not self.path.parent.is_dir():
            make_private_dir(self.path.parent)
        with audit_lock(self.path):
            append_line(self.path, line)
        return rec

    def read(self, session: str | None = None, limit: int | None = None) -> list[AuditRecord]:
        """Records oldest first (the newest ``limit`` when given); torn lines are skipped."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        out: list[AuditRecord] = []
        for text in raw.splitlines():
            try:
                data = orjson.loads(text)
                rec = AuditRecord(**data)
            except (orjson.JSONDecodeError, TypeError):
                continue
            if session is None or rec.session == session:
                out.append(rec)
        out = _without_ended_starts(out)
        return out[-limit:] if limit else out


def _call_key(rec: AuditRecord) -> tuple[str | None, str, str] | None:
    return None if rec.call_id is None else (rec.session, rec.tool, rec.call_id)


def _without_ended_starts(records: list[AuditRecord]) -> list[AuditRecord]:
    """``records`` less each ``started`` line that a later line of the same call ended."""
    ended: set[tuple[str | None, str, str]] = set()
    kept: list[AuditRecord] = []
    for rec in reversed(records):
        key = _call_key(rec)
        if rec.outcome == "started" and key is not None and key in ended:
            continue
        if rec.outcome != "started" and key is not None:
            ended.add(key)
        kept.append(rec)
    kept.reverse()
    return kept


@contextlib.contextmanager
def audit_lock(path: Path) -> Iterator[None]:
    """Order appends against the retention rewrite of the log (released if we die)."""
    with file_lock(path.with_name(f".{path.name}.lock")):
        yield
