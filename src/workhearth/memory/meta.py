"""``memory_meta.json``: importance, tags, source and provenance of each entry, by id.

The file is small and rewritten atomically. A corrupt file never stops startup:
what can still be parsed is kept, the damaged copy is set aside next to it, and
the damage is reported (``MetaStore.damage``).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import orjson

from workhearth.fsutil import atomic_write

VERSION = 1
_ENTRY_KEY = re.compile(r'"(m-[0-9a-z]{8})"\s*:\s*')


LEVELS = ("critical", "normal", "low")


def _clean(entry: dict[str, Any]) -> dict[str, Any]:
    """Coerce hand-edited fields to the types the rest of memory relies on."""
    out = dict(entry)
    if out.get("level") not in LEVELS:
        out["level"] = "normal"
    tags = out.get("tags")
    out["tags"] = [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []
    prov = out.get("provenance")
    out["provenance"] = [p for p in prov if isinstance(p, dict)] if isinstance(prov, list) else []
    for key in ("created", "updated"):
        value = out.get(key)
        out[key] = (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
        )
    out["pending"] = out.get("pending") is True
    if not isinstance(out.get("source"), str):
        out["source"] = "user"
    return out


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
        self.entries: dict[str, dict[str, Any]] = {}
        self._load()

    def _load(self) -> None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return
        try:
            data = orjson.loads(raw)
            entries = data.get("entries") if isinstance(data, dict) else None
            if not isinstance(entries, dict):
                raise ValueError("no entries table")
            self.entries = {k: _clean(v) for k, v in entries.items() if isinstance(v, dict)}
            return
        except (ValueError, orjson.JSONDecodeError) as exc:
            reason = str(exc)
        self.entries = {
            k: _clean(v) for k, v in _salvage(raw.decode("utf-8", errors="replace")).items()
        }
        aside = self.path.with_name(f".{self.path.name}.corrupt-{int(time.time())}")
        atomic_write(aside, raw)
        self.damage = (
            f"{self.path.name} was damaged ({reason}); kept {len(self.entries)} entries, "
            f"set the damaged copy aside as {aside.name}"
        )
        self.save()

    def earlier_damage(self) -> str | None:
        """A note about damaged copies set aside by an earlier run, if any."""
        copies = sorted(self.path.parent.glob(f".{self.path.name}.corrupt-*"))
        if not copies:
            return None
        return f"{self.path.name} was damaged before; the damaged copy is kept as {copies[-1].name}"

    def get(self, entry_id: str) -> dict[str, Any] | None:
        return self.entries.get(entry_id)

    def put(self, entry_id: str, meta: dict[str, Any]) -> None:
        self.entries[entry_id] = meta

    def drop(self, entry_id: str) -> dict[str, Any] | None:
        return self.entries.pop(entry_id, None)

    def save(self) -> None:
        data = {"version": VERSION, "entries": self.entries}
        atomic_write(
            self.path, orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        )
