"""What a task changed on disk, whichever tool changed it (issue 18, DESIGN §5).

A tool's arguments say what it meant to do, not what happened: a denied write
changes nothing, a shell command may write or delete anything. So the
:class:`ChangeDetector` looks: a stat walk of the authorized folders (through
:meth:`SafeFS.walk`, which never follows links, leaves out what the mode fences
off and never enters hearth's own home) around each call with side effects.
One walk per call: the walk after a call is the walk before the next one, and
the first is taken lazily, before the first such call. Read-only calls and calls
that never ran (denied, not asked) are not walked.

A walk keeps ``{path: (kind, size, mtime_ns, inode, mode)}``; comparing two gives the
files created, modified (size, time, inode or permission bits differ; an atomic
rewrite is a new inode) and deleted. A folder is listed as such only when it appears or vanishes
empty, or with more than :data:`COLLAPSE` entries (then as one line with their
count); otherwise its files are listed. Folders are never "modified": their time
changes with every entry added or removed, which the entries already say.

Each call's changes go on its result and into the session's checkpoint
(``BusinessState.changes``), so ``hearth sessions show`` and the REST API list
them after a restart. Past :data:`MAX_ENTRIES` entries a walk stops and tracking
ends for the run, said once (``changes_untracked``) instead of stalling.
Changes made between two calls (by the user, by another program) are counted
with the next call: a walk is a picture, not a witness.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from workhearth.agent.checkpoints import CallRecord, Capture, current_turn, write_record
from workhearth.agent.openat import Root
from workhearth.agent.safefs import SafeFS
from workhearth.errors import HearthError
from workhearth.sessions.backend import SessionBackend
from workhearth.sessions.session import Session

if TYPE_CHECKING:
    from workhearth.agent.tools.context import ToolContext

__all__ = ["COLLAPSE", "MAX_ENTRIES", "MAX_RECORDED", "Change", "ChangeDetector", "diff"]

ChangeKind = Literal["created", "modified", "deleted"]
CHANGE_KINDS: tuple[str, ...] = get_args(ChangeKind)
# Why: a walk this big takes seconds; past it we say so once instead of stalling every call.
MAX_ENTRIES = 200_000
# Why: every checkpoint carries the whole list; a task that unpacks an archive must not
# make each later checkpoint megabytes long.
MAX_RECORDED = 500
COLLAPSE = 20
TOO_MANY = "too many files in the authorized folders to track what changed (over {limit:,})"

Stat = tuple[str, int, int, int, int]  # kind, size, mtime_ns, inode, permission bits
Listing = dict[str, Stat]  # path as the model sees it -> its stat
R = TypeVar("R")


@dataclass(frozen=True)
class Change:
    """One path a tool call changed. ``entries``: for a folder, how many entries inside
    it appeared or vanished with it (listed as this one line); ``None`` for a file."""

    path: str  # relative to the workspace when inside it, else absolute
    kind: ChangeKind
    tool: str
    call_id: str
    entries: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "kind": self.kind,
            "tool": self.tool,
            "call_id": self.call_id,
        }
        if self.entries is not None:
            out["entries"] = self.entries
        return out


class _TooMany(Exception):
    pass


# ------------------------------------------------------------------ walking
def _outer_roots(roots: Sequence[Root]) -> list[Root]:
    """The roots not inside another root (a nested one is walked with its parent)."""
    out: list[Root] = []
    for i, root in enumerate(roots):
        inside = any(
            root.real.is_relative_to(other.real) and (root.real != other.real or j < i)
            for j, other in enumerate(roots)
            if j != i
        )
        if not inside:
            out.append(root)
    return out


def take_listing(fs: SafeFS, limit: int = MAX_ENTRIES) -> Listing:
    """Every entry under the authorized folders; raises ``_TooMany`` past ``limit``."""
    listing: Listing = {}
    workspace = str(fs.roots[0].path).rstrip("/") + "/"
    for root in _outer_roots(fs.roots):
        base = str(root.path).rstrip("/") + "/"
        # Why: keys are what the model and the user see: relative inside the workspace.
        prefix = "" if base == workspace else base
        entries = fs.walk(root.path)
        try:
            for e in entries:
                key = prefix + e.rel
                if prefix and key.startswith(workspace):
                    key = key[len(workspace) :]
                listing[key] = (e.kind, e.size, e.mtime_ns, e.inode, e.mode)
                if len(listing) > limit:
                    raise _TooMany
        except (OSError, HearthError):
            continue  # Why: a folder that vanished holds nothing; its entries read as deleted
        finally:
            # Why: stopping early must close the walk's open folders now, not at collection.
            getattr(entries, "close", lambda: None)()
    return listing


# ------------------------------------------------------------------ comparing
def diff(before: Listing, after: Listing) -> list[tuple[str, ChangeKind, int | None]]:
    """``(path, kind, entries)`` for what differs, sorted by path (see the module doc)."""
    if before == after:
        return []
    out: list[tuple[str, ChangeKind, int | None]] = [
        (p, "modified", None)
        for p in after.keys() & before.keys()
        if after[p] != before[p] and not (after[p][0] == before[p][0] == "dir")
    ]
    out += _folded(after.keys() - before.keys(), after, "created")
    out += _folded(before.keys() - after.keys(), before, "deleted")
    return sorted(out, key=lambda c: c[0].split("/"))


def _folded(
    paths: Iterable[str], listing: Listing, kind: ChangeKind
) -> list[tuple[str, ChangeKind, int | None]]:
    """Created (or deleted) paths, a new (or gone) folder folded as described above."""
    # Why split: "d/x" must sort right after "d", before "d-2" ("-" sorts before "/").
    ordered = sorted(paths, key=lambda p: p.split("/"))
    out: list[tuple[str, ChangeKind, int | None]] = []
    i = 0
    while i < len(ordered):
        path = ordered[i]
        if listing[path][0] != "dir":
            out.append((path, kind, None))
            i += 1
            continue
        end = i + 1
        while end < len(ordered) and ordered[end].startswith(path + "/"):
            end += 1
        inside = end - i - 1
        if inside == 0 or inside > COLLAPSE:
            out.append((path, kind, inside))
            i = end
        else:
            i += 1  # its few entries are listed one by one
    return out


# ------------------------------------------------------------------ recording
def record(
    session: SessionBackend, changes: Sequence[Change], untracked: str | None = None
) -> None:
    """Add ``changes`` (and why tracking stopped) to the session's checkpoint."""
    try:
        business = session.load().business
        kept = [*business.changes, *(c.as_dict() for c in changes)]
        omitted = (business.changes_omitted or 0) + max(0, len(kept) - MAX_RECORDED)
        session.checkpoint(
            business.replace(
                changes=kept[:MAX_RECORDED],
                changes_omitted=omitted or None,
                changes_untracked=untracked or business.changes_untracked,
            )
        )
    except OSError:
        # Why: a full disk must not turn a finished call into a crash; the call's
        # result still carries its changes, and the audit has the call.
        pass


# ------------------------------------------------------------------ the detector
def _turn_of(session: SessionBackend) -> int | None:
    return current_turn(session) if isinstance(session, Session) else None


class ChangeDetector:
    """Walks the authorized folders of ``fs`` around each call with side effects."""

    def __init__(
        self, fs: SafeFS, *, limit: int = MAX_ENTRIES, capture: Capture | None = None
    ) -> None:
        self.fs = fs
        self.limit = limit
        # Why (issue 22): the walks also keep the bytes a rewind needs (agent/checkpoints.py).
        self.capture = capture
        self.untracked: str | None = None  # why tracking stopped, once it has
        self.walks = 0
        self._last: Listing | None = None
        self._reported = False
        self._lock = threading.Lock()

    @classmethod
    def for_context(cls, ctx: ToolContext) -> ChangeDetector:
        """Track what ``ctx``'s tool calls change on disk (the one line a run's setup adds),
        with checkpoints for rewind when the session is a local one and they are on."""
        capture = None
        session = ctx.session
        settings = session.config.checkpoints if isinstance(session, Session) else None
        if isinstance(session, Session) and settings is not None and settings.enabled:
            capture = Capture.for_session(
                session,
                ctx.fs,
                max_bytes=settings.max_file_mb * 2**20,
                max_total=settings.max_total_mb * 2**20,
            )
        detector = cls(ctx.fs, capture=capture)
        ctx.changes = detector
        return detector

    def close(self) -> None:
        """Keep the checkpoint index for the next run (the end of a run calls this)."""
        with self._lock:
            if self.capture is not None:
                with contextlib.suppress(Exception):
                    self.capture.save_index(force=True)

    def around(
        self, call: Callable[[], R], *, tool: str, call_id: str, session: SessionBackend
    ) -> tuple[R, list[Change]]:
        """Run ``call``; its result and what changed on disk meanwhile (recorded in ``session``).

        An interrupted call (``KeyboardInterrupt``) is still walked and recorded.
        """
        self._prepare(session)
        try:
            out = call()
        except BaseException:
            self._finish(tool, call_id, session)
            raise
        return out, self._finish(tool, call_id, session)

    def _walk(self) -> Listing | None:
        self.walks += 1
        try:
            return take_listing(self.fs, self.limit)
        except _TooMany:
            self.untracked = TOO_MANY.format(limit=self.limit)
            return None
        except Exception as exc:
            # Why: tracking must never break the call it watches; say why it stopped.
            self.untracked = f"the authorized folders could not be walked ({type(exc).__name__})"
            return None

    def _prepare(self, session: SessionBackend) -> None:
        with self._lock:
            if self.untracked is not None:
                return
            capture = self.capture
            turn = _turn_of(session) if capture is not None else None
            if self._last is None:
                self._last = self._walk()
                if capture is not None and self._last is not None:
                    self._checkpoint(lambda: capture.start(self._last or {}), session)
            elif capture is not None and turn != capture.turn:
                # Why: what changed between turns was not this task's doing.
                listing = self._walk()
                if listing is not None:
                    self._last = listing
                    self._checkpoint(lambda: capture.resync(listing), session)
            if self.capture is not None:
                self.capture.turn = turn

    def _checkpoint(
        self, step: Callable[[], None], session: SessionBackend, call: tuple[str, str] = ("", "")
    ) -> None:
        """Run a capture step; a failure ends checkpoints for the run, said once (in the
        files changed, and in the turn's manifest, so a rewind refuses to pretend)."""
        capture = self.capture
        try:
            step()
        except Exception as exc:
            self.capture = None
            why = str(exc) if isinstance(exc, HearthError) else None
            why = why or getattr(exc, "strerror", None) or type(exc).__name__
            record(session, [], f"no checkpoints for rewind in this run: {why}")
            turn = _turn_of(session)
            if capture is not None and turn is not None:
                tool, call_id = call
                stop = CallRecord(turn, call_id or "-", tool or "-", time.time(), (), why)
                with contextlib.suppress(Exception):
                    write_record(capture.session, stop)

    def _finish(self, tool: str, call_id: str, session: SessionBackend) -> list[Change]:
        with self._lock:
            after = None if self._last is None else self._walk()
            found = []
            if self._last is not None and after is not None:
                found = [Change(p, k, tool, call_id, n) for p, k, n in diff(self._last, after)]
                capture = self.capture
                if capture is not None:
                    self._checkpoint(
                        lambda: capture.after_call(after, tool, call_id),
                        session,
                        (tool, call_id),
                    )
            self._last = after
            note = None
            if self.untracked is not None and not self._reported:
                self._reported = True
                note = self.untracked
        if found or note:
            record(session, found, note)
        return found
