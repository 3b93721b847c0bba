"""Reflection's safety net: backups with their sidecars, the reflection state file, rollback.

Before the model sees a file, :func:`take_backup` copies it byte for byte into
``.reflection-bak/<file>.<UTC stamp>`` beside a ``.json`` sidecar (time, reason,
hash, the meta of its entries). :func:`rollback_store` puts a backup back only
when no entry was written to that file since (otherwise it keeps the current file
and reports the conflict); the file it replaces is backed up first, so a rollback
can be undone too. ``.reflection.json`` remembers which file contents need no
automatic reflection.
"""

from __future__ import annotations

import copy
import hashlib
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import orjson

from workhearth.errors import NotFoundError, UsageError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.memory.entries import EntrySpan, find_entries
from workhearth.memory.files import REFLECTION_BACKUPS
from workhearth.memory.layer import LayerStore
from workhearth.memory.meta import EntryMeta

STATE_FILE = ".reflection.json"
SIDECAR_VERSION = 1


Action = Literal[
    "distilled", "rewritten", "unchanged", "aborted", "skipped", "restored", "conflict"
]


@dataclass
class Outcome:
    """What happened to one file. ``backup`` is relative to the layer folder."""

    layer: str
    file: str
    action: Action
    reason: str = ""
    backup: str | None = None
    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    tokens_before: int = 0
    tokens_after: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Changed(Exception):
    """The file is no longer what the model saw."""


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def text_lines(data: bytes) -> list[str]:
    return data.decode("utf-8", errors="replace").splitlines()


def take_backup(store: LayerStore, rel: str, data: bytes, reason: str) -> str:
    """Copy ``data`` (the file ``rel``) and its entries' meta into ``.reflection-bak/``.

    Call with the layer lock held, so the meta matches the bytes.
    """
    root = store.folder / REFLECTION_BACKUPS
    make_private_dir((root / rel).parent)
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"
    name, n = f"{rel}.{stamp}", 0
    while (root / name).exists() or (root / f"{name}.json").exists():
        n += 1
        name = f"{rel}.{stamp}-{n}"
    ids = find_entries(text_lines(data))
    sidecar = {
        "version": SIDECAR_VERSION,
        "layer": store.layer,
        "file": rel,
        "time": now,
        "reason": reason,
        "hash": digest(data),
        "entries": {i: m.as_json() for i in ids if (m := store.meta.get(i)) is not None},
    }
    atomic_write(root / name, data)
    atomic_write(root / f"{name}.json", orjson.dumps(sidecar, option=orjson.OPT_INDENT_2))
    return f"{REFLECTION_BACKUPS}/{name}"


def read_state(store: LayerStore) -> dict[str, Any]:
    try:
        data = orjson.loads((store.folder / STATE_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def settle(store: LayerStore, rel: str, data: bytes, now: float) -> None:
    """Remember that ``rel`` with these bytes needs no automatic reflection until it changes."""
    with store.locked():
        state = read_state(store)
        state.setdefault("files", {})[rel] = {"hash": digest(data), "time": now}
        atomic_write(store.folder / STATE_FILE, orjson.dumps(state))


def settled(store: LayerStore, rel: str, data: bytes, now: float, every: float) -> bool:
    seen = read_state(store).get("files", {}).get(rel)
    if not isinstance(seen, dict):
        return False
    return seen.get("hash") == digest(data) or now - float(seen.get("time", 0)) < every


def _at(meta: EntryMeta) -> float:
    """When the reflection that wrote this entry ran (0 when none did)."""
    at = (meta.reflection or {}).get("at", 0)
    return float(at) if isinstance(at, int | float) else 0.0


def evicted_record(store: LayerStore, rel: str, entry_id: str, content: str) -> dict[str, Any]:
    """A ``.memory_evicted.log`` record, shaped like the ones :meth:`LayerStore.remove_entries` writes."""
    return {
        "id": entry_id,
        "layer": store.layer,
        "file": rel,
        "content": content,
        "meta": meta.as_json() if (meta := store.meta.get(entry_id)) else None,
    }


def aborted(store: LayerStore, rel: str, reason: str, backup: str | None, before: int) -> Outcome:
    return Outcome(store.layer, rel, "aborted", reason, backup, tokens_before=before)


def resolve_backup(store: LayerStore, backup: str | Path) -> Path | None:
    root = (store.folder / REFLECTION_BACKUPS).resolve()
    given = Path(backup)
    candidates = (
        [given]
        if given.is_absolute()
        else [store.folder / given, store.folder / REFLECTION_BACKUPS / given]
    )
    for path in candidates:
        if path.name.endswith(".json"):
            path = path.with_name(path.name[: -len(".json")])
        path = path.resolve()
        if path.is_relative_to(root) and path.is_file():
            return path
    return None


def rollback_store(store: LayerStore, backup: str | Path) -> Outcome:
    """Restore ``backup`` into its file unless an entry was written to that file since."""
    path = resolve_backup(store, backup)
    if path is None:
        raise NotFoundError(f"no reflection backup {str(backup)!r} in the {store.layer} layer")
    rel, since, originals = _read_sidecar(path)
    name = path.relative_to(store.folder.resolve()).as_posix()
    restored = path.read_bytes()
    restored_lines = text_lines(restored)
    restored_ids = find_entries(restored_lines)

    with store.locked():
        data = read_bytes(store.folder / rel)
        lines = text_lines(data or b"")
        spans = find_entries(lines)
        produced = _written_by_reflection(store, name)
        elsewhere = {i: m for i, m in produced.items() if m.file != rel}
        newer = _written_since(store, spans, produced, restored_ids, since)
        newer += [i for i, m in elsewhere.items() if m.updated > _at(m)]
        if newer:
            return Outcome(
                store.layer,
                rel,
                "conflict",
                f"{len(newer)} entries were written after the backup "
                f"({', '.join(sorted(newer))}); kept the current {rel}",
                name,
            )
        # Why: the rollback itself can be undone, so the current file is backed up too.
        own = take_backup(store, rel, data, "rollback") if data is not None else None
        other_files = _by_file(elsewhere)
        removed = [i for i in spans if i not in restored_ids]
        items = [evicted_record(store, rel, i, spans[i].content) for i in removed]
        items += _evicted_elsewhere(store, other_files)
        saved = copy.deepcopy(store.meta.entries)
        store._log_evicted(items, "rollback")
        _restore_meta(store, rel, restored_ids, originals)
        store.meta.save()
        if not _replace_unchanged(store, rel, lines, restored_lines):
            store.meta.entries = saved
            store.meta.save()
            return aborted(store, rel, f"{rel} changed meanwhile; kept the current file", own, 0)
        _cut_entries(store, other_files)
        for item in items:
            store.meta.drop(item["id"])
        store.meta.save()
    store.index.update(only=[rel, *other_files])
    settle(store, rel, restored, time.time())
    return Outcome(
        store.layer,
        rel,
        "restored",
        f"restored {name}" + (f" (the file it replaced is in {own})" if own else ""),
        own,
        kept=list(restored_ids),
        dropped=[item["id"] for item in items],
    )


def _read_sidecar(path: Path) -> tuple[str, float, dict[str, Any]]:
    """``(memory file, backup time, its entries' meta)`` from the backup's ``.json`` sidecar."""
    try:
        side = orjson.loads(path.with_name(path.name + ".json").read_bytes())
        rel, since = str(side["file"]), float(side["time"])
        originals: dict[str, Any] = dict(side.get("entries") or {})
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise NotFoundError(
            f"{path.name} has no readable .json sidecar; restore it by hand"
        ) from None
    if not rel.endswith(".md") or rel.startswith(("/", ".")) or ".." in Path(rel).parts:
        raise UsageError(f"{path.name}: the sidecar names no memory file")
    return rel, since, originals


def _written_by_reflection(store: LayerStore, backup: str) -> dict[str, EntryMeta]:
    """The entries (in any file) written by the reflection that took ``backup``."""
    return {
        i: m
        for i, m in store.meta.entries.items()
        if m.reflection and m.reflection.get("backup") == backup
    }


def _by_file(entries: dict[str, EntryMeta]) -> dict[str, list[str]]:
    """Entry ids grouped by the file that holds them."""
    files: dict[str, list[str]] = {}
    for entry_id, meta in entries.items():
        files.setdefault(str(meta.file), []).append(entry_id)
    return files


def _written_since(
    store: LayerStore,
    spans: dict[str, EntrySpan],
    produced: dict[str, EntryMeta],
    restored_ids: dict[str, EntrySpan],
    since: float,
) -> list[str]:
    """Entries of the current file written after the backup: a reflection's entries edited
    after it ran, and any other entry the backup lacks or that changed since it was taken."""
    newer: list[str] = []
    for entry_id in spans:
        meta = store.meta.get(entry_id) or EntryMeta()
        if entry_id in produced:
            edited = meta.updated > _at(meta)
        else:
            stamp = meta.updated or meta.created
            edited = entry_id not in restored_ids or stamp > since
        if edited:
            newer.append(entry_id)
    return newer


def _evicted_elsewhere(
    store: LayerStore, other_files: dict[str, list[str]]
) -> list[dict[str, Any]]:
    """Eviction records of the entries the reflection wrote into other files."""
    items: list[dict[str, Any]] = []
    for other, ids in other_files.items():
        found = find_entries(text_lines(read_bytes(store.folder / other) or b""))
        items += [evicted_record(store, other, i, found[i].content) for i in ids if i in found]
    return items


def _restore_meta(
    store: LayerStore, rel: str, restored_ids: dict[str, EntrySpan], originals: dict[str, Any]
) -> None:
    """Give each restored entry the meta the backup recorded (or keep the one it has)."""
    for entry_id in restored_ids:
        raw = originals.get(entry_id)
        back = EntryMeta.parse(raw) if isinstance(raw, dict) and raw else store.meta.get(entry_id)
        if back is not None:
            store.meta.put(entry_id, replace(back, file=rel))


def _replace_unchanged(
    store: LayerStore, rel: str, lines: list[str], restored_lines: list[str]
) -> bool:
    """Write ``restored_lines`` into ``rel`` if it still holds ``lines``; False if it changed."""

    def restore(current: list[str]) -> tuple[list[str], None]:
        if current != lines:
            raise Changed
        return restored_lines, None

    try:
        store._replace(rel, restore)
    except Changed:
        return False
    return True


def _cut_entries(store: LayerStore, other_files: dict[str, list[str]]) -> None:
    """Remove the listed entries from each of those files."""
    for other, ids in other_files.items():

        def cut(current: list[str], ids: list[str] = ids) -> tuple[list[str], None]:
            now = find_entries(current)
            drop = {k for i in ids if i in now for k in range(now[i].start, now[i].end)}
            return [x for k, x in enumerate(current) if k not in drop], None

        store._replace(other, cut)
