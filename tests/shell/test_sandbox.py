"""Quest-mode confinement with bubblewrap: writes outside the authorized folders fail."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.shell.conftest import UserShell
from tests.shell.test_runner import _kill_leftovers, _marker
from tests.shell.test_snapshot import _processes_running
from workhearth.errors import ConfigError
from workhearth.paths import HearthPaths
from workhearth.shell.runner import run
from workhearth.shell.sandbox import (
    CREDENTIAL_STORES,
    NOT_INSTALLED,
    Sandbox,
    expand_hidden,
    interpreter_paths,
    sandbox_available,
    sandbox_status,
)
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


# ------------------------------------------------------------------ hiding


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): "dir" if p.is_dir() else p.read_text()
        for p in sorted(root.rglob("*"))
    }


@needs_bwrap
def test_hearth_home_inside_the_workspace_is_hidden_except_snapshot_and_skills(
    bash_user: UserShell, tmp_path: Path
) -> None:
    # HEARTH_HOME=$PWD/.hearth: the workspace bind must not expose hearth's own data.
    paths = HearthPaths(bash_user.workspace / ".hearth")
    bash_user.rc("alias hi='echo hi from rc'\n")
    snap = capture(paths, bash_user.workspace, bash_user.env)
    assert paths.home in snap.path.parents
    paths.config_file.write_text('[quest]\ndenied_commands = ["sudo"]\n')
    (paths.trash / "t1").mkdir(parents=True)
    (paths.trash / "t1" / "manifest.json").write_text("{}")
    paths.audit_log.write_text('{"tool": "shell"}\n')
    (paths.sessions_dir(bash_user.workspace) / "s1").mkdir(parents=True)
    (paths.sessions_dir(bash_user.workspace) / "s1" / "transcript.jsonl").write_text("{}\n")
    (paths.skills / "greet").mkdir(parents=True)
    (paths.skills / "greet" / "SKILL.md").write_text("say hi\n")
    (snap.path.parent / "snapshot-bash-other.sh").write_text("export TOKEN=another-session\n")
    before = _digest(paths.home)
    sandbox = Sandbox.create(
        [bash_user.workspace],
        tmp_path / "session-tmp",
        STATUS,
        hidden=[paths.home],
        exposed=[paths.skills],
    )
    assert sandbox is not None
    sandbox = sandbox.exposing(snap.path)

    def go(command: str):
        return run(command, bash_user.workspace, snap, 10, bash_user.env, sandbox=sandbox)

    sourced = go("hi && cat .hearth/skills/greet/SKILL.md && ls -A .hearth")
    assert sourced.exit_code == 0, sourced.stderr
    assert sourced.stdout == "hi from rc\nsay hi\nprojects\nskills\n"
    # Only this session's snapshot is there, not the others beside it on the host.
    assert go(f"ls -A '{snap.path.parent}'").stdout == f"{snap.path.name}\n"
    for command in (
        "cat .hearth/config.toml",
        "cat .hearth/audit.jsonl",
        "ls .hearth/trash",
        "cat .hearth/projects/*/sessions/s1/transcript.jsonl",
        "echo '[quest]' > .hearth/config.toml",
        "echo forged >> .hearth/audit.jsonl",
        "echo x > .hearth/skills/greet/SKILL.md",
        f"echo x > '{snap.path}'",
        "mkdir .hearth/trash",
        "rm -rf .hearth",
    ):
        result = go(command)
        assert result.exit_code != 0, (command, result.stdout)
    assert _digest(paths.home) == before
    assert go("echo still > fine.txt").exit_code == 0
    assert (bash_user.workspace / "fine.txt").read_text() == "still\n"


@needs_bwrap
def test_exposed_paths_in_the_host_tmp_are_bound_back_read_only(
    bash_user: UserShell, tmp_path: Path
) -> None:
    # Issue #18 item 8: hearth's home (its skills) or its interpreter may live in the
    # host's /tmp, which the private /tmp covers; what is exposed comes back, read-only.
    assert str(tmp_path).startswith("/tmp/"), "the test needs tmp_path under /tmp"
    skill = tmp_path / "skills" / "greet"
    (skill / "scripts").mkdir(parents=True)
    (skill / "scripts" / "greet.sh").write_text("echo greeted\n")
    (tmp_path / "other.txt").write_text("not exposed\n")
    snap = capture(bash_user.paths, bash_user.workspace, bash_user.env)
    # tmp_path itself holds the workspace: exposing it would make the workspace read-only.
    sandbox = Sandbox.create(
        [bash_user.workspace], tmp_path / "session-tmp", STATUS, exposed=[skill, tmp_path]
    )
    assert sandbox is not None
    assert set(interpreter_paths()) <= set(sandbox.exposed)

    def go(command: str):
        return run(command, bash_user.workspace, snap, 10, bash_user.env, sandbox=sandbox)

    ran = go(f"sh '{skill}/scripts/greet.sh'")
    assert (ran.exit_code, ran.stdout) == (0, "greeted\n"), ran.stderr
    assert go(f"touch '{skill}/x'").exit_code != 0
    assert go(f"cat '{tmp_path}/other.txt'").exit_code != 0
    assert go("echo w > written.txt").exit_code == 0
    assert not (skill / "x").exists()
    assert (bash_user.workspace / "written.txt").read_text() == "w\n"


def test_interpreter_paths_name_this_python() -> None:
    found = {str(p) for p in interpreter_paths()}
    assert {sys.prefix, sys.base_prefix, os.path.dirname(sys.executable)} <= found


@pytest.fixture
def fake_home(var_tmp_dir: Path) -> Path:
    """A user's home outside /tmp (which the private /tmp would cover anyway), with secrets."""
    home = var_tmp_dir / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("FAKE PRIVATE KEY\n")
    (home / ".netrc").write_text("machine example.org password hunter2\n")
    (home / ".docker").mkdir()
    (home / ".docker" / "config.json").write_text('{"auths": "token"}\n')
    (home / "secrets").mkdir()
    (home / "secrets" / "note").write_text("classified\n")
    (home / "notes.txt").write_text("plain\n")
    return home


@needs_bwrap
@pytest.mark.parametrize("home_is_workspace", [False, True])
def test_credential_stores_and_hide_entries_are_hidden(
    bash_user: UserShell, fake_home: Path, tmp_path: Path, home_is_workspace: bool
) -> None:
    env = {**bash_user.env, "HOME": str(fake_home)}
    workspace = fake_home if home_is_workspace else bash_user.workspace
    snap = capture(bash_user.paths, workspace, env)
    hidden = expand_hidden([*CREDENTIAL_STORES, "~/secrets"], str(fake_home))
    sandbox = Sandbox.create([workspace], tmp_path / "session-tmp", STATUS, hidden=hidden)

    def go(command: str):
        return run(command, workspace, snap, 10, env, sandbox=sandbox)

    (workspace / "key-link").symlink_to(fake_home / ".ssh" / "id_rsa")
    secrets = ("$HOME/.ssh/id_rsa", "~/.netrc", "~/.docker/config.json", "~/secrets/note")
    for secret in (*secrets, "key-link"):
        result = go(f"cat {secret}")
        assert result.exit_code != 0, (secret, result.stdout)
        assert result.stdout == ""
    assert go("ls -A ~/.ssh").stdout == ""
    for write in ("echo k > ~/.ssh/authorized_keys", "echo x >> ~/.netrc", "rm ~/.netrc"):
        assert go(write).exit_code != 0, write
    assert (fake_home / ".netrc").read_text() == "machine example.org password hunter2\n"
    assert not (fake_home / ".ssh" / "authorized_keys").exists()
    assert go("cat ~/notes.txt").stdout == "plain\n"  # the rest of home stays readable


def test_hide_entries_expand_against_the_given_home(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".ssh").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(home)
    assert expand_hidden(["~/.ssh", "/etc/x", "~"], str(link)) == (
        home / ".ssh",
        Path("/etc/x"),
        home,
    )
    assert expand_hidden(["~/.ssh", "/etc/x"], None) == (Path("/etc/x"),)
    with pytest.raises(ConfigError, match="not an absolute path"):
        expand_hidden(["relative/dir"], str(home))


@needs_bwrap
def test_project_config_folder_is_read_only(confined) -> None:
    go, user, _, _ = confined
    config = user.workspace / ".hearth"
    config.mkdir()
    (config / "settings.toml").write_text("mode = 'ask'\n")
    for command in (
        "echo \"mode = 'quest'\" > .hearth/settings.toml",
        "touch .hearth/new",
        "rm -rf .hearth",
        "mv .hearth gone",
    ):
        assert go(command).exit_code != 0, command
    assert sorted(p.name for p in config.iterdir()) == ["settings.toml"]
    assert (config / "settings.toml").read_text() == "mode = 'ask'\n"
    assert go("cat .hearth/settings.toml && touch ok").exit_code == 0


@pytest.fixture
def loopback_server():
    """A TCP server on the host's loopback that accepts connections (never answers)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


@needs_bwrap
@pytest.mark.parametrize("network", [True, False])
def test_network_false_cuts_the_network(
    bash_user: UserShell, tmp_path: Path, loopback_server: int, network: bool
) -> None:
    snap = capture(bash_user.paths, bash_user.workspace, bash_user.env)
    sandbox = Sandbox.create(
        [bash_user.workspace], tmp_path / "session-tmp", STATUS, network=network
    )
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{loopback_server} && echo connected"
    result = run(connect, bash_user.workspace, snap, 10, bash_user.env, sandbox=sandbox)
    assert (result.stdout == "connected\n") is network, result.stderr
    devices = run(
        "cat /proc/net/dev", bash_user.workspace, snap, 10, bash_user.env, sandbox=sandbox
    )
    names = {line.split(":")[0].strip() for line in devices.stdout.splitlines() if ":" in line}
    assert (names == {"lo"}) is not network, names
