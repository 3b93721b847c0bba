"""The session's file history: every overwrite or edit keeps the previous version (DESIGN §5).

The bytes a tool replaced go to the workspace's content store, the one checkpoints use
(``checkpoints-store/``, agent/checkpoints.py: by sha256, written once, zstd; sealed
under keyed names when the session is encrypted), so a version the rewind store already
holds costs nothing again. ``sessions/<id>/file-history/manifest.jsonl`` has one line
per version: ``n``, the original path, time, tool call id, size, the content's ``sha``
and the sha256 of the content that replaced it; in an encrypted session each line is
sealed, with only ``n`` and ``time`` in the clear (for retention). Versions kept before
the store was shared are files ``<n>-<name>`` (``<n>.bin`` sealed) beside the manifest
and are read as they are.

The content is durable before its manifest line, and both before the overwrite they
protect; numbering comes from the manifest and the folder, so a crash between the two
never reuses a number.

Restoring is like the trash's: it refuses to replace a file that changed since
the session last wrote it (someone else's newer work) unless ``overwrite`` is
given, and the version it replaces goes into the history first, so a restore
can itself be undone.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson

from workhearth.agent.checkpoints import STORE, ContentStore
from workhearth.agent.safefs import SafeFS
from workhearth.agent.workspace import Workspaces
from workhearth.errors import CorruptDataError, NotFoundError, UsageError
from workhearth.fsutil import append_line, make_private_dir
from workhearth.sessions.session import Session

FOLDER = "file-history"
MANIFEST = "manifest.jsonl"
_NUMBERED = re.compile(r"^(\d+)[-.]")


@dataclass(frozen=True)
class HistoryItem:
    n: int
    original: str
    time: float
    call_id: str | None
    size: int
    file: str  # "" when the content is in the store (``sha``)
    replaced_by: str | None = None  # sha256 of the content written over this version
    sha: str | None = None  # the content's sha256 in the workspace's content store

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Unchanged(Exception):
    """The file already holds the version being restored."""


class FileHistory:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.folder = session.folder / FOLDER
        self.manifest = self.folder / MANIFEST

    def _store(self) -> ContentStore:
        return ContentStore(self.session.folder.parent.parent / STORE, self.session.cipher)

    def _next_number(self) -> int:
        if not self.folder.is_dir():
            return 1
        numbers = [int(m.group(1)) for p in os.listdir(self.folder) if (m := _NUMBERED.match(p))]
        try:
            raw = self.manifest.read_bytes()
        except FileNotFoundError:
            raw = b""
        for text in raw.splitlines():
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                numbers.append(int(orjson.loads(text).get("n")))
        return max(numbers, default=0) + 1

    def save(
        self,
        original: str,
        previous: bytes,
        *,
        call_id: str | None = None,
        replaced_by: bytes | None = None,
    ) -> HistoryItem:
        """Keep ``previous`` (the bytes about to be replaced at ``original``) durably."""
        make_private_dir(self.folder)
        cipher = self.session.cipher
        n = self._next_number()
        store = self._store()
        digest = store.put(previous)
        store.flush()  # Why: the bytes are durable before the line that names them
        item = HistoryItem(
            n=n,
            original=original,
            time=time.time(),
            call_id=call_id,
            size=len(previous),
            file="",
            replaced_by=sha256(replaced_by) if replaced_by is not None else None,
            sha=digest,
        )
        line: dict[str, Any] = item.as_dict()
        if cipher is not None:
            sealed = cipher.seal_blob(f"file-history-manifest:{n}", orjson.dumps(line))
            line = {"n": n, "time": item.time, "sealed": base64.b64encode(sealed).decode("ascii")}
        append_line(self.manifest, orjson.dumps(line) + b"\n")
        return item

    def list(self) -> list[HistoryItem]:
        """Every kept version, oldest first (damaged manifest lines are skipped)."""
        try:
            raw = self.manifest.read_bytes()
        except FileNotFoundError:
            return []
        cipher = self.session.cipher
        items: list[HistoryItem] = []
        for text in raw.splitlines():
            try:
                line = orjson.loads(text)
                if "sealed" in line:
                    if cipher is None:
                        continue
                    label = f"file-history-manifest:{int(line['n'])}"
                    line = orjson.loads(cipher.open_blob(label, base64.b64decode(line["sealed"])))
                items.append(HistoryItem(**line))
            except (ValueError, TypeError, KeyError, CorruptDataError):
                continue
        return items

    def get(self, n: int) -> HistoryItem:
        for item in self.list():
            if item.n == n:
                return item
        raise NotFoundError(f"no version {n} in the file history of session {self.session.id}")

    def read(self, n: int) -> bytes:
        """The bytes of version ``n`` (NotFoundError once retention removed them)."""
        item = self.get(n)
        if item.sha is not None:
            return self._store().get(item.sha)
        data = (self.folder / item.file).read_bytes()
        cipher = self.session.cipher
        if cipher is not None:
            data = cipher.open_blob(f"file-history:{n}", data)
        return data

    def _session_fs(self) -> SafeFS:
        paths = self.session.config.paths
        workspaces = Workspaces(paths, self.session.workspace)
        return SafeFS(workspaces.roots(), protected=workspaces.protected())

    def latest_for(self, original: str) -> HistoryItem | None:
        found = [item for item in self.list() if item.original == original]
        return found[-1] if found else None

    def restore(
        self,
        n: int,
        *,
        overwrite: bool = False,
        fs: SafeFS | None = None,
        to: str | Path | None = None,
    ) -> HistoryItem:
        """Put version ``n`` back at its original path (or ``to``).

        Through ``fs`` when given; otherwise through the folders the session's
        file tools had (its workspace and the authorized ones, hearth's home off
        limits), walked the same ``openat`` way (DESIGN §5): a folder on the way
        that is now a link out of them is refused, never written through.
        Refuses when the file changed since this session last wrote it, unless
        ``overwrite``; the replaced content is kept as a new version first.
        """
        item = self.get(n)
        data = self.read(n)
        if fs is None:
            fs = self._session_fs()
        dest = fs.display(str(to) if to is not None else item.original)

        def keep_current(previous: bytes | None) -> None:
            if previous is None:
                return
            if previous == data:
                raise _Unchanged
            newest = self.latest_for(dest)
            ours = newest is not None and newest.replaced_by == sha256(previous)
            if not ours and not overwrite:
                raise UsageError(
                    "the file changed since this session last wrote it; "
                    f"restore version {n} with overwrite to replace it",
                    code="restore_changed",
                    cli_hint=str(dest),
                )
            self.save(dest, previous, call_id=f"restore-{n}", replaced_by=data)

        try:
            fs.write_bytes(dest, data, before_replace=keep_current)
        except _Unchanged:
            pass
        return item
