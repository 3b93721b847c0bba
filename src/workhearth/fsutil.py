"""Small durable-file primitives: atomic writes, appended lines, locks, private folders."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path


def fsync_dir(path: Path) -> None:
    """Make a directory entry (a created or renamed file) durable."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and parents) with mode 0700 for the folders we create.

    Why explicit modes: the library runs without the CLI, under whatever umask
    its caller has (often 0o022), and what it keeps is private to the user.
    Folders that already exist keep their mode (the user may have chosen it).
    """
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700)
        fsync_dir(d.parent)


def make_private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 when missing; take group/other bits off it when not.

    Why: SQLite creates a database and its ``-wal``/``-shm`` with mode 0644 less
    the umask, the companions copying the database's mode; a database file that
    exists with 0600 before SQLite opens it keeps all three private.

    Why never open an existing file: closing *any* descriptor of a file drops every
    POSIX lock this process holds on it, so opening a SQLite database that another
    connection of the process has open would silently release that connection's
    locks (SQLite's "How To Corrupt An SQLite Database File" §2.2) — a second process
    could then write underneath it. An existing file is changed by path instead.
    """
    try:
        fd = os.open(
            path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
    except FileExistsError:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise OSError(errno.ELOOP, "a link where a private file belongs", str(path)) from None
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            os.chmod(path, mode & 0o700)
        return
    os.close(fd)  # Why safe: nobody held a lock on a file that did not exist


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (a short write is continued) and fsync it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def append_line(path: Path, line: bytes) -> None:
    """Append ``line`` (ending in a newline) to ``path`` (made 0600) and fsync it.

    Why ``O_APPEND`` and one write: lines other processes append at the same time
    land whole, one after another, never over each other.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        write_all(fd, line)
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (a lock file, made 0600) while the block runs.

    Why flock: the kernel drops it when the process dies, so a crash never leaves
    a stale lock behind. Blocks until the lock is free.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def atomic_write(path: Path, data: bytes, mode: int = 0o600, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: temp file, fsync, rename, fsync the folder.

    ``durable=False`` skips both fsyncs: still whole after a killed process (the rename
    is atomic), not after a power loss — for copies that can be made again (a team
    specialist's scratch copy, a step's "running" mark).
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        if durable:
            write_all(fd, data)
        else:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        os.close(fd)
        fd = -1
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def syncfs(folder: Path) -> bool:
    """Make everything written to the filesystem holding ``folder`` durable with one
    ``syncfs`` (cheaper than an fsync per file past a few dozen); False when unavailable."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return bool(libc.syncfs(fd) == 0)
    finally:
        os.close(fd)
