"""Quest-mode confinement with bubblewrap: writes outside the authorized folders fail."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests.shell.conftest import UserShell
from tests.shell.test_runner import _kill_leftovers, _marker
from tests.shell.test_snapshot import _processes_running
from workhearth.shell.runner import run
from workhearth.shell.sandbox import NOT_INSTALLED, Sandbox, sandbox_available, sandbox_status
from workhearth.shell.snapshot import capture

STATUS = sandbox_status()
needs_bwrap = pytest.mark.skipif(not STATUS.available, reason=STATUS.message)


@pytest.fixture
def confined(bash_user: UserShell, tmp_path: Path):
    bash_user.rc("alias hi='echo hi from rc'\n")
    snap = capture(bash_user.paths, bash_user.workspace, bash_user.env)
    sandbox = Sandbox.create([bash_user.workspace], tmp_path / "session-tmp", STATUS)
    assert sandbox is not None
    outside = tmp_path / "outside"
    outside.mkdir()

    def go(command: str, timeout: float = 10):
        return run(command, bash_user.workspace, snap, timeout, bash_user.env, sandbox=sandbox)

    return go, bash_user, outside, tmp_path / "session-tmp"


@needs_bwrap
def test_write_inside_the_authorized_folder_succeeds(confined) -> None:
    go, user, _, _ = confined
    result = go("echo inside > note.txt && hi && pwd")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"hi from rc\n{user.workspace}\n"
    assert (user.workspace / "note.txt").read_text() == "inside\n"


@pytest.fixture
def var_tmp_dir():
    """A host folder outside /tmp, where a refused write shows as a read-only filesystem."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    folder = Path(tempfile.mkdtemp(prefix="hearth-sandbox-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder)


@needs_bwrap
def test_write_outside_the_authorized_folder_is_refused(confined, var_tmp_dir: Path) -> None:
    go, user, outside, _ = confined
    target = var_tmp_dir / "nope.txt"
    result = go(f"echo outside > '{target}'")
    assert result.exit_code != 0
    assert "Read-only file system" in result.stderr
    assert not target.exists()
    # The host's /tmp (and HOME here, which lives in it) is hidden behind the private /tmp.
    for target in (outside / "nope.txt", user.home / "nope"):
        assert go(f"touch '{target}'").exit_code != 0
        assert not target.exists()


@needs_bwrap
def test_remounting_does_not_escape(confined, var_tmp_dir: Path) -> None:
    go, _, _, _ = confined
    target = var_tmp_dir / "escaped.txt"
    result = go(f"mount -o remount,bind,rw / 2>/dev/null; echo x > '{target}'")
    assert result.exit_code != 0 and not target.exists()


@needs_bwrap
def test_tmp_is_private_and_kept_for_the_session(confined) -> None:
    go, _, _, session_tmp = confined
    name = f"hearth-sandbox-{time.time_ns()}"
    assert go(f"echo one > /tmp/{name} && echo $TMPDIR").stdout == "/tmp\n"
    assert not Path("/tmp", name).exists()
    assert (session_tmp / name).read_text() == "one\n"
    assert go(f"cat /tmp/{name}").stdout == "one\n"


@needs_bwrap
def test_timeout_kills_the_confined_command(confined) -> None:
    go, _, _, _ = confined
    marker = _marker()
    try:
        result = go(f"sleep {marker}", timeout=1)
        assert result.timed_out
        deadline = time.monotonic() + 3
        while _processes_running(f"sleep {marker}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _processes_running(f"sleep {marker}")
    finally:
        _kill_leftovers(f"sleep {marker}")


def test_missing_bwrap_is_reported_plainly(tmp_path: Path) -> None:
    status = sandbox_status(search_path=str(tmp_path))
    assert not status.available
    assert (
        status.message
        == NOT_INSTALLED
        == ("shell commands are not confined: bubblewrap is not installed")
    )
    assert not sandbox_available(search_path=str(tmp_path))
    assert Sandbox.create([tmp_path], tmp_path / "t", status) is None


def test_a_bwrap_that_cannot_sandbox_counts_as_unavailable(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    status = sandbox_status(search_path=str(tmp_path))
    assert not status.available
    assert status.message.startswith("shell commands are not confined: bubblewrap cannot")
    assert "No permissions to create new namespace" in status.message
