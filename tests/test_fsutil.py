"""The shared file primitives (fsutil.py): appended lines and the lock file."""

from __future__ import annotations

import fcntl
import os
import stat
import threading
from pathlib import Path

import pytest

from workhearth.fsutil import append_line, file_lock


def test_append_line_creates_a_private_file_and_appends_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    append_line(path, b"one\n")
    append_line(path, b"two\n")
    assert path.read_bytes() == b"one\ntwo\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_append_line_lines_from_many_threads_never_mix(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [f"{n:04d}{'x' * 4000}\n".encode() for n in range(64)]
    threads = [threading.Thread(target=append_line, args=(path, line)) for line in lines]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(path.read_bytes().splitlines(keepends=True)) == sorted(lines)


def _try_lock(path: Path) -> bool:
    # Why: flock locks belong to an open file description, so a second open of the
    # same file conflicts even inside this process, as another process would.
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def test_file_lock_is_held_inside_the_block_and_released_after(tmp_path: Path) -> None:
    lock = tmp_path / ".thing.lock"
    with file_lock(lock):
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        assert not _try_lock(lock)
    assert _try_lock(lock)


def test_file_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    lock = tmp_path / ".thing.lock"
    with pytest.raises(RuntimeError), file_lock(lock):
        raise RuntimeError("boom")
    assert _try_lock(lock)


def test_making_an_open_database_private_keeps_its_locks(tmp_path: Path) -> None:
    """Closing any descriptor of a file drops this process's POSIX locks on it: making a
    database private while a connection of ours holds a lock must not open it (the
    bench/adversary NUL trial found another process writing underneath the server)."""
    import sqlite3
    import subprocess
    import sys

    from workhearth.fsutil import make_private_file

    path = tmp_path / "index.sqlite"
    make_private_file(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE t (x)")
    db.execute("BEGIN IMMEDIATE")  # a RESERVED lock: nobody else may write now
    path.chmod(0o644)
    make_private_file(path)
    assert path.stat().st_mode & 0o777 == 0o600
    other = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], timeout=0, "
            "isolation_level=None); db.execute('BEGIN IMMEDIATE')",
            str(path),
        ],
        capture_output=True,
        text=True,
    )
    db.execute("ROLLBACK")
    assert other.returncode != 0 and "locked" in other.stderr, other.stderr
