"""Folder trust (DESIGN §5 Trust): what a folder brings loads only once the user says so.

Authorization and trust are separate. An authorized folder (the current one always
is) may be read and written by the file tools. What a folder *brings* — its
``.mcp.json`` (programs to start), its skill folders (instructions for the model and
scripts), its agent roles — is somebody else's content until the user trusts the
folder, with ``hearth workspace trust DIR`` or a yes to the question a run asks.

``$HEARTH_HOME/trust.json`` records, per trusted folder (by real path), a hash of each
of those items as it was when trusted. An item loads only while its hash is still
the recorded one, so anything that changes afterwards — an edit, a ``git pull``, a
file a task wrote — is untrusted again until the user says yes again. HEARTH_HOME is
where no task writes (the file tools refuse it, quest commands cannot see it), so a
task can never grant itself trust.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from workhearth.errors import CorruptDataError, UsageError
from workhearth.fsutil import atomic_write, file_lock, make_private_dir
from workhearth.paths import HearthPaths

TRUST_FILE = "trust.json"
_VERSION = 1
MCP_JSON = ".mcp.json"
# What a folder brings, in the order the question lists it. Skill and agent folders
# are hashed as whole trees (a changed script changes the hash).
PROJECT_ITEMS: tuple[str, ...] = (
    MCP_JSON,
    ".hearth/skills",
    ".agents/skills",
    ".claude/skills",
    ".hearth/agents",
    ".claude/agents",
)
# Why: a tree this big is not a skill folder; hashing stops and the item counts as
# changed every time, so it is never trusted by accident of an unread tail.
_MAX_FILES = 20_000
_MAX_BYTES = 256 * 1024 * 1024
_CHUNK = 1 << 20


def _real(folder: str | Path) -> Path:
    return Path(os.path.realpath(os.path.abspath(os.path.expanduser(str(folder)))))


def _hash_file(path: Path, digest: hashlib._Hash, budget: list[int]) -> None:
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                raise _TooBig
            digest.update(chunk)


class _TooBig(Exception):
    pass


def _entries(root: Path) -> Iterator[tuple[str, os.DirEntry[str]]]:
    """Every entry under ``root`` (never through a link), in a stable order."""
    stack = [("", root)]
    while stack:
        rel, folder = stack.pop()
        try:
            found = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in found:
            name = f"{rel}/{entry.name}" if rel else entry.name
            yield name, entry
            if entry.is_dir(follow_symlinks=False):
                stack.append((name, Path(entry.path)))


def file_digest(data: bytes) -> str:
    """The hash :func:`item_hash` gives a file holding ``data`` (to check bytes once read)."""
    return hashlib.sha256(b"file\0" + data).hexdigest()


def item_hash(path: Path) -> str | None:
    """A hash of what ``path`` holds (a file, or a folder's whole tree); None when absent.

    A link is hashed by its text and, when it leads to a file, that file's bytes (what
    a loader following it would read).
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    digest = hashlib.sha256()
    budget = [_MAX_BYTES]
    try:
        if not stat.S_ISDIR(st.st_mode):
            digest.update(b"file\0")
            _hash_file(path, digest, budget)
            return digest.hexdigest()
        count = 0
        for rel, entry in _entries(path):
            count += 1
            if count > _MAX_FILES:
                raise _TooBig
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0")
            if entry.is_symlink():
                digest.update(
                    b"link\0" + os.readlink(entry.path).encode("utf-8", "surrogateescape")
                )
                if os.path.isfile(entry.path):
                    _hash_file(Path(entry.path), digest, budget)
            elif entry.is_dir(follow_symlinks=False):
                digest.update(b"dir\0")
            elif entry.is_file(follow_symlinks=False):
                mode = entry.stat(follow_symlinks=False).st_mode
                digest.update(f"file {mode & 0o111:o}\0".encode())
                _hash_file(Path(entry.path), digest, budget)
            else:
                digest.update(b"other\0")
    except _TooBig:
        return f"too-big-{time.monotonic_ns()}"
    except OSError as exc:
        # Why: an unreadable item cannot be vouched for; a fresh value means "changed".
        return f"unreadable-{exc.errno}-{time.monotonic_ns()}"
    return digest.hexdigest()


@dataclass(frozen=True)
class FolderTrust:
    """One folder's items now, against what the user trusted (item → hash)."""

    folder: Path
    present: Mapping[str, str] = field(default_factory=dict)
    trusted: Mapping[str, str] = field(default_factory=dict)
    trusted_at: float | None = None

    def allows(self, item: str) -> bool:
        """True when ``item`` is present and exactly what the user trusted."""
        current = self.present.get(item)
        return current is not None and self.trusted.get(item) == current

    @property
    def trusted_items(self) -> frozenset[str]:
        """The items that load: present and exactly as the user trusted them."""
        return frozenset(item for item in self.present if self.allows(item))

    @property
    def pending(self) -> list[str]:
        """Items present but not (or no longer) trusted, in PROJECT_ITEMS order."""
        return [item for item in PROJECT_ITEMS if item in self.present and not self.allows(item)]

    @property
    def changed(self) -> list[str]:
        """Pending items the user had trusted before they changed."""
        return [item for item in self.pending if item in self.trusted]

    def as_dict(self) -> dict[str, object]:
        return {
            "folder": str(self.folder),
            "trusted": self.trusted_at is not None,
            "trusted_at": self.trusted_at,
            "items": [
                {
                    "item": item,
                    "status": "trusted"
                    if self.allows(item)
                    else "changed"
                    if item in self.trusted
                    else "untrusted",
                }
                for item in PROJECT_ITEMS
                if item in self.present
            ],
        }


def survey(folder: str | Path) -> dict[str, str]:
    """The items ``folder`` brings now: item → hash (absent items left out)."""
    real = _real(folder)
    found = {}
    for item in PROJECT_ITEMS:
        digest = item_hash(real / item)
        if digest is not None:
            found[item] = digest
    return found


class TrustStore:
    """``$HEARTH_HOME/trust.json``: the folders the user trusted and the hashes they saw."""

    def __init__(self, paths: HearthPaths) -> None:
        self.paths = paths
        self.file = paths.home / TRUST_FILE

    def _read(self) -> dict[str, dict[str, object]]:
        try:
            raw = orjson.loads(self.file.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as exc:
            raise CorruptDataError(
                f"{self.file} is not readable JSON ({exc}); fix or remove it"
            ) from None
        if not isinstance(raw, dict) or raw.get("version") != _VERSION:
            raise CorruptDataError(f"{self.file}: unknown format; fix or remove it")
        folders = raw.get("folders")
        if not isinstance(folders, dict):
            raise CorruptDataError(f'{self.file}: "folders" must be an object')
        return {k: v for k, v in folders.items() if isinstance(v, dict)}

    def _write(self, folders: Mapping[str, object]) -> None:
        data = {"version": _VERSION, "folders": dict(sorted(folders.items()))}
        atomic_write(self.file, orjson.dumps(data, option=orjson.OPT_INDENT_2))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        make_private_dir(self.paths.home)
        with file_lock(self.paths.home / f".{TRUST_FILE}.lock"):
            yield

    def check(self, folder: str | Path) -> FolderTrust:
        """What ``folder`` brings now and which of it the user trusted."""
        real = _real(folder)
        record = self._read().get(str(real), {})
        items = record.get("items", {})
        trusted = {str(k): str(v) for k, v in items.items()} if isinstance(items, dict) else {}
        at = record.get("trusted_at")
        return FolderTrust(
            real,
            survey(real),
            trusted,
            float(at) if isinstance(at, int | float) else None,
        )

    def trust(self, folder: str | Path, seen: Mapping[str, str] | None = None) -> FolderTrust:
        """Trust ``folder``: the items it brings at the hashes in ``seen`` (what the user
        was shown), or as they are now. An item changed since it was shown stays untrusted."""
        real = _real(folder)
        if not real.is_dir():
            raise UsageError(f"{real} is not an existing folder")
        if _inside(real, _real(self.paths.home)):
            raise UsageError(f"{real} is inside workhearth's own data folder; pick another")
        present = dict(seen) if seen is not None else survey(real)
        at = time.time()
        with self._locked():
            folders = self._read()
            folders[str(real)] = {"trusted_at": at, "items": present}
            self._write(folders)
        return FolderTrust(real, survey(real), present, at)

    def untrust(self, folder: str | Path) -> bool:
        """Forget ``folder``'s trust; False when it was not trusted."""
        real = _real(folder)
        with self._locked():
            folders = self._read()
            if folders.pop(str(real), None) is None:
                return False
            self._write(folders)
        return True

    def folders(self) -> list[FolderTrust]:
        """Every trusted folder, checked against what it holds now."""
        return [self.check(path) for path in sorted(self._read())]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


__all__ = [
    "MCP_JSON",
    "PROJECT_ITEMS",
    "TRUST_FILE",
    "FolderTrust",
    "TrustStore",
    "file_digest",
    "item_hash",
    "survey",
]
