"""Retention (DESIGN §5 Workspaces): old trash, file history, tool outputs and audit lines go.

``[retention]`` in ``config.toml`` gives the days each kind is kept (0 keeps it
forever); :func:`sweep` removes what is older:

* trash items deleted before the cutoff (by their manifest's time);
* file-history versions and saved tool outputs whose file was last written
  before the cutoff, in every session of every workspace;
* checkpoint contents (``checkpoints-store/``) not written or used since the file
  history's cutoff (a run touches the contents its baseline still uses);
* ``audit.jsonl`` lines whose time is before the cutoff (a line that cannot be
  read is kept: it may be evidence).

Transcripts and memory are never touched. :func:`sweep_if_due` runs a sweep at
most once a day, remembered in a small hidden file under ``HEARTH_HOME``.

A session being written by a running process (its transcript is locked) is
left for the next sweep, so a live session's file-history manifest is never
rewritten under its writer.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from workhearth.agent.audit import audit_lock
from workhearth.agent.checkpoints import STORE as CHECKPOINTS_STORE
from workhearth.agent.history import FOLDER as FILE_HISTORY
from workhearth.agent.history import MANIFEST
from workhearth.config import RetentionConfig
from workhearth.fsutil import atomic_write, fsync_dir
from workhearth.paths import HearthPaths
from workhearth.sessions.session import TOOL_OUTPUTS, TRANSCRIPT
from workhearth.trash import Trash

DAY = 86_400.0
MARKER = ".retention-sweep"
_VERSION = re.compile(r"^(\d+)[-.]")


@dataclass
class SweepReport:
    """How many of each kind a sweep removed."""

    trash: int = 0
    file_history: int = 0
    tool_outputs: int = 0
    audit: int = 0
    checkpoints: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _cutoff(days: int, now: float) -> float | None:
    return None if days <= 0 else now - days * DAY


def sweep(paths: HearthPaths, retention: RetentionConfig, now: float | None = None) -> SweepReport:
    """Remove everything older than its kind's retention (see the module doc)."""
    now = time.time() if now is None else now
    report = SweepReport()
    trash_cut = _cutoff(retention.trash_days, now)
    if trash_cut is not None:
        report.trash = Trash(paths.trash).empty(older_than=trash_cut)
    history_cut = _cutoff(retention.file_history_days, now)
    outputs_cut = _cutoff(retention.tool_outputs_days, now)
    if history_cut is not None or outputs_cut is not None:
        for folder in session_folders(paths):
            with _idle(folder) as idle:
                if not idle:
                    continue
                if history_cut is not None:
                    report.file_history += prune_file_history(folder / FILE_HISTORY, history_cut)
                if outputs_cut is not None:
                    report.tool_outputs += prune_tool_outputs(folder / TOOL_OUTPUTS, outputs_cut)
    if history_cut is not None and paths.projects.is_dir():
        for store in paths.projects.glob(f"*/{CHECKPOINTS_STORE}"):
            report.checkpoints += prune_checkpoints(store, history_cut)
    audit_cut = _cutoff(retention.audit_days, now)
    if audit_cut is not None:
        report.audit = prune_audit(paths.audit_log, audit_cut)
    return report


def sweep_if_due(
    paths: HearthPaths,
    retention: RetentionConfig,
    now: float | None = None,
    every: float = DAY,
) -> SweepReport | None:
    """Sweep when the last sweep was ``every`` seconds ago or more; None when not due."""
    now = time.time() if now is None else now
    if not paths.home.is_dir():
        return None  # a fresh home holds nothing to sweep
    marker = paths.home / MARKER
    last = _last_sweep(marker)
    # Why: a time in the future (a clock set back) must not stop sweeps for good.
    if last is not None and 0 <= now - last < every:
        return None
    report = sweep(paths, retention, now)
    atomic_write(marker, orjson.dumps({"time": now, "removed": report.as_dict()}))
    return report


def _last_sweep(marker: Path) -> float | None:
    try:
        value = orjson.loads(marker.read_bytes()).get("time")
    except (OSError, ValueError, AttributeError):
        return None
    return float(value) if isinstance(value, int | float) else None


# ------------------------------------------------------------------ sessions
def session_folders(paths: HearthPaths) -> list[Path]:
    """Every session folder, in every workspace (the patterns the session store reads)."""
    root = paths.projects
    if not root.is_dir():
        return []
    found = list(root.glob(f"*/sessions/*/{TRANSCRIPT}"))
    found += root.glob(f"*/*/sessions/*/{TRANSCRIPT}")
    return [p.parent for p in found]


@contextlib.contextmanager
def _idle(folder: Path) -> Iterator[bool]:
    """Hold the session's writer lock while pruning; False when a live process holds it."""
    try:
        fd = os.open(folder / TRANSCRIPT, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing drops the lock


def _older(path: Path, cutoff: float) -> bool:
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    return st.st_mtime < cutoff


def prune_checkpoints(store: Path, cutoff: float) -> int:
    """Delete checkpoint contents last written or used before ``cutoff``; how many."""
    removed = 0
    for path in store.glob("objects/*/*"):
        if _older(path, cutoff):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    return removed


def prune_tool_outputs(folder: Path, cutoff: float) -> int:
    """Delete saved tool outputs last written before ``cutoff``; returns how many."""
    if not folder.is_dir():
        return 0
    removed = 0
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink() and _older(path, cutoff):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
    if removed:
        _remove_if_empty(folder)
    return removed


def prune_file_history(folder: Path, cutoff: float) -> int:
    """Delete versions written before ``cutoff`` and their manifest lines.

    A version in the content store (a line with ``sha``, or a sealed line) goes with its
    line, by the line's time; its bytes leave the store when nothing used them for the
    same days (:func:`prune_checkpoints`). An older version kept as a file goes by the
    file's time. The manifest is rewritten first (atomically) and the files removed
    after, so a crash in between leaves an unlisted file for the next sweep, never a
    listed version whose bytes are gone. Lines are matched by their version number,
    which sealed lines of encrypted sessions carry in the clear.
    """
    if not folder.is_dir():
        return 0
    files: dict[int, Path] = {}
    for path in folder.iterdir():
        m = _VERSION.match(path.name)
        if m and path.is_file() and not path.is_symlink():
            files[int(m.group(1))] = path
    manifest = folder / MANIFEST
    try:
        lines = manifest.read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    old = {n for n, path in files.items() if _older(path, cutoff)}
    stored = {n for line in lines if (n := _stored_before(line, cutoff)) is not None}
    old |= stored
    if not old:
        return 0
    kept = [line for line in lines if _version_of(line) not in old]
    if kept:
        atomic_write(manifest, b"".join(line + b"\n" for line in kept))
    else:
        with contextlib.suppress(FileNotFoundError):
            manifest.unlink()
    for n in sorted(old):
        if n in files:
            with contextlib.suppress(FileNotFoundError):
                files[n].unlink()
    _remove_if_empty(folder)
    return len(old)


def _stored_before(line: bytes, cutoff: float) -> int | None:
    """The number of a version kept in the content store and written before ``cutoff``."""
    try:
        data = orjson.loads(line)
        n, when = data.get("n"), data.get("time")
    except (ValueError, AttributeError):
        return None
    in_store = "sha" in data or "sealed" in data
    if in_store and isinstance(n, int) and isinstance(when, int | float) and when < cutoff:
        return n
    return None


def _version_of(line: bytes) -> int | None:
    try:
        n = orjson.loads(line).get("n")
    except (ValueError, AttributeError):
        return None
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):
        folder.rmdir()  # fails (and is left) when anything is still inside
        fsync_dir(folder.parent)


# --------------------------------------------------------------------- audit
def prune_audit(path: Path, cutoff: float) -> int:
    """Drop audit lines whose time is before ``cutoff``; returns how many.

    The file is rewritten atomically under the audit lock, which every append
    takes too, so no line written meanwhile can be lost.
    """
    if not path.exists():
        return 0
    with audit_lock(path):
        return _prune_audit_locked(path, cutoff)


def _prune_audit_locked(path: Path, cutoff: float) -> int:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return 0
    with os.fdopen(fd, "rb") as old:
        raw = old.read()
        # Why: a torn last line (a crash mid-write) stays as it is, unjudged.
        lines = raw.split(b"\n")
        tail = lines.pop()
        kept = [line for line in lines if not _audit_older(line, cutoff)]
        dropped = len(lines) - len(kept)
        if dropped == 0:
            return 0
        data = b"".join(line + b"\n" for line in kept) + tail
        atomic_write(path, data)
    return dropped


def _audit_older(line: bytes, cutoff: float) -> bool:
    try:
        t = orjson.loads(line).get("time")
    except (ValueError, AttributeError):
        return False
    return isinstance(t, int | float) and not isinstance(t, bool) and t < cutoff
