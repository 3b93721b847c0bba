"""The append-only ``transcript.jsonl``: one writer under an OS lock, a damage-proof reader.

Writer guarantees (DESIGN §3 Durability): each event is one ``write()`` of one
whole line, so when :meth:`LogWriter.append` returns the line is in the kernel
and survives ``kill -9``. The fsync policy decides when it reaches the disk:
``always`` after every line; ``turn`` at each turn end (coalesced to at most
one fsync per 200 ms, the rest done by a background flusher within 200 ms),
every 200 ms while a long turn streams, and always before a tool with side
effects runs; ``never`` leaves it to the OS. The lock is ``flock`` on the transcript itself, so
the kernel drops it when the process dies and a killed run never blocks resume.

Reader guarantees: a torn, glued, zero-filled, duplicated or foreign line is
counted in :class:`Damage` and skipped; every good line around it still loads.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from workhearth.config import FsyncPolicy
from workhearth.errors import CorruptDataError, SessionLockedError, StorageError
from workhearth.fsutil import fsync_dir
from workhearth.sessions.codec import (
    SUFFIX_LEN,
    decode_line,
    encode_line,
    line_crc,
    line_ok,
    split_damaged,
)

TURN_FSYNC_INTERVAL = 0.2
_READ_CHUNK = 1 << 20

Opener = Callable[[int, dict[str, Any]], dict[str, Any] | None]
"""Turns an encrypted envelope back into an event (``None`` when it fails)."""
Sealer = Callable[[int, bytes], dict[str, Any]]


@dataclass
class Damage:
    """What the reader skipped, by kind. All zero for a healthy transcript."""

    torn: int = 0  # a last line cut short by a crash
    checksum: int = 0  # a line whose checksum does not match (garbled)
    glued: int = 0  # lines recovered from a segment where two were glued
    nul: int = 0  # runs of NUL bytes (zero-filled blocks)
    duplicate: int = 0  # a seq seen before
    foreign: int = 0  # a line from another session
    undecodable: int = 0  # valid checksum but not an event, or failed decryption

    @property
    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def add(self, other: Damage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


@dataclass
class ScanResult:
    """Where a scan stopped, so a snapshot can pin itself to the last good line."""

    end_offset: int = 0  # byte offset just after the last good line
    last_crc: str | None = None  # that line's checksum text
    last_seq: int = 0
    lines: int = 0
    damage: Damage = field(default_factory=Damage)


def scan(
    path: Path,
    session_id: str | None,
    *,
    start: int = 0,
    max_seq: int = 0,
    opener: Opener | None = None,
    result: ScanResult | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the good events of ``path`` from byte ``start``, counting damage in ``result``.

    ``max_seq`` is the highest seq already known (from a snapshot): lines at or
    below it are duplicates. ``session_id`` rejects lines of another session;
    ``None`` adopts the first meta line's id.
    """
    res = result if result is not None else ScanResult()
    dmg = res.damage
    gate = _EventGate(dmg, session_id, max_seq, opener)
    with path.open("rb") as fh:
        if start:
            fh.seek(start)
        for seg, seg_end, is_tail in _segments(fh, start):
            # Why: the clean line is the common case; test it here, not in a call.
            good = [seg] if line_ok(seg) else _salvage(seg, is_tail, dmg)
            for line in good:
                event = gate.admit(line)
                if event is None:
                    continue
                res.end_offset = seg_end
                res.last_crc = line_crc(line)
                res.last_seq = gate.seen_max
                res.lines += 1
                yield event


def _segments(fh: BinaryIO, offset: int) -> Iterator[tuple[bytes, int, bool]]:
    """Split the file (read from byte ``offset``) at newlines, in chunks.

    Yields ``(segment, byte offset just after it, whether it is an unterminated tail)``.
    """
    carry = b""
    while True:
        chunk = fh.read(_READ_CHUNK)
        if not chunk:
            if carry:  # a final segment without newline: torn unless it checks out
                yield carry, offset + len(carry), True
            return
        parts = (carry + chunk).split(b"\n") if carry else chunk.split(b"\n")
        carry = parts.pop()
        for seg in parts:
            offset += len(seg) + 1
            yield seg, offset, False


def _salvage(seg: bytes, is_tail: bool, dmg: Damage) -> list[bytes]:
    """The good lines inside a segment that is not one good line, counting what is lost."""
    if not seg.strip(b"\x00 \r\t"):
        if seg:
            dmg.nul += 1
        return []
    pieces = split_damaged(seg)
    good = [p for p in pieces if line_ok(p)]
    if b"\x00" in seg:
        dmg.nul += 1
    if good and len(pieces) > 1:
        dmg.glued += 1
    for i, piece in enumerate(pieces):
        if line_ok(piece):
            continue
        if is_tail and i == len(pieces) - 1:
            dmg.torn += 1
        else:
            dmg.checksum += 1
    return good


class _EventGate:
    """Decides which good lines are new events of this session; counts the others."""

    __slots__ = ("dmg", "opener", "seen_max", "sid")

    def __init__(
        self, dmg: Damage, session_id: str | None, max_seq: int, opener: Opener | None
    ) -> None:
        self.dmg = dmg
        self.sid = session_id
        self.seen_max = max_seq  # the highest seq admitted (or known before the scan)
        self.opener = opener

    def admit(self, line: bytes) -> dict[str, Any] | None:
        """The event of ``line`` (opened when encrypted), or None when it is skipped."""
        event = decode_line(line)
        if event is None:
            self.dmg.undecodable += 1
            return None
        seq = event["seq"]
        line_sid = event.get("sid")
        if self.sid is None and event.get("type") == "meta":
            self.sid = line_sid
        if line_sid != self.sid:
            self.dmg.foreign += 1
            return None
        if seq <= self.seen_max:
            self.dmg.duplicate += 1
            return None
        if "enc" in event:
            event = self._open(seq, event)
            if event is None:
                return None
        self.seen_max = seq
        return event

    def _open(self, seq: int, event: dict[str, Any]) -> dict[str, Any] | None:
        opened = self.opener(seq, event) if self.opener is not None else None
        if opened is None:
            self.dmg.undecodable += 1
        return opened


def _last_good_seq(fd: int, size: int) -> tuple[int, bool]:
    """Read backwards from the end for the last good line's seq; also whether the file ends in \\n."""
    if size == 0:
        return 0, True
    ends_nl = os.pread(fd, 1, size - 1) == b"\n"
    pos = size
    tail = b""
    step = 1 << 16
    while pos > 0:
        take = min(step, pos)
        pos -= take
        tail = os.pread(fd, take, pos) + tail
        lines = tail.split(b"\n")
        if pos > 0:
            lines = lines[1:]  # the first may be cut by our window
        for seg in reversed(lines):
            for piece in reversed(split_damaged(seg) if not line_ok(seg) else [seg]):
                if line_ok(piece):
                    event = decode_line(piece)
                    if event is not None:
                        return int(event["seq"]), ends_nl
        step = min(step * 2, 8 << 20)
    return 0, ends_nl


class LogWriter:
    """The single writer of one transcript. Use as a context manager or call :meth:`close`."""

    def __init__(
        self,
        path: Path,
        session_id: str,
        policy: FsyncPolicy = "turn",
        sealer: Sealer | None = None,
        known_seq: int = 0,
    ) -> None:
        """``known_seq`` is the highest seq a reader saw in the whole file; the tail
        alone can end in a duplicated older line, and reusing a seq would hide the
        new event from every reader."""
        self.path = path
        self.session_id = session_id
        self.policy = policy
        self._sealer = sealer
        created = not path.exists()
        self._fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._fd)
            raise SessionLockedError(
                f"session {session_id} is being written by another running process"
            ) from None
        if created:
            fsync_dir(path.parent)
        size = os.fstat(self._fd).st_size
        tail_seq, ends_nl = _last_good_seq(self._fd, size)
        self.last_seq = max(tail_seq, known_seq)
        if not ends_nl:
            # Why: a crash left a torn last line; the next event must start on a fresh line.
            size += os.write(self._fd, b"\n")
        self._dirty = False
        self._last_sync = time.monotonic()
        self._bytes = size
        self._sync_lock = threading.Lock()
        self._wake = threading.Condition(self._sync_lock)
        self._deferred = False
        self._flusher: threading.Thread | None = None

    @property
    def size(self) -> int:
        return self._bytes

    def append(self, event_type: str, payload: dict[str, Any]) -> int:
        """Append one event; when this returns the line is written. Returns its seq."""
        seq = self.last_seq + 1
        if event_type == "meta" or self._sealer is None:
            event = {"seq": seq, "sid": self.session_id, "type": event_type, "ts": time.time()}
            event.update(payload)
        else:
            inner = {"type": event_type, "ts": time.time(), **payload}
            event = {"seq": seq, "sid": self.session_id, **self._sealer(seq, orjson.dumps(inner))}
        line = encode_line(event)
        try:
            written = os.write(self._fd, line)
            if written != len(line):  # a full disk can take part of a line
                view = memoryview(line)[written:]
                while view:
                    view = view[os.write(self._fd, view) :]
        except OSError as exc:
            # Why: the event is not acknowledged, so no part of it may stay: a torn
            # tail would only be skipped by readers, but cutting it keeps the log clean.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._bytes)
            raise StorageError(
                f"session {self.session_id}: event not saved: {exc.strerror or exc}",
                path=str(self.path),
            ) from None
        self.last_seq = seq
        self._bytes += len(line)
        self._dirty = True
        if self.policy == "always":
            self._fsync()
        elif self.policy == "turn" and time.monotonic() - self._last_sync >= TURN_FSYNC_INTERVAL:
            self._fsync()
        return seq

    def _fsync(self) -> None:
        with self._sync_lock:
            self._fsync_locked()

    def _fsync_locked(self) -> None:
        if self._fd >= 0 and self._dirty:
            self._dirty = False
            os.fsync(self._fd)
        self._last_sync = time.monotonic()

    def turn_end(self) -> None:
        """A turn finished: make it durable (policies ``always`` and ``turn``).

        Under ``turn`` fsyncs are coalesced to at most one per 200 ms: a turn that
        ends sooner is synced by a background flusher when the interval is up.
        """
        if not self._dirty or self.policy != "turn":
            return
        if time.monotonic() - self._last_sync >= TURN_FSYNC_INTERVAL:
            self._fsync()
            return
        with self._wake:
            self._deferred = True
            if self._flusher is None:
                self._flusher = threading.Thread(
                    target=self._flush_loop, daemon=True, name="hearth-fsync"
                )
                self._flusher.start()
            self._wake.notify()

    def _flush_loop(self) -> None:
        with self._wake:
            while self._fd >= 0:
                if not self._deferred:
                    self._wake.wait()
                    continue
                delay = self._last_sync + TURN_FSYNC_INTERVAL - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                self._deferred = False
                self._fsync_locked()

    def before_side_effect(self) -> None:
        """A tool with side effects is about to run: its recorded call must be on disk first.

        Under the lock, so that a flusher's fsync still in progress is waited for.
        """
        if self.policy == "never":
            return
        with self._sync_lock:
            if self._dirty:
                self._fsync_locked()

    def close(self) -> None:
        if self._fd < 0:
            return
        with self._wake:
            try:
                if self.policy != "never":
                    self._fsync_locked()
            finally:
                with contextlib.suppress(OSError):
                    fcntl.flock(self._fd, fcntl.LOCK_UN)
                os.close(self._fd)
                self._fd = -1
                self._wake.notify_all()
        if self._flusher is not None:
            self._flusher.join(timeout=1)
            self._flusher = None

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_meta(path: Path) -> dict[str, Any]:
    """The meta event (first good line). Raises CorruptDataError when there is none."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    for seg in head.split(b"\n")[:8]:
        for piece in [seg] if line_ok(seg) else split_damaged(seg):
            if line_ok(piece):
                event = decode_line(piece)
                if event and event.get("type") == "meta":
                    return event
    raise CorruptDataError(f"{path}: no readable meta line; the transcript header is damaged")


__all__ = ["SUFFIX_LEN", "Damage", "LogWriter", "ScanResult", "read_meta", "scan"]
