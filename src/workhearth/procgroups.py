"""Process groups that never outlive hearth: start times, boot ids, records on disk.

Used for MCP servers (:mod:`workhearth.mcp.client.stdio`) and shell commands
(:mod:`workhearth.shell.runner`). Three ways a group ends:

* hearth ends it: on exit, on a timeout, or when it is stopped (:meth:`ProcessGroups.end`,
  a SIGKILL to the whole group);
* the kernel ends the leader when hearth dies, even by SIGKILL, when the leader is started
  with :func:`die_with_hearth` (``PR_SET_PDEATHSIG``, Linux). The signal follows the
  *thread* that started it, so start such a leader from a thread that outlives it;
* the next run ends what is left: a process the leader started in its group does not get
  that signal, so every live group has a record (``<pid>.json``: ``pgid``, ``pid``,
  ``start``, ``owner_pid``, ``owner_start``, ``boot``) in a folder the caller names, and
  :meth:`ProcessGroups.end_orphans` ends the group of a record whose hearth is gone.

A PID is only trusted together with its start time (``/proc/PID/stat`` field 22) and the
boot id: a record whose leader PID now names another process is dropped without a signal.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from workhearth.fsutil import atomic_write, make_private_dir

PR_SET_PDEATHSIG = 1
_PROC = Path("/proc")


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or None when there is no such process."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
        # Why: the command name (field 2) may hold spaces and parentheses; count after the last ')'.
        return int(raw[raw.rindex(")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def boot_id() -> str:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return ""


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in _PROC.iterdir() if _PROC.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text(encoding="ascii", errors="replace")
            fields = raw[raw.rindex(")") + 2 :].split()
        except (OSError, ValueError):
            continue
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            members.append(int(entry.name))
    return members


def group_alive(pgid: int) -> bool:
    return bool(_group_members(pgid))


def signal_group(pgid: int, sig: int) -> None:
    """Signal a whole group; one already gone (or not ours to signal) is no error."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _load_prctl() -> Callable[..., int] | None:
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):
        return None  # Why: not Linux; the group records and the exit path still end the groups


_PRCTL = _load_prctl()


def die_with_hearth() -> Callable[[], None]:
    """A ``preexec_fn``: the child is SIGKILLed when hearth (its parent) dies.

    Runs between fork and exec, so it only calls what was looked up beforehand.
    """
    parent, prctl = os.getpid(), _PRCTL

    def preexec() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        # Why: if hearth died before the line above, no signal will ever come.
        if os.getppid() != parent:
            os._exit(1)

    return preexec


@dataclass(frozen=True)
class GroupRecord:
    """One process group, as written to ``<pid>.json``."""

    pgid: int
    pid: int
    start: int
    owner_pid: int
    owner_start: int
    boot: str

    @classmethod
    def load(cls, path: Path) -> GroupRecord | None:
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
            return cls(**{k: row[k] for k in cls.__dataclass_fields__})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def leader_is_ours(self) -> bool:
        return start_time(self.pid) == self.start

    def owner_alive(self) -> bool:
        return start_time(self.owner_pid) == self.owner_start

    def signal(self, sig: int) -> None:
        """Signal the group, if it is still the one recorded; a reused PID is never signalled."""
        leader = start_time(self.pid)
        if leader == self.start:
            signal_group(self.pgid, sig)
        elif leader is None and any(
            (start_time(p) or 0) >= self.start for p in _group_members(self.pgid)
        ):
            # Why: the leader is gone but its group is not. Linux keeps a PID number
            # reserved while any process still has it as its group id, so these members
            # are the recorded group's own (a grandchild the death signal missed).
            signal_group(self.pgid, sig)

    def end(self) -> None:
        self.signal(signal.SIGKILL)


class ProcessGroups:
    """The process groups one hearth process started, with their records on disk.

    ``folder`` None keeps no records (the exit path still ends the groups).
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._mine: dict[int, GroupRecord] = {}
        self._swept = False

    def _path(self, pid: int) -> Path | None:
        return None if self.folder is None else self.folder / f"{pid}.json"

    def add(self, pid: int) -> GroupRecord | None:
        """Record a server just started with ``start_new_session`` (so its pgid is its pid)."""
        start = start_time(pid)
        me = os.getpid()
        if start is None:
            return None  # Why: no /proc (or it died already); nothing could be checked later
        record = GroupRecord(pid, pid, start, me, start_time(me) or 0, boot_id())
        self._mine[pid] = record
        path = self._path(pid)
        if path is not None:
            try:
                make_private_dir(path.parent)
                atomic_write(path, json.dumps(asdict(record)).encode())
            except OSError:
                pass  # Why: a read-only home loses only the after-crash sweep, not the run
        return record

    def end(self, record: GroupRecord | None) -> None:
        """SIGKILL one of our groups and drop its record."""
        if record is not None:
            record.end()
            self.forget(record)

    def forget(self, record: GroupRecord | None) -> None:
        """Drop the record of a group that has ended."""
        if record is None:
            return
        self._mine.pop(record.pid, None)
        path = self._path(record.pid)
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()

    def end_all(self) -> None:
        """SIGKILL every group this process still has (the last step of shutting down)."""
        for record in list(self._mine.values()):
            self.end(record)

    def end_orphans(self) -> None:
        """End the groups that a hearth process which is gone left behind (once per instance)."""
        if self._swept or self.folder is None or not self.folder.is_dir():
            self._swept = True
            return
        self._swept = True
        boot = boot_id()
        for path in sorted(self.folder.glob("*.json")):
            record = GroupRecord.load(path)
            if record is not None and record.boot == boot and record.owner_alive():
                continue  # Why: the hearth that started it still runs
            if record is not None and record.boot == boot:
                record.end()
            with contextlib.suppress(OSError):
                path.unlink()


__all__ = [
    "GroupRecord",
    "ProcessGroups",
    "boot_id",
    "die_with_hearth",
    "group_alive",
    "signal_group",
    "start_time",
]
