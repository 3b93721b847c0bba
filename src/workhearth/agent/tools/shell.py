"""The ``shell`` tool: one command through the user's captured shell (DESIGN §5 Shell).

The command runs as ``<shell> -c 'source SNAPSHOT; cd CWD; CMD'`` with a
timeout (see :mod:`workhearth.shell.runner`); ``cwd`` must be a folder inside the
authorized folders. In quest mode it runs under the sandbox when the session
has one (:func:`quest_sandbox`: hearth's home and the user's credential stores
hidden, the session's snapshot bound back read-only, the paths that run code
later read-only, and anything a command creates there moved to the trash after
it). A quest's snapshot leaves out variables named like secrets. Unencrypted sessions keep an output over 1 MB whole in the session's
``tool-outputs``; an encrypted session keeps no plaintext there, so such an
output is cut in the middle instead.

A command that exits non-zero or is killed by a signal is a failed call (DESIGN §6):
the result is an error whose first line gives the exit code and the first line of
stderr, so the model, the terminal, the page and the audit all say the same. While a
command runs, its process group is recorded in the session's ``running/`` folder
(see :func:`workhearth.shell.runner.end_orphans`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, Field

from workhearth.agent import scratch
from workhearth.agent.approval import Policy
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools.context import ToolContext, ToolError, ToolResult, command_records
from workhearth.agent.tools.registry import tool
from workhearth.fsutil import make_private_dir
from workhearth.paths import HearthPaths
from workhearth.procgroups import ProcessGroups
from workhearth.shell.protected import Watch, protected_paths
from workhearth.shell.runner import ShellResult, run
from workhearth.shell.sandbox import CREDENTIAL_STORES, Sandbox, expand_hidden, sandbox_status
from workhearth.shell.snapshot import Snapshot, capture

SPOOL_LIMIT = 1_000_000  # bytes of each stream kept in memory before spooling to a file
MAX_TIMEOUT = 3_600


def quest_hidden(paths: HearthPaths, policy: Policy, env: Mapping[str, str]) -> tuple[Path, ...]:
    """What quest commands do not see: hearth's home, the credential stores, ``[quest] hide``.

    ``~`` is the ``HOME`` of ``env`` (the user's, not hearth's process's).
    """
    home = env.get("HOME")
    return (
        Path(os.path.realpath(paths.home)),
        *expand_hidden([*CREDENTIAL_STORES, *policy.hide], home),
    )


def quest_protected(fs: SafeFS, env: Mapping[str, str]) -> tuple[Path, ...]:
    """What quest commands may neither change nor create (see :mod:`workhearth.shell.protected`)."""
    return protected_paths([root.path for root in fs.roots], env.get("HOME"))


def quest_sandbox(
    fs: SafeFS, temp_dir: Path, env: Mapping[str, str], policy: Policy, paths: HearthPaths
) -> Sandbox | None:
    """A sandbox writable only in ``fs``'s roots and ``temp_dir``, hiding :func:`quest_hidden`
    but for the skills folder, with :func:`quest_protected` read-only; None when none works."""
    roots: Sequence[Path] = [root.path for root in fs.roots]
    return Sandbox.create(
        roots,
        temp_dir,
        sandbox_status(env.get("PATH")),
        hidden=quest_hidden(paths, policy, env),
        exposed=[paths.skills],
        network=policy.network,
        frozen=quest_protected(fs, env),
    )


def _bounded(ctx: ToolContext, timeout: float) -> float:
    """The command's timeout, never past the quest's time limit."""
    timeout = min(timeout, MAX_TIMEOUT)
    if ctx.deadline is not None:
        timeout = min(timeout, max(1.0, ctx.deadline - time.monotonic()))
    return timeout


def _snapshot(ctx: ToolContext) -> Snapshot:
    assert ctx.shared is not None
    quest = ctx.mode == "quest"
    with ctx.shared.snapshot_lock:
        snap = ctx.shared.snapshot
        # Why: a quest sources a snapshot without the user's secrets; one taken for
        # another mode (an interactive session switched to quest) is taken again.
        if snap is None or snap.withheld != quest:
            workspace = ctx.session.workspace or str(ctx.workspace)
            snap = capture(
                ctx.session.config.paths, workspace, ctx.env, withhold=quest, keep=ctx.policy.env
            )
            ctx.shared.snapshot = snap
        return snap


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _first_stderr_line(res: ShellResult) -> str:
    """The first line the command wrote to stderr (hearth's own notes left out)."""
    for line in res.stderr.splitlines():
        if line.strip() and not line.startswith("[workhearth:"):
            return line.strip()
    return ""


def _headline(res: ShellResult) -> str:
    """``exit code N`` and, for a failure, how it ended and stderr's first line."""
    head = f"exit code {res.exit_code}"
    if res.timed_out:
        head += " (timed out, killed)"
    elif res.exit_code < 0:
        head += f" (killed by {_signal_name(-res.exit_code)})"
    first = _first_stderr_line(res) if res.exit_code != 0 else ""
    return f"{head}: {first}" if first else head


def _format(res: ShellResult) -> str:
    parts = [_headline(res)]
    if res.stdout:
        parts.append("--- stdout ---\n" + res.stdout.rstrip("\n"))
    if res.stderr:
        parts.append("--- stderr ---\n" + res.stderr.rstrip("\n"))
    if not res.stdout and not res.stderr:
        parts.append("(no output)")
    return "\n".join(parts)


def _preview(ctx: ToolContext, args: BaseModel) -> str:
    where = ctx.fs.display(args.cwd)  # type: ignore[attr-defined]
    confined = " (sandboxed)" if ctx.mode == "quest" and ctx.sandbox else ""
    return f"run in {where}{confined}:\n{args.command}"  # type: ignore[attr-defined]


@tool(read_only=False, preview=_preview, command_arg="command")
def shell(
    ctx: ToolContext,
    command: Annotated[str, Field(description="Shell command line to run", min_length=1)],
    timeout: Annotated[
        int, Field(ge=1, le=MAX_TIMEOUT, description="Seconds before the command is killed")
    ] = 120,
    cwd: Annotated[
        str, Field(description="Working folder, inside an authorized folder", min_length=1)
    ] = ".",
) -> ToolResult:
    """Run a command in the user's own shell (their PATH, aliases, functions, venv), with
    stdin closed and a timeout. Returns the exit code, stdout and stderr. Use it for
    builds, tests, git and tools; use the file tools to read and change files."""
    folder = ctx.fs.locate(cwd)
    if ctx.fs.stat(cwd).kind != "dir":
        raise ToolError(f"cwd {ctx.show(cwd)} is not a folder")
    snapshot = _snapshot(ctx)
    sandbox = None
    if ctx.mode == "quest" and ctx.sandbox is not None:
        # Why: the snapshot lives in hearth's hidden home; the command must source it,
        # and may run the scripts of the skills activate_skill points at (read-only).
        skills = ctx.skills.folders() if ctx.skills is not None else []
        sandbox = ctx.sandbox.exposing(snapshot.path, *skills)
    encrypted = ctx.session.encrypted
    if encrypted:
        spool = scratch.make("shell")
    else:
        spool = ctx.session.folder / "tool-outputs"
        make_private_dir(spool)
    # Why: a missing protected path cannot be bound read-only; what a quest command
    # creates there is taken away after it (see workhearth.shell.protected).
    watch = Watch(quest_protected(ctx.fs, ctx.env)) if ctx.mode == "quest" else None
    try:
        res = run(
            command,
            folder,
            snapshot,
            _bounded(ctx, float(timeout)),
            ctx.env,
            sandbox=sandbox,
            output_limit=SPOOL_LIMIT,
            output_dir=spool,
            groups=ProcessGroups(command_records(ctx.session)),
        )
    finally:
        if encrypted:
            shutil.rmtree(spool, ignore_errors=True)
        swept = watch.sweep(ctx.fs.trash, session=ctx.session.id) if watch else []
    text = _format(res)
    if swept:
        text += "\n" + "\n".join(f"[workhearth: {line}]" for line in swept)
    if encrypted and res.truncated:
        text += "\n[the middle of a very long output was dropped; this session is encrypted]"
    for kept in (res.stdout_path, res.stderr_path):
        if kept is not None and not encrypted:
            with contextlib.suppress(OSError):
                os.chmod(kept, 0o600)
    # Why: a non-zero exit or a signal is a failed call (DESIGN §6), and a command
    # whose plant was taken away did not do what it was asked to.
    failed = res.exit_code != 0 or res.timed_out or bool(swept)
    return ToolResult(text, is_error=failed)
