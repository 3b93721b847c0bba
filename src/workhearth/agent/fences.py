"""What the file tools refuse inside the authorized folders, per mode (issue 17, holes 5-6).

Authorized folders are where the file tools work, but some paths in them are not
the task's business:

* ``hidden`` (quest): what quest commands cannot see — the user's credential
  stores, ``[quest] hide`` — is refused to every tool too: not read, listed,
  searched, written or deleted. Walks (``grep``, ``glob``, ``list_dir``) skip it.
* ``frozen`` (quest): paths whose content runs code later, outside the sandbox
  (shell start-up files, ``.mcp.json``, agent folders, git hooks and config;
  see :mod:`workhearth.shell.protected`), may be read but neither changed nor created.
* ``credentials`` (ask, agent): a credential store's content would go to the model
  provider; reading it is refused in ask mode and asked about in agent mode (the
  ``read_file`` tool asks; other tools refuse). Walks skip it.

A fence is matched by the path the walk resolved (in-root links followed), under
both the spelling given and the real path, and by device and inode for the ones
that exist, so no link or second spelling reaches it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from workhearth.errors import HearthError
from workhearth.shell.protected import protected_paths, purpose
from workhearth.shell.sandbox import CREDENTIAL_STORES, expand_hidden

Kind = Literal["hidden", "frozen", "credentials"]
Access = Literal["meta", "read", "write", "delete"]
_CHANGES = ("write", "delete")


class FenceError(HearthError):
    """A path the mode keeps the tools away from (a :class:`PathDenied` in spirit)."""


class CredentialStore(FenceError):
    """A read of a credential store: refused in ask mode, asked about in agent mode."""

    def __init__(self, message: str, store: Path) -> None:
        super().__init__(message)
        self.store = store


@dataclass(frozen=True)
class Fence:
    path: Path  # absolute
    kind: Kind
    what: str  # how the message names it: "a credential store", "a [quest] hide path"

    def error(self, shown: str, mode: str) -> FenceError:
        if self.kind == "credentials":
            how = (
                "ask mode does not read it"
                if mode == "ask"
                else "agent mode reads it only with read_file, after the user says yes"
            )
            return CredentialStore(
                f"{shown} is in a credential store ({self.path}): its content would go to "
                f"the model provider, so {how}",
                self.path,
            )
        if self.kind == "hidden":
            return FenceError(
                f"{shown}: quest mode hides {self.path} ({self.what}) from every tool"
            )
        return FenceError(
            f"{shown}: quest mode may not change or create {self.path} ({self.what}): "
            "it would run code later, outside the sandbox"
        )


class Fences:
    """The fences of one mode, looked up by resolved path components or by inode."""

    def __init__(self, fences: Iterable[Fence] = (), mode: str = "agent") -> None:
        self.mode = mode
        self._by_parts: dict[tuple[str, ...], Fence] = {}
        self._by_id: dict[tuple[int, int], Fence] = {}
        for fence in fences:
            for spelled in (os.path.abspath(fence.path), os.path.realpath(fence.path)):
                self._by_parts.setdefault(Path(spelled).parts[1:], fence)
            with contextlib.suppress(OSError):
                st = os.stat(fence.path)
                self._by_id.setdefault((st.st_dev, st.st_ino), fence)

    def __bool__(self) -> bool:
        return bool(self._by_parts)

    def at(self, spellings: Sequence[tuple[str, ...]]) -> Fence | None:
        """The fence over any of ``spellings`` (a path as components), itself or above it."""
        for parts in spellings:
            for n in range(1, len(parts) + 1):
                fence = self._by_parts.get(parts[:n])
                if fence is not None:
                    return fence
        return None

    def exactly(self, spellings: Sequence[tuple[str, ...]]) -> Fence | None:
        """The fence that is exactly one of ``spellings`` (a walk checks each entry so)."""
        for parts in spellings:
            fence = self._by_parts.get(parts)
            if fence is not None:
                return fence
        return None

    def below(self, spellings: Sequence[tuple[str, ...]]) -> Fence | None:
        """A fence strictly inside one of ``spellings`` (deleting the folder would move it)."""
        for parts in spellings:
            for key, fence in self._by_parts.items():
                if len(key) > len(parts) and key[: len(parts)] == parts:
                    return fence
        return None

    def by_id(self, dev: int, ino: int) -> Fence | None:
        return self._by_id.get((dev, ino))

    def check(self, fence: Fence | None, shown: str, access: Access, credentials_ok: bool) -> None:
        """Raise when ``access`` to a path under ``fence`` is refused in this mode."""
        if fence is None:
            return
        refused = (
            fence.kind == "hidden"
            or (fence.kind == "frozen" and access in _CHANGES)
            or (fence.kind == "credentials" and access == "read" and not credentials_ok)
        )
        if refused:
            raise fence.error(shown, self.mode)

    def skipped(self, fence: Fence | None) -> bool:
        """True when a walk leaves this entry out (not listed, not entered)."""
        return fence is not None and fence.kind in ("hidden", "credentials")


def fences_for(
    mode: str,
    roots: Sequence[str | Path],
    env: Mapping[str, str],
    hide: Sequence[str] = (),
) -> Fences:
    """The fences of ``mode`` for ``roots``; ``~`` is the ``HOME`` of ``env`` (the user's)."""
    home = env.get("HOME")
    stores = expand_hidden(CREDENTIAL_STORES, home)
    if mode != "quest":
        return Fences((Fence(p, "credentials", "a credential store") for p in stores), mode)
    fences = [Fence(p, "hidden", "a credential store") for p in stores]
    fences += [Fence(p, "hidden", "a [quest] hide path") for p in expand_hidden(hide, home)]
    fences += [Fence(p, "frozen", purpose(p)) for p in protected_paths(roots, home)]
    return Fences(fences, mode)
