"""Capturing a real bash and zsh from rc files, then running commands through the snapshot."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from tests.shell.conftest import PLAIN_PATH, UserShell
from workhearth.shell import snapshot as snapshot_mod
from workhearth.shell.runner import run
from workhearth.shell.snapshot import capture

FOO = "a b 'c' $x\nsecond line"

# Valid in both bash and zsh; each test adds its shell's option line.
RC = r"""
echo "rc noise on stdout"
alias ll='ls -1'
alias say='echo said:'
_helper() { echo "helped:$1"; }
greet() { _helper "$@"; }
export PATH="$HOME/bin:$PATH"
export FOO="a b 'c' \$x
second line"
NOT_EXPORTED=1
VIRTUAL_ENV="$HOME/venv"; export VIRTUAL_ENV
_OLD_VIRTUAL_PATH="$PATH"
PATH="$VIRTUAL_ENV/bin:$PATH"; export PATH
deactivate() { PATH="$_OLD_VIRTUAL_PATH"; export PATH; unset VIRTUAL_ENV; }
export CONDA_PREFIX="$HOME/conda/envs/ml" CONDA_DEFAULT_ENV=ml CONDA_SHLVL=1
PATH="$CONDA_PREFIX/bin:$PATH"
__conda_hook() { echo "conda env $CONDA_DEFAULT_ENV"; }
conda() { __conda_hook "$@"; }
"""

# Each also hooks cd, as nvm/rvm (bash) and chpwd users (zsh) do: runs must stay quiet.
OPTION_RC = {
    "bash": 'shopt -s extglob\ncd() { echo cd-wrapper; builtin cd "$@"; }\n',
    "zsh": "setopt extendedglob\nchpwd() { echo chpwd-hook; }\n",
}
# A pattern that parses only with the option on; both must list a.txt alone.
OPTION_GLOB = {"bash": "ls -1 !(b).txt", "zsh": "print -l *.txt~b.txt"}


def _tool(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\necho {name} ran\n")
    script.chmod(0o755)


def _name(user: UserShell) -> str:
    return Path(user.shell).name


@pytest.fixture
def dotfiles(any_user: UserShell) -> UserShell:
    user = any_user
    user.rc(RC + OPTION_RC[_name(user)])
    _tool(user.home / "bin", "mytool")
    _tool(user.home / "venv" / "bin", "venvtool")
    _tool(user.home / "conda" / "envs" / "ml" / "bin", "condatool")
    for name in ("a.txt", "b.txt"):
        (user.workspace / name).write_text(name)
    return user


def _out(user: UserShell, snap, command: str) -> str:
    result = run(command, user.workspace, snap, 10, user.env)
    assert result.exit_code == 0, (command, result.stderr)
    return result.stdout


def test_snapshot_restores_aliases_functions_variables_and_options(dotfiles: UserShell) -> None:
    user = dotfiles
    snap = capture(user.paths, user.workspace, user.env)
    assert snap.warning is None
    assert snap.shell == _name(user)
    home = user.home
    expected_path = f"{home}/conda/envs/ml/bin:{home}/venv/bin:{home}/bin:{PLAIN_PATH}"

    assert _out(user, snap, "say hi") == "said: hi\n"
    assert _out(user, snap, "ll") == "a.txt\nb.txt\n"
    assert _out(user, snap, "greet x") == "helped:x\n"
    assert _out(user, snap, "_helper direct") == "helped:direct\n"
    assert _out(user, snap, 'printf "%s" "$FOO"') == FOO
    assert _out(user, snap, 'printf "%s" "$PATH"') == expected_path
    assert _out(user, snap, "mytool; venvtool; condatool") == (
        "mytool ran\nvenvtool ran\ncondatool ran\n"
    )
    assert _out(user, snap, 'echo "$VIRTUAL_ENV|$CONDA_PREFIX|$CONDA_DEFAULT_ENV"') == (
        f"{home}/venv|{home}/conda/envs/ml|ml\n"
    )
    assert _out(user, snap, "conda") == "conda env ml\n"
    # venv's deactivate needs the unexported _OLD_VIRTUAL_PATH, which is captured too.
    assert _out(user, snap, 'deactivate; printf "%s" "$PATH"') == f"{home}/bin:{PLAIN_PATH}"
    assert _out(user, snap, OPTION_GLOB[_name(user)]) == "a.txt\n"
    assert _out(user, snap, "echo ${NOT_EXPORTED-unset}") == "unset\n"
    assert _out(user, snap, "pwd") == f"{user.workspace}\n"


def test_exported_functions_and_snapshot_do_not_leak_rc_noise(bash_user: UserShell) -> None:
    bash_user.rc("_inner() { echo inner; }\nouter() { _inner; }\nexport -f outer _inner\n")
    snap = capture(bash_user.paths, bash_user.workspace, bash_user.env)
    text = snap.path.read_text()
    assert "rc noise" not in text
    # A child bash (a script, a Makefile recipe) sees the exported function.
    assert _out(bash_user, snap, "bash -c outer") == "inner\n"


def test_process_state_and_the_passphrase_are_not_frozen(any_user: UserShell) -> None:
    env = {**any_user.env, "HEARTH_PASSPHRASE": "sekrit-passphrase", "KEEP_ME": "yes"}
    snap = capture(any_user.paths, any_user.workspace, env)
    text = snap.path.read_text()
    assert "sekrit-passphrase" not in text
    for name in ("PWD", "OLDPWD", "SHLVL"):
        assert f"export {name}=" not in text
    assert "KEEP_ME=" in text
    out = _out(any_user, snap, 'echo "${HEARTH_PASSPHRASE-none} $KEEP_ME $SHLVL"')
    assert out in ("none yes 1\n", "none yes 2\n")


def test_snapshot_file_is_private_named_and_written_atomically(
    bash_user: UserShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[tuple[Path, int]] = []
    real_write = snapshot_mod.atomic_write

    def spy(path: Path, data: bytes, mode: int = 0o600) -> None:
        writes.append((path, mode))
        real_write(path, data, mode)

    monkeypatch.setattr(snapshot_mod, "atomic_write", spy)
    snap = capture(bash_user.paths, bash_user.workspace, bash_user.env)
    folder = bash_user.paths.project(bash_user.workspace) / "shell-snapshots"
    assert snap.path.parent == folder
    assert writes == [(snap.path, 0o600)]
    assert stat.S_IMODE(snap.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    name = snap.path.name
    assert name.startswith("snapshot-bash-") and name.endswith(".sh")
    _, _, stamp, rand = name.removesuffix(".sh").split("-")
    assert stamp.isdigit() and len(rand) == 6
    assert [p.name for p in folder.iterdir()] == [name]  # no probe or temp files left
    second = capture(bash_user.paths, bash_user.workspace, bash_user.env)
    assert second.path != snap.path


def _assert_fallback(user: UserShell, snap, *, words: str) -> None:
    assert snap.warning is not None
    assert snap.fallback
    assert words in snap.warning, snap.warning
    assert "clean environment" in snap.warning
    env = {**user.env, "FROM_PARENT": "1"}
    result = run(
        'echo "$PATH|${FOO-none}|${FROM_PARENT-none}|$HOME"', user.workspace, snap, 10, env
    )
    assert result.stdout == f"{PLAIN_PATH}|none|none|{user.home}\n"


def test_rc_that_hangs_falls_back_within_the_timeout(any_user: UserShell) -> None:
    marker = f"{time.time_ns() % 10_000_000}.5"
    any_user.rc(f"export FOO=bar\nsleep {marker}\n")
    started = time.monotonic()
    snap = capture(any_user.paths, any_user.workspace, any_user.env, timeout=1.5)
    assert time.monotonic() - started < 5
    _assert_fallback(any_user, snap, words="did not finish within 1.5 s")
    assert not _processes_running(f"sleep {marker}")


@pytest.mark.parametrize(
    ("rc", "words"),
    [
        ("export FOO=bar\nexit 1\n", "exit 1"),
        ("export FOO=bar\nif then fi (\n", "error"),
        ("export FOO=bar\ngreet() {\n", "error"),
    ],
    ids=["exit-1", "syntax-error", "unclosed-brace"],
)
def test_broken_rc_falls_back_with_a_warning(any_user: UserShell, rc: str, words: str) -> None:
    any_user.rc(rc)
    snap = capture(any_user.paths, any_user.workspace, any_user.env)
    _assert_fallback(any_user, snap, words=words)
    assert stat.S_IMODE(snap.path.stat().st_mode) == 0o600


def test_unsupported_shell_uses_bash_and_says_so(bash_user: UserShell) -> None:
    env = {**bash_user.env, "SHELL": "/usr/bin/fish"}
    bash_user.rc("alias hi='echo hi'\n")
    snap = capture(bash_user.paths, bash_user.workspace, env)
    assert snap.shell == "bash"
    assert snap.warning is not None and "fish" in snap.warning and not snap.fallback
    assert _out(bash_user, snap, "hi") == "hi\n"


def _processes_running(needle: str) -> bool:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = (
                Path(f"/proc/{pid}/cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode("utf-8", "replace")
            )
        except OSError:
            continue
        if needle in cmdline:
            return True
    return False
