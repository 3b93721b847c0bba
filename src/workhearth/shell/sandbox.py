"""Confine quest-mode shell commands with bubblewrap (DESIGN §5 Shell confinement).

Inside the sandbox the whole filesystem is read-only except the authorized
folders and a private temp dir mounted at ``/tmp``. The network stays; process
and IPC namespaces are private, so a command can neither see nor signal the
user's other processes; every capability is dropped, so even root inside
cannot remount ``/`` writable (it can without ``--cap-drop ALL``).

bubblewrap can be installed and still unable to work (no user namespaces, a
seccomp profile in a container): :func:`sandbox_status` tries it once and
reports that as "not confined" instead of failing every command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from workhearth.fsutil import make_private_dir

NOT_INSTALLED = "shell commands are not confined: bubblewrap is not installed"
CONFINED = "shell commands are confined: only the authorized folders and /tmp are writable"
_PRIVATE_TMP = "/tmp"
_PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class SandboxStatus:
    """Whether commands can be confined, and the one line to tell the user."""

    available: bool
    message: str
    bwrap: str | None = None


def _namespace_args() -> list[str]:
    return [
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        # Why: with capabilities left, root in the sandbox can remount / writable.
        "--cap-drop",
        "ALL",
    ]


def _base_args() -> list[str]:
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


@cache
def _probe(bwrap: str) -> SandboxStatus:
    argv = [bwrap, *_base_args(), *_namespace_args(), "--", "/bin/sh", "-c", ":"]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        return SandboxStatus(False, _cannot(why), bwrap)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return SandboxStatus(
            False, _cannot(lines[-1] if lines else f"exit {done.returncode}"), bwrap
        )
    return SandboxStatus(True, CONFINED, bwrap)


def _cannot(why: str) -> str:
    return f"shell commands are not confined: bubblewrap cannot create a sandbox here ({why})"


def sandbox_status(search_path: str | None = None) -> SandboxStatus:
    """Find ``bwrap`` on ``search_path`` (a PATH string) and check, once, that it works."""
    if os.name != "posix":
        return SandboxStatus(False, NOT_INSTALLED)
    bwrap = shutil.which("bwrap", path=search_path)
    if bwrap is None:
        return SandboxStatus(False, NOT_INSTALLED)
    return _probe(os.path.realpath(bwrap))


def sandbox_available(search_path: str | None = None) -> bool:
    return sandbox_status(search_path).available


@dataclass(frozen=True)
class Sandbox:
    """The folders a confined command may write: ``writable`` plus ``temp_dir`` as ``/tmp``.

    ``temp_dir`` lives on the host (one per run, removed when the run ends), so what
    a command leaves in ``/tmp`` is still there for the next command of the same run.
    """

    writable: tuple[Path, ...]
    temp_dir: Path
    bwrap: str = "bwrap"

    @classmethod
    def create(
        cls, writable: Sequence[str | Path], temp_dir: Path, status: SandboxStatus
    ) -> Sandbox | None:
        """A sandbox when ``status`` says one works, else None (commands then run unconfined)."""
        if not status.available or status.bwrap is None:
            return None
        return cls(tuple(Path(p) for p in writable), temp_dir, status.bwrap)

    def argv(self, command: Sequence[str], *, readable: Sequence[Path] = ()) -> list[str]:
        """``command`` wrapped in bwrap. ``readable`` are paths to keep visible under /tmp."""
        make_private_dir(self.temp_dir)
        args = [self.bwrap, *_base_args(), "--bind", _real(self.temp_dir), _PRIVATE_TMP]
        # Why: the private /tmp hides the host's; put back, read-only, what the
        # command needs from there (its snapshot, its working folder).
        for path in readable:
            real = _real(path)
            if _under(real, _PRIVATE_TMP) and os.path.exists(real):
                args += ["--ro-bind", real, real]
        for path in self.writable:
            real = _real(path)
            if os.path.isdir(real):  # a folder that is gone has nothing to write into
                args += ["--bind", real, real]
        return [*args, *_namespace_args(), "--", *command]


def _real(path: str | Path) -> str:
    return os.path.realpath(path)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
