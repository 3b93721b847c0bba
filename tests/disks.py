"""Real troubled disks for tests: a small tmpfs that fills up (we run as root; without the
right to mount, the tests that need one are skipped with the reason)."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(at: Path, size: str = "2m", inodes: int = 200) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` with at most ``inodes`` files at ``at`` (skip if we cannot)."""
    at.mkdir(exist_ok=True)
    mounted = subprocess.run(
        [
            "mount",
            "-t",
            "tmpfs",
            "-o",
            f"size={size},nr_inodes={inodes},mode=0700",
            "tmpfs",
            str(at),
        ],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    try:
        yield at
    finally:
        if subprocess.run(["umount", str(at)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(at)], capture_output=True)


def fill_bytes(disk: Path) -> Path:
    """Fill every free byte; returns the filler file."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)
    return filler


def fill_inodes(disk: Path) -> list[Path]:
    """Create empty files until no file can be created; returns them."""
    made = []
    while True:
        path = disk / f"inode-{len(made)}"
        try:
            path.touch()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
            return made
        made.append(path)
