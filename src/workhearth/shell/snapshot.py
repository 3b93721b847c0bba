"""Capture the user's shell once per session into a file that restores it (DESIGN §5 Shell).

The user's ``$SHELL`` (bash or zsh) is started as an interactive shell, so it reads
its rc files, and a probe script then prints what a later ``<shell> -c`` needs to
look the same: exported variables, all functions (``_helpers`` too), shell
options, aliases, PATH and the venv/conda state that lives in those. The result
is written atomically, mode 0600, to
``projects/<workspace>/shell-snapshots/snapshot-<shell>-<ms>-<rand>.sh``.

The snapshot holds the user's own environment (tokens included, as their
terminal does); it never goes into logs or the audit. Only ``HEARTH_PASSPHRASE``
is left out, so a command cannot print the session key. A quest's snapshot also
leaves out every variable named like a credential (``capture(withhold=True)``).

When the rc files fail (exit non-zero, syntax error) or hang past the timeout,
the snapshot falls back to a clean environment (PATH, HOME, LANG) and
:attr:`Snapshot.warning` says why.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.paths import HearthPaths

SUPPORTED_SHELLS = ("bash", "zsh")
DEFAULT_TIMEOUT = 10.0
COMPLETE_MARKER = "# workhearth: snapshot complete"
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

# Variables that describe one shell process, not the user's setup; freezing them
# would make every command lie (PWD, SHLVL) or fail (read-only ones).
_NOT_FROZEN = (
    "PWD OLDPWD SHLVL _ RANDOM SRANDOM LINENO SECONDS EPOCHSECONDS EPOCHREALTIME HISTCMD "
    "BASHPID BASHOPTS SHELLOPTS BASH_ENV ENV PPID UID EUID GROUPS COLUMNS LINES "
    "PS1 PS2 PS3 PS4 PROMPT PROMPT_COMMAND RPROMPT RPS1 HISTFILE TTY "
    "HEARTH_PASSPHRASE"
).split()
_NOT_FROZEN_PATTERNS = ("BASH_*", "ZSH_*")
# Why (issue 17, hole 7): a quest command runs alone; the keys and tokens in the
# user's environment reach other accounts. Names matched case-insensitively, after
# the secrets detector's key rules (memory/secrets.py); ``[quest] env`` passes named ones.
SECRET_ENV_PATTERNS: tuple[str, ...] = (
    "*_KEY",
    "*_KEYS",
    "*APIKEY*",
    "*API_KEY*",
    "*ACCESS_KEY*",
    "*PRIVATE_KEY*",
    "*SECRET*",
    "*TOKEN*",
    "*PASSWORD*",
    "*PASSWD*",
    "*PASSPHRASE*",
    "*PASSCODE*",
    "*_PASS",
    "*_PWD",
    "*_PAT",
    "*CREDENTIAL*",
    "*_AUTH",
    "*COOKIE*",
    "*_DSN",
    "DATABASE_URL",
    "AWS_*",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
)

# Options that only make sense in a terminal, or would change how every command runs.
_BASH_SET_SKIP = (
    "monitor history emacs vi histexpand interactive-comments onecmd noexec errexit xtrace verbose"
).split()
_BASH_SHOPT_SKIP = ("login_shell", "restricted_shell")
_ZSH_OPT_SKIP = (
    "interactive login shinstdin stdin zle monitor privileged restricted singlecommand onecmd "
    "xtrace verbose errexit errreturn noexec rcs globalrcs banghist histexpand emacs vi dvorak"
).split()

# bash: "bash: FILE: line 3: syntax error …"; zsh: "FILE:3: parse error near …".
_SYNTAX_ERROR = re.compile(rb"line \d+: syntax error|:\d+: parse error")
_NOISE = re.compile(rb"no job control|cannot set terminal process group|inappropriate ioctl", re.I)


@dataclass(frozen=True)
class Snapshot:
    """A captured shell: source :attr:`path` in :attr:`executable` to get the user's setup."""

    path: Path
    shell: str
    executable: str
    warning: str | None = None
    fallback: bool = False  # the rc files could not be captured: a clean environment
    created_at: float = 0.0
    withheld: bool = False  # variables named like secrets were left out (quest)

    def as_dict(self) -> dict[str, object]:
        return {"path": str(self.path), "shell": self.shell, "warning": self.warning}


def snapshot_dir(paths: HearthPaths, workspace: str | Path) -> Path:
    return paths.project(workspace) / "shell-snapshots"


def resolve_shell(env: Mapping[str, str]) -> tuple[str, str, str | None]:
    """``(name, executable, warning)`` for the user's ``$SHELL``; bash when it is unsupported."""
    wanted = env.get("SHELL", "")
    name = Path(wanted).name
    if name in SUPPORTED_SHELLS and _executable(wanted):
        return name, wanted, None
    if name in SUPPORTED_SHELLS:  # a bare "zsh", or a path that moved
        found = shutil.which(name, path=env.get("PATH") or DEFAULT_PATH)
        if found:
            return name, found, None
    bash = shutil.which("bash", path=env.get("PATH") or DEFAULT_PATH) or "/bin/bash"
    if not wanted:
        return "bash", bash, None
    return "bash", bash, f"SHELL={wanted} is not bash or zsh; shell commands run in bash"


def secret_name(name: str, keep: Sequence[str] = ()) -> bool:
    """True when ``name`` looks like a credential's and is not in ``keep`` (any case)."""
    upper = name.upper()
    if upper in {k.upper() for k in keep}:
        return False
    return any(fnmatch.fnmatchcase(upper, p) for p in SECRET_ENV_PATTERNS)


def _nocase(pattern: str) -> str:
    """A shell ``case`` pattern matching ``pattern`` in any letter case ("*_key" -> "*_[kK]...")."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in pattern)


def _withhold_case(var: str, keep: Sequence[str], zsh: bool) -> str:
    """A ``case`` line that skips (``continue``) secret-looking names except ``keep``."""
    open_ = "(" if zsh else ""
    kept = f"{open_}{'|'.join(_nocase(k) for k in keep)}) ;; " if keep else ""
    secret = "|".join(_nocase(p) for p in SECRET_ENV_PATTERNS)
    return f"case ${var} in {kept}{open_}{secret}) continue;; esac"


def _executable(path: str) -> bool:
    return os.path.isabs(path) and os.access(path, os.X_OK)


def _bash_probe(out: Path, withhold: str = "") -> str:
    skip_vars = "|".join([*_NOT_FROZEN, *_NOT_FROZEN_PATTERNS])
    skip_set = "|".join(_BASH_SET_SKIP)
    skip_shopt = "|".join(_BASH_SHOPT_SKIP)
    # Why: `\builtin` everywhere, since the rc files may alias or wrap printf, set…
    return f"""
\\builtin unset HISTFILE; \\builtin set +o history 2>/dev/null; IFS=$' \\t\\n'
{{
\\builtin printf '%s\\n' 'unalias -a 2>/dev/null' '# variables' '{{'
for __hearth_n in $(\\builtin compgen -e); do
  case $__hearth_n in {skip_vars}) continue;; esac
  {withhold}
  \\builtin printf 'export %s=%q\\n' "$__hearth_n" "${{!__hearth_n}}"
done
for __hearth_n in ${{!_OLD_VIRTUAL_@}}; do
  \\builtin printf '%s=%q\\n' "$__hearth_n" "${{!__hearth_n}}"
done
\\builtin printf '%s\\n' '}} 2>/dev/null' '# functions'
\\builtin declare -f
\\builtin declare -F | while \\builtin read -r _ __hearth_f __hearth_n; do
  case $__hearth_f in *x*) \\builtin printf 'export -f %s\\n' "$__hearth_n";; esac
done
\\builtin printf '%s\\n' '# shell options' '{{'
\\builtin set -o | while \\builtin read -r __hearth_n __hearth_v; do
  case $__hearth_n in {skip_set}) continue;; esac
  case $__hearth_v in
    on) \\builtin printf 'set -o %s\\n' "$__hearth_n";;
    *) \\builtin printf 'set +o %s\\n' "$__hearth_n";;
  esac
done
\\builtin shopt -p | while \\builtin read -r _ __hearth_f __hearth_n; do
  case $__hearth_n in {skip_shopt}) continue;; esac
  \\builtin printf 'shopt %s %s\\n' "$__hearth_f" "$__hearth_n"
done
\\builtin printf '%s\\n' '}} 2>/dev/null' '# aliases'
\\builtin alias -p
\\builtin printf '%s\\n' 'shopt -s expand_aliases' {shlex.quote(COMPLETE_MARKER)}
}} > {shlex.quote(str(out))}
"""


def _zsh_probe(out: Path, withhold: str = "") -> str:
    skip_vars = "|".join([*_NOT_FROZEN, *_NOT_FROZEN_PATTERNS])
    skip_opts = "|".join(_ZSH_OPT_SKIP)
    return f"""
\\builtin unset HISTFILE
{{
\\builtin print -rl -- 'unalias -m "*" 2>/dev/null' '# variables' '{{'
for __hearth_n in ${{(ko)parameters}}; do
  [[ ${{parameters[$__hearth_n]}} == *export* ]] || continue
  [[ ${{parameters[$__hearth_n]}} == *readonly* ]] && continue
  case $__hearth_n in ({skip_vars}) continue;; esac
  {withhold}
  \\builtin print -rl -- "export $__hearth_n=${{(qq)${{(P)__hearth_n}}}}"
done
for __hearth_n in ${{(k)parameters[(I)_OLD_VIRTUAL_*]}}; do
  \\builtin print -rl -- "$__hearth_n=${{(qq)${{(P)__hearth_n}}}}"
done
\\builtin print -rl -- "fpath=(${{(qq)fpath[@]}})" '}} 2>/dev/null' '# functions'
\\builtin functions
\\builtin print -rl -- '# shell options' '{{'
for __hearth_n __hearth_v in ${{(kv)options}}; do
  case $__hearth_n in ({skip_opts}) continue;; esac
  if [[ $__hearth_v == on ]]; then \\builtin print -rl -- "setopt $__hearth_n"
  else \\builtin print -rl -- "unsetopt $__hearth_n"; fi
done
\\builtin print -rl -- '}} 2>/dev/null' '# aliases'
\\builtin alias -L
\\builtin alias -L -s
\\builtin print -rl -- {shlex.quote(COMPLETE_MARKER)}
}} > {shlex.quote(str(out))}
"""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _last_line(data: bytes, pattern: re.Pattern[bytes] | None = None) -> str:
    lines = [ln for ln in data.splitlines() if ln.strip() and not _NOISE.search(ln)]
    if pattern is not None:
        lines = [ln for ln in lines if pattern.search(ln)]
    return lines[-1].decode("utf-8", "replace").strip()[:300] if lines else ""


def clean_exports(env: Mapping[str, str], keep: Sequence[str] = ()) -> dict[str, str]:
    """The minimal environment a fallback snapshot restores: PATH, HOME, LANG (and ``keep``)."""
    out = {"PATH": env.get("PATH") or DEFAULT_PATH}
    kept = {k.upper() for k in keep}
    for key in ("HOME", "LANG", *(k for k in env if k.upper() in kept)):
        if env.get(key):
            out[key] = env[key]
    return out


def _fallback_script(
    name: str, env: Mapping[str, str], why: str, keep: Sequence[str] = ()
) -> bytes:
    lines = [
        f"# workhearth shell snapshot ({name}): clean environment, {why}",
        "unalias -a 2>/dev/null",
    ]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in clean_exports(env, keep).items()]
    lines.append(COMPLETE_MARKER)
    return ("\n".join(lines) + "\n").encode()


def _new_path(folder: Path, name: str) -> Path:
    stamp = int(time.time() * 1000)
    return folder / f"snapshot-{name}-{stamp}-{secrets.token_hex(3)}.sh"


def capture(
    paths: HearthPaths,
    workspace: str | Path,
    env: Mapping[str, str],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    withhold: bool = False,
    keep: Sequence[str] = (),
    project: str | Path | None = None,
) -> Snapshot:
    """Capture the user's shell from ``env`` (``$SHELL``, ``HOME``…) into a new snapshot file.

    With ``withhold`` (quest mode), exported variables named like credentials
    (:data:`SECRET_ENV_PATTERNS`, any case) are left out of the file, except those
    named in ``keep``. Never raises for a broken or slow rc file: the snapshot is
    then a clean environment and :attr:`Snapshot.warning` says so in one line.
    ``project``: the workspace whose project folder keeps the file, when the shell
    starts in a copy of it (a team specialist's scratch folder).
    """
    name, executable, warning = resolve_shell(env)
    folder = snapshot_dir(paths, project or workspace)
    make_private_dir(folder)
    target = _new_path(folder, name)
    fd, probe_out = tempfile.mkstemp(dir=folder, prefix=".probe-", suffix=".sh")
    os.close(fd)
    err_fd, err_path = tempfile.mkstemp(dir=folder, prefix=".probe-", suffix=".err")
    zsh = name == "zsh"
    skip = _withhold_case("__hearth_n", keep, zsh) if withhold else ""
    probe = _zsh_probe(Path(probe_out), skip) if zsh else _bash_probe(Path(probe_out), skip)
    cwd = Path(workspace) if Path(workspace).is_dir() else None
    try:
        failure = _run_probe(executable, probe, env, cwd, err_fd, timeout)
        data = Path(probe_out).read_bytes()
        err = Path(err_path).read_bytes()[-16_384:]
    finally:
        os.close(err_fd)
        for tmp in (probe_out, err_path):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
    if data.rstrip().endswith(COMPLETE_MARKER.encode()):
        # Why: the probe finished, so a non-zero exit or a slow exit trap after it
        # does not matter; a syntax error does, as the rc stopped half-way.
        failure = (
            f"have an error ({_last_line(err, _SYNTAX_ERROR)})"
            if _SYNTAX_ERROR.search(err)
            else None
        )
    elif failure is None or failure.startswith("failed"):
        detail = _last_line(err)
        failure = f"{failure or 'failed'}{': ' + detail if detail else ''}"
    if failure is not None:
        why = f"your {name} startup files {failure}"
        script = _fallback_script(name, env, why, keep if withhold else ())
        clean = f"{why}; shell commands run in a clean environment (PATH, HOME, LANG only)"
        warning = f"{warning}; {clean}" if warning else clean
    else:
        header = f"# workhearth shell snapshot ({name}, {executable}); source it to restore\n"
        script = header.encode() + data
    atomic_write(target, script, mode=0o600)
    return Snapshot(target, name, executable, warning, failure is not None, time.time(), withhold)


def _run_probe(
    executable: str,
    probe: str,
    env: Mapping[str, str],
    cwd: Path | None,
    err_fd: int,
    timeout: float,
) -> str | None:
    """Run the interactive shell with the probe; a failure description, or None."""
    try:
        # Why: its own session, so a hanging rc file and everything it started
        # can be killed as one process group.
        proc = subprocess.Popen(
            [executable, "-i", "-c", probe],
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err_fd,
            start_new_session=True,
        )
    except OSError as exc:
        return f"could not start ({executable}: {exc.strerror or exc})"
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return f"did not finish within {timeout:g} s"
    if code > 0:
        return f"failed (exit {code})"
    if code < 0:
        return f"were killed by signal {-code}"
    return None
