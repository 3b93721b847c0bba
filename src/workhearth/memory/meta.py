"""``memory_meta.json``: importance, tags, source and provenance of each entry, by id.

The file is small and rewritten atomically. A corrupt file never stops startup:
what can still be parsed is kept, the damaged copy is set aside next to it, and
the damage is reported (``MetaStore.damage``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import orjson

from workhearth.fsutil import atomic_write

VERSION = 1
_ENTRY_KEY = re.compile(r'"(m-[0-9a-z]{8})"\s*:\s*')


LEVELS = ("critical", "normal", "low")


@dataclass(slots=True)
class EntryMeta:
    """What ``memory_meta.json`` keeps of one entry, hand-edited fields coerced on reading.

    Keys this version does not know are kept in ``extra`` and written back as they were.
    """

    level: str = "normal"
    tags: list[str] = field(default_factory=list)
    source: str = "user"
    provenance: list[dict[str, Any]] = field(default_factory=list)
    created: float = 0.0
    updated: float = 0.0
    pending: bool = False
    file: str | None = None  # the Markdown file (relative to the layer) holding the entry
    reflection: dict[str, Any] | None = None  # the reflection that wrote it last
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> EntryMeta:
        """Coerce a stored (maybe hand-edited) object to the types the rest of memory relies on."""
        # Why so plain: a search parses every entry's meta (1,000 in ~2 ms).
        get = raw.get
        level, tags, prov = get("level"), get("tags"), get("provenance")
        source, file, reflection = get("source"), get("file"), get("reflection")
        created: Any = get("created")
        updated: Any = get("updated")
        meta = cls.__new__(cls)
        meta.level = level if level in LEVELS else "normal"
        meta.tags = _tags(tags)
        meta.source = source if type(source) is str else "user"
        meta.provenance = [p for p in prov if isinstance(p, dict)] if type(prov) is list else []
        meta.created = float(created) if type(created) in (float, int) else 0.0
        meta.updated = float(updated) if type(updated) in (float, int) else 0.0
        meta.pending = get("pending") is True
        meta.file = file if type(file) is str else None
        meta.reflection = reflection if type(reflection) is dict else None
        meta.extra = {}
        if raw.keys() - _FIELDS or meta.file != file or meta.reflection != reflection:
            # Why: unknown keys, and a file or reflection of the wrong type, are kept as they were.
            meta.extra = {
                k: v
                for k, v in raw.items()
                if k not in _FIELDS
                or (k == "file" and meta.file is None)
                or (k == "reflection" and meta.reflection is None)
            }
        return meta

    def as_json(self) -> dict[str, Any]:
        """The stored object: the same keys (``file`` and ``reflection`` only when set)."""
        out: dict[str, Any] = {
            **self.extra,
            "level": self.level,
            "tags": list(self.tags),
            "source": self.source,
            "provenance": [dict(p) for p in self.provenance],
            "created": self.created,
            "updated": self.updated,
            "pending": self.pending,
        }
        if self.file is not None:
            out["file"] = self.file
        if self.reflection is not None:
            out["reflection"] = self.reflection
        return out


_FIELDS = frozenset(f.name for f in fields(EntryMeta)) - {"extra"}


def _tags(value: Any) -> list[str]:
    return [t for t in value if isinstance(t, str)] if type(value) is list else []


class EntryTable(MutableMapping[str, EntryMeta]):
    """Entry id → :class:`EntryMeta`, each parsed from its stored object on first use.

    Why: ``hearth serve`` re-reads the meta after every save made elsewhere, and a
    search then needs only its hits' entries and everyone's tags; parsing all of
    them cost more than the search. Entries keep the file's order. An entry never
    parsed is written back as it was read.
    """

    __slots__ = ("_items",)

    def __init__(self, stored: Mapping[str, dict[str, Any] | EntryMeta] | None = None) -> None:
        self._items: dict[str, dict[str, Any] | EntryMeta] = dict(stored or {})

    def __getitem__(self, entry_id: str) -> EntryMeta:
        value = self._items[entry_id]
        if type(value) is dict:
            value = self._items[entry_id] = EntryMeta.parse(value)
        return value  # type: ignore[return-value]

    def __setitem__(self, entry_id: str, meta: EntryMeta) -> None:
        self._items[entry_id] = meta

    def __delitem__(self, entry_id: str) -> None:
        del self._items[entry_id]

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def by_tag(self) -> dict[str, list[tuple[int, str]]]:
        """Tag → (position, entry id) of the entries carrying it, in order (nothing parsed)."""
        out: dict[str, list[tuple[int, str]]] = {}
        for pos, (entry_id, value) in enumerate(self._items.items()):
            tags = _tags(value.get("tags")) if type(value) is dict else value.tags  # type: ignore[union-attr]
            for tag in dict.fromkeys(tags):
                out.setdefault(tag, []).append((pos, entry_id))
        return out

    def stored(self) -> dict[str, dict[str, Any]]:
        """The objects to write: parsed entries as :meth:`EntryMeta.as_json`, others as read."""
        return {k: v.as_json() if isinstance(v, EntryMeta) else v for k, v in self._items.items()}


def _salvage(raw: str) -> dict[str, dict[str, Any]]:
    """Recover every ``"m-…": {…}`` object that still parses from a damaged file."""
    decoder = json.JSONDecoder()
    found: dict[str, dict[str, Any]] = {}
    for m in _ENTRY_KEY.finditer(raw):
        try:
            value, _ = decoder.raw_decode(raw, m.end())
        except ValueError:
            continue
        if isinstance(value, dict):
            found[m.group(1)] = value
    return found


class MetaStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.damage: str | None = None
        self._entries = EntryTable()
        # Why: a search matches the query against every entry's tags; grouping the
        # ids by tag once turns that into a look at each distinct tag. Kept with the
        # dict it was built from (``entries`` may be replaced whole) until put/drop.
        self._by_tag: tuple[EntryTable, dict[str, list[tuple[int, str]]]] | None = None
        # The file as last read or written here (inode, size, mtime): see current().
        self._seen: tuple[int, int, int] | None = None
        self._load()

    def _signature(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def current(self) -> bool:
        """Whether the file is still the one this store last read or wrote.

        Why: a save takes the layer lock and must see what another process wrote,
        but reading back a file of thousands of entries that only this store wrote
        cost a save more than all its other work. Anything that rewrites the file
        (hearth's atomic replace: a new inode; an editor: a new size or mtime) shows.
        """
        return self._signature() == self._seen

    def _load(self) -> None:
        # Why the stat first: a change between it and the read only makes the next
        # look read again.
        self._seen = self._signature()
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            data = orjson.loads(raw)
            entries = data.get("entries") if isinstance(data, dict) else None
            if not isinstance(entries, dict):
                raise ValueError("no entries table")
            self.entries = EntryTable({k: v for k, v in entries.items() if isinstance(v, dict)})
            return
        except (ValueError, orjson.JSONDecodeError) as exc:
            reason = str(exc)
        self.entries = EntryTable(_salvage(raw.decode("utf-8", errors="replace")))
        aside = self.path.with_name(f".{self.path.name}.corrupt-{int(time.time())}")
        atomic_write(aside, raw)
        self.damage = (
            f"{self.path.name} was damaged ({reason}); kept {len(self.entries)} entries, "
            f"set the damaged copy aside as {aside.name}"
        )
        self.save()

    @property
    def entries(self) -> EntryTable:
        return self._entries

    @entries.setter
    def entries(self, value: Mapping[str, EntryMeta]) -> None:
        """Replaced whole (reflection puts back its copy when it fails)."""
        self._entries = value if isinstance(value, EntryTable) else EntryTable(dict(value))

    def earlier_damage(self) -> str | None:
        """A note about damaged copies set aside by an earlier run, if any."""
        copies = sorted(self.path.parent.glob(f".{self.path.name}.corrupt-*"))
        if not copies:
            return None
        return f"{self.path.name} was damaged before; the damaged copy is kept as {copies[-1].name}"

    def get(self, entry_id: str) -> EntryMeta | None:
        return self.entries.get(entry_id)

    def level(self, entry_id: str | None) -> str:
        """An entry's level; ``normal`` for text no entry holds (or an entry without meta)."""
        meta = self.entries.get(entry_id) if entry_id else None
        return meta.level if meta else "normal"

    def by_tag(self) -> dict[str, list[tuple[int, str]]]:
        """Tag → (position in ``entries``, entry id) of the entries carrying it, in order."""
        cached = self._by_tag
        if cached is not None and cached[0] is self.entries:
            return cached[1]
        out = self.entries.by_tag()
        self._by_tag = (self.entries, out)
        return out

    def put(self, entry_id: str, meta: EntryMeta) -> None:
        self.entries[entry_id] = meta
        self._by_tag = None

    def drop(self, entry_id: str) -> EntryMeta | None:
        self._by_tag = None
        return self.entries.pop(entry_id, None)

    def save(self) -> None:
        data = {"version": VERSION, "entries": self.entries.stored()}
        atomic_write(
            self.path, orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        )
        self._seen = self._signature()
