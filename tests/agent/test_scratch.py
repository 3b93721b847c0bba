"""Scratch folders: tagged with their process, removed at the end, swept after a kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from workhearth.agent import scratch


def test_a_scratch_folder_is_private_and_gone_after_its_block(tmp_path: Path) -> None:
    with scratch.scratch("quest", tmp_path) as folder:
        assert folder.name.startswith(f"hearth-quest-{os.getpid()}-")
        assert folder.stat().st_mode & 0o777 == 0o700
        (folder / "sub").mkdir()
        (folder / "sub" / "file.txt").write_text("x")
    assert list(tmp_path.iterdir()) == []


def test_unknown_kind_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        scratch.make("cache", tmp_path)


def test_the_sweep_removes_what_a_killed_process_left_and_nothing_else(tmp_path: Path) -> None:
    # A real process makes a scratch folder and is killed before it can clean up.
    code = (
        "import sys, time; from pathlib import Path; from workhearth.agent import scratch;"
        f"f = scratch.make('shell', Path({str(tmp_path)!r})); (f / 'out.txt').write_text('secret');"
        "print(f, flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    orphan = Path(proc.stdout.readline().strip())
    assert (orphan / "out.txt").is_file()

    mine = scratch.make("quest", tmp_path)  # this process is alive
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    theirs = tmp_path / f"hearth-quest-{alive.pid}-abcd"  # another live run's folder
    theirs.mkdir()
    unrelated = tmp_path / "hearth-quest-notapid"
    unrelated.mkdir()
    try:
        assert scratch.sweep_orphans(tmp_path) == []  # the killer has not struck yet
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert scratch.sweep_orphans(tmp_path) == [orphan]
    finally:
        alive.kill()
        alive.wait()
    assert not orphan.exists()
    assert mine.is_dir() and theirs.is_dir() and unrelated.is_dir()
