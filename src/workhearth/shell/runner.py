"""Run one command through the user's captured shell (DESIGN §5 Shell).

Every command runs as ``<shell> -c 'source SNAPSHOT; cd CWD; eval CMD'`` in its own
process group, with stdin closed and a timeout that kills the whole group.
Output goes to spool files, never to memory in full: the result carries a
bounded excerpt (head and tail), and when the output was cut, the path of the
file that holds all of it.

The group never outlives hearth, even a SIGKILLed one (issue #18): the shell's first
step starts a guard in the group that reads a pipe whose only writer is hearth. When
the command ends, hearth writes a line and the guard leaves quietly; when hearth dies,
the kernel closes the pipe, the guard reads end-of-file and SIGKILLs the whole group at
once (children and grandchildren too, which ``PR_SET_PDEATHSIG`` on the leader would
miss). Given a :class:`~workhearth.procgroups.ProcessGroups`, the group is also recorded
while it runs, so a later run can end what a guard could not (:func:`end_orphans`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workhearth.fsutil import make_private_dir
from workhearth.procgroups import GroupRecord, ProcessGroups
from workhearth.shell.snapshot import Snapshot

if TYPE_CHECKING:
    from workhearth.shell.sandbox import Sandbox

DEFAULT_OUTPUT_LIMIT = 100_000
_KILL_GRACE = 0.5
# Why fd 3: the command itself gets stdin from /dev/null and never sees the pipe. Why
# `( … & )`: the guard is not the shell's own job, so a command's bare `wait` never waits
# for it. Why a plain `exec`: `builtin exec 3<&0` would undo its redirections at once; and
# the user's functions are not defined yet (the snapshot is sourced after this).
_GUARD = (
    "exec 3<&0 </dev/null\n"
    "( { \\builtin read -r _ <&3 || \\builtin kill -s KILL 0; } >/dev/null 2>&1 & )\n"
    "exec 3<&-"
)

# What a command starts with before the snapshot is sourced; the snapshot then
# restores the user's full environment (or, after a fallback, only PATH/HOME/LANG).
_BASE_KEYS = (
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TMPDIR",
    "TZ",
)


@dataclass(frozen=True)
class ShellResult:
    """What one command did. ``exit_code`` is negative when a signal ended it."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    duration: float
    stdout_path: Path | None = None
    stderr_path: Path | None = None

    @property
    def truncated(self) -> bool:
        """True when an excerpt was cut; the full text is then at the ``*_path`` files."""
        return self.stdout_path is not None or self.stderr_path is not None

    def as_dict(self) -> dict[str, object]:
        return {
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "duration": round(self.duration, 3),
            "stdout_path": str(self.stdout_path) if self.stdout_path else None,
            "stderr_path": str(self.stderr_path) if self.stderr_path else None,
        }


def base_env(env: Mapping[str, str]) -> dict[str, str]:
    """The few variables a command starts with; the snapshot supplies the rest."""
    return {k: env[k] for k in _BASE_KEYS if env.get(k)}


def command_script(
    command: str, cwd: str | Path, snapshot: Snapshot, *, tmpdir: str | None, guard: bool = False
) -> str:
    """The ``-c`` script: restore the shell, enter ``cwd``, then run ``command``.

    With ``guard``, it first starts the guard (see the module doc), which reads stdin.

    Why ``eval``: aliases and options such as extglob apply only to code parsed
    after they are set, and a ``-c`` line is parsed before any of it runs.
    """
    # Why `\builtin cd -q`: rc files wrap cd (nvm, rvm) or hook it (zsh chpwd),
    # and their output must not land in every command's stdout.
    cd = "\\builtin cd -q --" if snapshot.shell == "zsh" else "\\builtin cd --"
    lines = [_GUARD] if guard else []
    lines += [
        f"\\builtin source {shlex.quote(str(snapshot.path))} || exit 126",
        f"{cd} {shlex.quote(str(cwd))} || exit 1",
    ]
    if tmpdir is not None:
        lines.append(f"export TMPDIR={shlex.quote(tmpdir)}")
    lines.append(f"\\builtin eval {shlex.quote(command)}")
    return "\n".join(lines)


def run(
    command: str,
    cwd: str | Path,
    snapshot: Snapshot,
    timeout: float,
    env: Mapping[str, str],
    *,
    sandbox: Sandbox | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    output_dir: Path | None = None,
    groups: ProcessGroups | None = None,
) -> ShellResult:
    """Run ``command`` in ``cwd`` through ``snapshot``; never raises for a failing command.

    ``env`` gives the starting variables (see :func:`base_env`). With ``sandbox``,
    the command runs confined (see :mod:`workhearth.shell.sandbox`). Each of
    stdout and stderr keeps at most ``output_limit`` bytes in the result; longer
    output stays whole in a file under ``output_dir`` (default: the temp dir). ``groups``
    records the command's process group while it runs.
    """
    tmpdir = "/tmp" if sandbox is not None else None
    script = command_script(command, cwd, snapshot, tmpdir=tmpdir, guard=True)
    argv = [snapshot.executable, "-c", script]
    if sandbox is not None:
        argv = sandbox.argv(argv, readable=[snapshot.path, Path(cwd)])
    spool = output_dir if output_dir is not None else Path(tempfile.gettempdir())
    make_private_dir(spool)
    out = tempfile.NamedTemporaryFile(dir=spool, prefix="shell-", suffix=".out", delete=False)
    err = tempfile.NamedTemporaryFile(dir=spool, prefix="shell-", suffix=".err", delete=False)
    started = time.monotonic()
    timed_out = False
    guard_in, guard_out = os.pipe()
    try:
        with out, err:
            try:
                # Why: a new session makes the command a process-group leader, so a
                # timeout can kill it and every child it started in one call.
                proc = subprocess.Popen(
                    argv,
                    cwd="/",
                    env=base_env(env),
                    stdin=guard_in,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            finally:
                os.close(guard_in)
            record = groups.add(proc.pid) if groups is not None else None
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                code = _kill_group(proc)
            except BaseException:
                # Why: Ctrl-C or a stop of hearth must not leave the command running.
                _kill_group(proc)
                raise
            finally:
                _release(guard_out)
                guard_out = -1
                if groups is not None:
                    groups.forget(record)
        duration = time.monotonic() - started
        stdout, out_path = _excerpt(Path(out.name), output_limit)
        stderr, err_path = _excerpt(Path(err.name), output_limit)
    except BaseException:
        if guard_out >= 0:
            os.close(guard_out)
        for name in (out.name, err.name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
        raise
    if timed_out:
        sep = "\n" if stderr and not stderr.endswith("\n") else ""
        stderr += f"{sep}[workhearth: command timed out after {timeout:g} s and was killed]\n"
    return ShellResult(code, stdout, stderr, timed_out, duration, out_path, err_path)


def _release(guard: int) -> None:
    """Tell the guard the command has ended, so it leaves the group alone."""
    # Why suppress: after a timeout the guard was killed with its group; nobody reads.
    with contextlib.suppress(OSError):
        os.write(guard, b"\n")
    os.close(guard)


def end_orphans(records: Path) -> None:
    """End the command groups recorded in ``records`` whose hearth has died.

    A record is trusted only when its boot id and the leader's start time still match,
    so a reused PID is never signalled; the records are removed either way.
    """
    ProcessGroups(records).end_orphans()


def interrupt_commands(records: Path) -> int:
    """SIGTERM the command groups this process recorded in ``records`` (a user's stop from
    another thread); each ends as a command killed by a signal. How many were signalled."""
    me, count = os.getpid(), 0
    for path in sorted(records.glob("*.json")) if records.is_dir() else ():
        record = GroupRecord.load(path)
        if record is not None and record.owner_pid == me:
            record.signal(signal.SIGTERM)  # Why via the record: never a reused PID
            count += 1
    return count


def _kill_group(proc: subprocess.Popen[bytes]) -> int:
    """TERM the process group, then KILL what is left of it; the leader's exit code."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=_KILL_GRACE)
    # Why: the leader may be gone while children that ignored TERM live on.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def _excerpt(path: Path, limit: int) -> tuple[str, Path | None]:
    """The text of ``path`` if it fits in ``limit`` bytes (file removed), else head + tail."""
    size = path.stat().st_size
    if size <= limit:
        text = path.read_bytes().decode("utf-8", "replace")
        path.unlink()
        return text, None
    half = max(limit // 2, 1)
    with path.open("rb") as fh:
        head = fh.read(half)
        fh.seek(size - half)
        tail = fh.read(half)
    note = f"\n[… {size - 2 * half} bytes omitted; full output in {path} …]\n"
    return (
        head.decode("utf-8", "replace") + note + tail.decode("utf-8", "replace"),
        path,
    )
