"""What a command may do that a rewind cannot undo (issue 22, honest limits).

A rewind puts back files in the authorized folders. It cannot call back a request a
command sent over the network, a row it wrote through a database server, or a file it
wrote outside those folders. :func:`outside_reach` reads a command line the way a
careful reviewer would and names those reaches, so the audit line and the tool's
result say so at the time (not after a rewind that could not undo them).

It is a reading of the words, not a trace: it can miss what a script does inside, and
it names what *may* reach outside. In quest mode the sandbox keeps writes inside the
workspace, so only the network and database reaches are named there.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path

__all__ = ["outside_reach"]

NETWORK = frozenset(
    {
        "curl", "wget", "ssh", "scp", "sftp", "ftp", "telnet", "nc", "ncat", "socat",
        "http", "https", "aws", "gcloud", "az", "gh", "kubectl", "helm", "docker",
        "podman", "twine", "ping",
    }
)  # fmt: skip
DATABASE = frozenset({"psql", "mysql", "mariadb", "mongosh", "mongo", "redis-cli", "sqlcmd"})
# Subcommands of tools that are local otherwise.
NETWORK_SUB = {
    "git": {"push", "pull", "fetch", "clone", "ls-remote", "submodule"},
    "pip": {"install", "download", "upload"},
    "pip3": {"install", "download", "upload"},
    "uv": {"pip", "add", "sync", "publish"},
    "npm": {"install", "i", "publish", "ci", "add"},
    "pnpm": {"install", "i", "publish", "add"},
    "yarn": {"install", "add", "publish"},
    "cargo": {"install", "publish", "fetch"},
    "apt": {"install", "update"},
    "apt-get": {"install", "update"},
    "rsync": set(),  # network only with host:path, below
}
WRITERS = frozenset(
    {"cp", "mv", "rm", "rmdir", "tee", "touch", "mkdir", "ln", "install", "chmod", "chown",
     "truncate", "sed", "rsync", "dd", "unzip", "tar"}
)  # fmt: skip
_SPLIT = re.compile(r"\|\||&&|[;|&\n]")
_REDIRECT = re.compile(r"(?:^|\s)\d*>>?\s*(\S+)")
_HARMLESS = ("/dev/null", "/dev/stdout", "/dev/stderr")


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part, comments=True)
    except ValueError:
        return part.split()


def _inside(path: str, roots: Sequence[Path], cwd: Path) -> bool:
    full = Path(os.path.normpath(cwd / os.path.expanduser(path)))
    return any(full == r or r in full.parents for r in roots)


def _command(part: str) -> list[str]:
    """The words of one command, without ``sudo``/``env`` and leading ``NAME=value``."""
    words = _words(part)
    while words and (
        words[0] in ("sudo", "env", "nohup", "time", "exec", "command")
        or re.match(r"^\w+=", words[0])
    ):
        words = words[1:]
    return words


def _service_reach(name: str, words: list[str]) -> str | None:
    """A network or database server the command talks to, named."""
    if name in NETWORK:
        return f"network ({name})"
    if name in DATABASE:
        return f"database server ({name})"
    sub = next((w for w in words[1:3] if w in NETWORK_SUB.get(name, ())), None)
    if sub is not None:
        return f"network ({name} {sub})"
    if name == "rsync" and any(re.match(r"^[\w.-]+@?[\w.-]*:", w) for w in words[1:]):
        return "network (rsync)"
    return None


def _write_targets(part: str, name: str, words: list[str]) -> list[str]:
    """Where the command may write: redirects, and the paths a writing command names."""
    targets = [m.group(1) for m in _REDIRECT.finditer(part)]
    if name in WRITERS:
        targets += [w for w in words[1:] if w.startswith(("/", "~", ".."))]
    return [t.strip("'\"") for t in targets if not t.startswith(("&", *_HARMLESS))]


def outside_reach(
    command: str, roots: Sequence[Path], *, cwd: Path | None = None, sandboxed: bool = False
) -> list[str]:
    """Why ``command``'s effects may lie beyond a rewind: ``network (curl)``,
    ``database server (psql)``, ``outside the authorized folders (/etc/hosts)``."""
    cwd = cwd or (roots[0] if roots else Path("/"))
    found: list[str] = []
    for part in _SPLIT.split(command):
        words = _command(part)
        if not words:
            continue
        name = os.path.basename(words[0])
        reasons = [_service_reach(name, words)]
        if not sandboxed:
            reasons += [
                f"outside the authorized folders ({target})"
                for target in _write_targets(part, name, words)
                if not _inside(target, roots, cwd)
            ]
        found += [r for r in reasons if r is not None and r not in found]
    return found
