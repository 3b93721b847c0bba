"""Where everything lives under ``HEARTH_HOME``, and the workspace folder encoding.

Workspace encoding (DESIGN §2): ``/home/ana/work/app`` → ``-home-ana-work-app``.
Unlike Claude Code's scheme it is reversible and collision-free:

* the path is taken in NFC form, so NFC and NFD spellings share one folder;
* ``/`` becomes ``-``; lowercase ASCII letters, digits, ``.``, ``_``, space and
  caseless-stable Unicode letters stay as they are;
* ``-`` becomes ``+`` (dashes are common in folder names and must stay readable);
* an uppercase letter becomes ``^`` + its lowercase form, so two names never
  differ only by case (safe on case-insensitive filesystems);
* every other character becomes ``%xx`` per UTF-8 byte;
* a name over :data:`MAX_NAME_BYTES` keeps a readable prefix plus ``~`` and a
  hash; the full path is then only in the folder's ``workspace.json``.

``~`` never appears in a name except before that hash, so hashed names cannot
collide with plain ones.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from workhearth.errors import UsageError

MAX_NAME_BYTES = 240
_HASH_CHARS = 20
_SAFE_ASCII = frozenset("abcdefghijklmnopqrstuvwxyz0123456789._ ")


def _literal(ch: str) -> bool:
    if ch in _SAFE_ASCII:
        return True
    if ord(ch) < 128:
        return False
    # Why: a non-ASCII character stays readable only when no filesystem's case
    # folding can map it onto a different character (ß → ss, İ → i̇ …).
    return ch.isprintable() and not ch.isspace() and ch.casefold() == ch and ch.lower() == ch


def _upper_escapable(ch: str) -> bool:
    low = ch.lower()
    return len(low) == 1 and low != ch and low.upper() == ch and _literal(low)


def _hex(ch: str) -> str:
    return "".join(f"%{b:02x}" for b in ch.encode("utf-8"))


def encode_workspace(path: str | Path) -> str:
    """Encode an absolute path as one folder name (≤ 240 bytes, see module doc)."""
    text = unicodedata.normalize("NFC", str(path))
    if not text:
        raise UsageError("workspace path is empty")
    out: list[str] = []
    for ch in text:
        if ch == "/":
            out.append("-")
        elif ch == "-":
            out.append("+")
        elif _literal(ch):
            out.append(ch)
        elif _upper_escapable(ch):
            out.append("^" + ch.lower())
        else:
            out.append(_hex(ch))
    name = "".join(out)
    if len(name.encode("utf-8")) <= MAX_NAME_BYTES:
        return name
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    budget = MAX_NAME_BYTES - _HASH_CHARS - 1
    prefix: list[str] = []
    used = 0
    for token in out:  # cut between tokens, never inside an escape
        size = len(token.encode("utf-8"))
        if used + size > budget:
            break
        prefix.append(token)
        used += size
    return "".join(prefix) + "~" + digest


def is_hashed_name(name: str) -> bool:
    """True when ``name`` is a shortened name whose path lives in workspace.json."""
    return "~" in name


def decode_workspace(name: str) -> str:
    """Invert :func:`encode_workspace` for names that are not hashed."""
    # Why: some filesystems hand names back in NFD; we always encoded NFC.
    name = unicodedata.normalize("NFC", name)
    if is_hashed_name(name):
        raise UsageError(f"workspace name {name!r} is shortened; read its workspace.json")
    out: list[str] = []
    raw = bytearray()
    i = 0
    n = len(name)
    while i < n:
        ch = name[i]
        if ch == "%":
            try:
                raw.append(int(name[i + 1 : i + 3], 16))
            except ValueError:
                raise UsageError(f"bad escape in workspace name {name!r}") from None
            i += 3
            continue
        if raw:
            out.append(raw.decode("utf-8", errors="strict"))
            raw.clear()
        if ch == "-":
            out.append("/")
        elif ch == "+":
            out.append("-")
        elif ch == "^" and i + 1 < n:
            out.append(name[i + 1].upper())
            i += 1
        else:
            out.append(ch)
        i += 1
    if raw:
        out.append(raw.decode("utf-8", errors="strict"))
    return "".join(out)


@dataclass(frozen=True)
class HearthPaths:
    """Every path under one ``HEARTH_HOME``; the only place that knows the layout."""

    home: Path

    @property
    def config_file(self) -> Path:
        return self.home / "config.toml"

    @property
    def projects(self) -> Path:
        return self.home / "projects"

    @property
    def user_awareness(self) -> Path:
        return self.home / "awareness" / "main"

    @property
    def trash(self) -> Path:
        return self.home / "trash"

    @property
    def audit_log(self) -> Path:
        return self.home / "audit.jsonl"

    @property
    def skills(self) -> Path:
        return self.home / "skills"

    @property
    def cache(self) -> Path:
        """Rebuildable things: deleting this folder loses nothing but time."""
        return self.home / "cache"

    @property
    def office_profile(self) -> Path:
        """The LibreOffice profile ``hearth check`` keeps between launches (a first launch
        builds it, about a second; later ones reuse it)."""
        return self.cache / "libreoffice-profile"

    @property
    def session_index(self) -> Path:
        """Cache mapping session id → workspace folder, rebuilt by scanning."""
        return self.home / "sessions-index.json"

    def project(self, workspace: str | Path) -> Path:
        return self.projects / encode_workspace(workspace)

    def project_awareness(self, workspace: str | Path) -> Path:
        return self.project(workspace) / "awareness"

    def project_wiki(self, workspace: str | Path) -> Path:
        """The workspace's Repowiki pages (DESIGN §2 ``wiki/``, issue 24)."""
        return self.project(workspace) / "wiki"

    def sessions_dir(self, workspace: str | Path) -> Path:
        return self.project(workspace) / "sessions"
