"""Writing Markdown files that a person or another program may append to meanwhile (DESIGN §4).

A new entry is appended with ``O_APPEND``, so a line another program appends at
the same moment lands before or after it and is never lost. An edit or a delete
must rewrite the file: the new text goes to a temporary file, the file is checked
at the last moment to still be the one that was read (grown at most), the copy
is renamed over it, and whatever reached the old file meanwhile is carried over
to the new one, until no other program holds the old file open for writing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from workhearth.fsutil import fsync_dir, write_all

# Why: a program that opened the old file before the rename may still write to
# it; we wait this long at most for it to close (an editor holding the file open
# for writing for good would otherwise hold every rewrite).
CARRY_SECONDS = 2.0
_QUIET_READS = 3  # without leases: this many empty reads, 2 ms apart, mean done


def split_lines(data: bytes) -> list[str]:
    """Lines split on ``\\n`` only; bytes that are not UTF-8 survive as surrogate escapes."""
    lines = data.decode("utf-8", errors="surrogateescape").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def join_lines(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8", errors="surrogateescape")


def read_from(fd: int, offset: int) -> bytes:
    parts = []
    while chunk := os.pread(fd, 1 << 20, offset):
        parts.append(chunk)
        offset += len(chunk)
    return b"".join(parts)


def append(path: Path, build: Callable[[bytes], bytes], mode: int = 0o600, tries: int = 5) -> int:
    """Append ``build(contents now)`` to ``path`` with ``O_APPEND`` and fsync it.

    Returns how many newlines precede the appended bytes. On failure (a full
    disk) nothing of them stays, unless another program appended after them.
    """
    for _ in range(tries):
        created = not os.path.lexists(path)
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, mode)
        try:
            before = read_from(fd, 0)
            data = build(before)
            start = _append_all(fd, data)
            head = before if start == len(before) else read_from(fd, 0)[:start]
            # Why: an editor that saved by renaming a new file over this one meanwhile
            # left our bytes in a file nobody reads: append again to its version.
            replaced = not _same_file(path, fd)
        finally:
            os.close(fd)
        if created:
            fsync_dir(path.parent)
        if not replaced:
            return head.count(b"\n")
    raise OSError(
        errno.EAGAIN, "the file keeps being replaced while hearth appends to it", str(path)
    )


def _same_file(path: Path, fd: int) -> bool:
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    st = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino)


def _append_all(fd: int, data: bytes) -> int:
    """Write ``data`` at the end of the file and fsync; returns the offset it landed at."""
    start = end = -1
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            end = os.lseek(fd, 0, os.SEEK_CUR)
            if start < 0:
                start = end - n
            view = view[n:]
        os.fsync(fd)
        return start
    except BaseException:
        # Why: a full disk must not leave half an entry behind; cut ours off again,
        # unless another program appended after it (then its line matters more).
        if start >= 0 and os.fstat(fd).st_size == end:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
                os.fsync(fd)
        raise


def read_current(path: Path) -> tuple[int, bytes]:
    """(an open read-only descriptor or -1 when missing, the contents) of ``path``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return -1, b""
    try:
        return fd, read_from(fd, 0)
    except BaseException:
        os.close(fd)
        raise


def replace_if_unchanged(
    path: Path, fd: int, before: bytes, data: bytes, mode: int = 0o600
) -> bool:
    """Atomically replace ``path`` (read through ``fd`` as ``before``) with ``data``.

    Returns False, writing nothing, when the file changed other than by growing
    (an editor saved it): read it again and redo the change. Bytes appended to
    the old file before or even after the rename are carried over to the new one.
    """
    tmp_fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    renamed = False
    try:
        os.fchmod(tmp_fd, mode)
        write_all(tmp_fd, data)
        # Why: carried-over bytes go to the end, after lines appended to the new file.
        fcntl.fcntl(tmp_fd, fcntl.F_SETFL, fcntl.fcntl(tmp_fd, fcntl.F_GETFL) | os.O_APPEND)
        if not _still_the_same(path, fd, before):
            return False
        os.replace(tmp, path)
        renamed = True
        if fd >= 0:
            _carry_over(fd, len(before), tmp_fd)
    finally:
        os.close(tmp_fd)
        if not renamed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    fsync_dir(path.parent)
    return True


def _still_the_same(path: Path, fd: int, before: bytes) -> bool:
    """The last-moment check: ``path`` is still the file read, holding ``before`` first."""
    if fd < 0:
        return not os.path.lexists(path)
    if not _same_file(path, fd) or os.fstat(fd).st_size < len(before):
        return False
    return read_from(fd, 0)[: len(before)] == before


def _carry_over(old_fd: int, offset: int, new_fd: int) -> None:
    """Append to the new file what reaches the old one after ``offset``, until nobody writes it."""
    deadline = time.monotonic() + CARRY_SECONDS
    quiet = 0
    while True:
        alone = _no_other_writer(old_fd)
        tail = read_from(old_fd, offset)  # Why after the probe: then nothing can follow it
        if tail:
            write_all(new_fd, tail)
            offset += len(tail)
            quiet = 0
        else:
            quiet += 1
        if alone or (alone is None and quiet >= _QUIET_READS) or time.monotonic() > deadline:
            return
        time.sleep(0.002)


def _no_other_writer(fd: int) -> bool | None:
    """Whether no process holds this (renamed-away) file open for writing; None: cannot tell.

    Why a read lease: Linux grants one only while nobody has the file open for
    writing, so it tells exactly when the last late appender is done.
    """
    setlease = getattr(fcntl, "F_SETLEASE", None)
    # Why nlink: a file still reachable by another name could be opened during the
    # probe, and breaking our lease would signal us; only an unlinked file is safe.
    if setlease is None or os.fstat(fd).st_nlink != 0:
        return None
    try:
        fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
    except BlockingIOError:
        return False
    except OSError:
        return None  # no lease here (not the owner, a file system without leases)
    fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
    return True
