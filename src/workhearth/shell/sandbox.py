"""Confine quest-mode shell commands with bubblewrap (DESIGN §5 Shell confinement).

Inside the sandbox the whole filesystem is read-only except the authorized
folders and a private temp dir mounted at ``/tmp``. Hidden paths (hearth's own
home, the user's credential stores, ``[quest] hide``) are covered: a folder by
an empty read-only tmpfs, a file by ``/dev/null``; what commands need from
hearth's home (the session's shell snapshot, the skills folder) is bound back
read-only on top. So is what a command always needs to run a skill's script —
hearth's own interpreter (:func:`interpreter_paths`) and the skill folders —
when it lies in a hidden path or in the host's ``/tmp`` (which the private one
covers). Each authorized folder's existing ``.hearth/`` is read-only, and
so are the other existing paths that run code later (``frozen``, see
:mod:`workhearth.shell.protected`).
The network stays unless ``network`` is off (``--unshare-net``); process and
IPC namespaces are private, so a command can neither see nor signal the user's
other processes; every capability is dropped, so even root inside cannot
remount ``/`` writable (it can without ``--cap-drop ALL``).

bubblewrap applies mounts in argument order, and a later mount covers an
earlier one. Hence the order in :meth:`Sandbox.argv`: writable binds, then the
read-only ``frozen`` binds, then the hiding mounts (so hiding wins even
inside an authorized folder), then the read-only re-binds into hidden folders,
then the read-only binds of ``exposed`` paths that are hidden or in the host's
``/tmp``, and last the read-only remount of each hiding tmpfs.

bubblewrap can be installed and still unable to work (no user namespaces, a
seccomp profile in a container): :func:`sandbox_status` tries it once and
reports that as "not confined" instead of failing every command.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from workhearth.errors import ConfigError
from workhearth.fsutil import make_private_dir

NOT_INSTALLED = "shell commands are not confined: bubblewrap is not installed"
CONFINED = "shell commands are confined: only the authorized folders and /tmp are writable"
# Why: a quest command can do anything the user can; these are where a user
# keeps the keys and tokens that reach other machines and accounts.
CREDENTIAL_STORES: tuple[str, ...] = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.password-store",
    "~/.local/share/keyrings",
)
PROJECT_CONFIG = ".hearth"
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


def interpreter_paths() -> tuple[Path, ...]:
    """What running hearth's own Python needs: the interpreter's folder, its prefix (the
    venv) and base prefix, and the folders its modules come from (``sys.path``: an
    editable checkout, the user's site-packages), so a skill's script finds what hearth has."""
    found = [
        os.path.dirname(sys.executable),
        os.path.dirname(_real(sys.executable)),
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        *sys.path,
    ]
    return tuple(dict.fromkeys(Path(p) for p in found if p and os.path.isabs(p)))


@dataclass(frozen=True)
class Sandbox:
    """How a confined command sees the machine.

    ``writable`` folders plus ``temp_dir`` as ``/tmp`` may be written, except the
    existing ``frozen`` paths in them (and each folder's ``.hearth/``), bound
    read-only. ``hidden`` paths are covered (see the module doc), ``exposed``
    paths inside them or in the host's ``/tmp`` are bound back read-only (hearth's
    interpreter always is, see :meth:`create`), and ``network`` False cuts the network. ``temp_dir``
    lives on the host (one per run, removed when the run ends), so what a
    command leaves in ``/tmp`` is still there for the next command of the same run.
    """

    writable: tuple[Path, ...]
    temp_dir: Path
    bwrap: str = "bwrap"
    hidden: tuple[Path, ...] = ()
    exposed: tuple[Path, ...] = ()
    network: bool = True
    frozen: tuple[Path, ...] = ()

    @classmethod
    def create(
        cls,
        writable: Sequence[str | Path],
        temp_dir: Path,
        status: SandboxStatus,
        *,
        hidden: Sequence[str | Path] = (),
        exposed: Sequence[str | Path] = (),
        network: bool = True,
        frozen: Sequence[str | Path] = (),
    ) -> Sandbox | None:
        """A sandbox when ``status`` says one works, else None (commands then run unconfined).

        Hearth's own interpreter is always ``exposed``: skills run their scripts with it.
        """
        if not status.available or status.bwrap is None:
            return None
        return cls(
            tuple(Path(p) for p in writable),
            temp_dir,
            status.bwrap,
            tuple(Path(p) for p in hidden),
            (*(Path(p) for p in exposed), *interpreter_paths()),
            network,
            tuple(Path(p) for p in frozen),
        )

    def exposing(self, *paths: str | Path) -> Sandbox:
        """This sandbox with ``paths`` (e.g. the session's shell snapshot) readable when hidden."""
        return dataclasses.replace(self, exposed=(*self.exposed, *(Path(p) for p in paths)))

    def argv(self, command: Sequence[str], *, readable: Sequence[Path] = ()) -> list[str]:
        """``command`` wrapped in bwrap. ``readable`` are paths to keep visible under /tmp."""
        make_private_dir(self.temp_dir)
        args = [self.bwrap, *_base_args(), "--bind", _real(self.temp_dir), _PRIVATE_TMP]
        # Why: the private /tmp hides the host's; put back, read-only, what the
        # command needs from there (its snapshot, its working folder).
        for wanted in readable:
            real = _real(wanted)
            if _under(real, _PRIVATE_TMP) and os.path.exists(real):
                args += ["--ro-bind", real, real]
        # A folder that is gone has nothing to write into.
        roots = [r for r in map(_real, self.writable) if os.path.isdir(r)]
        for root in roots:
            args += ["--bind", root, root]
        for path in self._frozen(roots):
            args += ["--ro-bind", path, path]
        hidden = self._hidden(roots)
        for path in hidden:
            # Why: a tmpfs can only cover a folder; a file is covered by /dev/null,
            # which reads as "Permission denied" inside (device files are nodev there).
            args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        for real in self._exposed(roots, hidden):
            args += ["--ro-bind", real, real]
        for path in hidden:
            if os.path.isdir(path):
                args += ["--remount-ro", path]
        if not self.network:
            args.append("--unshare-net")
        return [*args, *_namespace_args(), "--", *command]

    def _frozen(self, roots: Sequence[str]) -> list[str]:
        """The protected paths to bind read-only: existing, inside a writable root.

        Why only existing ones: bubblewrap makes a missing mount point on the host
        (an empty file or folder left in the user's folder); a missing protected
        path is watched instead (see :mod:`workhearth.shell.protected`).
        """
        wanted = [*self.frozen, *(Path(r) / PROJECT_CONFIG for r in roots)]
        out: list[str] = []
        for path in wanted:
            # Why: a link (~/.bashrc -> dotfiles/bashrc) is bound at its target.
            real = _real(path)
            if not os.path.exists(real) or real in out:
                continue
            if any(_under(real, r) for r in roots):
                out.append(real)
        return out

    def _exposed(self, roots: Sequence[str], hidden: Sequence[str]) -> list[str]:
        """The exposed paths to bind back read-only: existing, and hidden or in the host's /tmp.

        Why not all: one outside both is already readable as it is, and one in an
        authorized folder (not hidden) stays as writable as the rest of that folder.
        """
        out: list[str] = []
        for real in sorted({_real(p) for p in self.exposed}, key=len):
            if not os.path.exists(real) or any(_under(real, done) for done in out):
                continue
            # Why: a read-only bind over a folder holding an authorized or a hidden one
            # would make the first read-only and uncover the second.
            if any(inner != real and _under(inner, real) for inner in (*roots, *hidden)):
                continue
            in_tmp = _under(real, _PRIVATE_TMP) and not any(_under(real, r) for r in roots)
            if in_tmp or any(_under(real, h) for h in hidden):
                out.append(real)
        return out

    def _hidden(self, roots: Sequence[str]) -> list[str]:
        """The hidden paths to cover: existing, visible, none inside another."""
        out: list[str] = []
        for real in sorted({_real(p) for p in self.hidden}, key=len):
            if not os.path.lexists(real) or any(_under(real, h) for h in out):
                continue
            # Why: under /tmp only what an authorized folder brings back is visible;
            # covering the rest would just litter the private /tmp with mount points.
            if _under(real, _PRIVATE_TMP) and not any(
                _under(real, r) or _under(r, real) for r in roots
            ):
                continue
            out.append(real)
        return out


def expand_hidden(entries: Sequence[str], home: str | None) -> tuple[Path, ...]:
    """``entries`` as absolute paths, ``~`` meaning ``home`` (resolved).

    A ``~`` entry is left out when ``home`` is unknown; a relative entry is an
    error (``[quest] hide`` is checked when the config is read).
    """
    user_home = _real(home) if home and os.path.isabs(home) else None
    out: list[Path] = []
    for entry in entries:
        if entry == "~" or entry.startswith("~/"):
            if user_home is None:
                continue
            entry = user_home + entry[1:]
        if not os.path.isabs(entry):
            raise ConfigError(f"[quest] hide: {entry!r} is not an absolute path or ~/path")
        out.append(Path(_real(entry)))
    return tuple(dict.fromkeys(out))


def _real(path: str | Path) -> str:
    return os.path.realpath(path)


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
