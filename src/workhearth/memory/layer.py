"""One memory layer folder: its Markdown, meta, index and the lock that orders writers.

Writes follow DESIGN §4: under the layer lock, the meta is saved first, then the
Markdown file is replaced atomically, but only if its hash did not change since
it was read (an editor may have saved it meanwhile; then we read it again).
Orphaned meta (an id no Markdown holds any more) is dropped at index time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import CorruptDataError, NotFoundError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.memory.entries import find_entries, format_entry, new_entry_id
from workhearth.memory.files import EVICTED_LOG, META_FILE, Layer
from workhearth.memory.index import IndexReport, MemoryIndex
from workhearth.memory.meta import MetaStore

LOCK_FILE = ".memory.lock"
_REPLACE_TRIES = 5


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class LayerStore:
    def __init__(self, layer: Layer, folder: Path) -> None:
        self.layer = layer
        self.folder = folder
        self.index = MemoryIndex(folder)
        self._meta: MetaStore | None = None
        self.meta_damage: str | None = None

    # ------------------------------------------------------------ plumbing
    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive across processes; the kernel releases it if we die."""
        make_private_dir(self.folder)
        fd = os.open(self.folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._meta = None  # another process may have changed it: re-read under the lock
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @property
    def meta(self) -> MetaStore:
        if self._meta is None:
            self._meta = MetaStore(self.folder / META_FILE)
            # Why: the store is re-read under every lock; keep the first damage report.
            self.meta_damage = self.meta_damage or self._meta.damage or self._meta.earlier_damage()
        return self._meta

    def close(self) -> None:
        self.index.close()

    # ----------------------------------------------------------- indexing
    def update_index(self) -> IndexReport:
        report = self.index.update()
        self._clean_orphans()
        return report

    def _clean_orphans(self) -> None:
        present = {
            row[0]
            for row in self.index.db.execute(
                "SELECT entry_id FROM chunks WHERE entry_id IS NOT NULL"
            )
        }
        if not set(self.meta.entries) - present:
            return
        with self.locked():
            # Why: re-read the index under the lock, so a save that wrote its meta
            # but not yet its Markdown (it holds the lock) is never mistaken for an orphan.
            self.index.update()
            present = {
                row[0]
                for row in self.index.db.execute(
                    "SELECT entry_id FROM chunks WHERE entry_id IS NOT NULL"
                )
            }
            orphans = set(self.meta.entries) - present
            for entry_id in orphans:
                self.meta.drop(entry_id)
            if orphans:
                self.meta.save()

    # ------------------------------------------------------------- writing
    def _replace(self, rel: str, change: Any) -> Any:
        """Apply ``change(lines) -> (new_lines, result)`` to a file, hash-checked and atomic.

        Lines are split on ``\n`` only and bytes that are not UTF-8 survive as
        surrogate escapes, so every line hearth does not change is written back
        byte for byte (CRLF endings, form feeds, Latin-1 text included).
        """
        path = self.folder / rel
        if path.is_symlink():
            # Why: a MEMORY.md linked into a dotfiles repo must stay a link; write its target.
            path = path.resolve()
        for _ in range(_REPLACE_TRIES):
            try:
                before = path.read_bytes()
            except FileNotFoundError:
                before = b""
            text = before.decode("utf-8", errors="surrogateescape")
            lines = text.split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            new_lines, result = change(lines)
            data = ("\n".join(new_lines) + "\n").encode("utf-8", errors="surrogateescape")
            try:
                now = path.read_bytes()
            except FileNotFoundError:
                now = b""
            if _digest(now) != _digest(before):
                continue  # an editor saved in between: start again from its version
            make_private_dir(path.parent)
            atomic_write(path, data, mode=0o600)
            return result
        raise CorruptDataError(f"{path} keeps changing while hearth writes to it; try again")

    def read_lines(self, rel: str) -> list[str]:
        """A file's lines as :meth:`_replace` sees them."""
        text = (self.folder / rel).read_bytes().decode("utf-8", errors="surrogateescape")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return lines

    def add_entry(self, rel: str, content: str, meta: dict[str, Any]) -> tuple[str, int]:
        """Append a new entry to ``rel``; returns (id, its first line, 1-based)."""
        with self.locked():
            entry_id = new_entry_id()
            while entry_id in self.meta.entries:
                entry_id = new_entry_id()
            self.meta.put(entry_id, {**meta, "file": rel})
            self.meta.save()

            def append(lines: list[str]) -> tuple[list[str], int]:
                if not lines:
                    title = "User" if rel.upper() == "USER.MD" else "Memory"
                    lines = [f"# {title}", ""]
                elif lines[-1].strip() and not lines[-1].startswith("- "):
                    lines = [*lines, ""]
                return [*lines, *format_entry(content, entry_id)], len(lines) + 1

            line = self._replace(rel, append)
        self.index.update(only=[rel])
        return entry_id, line

    def locate(self, entry_id: str) -> tuple[str, int, int, str] | None:
        """(file, start line 0-based, end, content) of an entry, from the Markdown itself."""
        meta = self.meta.get(entry_id)
        candidates = [meta["file"]] if meta and meta.get("file") else []
        row = self.index.db.execute(
            "SELECT path FROM chunks WHERE entry_id = ? LIMIT 1", (entry_id,)
        ).fetchone()
        if row and row[0] not in candidates:
            candidates.append(row[0])
        for rel in candidates:
            try:
                lines = self.read_lines(rel)
            except OSError:
                continue
            span = find_entries(lines).get(entry_id)
            if span:
                return rel, span.start, span.end, span.content
        return None

    def edit_entry(self, entry_id: str, content: str) -> tuple[str, int]:
        with self.locked():
            where = self.locate(entry_id)
            if where is None:
                raise NotFoundError(f"no memory entry {entry_id}")
            rel = where[0]

            def edit(lines: list[str]) -> tuple[list[str], int]:
                span = find_entries(lines).get(entry_id)
                if span is None:
                    raise NotFoundError(f"no memory entry {entry_id}")
                return lines[: span.start] + format_entry(content, entry_id) + lines[
                    span.end :
                ], span.start + 1

            line = self._replace(rel, edit)
            meta = self.meta.get(entry_id) or {}
            meta.update(updated=time.time(), file=rel)
            self.meta.put(entry_id, meta)
            self.meta.save()
        self.index.update(only=[rel])
        return rel, line

    def remove_entries(self, entry_ids: list[str], reason: str) -> list[dict[str, Any]]:
        """Take entries out of the Markdown; each goes to ``.memory_evicted.log`` first."""
        removed: list[dict[str, Any]] = []
        with self.locked():
            by_file: dict[str, list[str]] = {}
            for entry_id in entry_ids:
                where = self.locate(entry_id)
                if where is not None:
                    by_file.setdefault(where[0], []).append(entry_id)
            for rel, ids in by_file.items():
                spans = find_entries(self.read_lines(rel))
                items = [
                    {
                        "id": i,
                        "layer": self.layer,
                        "file": rel,
                        "content": spans[i].content,
                        "meta": self.meta.get(i),
                    }
                    for i in ids
                    if i in spans
                ]
                # Why: log before removing, so a crash in between leaves a copy, never nothing.
                self._log_evicted(items, reason)

                def cut(lines: list[str], ids: list[str] = ids) -> tuple[list[str], None]:
                    now = find_entries(lines)
                    drop = {k for i in ids if i in now for k in range(now[i].start, now[i].end)}
                    return [x for k, x in enumerate(lines) if k not in drop], None

                self._replace(rel, cut)
                removed += items
            for item in removed:
                self.meta.drop(item["id"])
            if removed:
                self.meta.save()
        for rel in {item["file"] for item in removed}:
            self.index.update(only=[rel])
        return removed

    def _log_evicted(self, items: list[dict[str, Any]], reason: str) -> None:
        if not items:
            return
        path = self.folder / EVICTED_LOG
        now = time.time()
        data = b"".join(
            orjson.dumps({"time": now, "reason": reason, **item}) + b"\n" for item in items
        )
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def total_tokens(self) -> int:
        row = self.index.db.execute("SELECT coalesce(sum(tokens), 0) FROM chunks").fetchone()
        return int(row[0])
