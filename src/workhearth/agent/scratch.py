"""Scratch folders in the system temp folder, tagged with the process that made them.

A quest's private ``/tmp`` and the spool of an encrypted session's command output
live only as long as their run. A run killed with SIGKILL cannot remove them, so
each folder's name carries its process id, and the next run removes the folders
whose process is gone (:func:`sweep_orphans`): nothing a killed run wrote to the
temp folder (plaintext output of an encrypted session included) stays there.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

KINDS = ("quest", "shell")
_NAME = re.compile(rf"^hearth-(?:{'|'.join(KINDS)})-(\d+)-")


def make(kind: str, root: Path | None = None) -> Path:
    """A new private folder ``hearth-<kind>-<pid>-<random>`` in the temp folder."""
    if kind not in KINDS:
        raise ValueError(f"unknown scratch kind {kind!r}")
    return Path(tempfile.mkdtemp(prefix=f"hearth-{kind}-{os.getpid()}-", dir=root))


@contextlib.contextmanager
def scratch(kind: str, root: Path | None = None) -> Iterator[Path]:
    """A folder from :func:`make`, removed with everything in it when the block ends."""
    folder = make(kind, root)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def sweep_orphans(root: Path | None = None) -> list[Path]:
    """Remove this user's scratch folders whose process has exited; returns them."""
    base = Path(root or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(base))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        m = _NAME.match(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not entry.is_dir(follow_symlinks=False) or st.st_uid != uid or _alive(int(m.group(1))):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
