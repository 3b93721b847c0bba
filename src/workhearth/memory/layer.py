"""One memory layer folder: its Markdown, meta, index and the lock that orders writers.

Writes follow DESIGN §4: under the layer lock, the meta is saved first, then a
new entry is appended to the Markdown with ``O_APPEND``; an edit or delete
replaces the file atomically after checking, at the last moment, that it is
still the file that was read, and carries over lines appended to it meanwhile
(:mod:`workhearth.memory.writes`). Orphaned meta (an id no Markdown holds any
more, in a file that reads as text) and temporary files a killed writer left are
cleaned at index time; meta of entries in files hearth cannot read is kept until
``hearth memory index --prune``.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import CorruptDataError, HearthError, NotFoundError
from workhearth.fsutil import append_line, file_lock, make_private_dir
from workhearth.memory import writes
from workhearth.memory.decode import decode_file
from workhearth.memory.entries import EntrySpan, find_entries, format_entry, new_entry_id
from workhearth.memory.files import EVICTED_LOG, META_FILE, Layer, leftover_temps, markdown_files
from workhearth.memory.index import IndexReport, MemoryIndex
from workhearth.memory.meta import EntryMeta, MetaStore
from workhearth.memory.schema import cannot_write

LOCK_FILE = ".memory.lock"
# Why bytes: an entry's id marker found in any encoding that keeps ASCII (and in a
# file hearth cannot read as text) means the entry may still be there.
_ID_MARK = re.compile(rb"\^(m-[0-9a-z]{8})")
_REPLACE_TRIES = 5
# Why: a temporary file this old is no write in progress (those take milliseconds
# and hold the layer lock, which cleaning takes too): its writer was killed.
STALE_TEMP_SECONDS = 10.0


def _not_saved(exc: OSError, path: Path) -> HearthError:
    where = exc.filename or path
    return HearthError(f"memory not saved: {where}: {exc.strerror or exc}", path=str(where))


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
        with file_lock(self.folder / LOCK_FILE):
            self.forget_meta_if_changed()  # Why: another process may have written it
            yield

    def forget_meta_if_changed(self) -> None:
        """Drop the meta read here when the file is no longer the one read or written."""
        if self._meta is not None and not self._meta.current():
            self._meta = None

    @property
    def meta(self) -> MetaStore:
        if self._meta is None:
            self._meta = MetaStore(self.folder / META_FILE)
            # Why: the store is re-read under every lock; keep the first damage report.
            self.meta_damage = self.meta_damage or self._meta.damage or self._meta.earlier_damage()
        return self._meta

    def close(self) -> None:
        self.index.close()

    def level(self, entry_id: str | None) -> str:
        """An indexed chunk's level: its entry's (``normal`` for text no entry holds)."""
        return self.meta.level(entry_id)

    def shown(self, rel: str) -> str:
        """A file's path as hits and context markers name it: relative to the layer."""
        return rel

    # ----------------------------------------------------------- indexing
    def update_index(self) -> IndexReport:
        report = self.index.update()
        if self.index.unwritable is not None:
            return report  # Why: read-only or full: cleaning would only fail
        try:
            self._clean_orphans()
            self._clean_leftovers()
        except OSError as exc:
            if not cannot_write(exc):
                raise
        return report

    def _clean_leftovers(self) -> None:
        """Remove temporary files a writer killed mid-way left (never one being written)."""
        cutoff = time.time() - STALE_TEMP_SECONDS
        if not any(_mtime(p) < cutoff for p in leftover_temps(self.folder)):
            return
        with self.locked():
            for path in leftover_temps(self.folder):
                if _mtime(path) < cutoff:
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()

    def _clean_orphans(self) -> None:
        """Drop the metadata of entries verifiably gone: their file is text without them.

        Why not every id the index cannot see (DESIGN §4): a file hearth cannot read as
        text (damaged, binary, unreadable), or a line the index skips (a NUL), hides
        entries that are still there; their metadata waits for ``index --prune``.
        """
        if not self._orphans(prune=False):
            return
        with self.locked():
            # Why: re-read the index under the lock, so a save that wrote its meta
            # but not yet its Markdown (it holds the lock) is never mistaken for an orphan.
            self.index.update()
            self._drop_meta(self._orphans(prune=False))

    def prune_orphans(self) -> int:
        """Drop the metadata of every entry no Markdown file of the layer holds any more.

        What :meth:`_clean_orphans` keeps because it cannot tell goes too, once asked
        (``hearth memory index --prune``); an entry still written in a file (on a line
        the index skips) keeps its metadata. Returns how many were dropped.
        """
        with self.locked():
            self.index.update()
            orphans = self._orphans(prune=True)
            self._drop_meta(orphans)
        return len(orphans)

    def _drop_meta(self, entry_ids: list[str]) -> None:
        for entry_id in entry_ids:
            self.meta.drop(entry_id)
        if entry_ids:
            self.meta.save()

    def _orphans(self, *, prune: bool) -> list[str]:
        """Ids with metadata that the index does not see and that no Markdown file holds.

        Without ``prune``, only those whose own file (all files, if it is not recorded)
        could be read as text, or is gone: the others may be hidden, not deleted.
        """
        seen = self.index.entry_ids()
        unseen = [i for i in self.meta.entries if i not in seen]
        if not unseen:
            return []
        held: set[str] = set()
        unsure: set[str] = set()  # files that exist but cannot be read (wholly) as text
        for rel, _st in markdown_files(self.folder):
            try:
                data = (self.folder / rel).read_bytes()
            except OSError:
                unsure.add(rel)
                continue
            held.update(m.decode() for m in _ID_MARK.findall(data))
            decoded = decode_file(data)
            if decoded.text is None or decoded.damaged:
                unsure.add(rel)
        orphans = []
        for entry_id in unseen:
            if entry_id in held:
                continue
            meta = self.meta.get(entry_id)
            own = meta.file if meta is not None else None
            if prune or not (unsure if own is None else unsure & {own}):
                orphans.append(entry_id)
        return orphans

    # ------------------------------------------------------------- writing
    def _target(self, rel: str) -> Path:
        path = self.folder / rel
        if path.is_symlink():
            # Why: a MEMORY.md linked into a dotfiles repo must stay a link; write its target.
            path = path.resolve()
        return path

    def _replace(self, rel: str, change: Any) -> Any:
        """Apply ``change(lines) -> (new_lines, result)`` to a file, checked and atomic.

        Lines are split on ``\n`` only and bytes that are not UTF-8 survive as
        surrogate escapes, so every line hearth does not change is written back
        byte for byte (CRLF endings, form feeds, Latin-1 text included). Lines
        another program appends meanwhile are carried over.
        """
        path = self._target(rel)
        for _ in range(_REPLACE_TRIES):
            fd, before = writes.read_current(path)
            try:
                new_lines, result = change(writes.split_lines(before))
                make_private_dir(path.parent)
                if writes.replace_if_unchanged(path, fd, before, writes.join_lines(new_lines)):
                    return result
            finally:
                if fd >= 0:
                    os.close(fd)
            # an editor saved in between: start again from its version
        raise CorruptDataError(f"{path} keeps changing while hearth writes to it; try again")

    def read_lines(self, rel: str) -> list[str]:
        """A file's lines as :meth:`_replace` sees them."""
        return writes.split_lines((self.folder / rel).read_bytes())

    def add_entry(
        self, rel: str, content: str, meta: EntryMeta, *, entry_id: str | None = None
    ) -> tuple[str, int, bool]:
        """Append an entry to ``rel``; returns (id, its first line 1-based, whether it is new).

        An entry of ``rel`` with exactly this content is returned instead of a
        second copy. ``entry_id`` brings an entry back under its old id (restore).
        Once this returns, the Markdown and the meta are durable; an index that
        could not be updated (a full disk) catches up at the next update.
        """
        path = self._target(rel)
        with self.locked():
            try:
                current = self._same_content(path.read_bytes(), content)
            except OSError:
                current = {}
            for span in current.values():
                # Why: saving the same sentence twice (a retry, an agent repeating
                # itself) must not make two entries that then drift apart.
                if span.content == content.strip() and self.meta.get(span.entry_id):
                    return span.entry_id, span.start + 1, False
            if entry_id is None:
                entry_id = new_entry_id()
                while entry_id in self.meta.entries:
                    entry_id = new_entry_id()
            self.meta.put(entry_id, replace(meta, file=rel))
            try:
                self.meta.save()
            except OSError as exc:
                self.meta.drop(entry_id)
                raise _not_saved(exc, self.meta.path) from exc
            lead = 0

            def build(before: bytes) -> bytes:
                nonlocal lead
                lines = writes.split_lines(before)
                head: list[str] = []
                if not lines:
                    head = ["# User" if rel.upper() == "USER.MD" else "# Memory", ""]
                elif lines[-1].strip() and not lines[-1].startswith("- "):
                    head = [""]
                sep = b"\n" if before and not before.endswith(b"\n") else b""
                lead = len(sep) + len(head)
                return sep + writes.join_lines([*head, *format_entry(content, entry_id)])

            try:
                make_private_dir(path.parent)
                line = writes.append(path, build) + lead + 1
            except OSError as exc:
                # Why: the entry is not in the Markdown: take its meta back (were this to
                # fail too, the orphan is dropped at the next index).
                self.meta.drop(entry_id)
                with contextlib.suppress(OSError):
                    self.meta.save()
                raise _not_saved(exc, path) from exc
        self._update_index_after_write(rel)
        return entry_id, line, True

    @staticmethod
    def _same_content(data: bytes, content: str) -> dict[str, EntrySpan]:
        """The file's entries, when one of them could hold exactly ``content``.

        Why the look first: an entry holding it holds its first line, and a save
        appending to a file of hundreds of entries need not read them all.
        """
        first = content.strip().split("\n", 1)[0].rstrip()
        if first not in data.decode("utf-8", errors="surrogateescape"):
            return {}
        return find_entries(writes.split_lines(data))

    def _update_index_after_write(self, rel: str) -> None:
        try:
            self.index.update(only=[rel])
        except (OSError, sqlite3.Error, HearthError):
            # Why: the Markdown (the truth) is written; the next update catches up.
            pass

    def locate(self, entry_id: str) -> tuple[str, int, int, str] | None:
        """(file, start line 0-based, end, content) of an entry, from the Markdown itself."""
        meta = self.meta.get(entry_id)
        candidates = [meta.file] if meta and meta.file else []
        indexed = self.index.entry_path(entry_id)
        if indexed and indexed not in candidates:
            candidates.append(indexed)
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
            meta = self.meta.get(entry_id) or EntryMeta()
            self.meta.put(entry_id, replace(meta, updated=time.time(), file=rel))
            self.meta.save()
        self._update_index_after_write(rel)
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
                        "meta": meta.as_json() if (meta := self.meta.get(i)) else None,
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
            self._update_index_after_write(rel)
        return removed

    def _log_evicted(self, items: list[dict[str, Any]], reason: str) -> None:
        if not items:
            return
        path = self.folder / EVICTED_LOG
        now = time.time()
        data = b"".join(
            orjson.dumps({"time": now, "reason": reason, **item}) + b"\n" for item in items
        )
        # Why one append of all lines: each record lands whole (O_APPEND), even beside
        # another process logging at the same moment.
        append_line(path, data)

    def removed_record(self, entry_id: str) -> dict[str, Any] | None:
        """The newest ``.memory_evicted.log`` record of ``entry_id`` (evicted or deleted)."""
        try:
            raw = (self.folder / EVICTED_LOG).read_bytes()
        except FileNotFoundError:
            return None
        found = None
        for line in raw.splitlines():
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # Why: a line cut by a crash mid-append; the others still count
            if isinstance(record, dict) and record.get("id") == entry_id:
                found = record
        return found

    def total_tokens(self) -> int:
        return self.index.total_tokens()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return float("inf")
