"""Eviction (DESIGN §4): keep each layer under its token capacity without losing anything.

Over capacity, entries go from ``low`` up, oldest first, down to 90 % of it;
``critical`` entries only while the layer still fills ≥ 99 % of the capacity. Every evicted entry
is appended to ``.memory_evicted.log`` before it leaves the Markdown. Lines a
user wrote by hand are never evicted.
"""

from __future__ import annotations

from typing import Any

from workhearth.memory.layer import LayerStore
from workhearth.memory.meta import EntryMeta

CRITICAL_SHARE = 0.99
TARGET_SHARE = 0.9  # Why: evict a little below capacity, not on every save


def plan_eviction(
    store: LayerStore, capacity: int, keep: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """Entries to evict: low then normal (oldest first) down to 90 % of capacity;
    critical ones only while the layer still fills ≥ 99 % of it."""
    total = store.total_tokens()
    if total <= capacity:
        return []
    entries = []
    for entry_id, tokens in store.index.entry_tokens():
        if entry_id in keep:
            continue
        meta = store.meta.get(entry_id) or EntryMeta()
        entries.append((meta.level, meta.created, entry_id, tokens))
    chosen: list[str] = []
    for level, floor in (
        ("low", TARGET_SHARE),
        ("normal", TARGET_SHARE),
        ("critical", CRITICAL_SHARE),
    ):
        for _level, _created, entry_id, tokens in sorted(e for e in entries if e[0] == level):
            if total <= floor * capacity:
                break
            chosen.append(entry_id)
            total -= tokens
    return chosen


def evict(
    store: LayerStore, capacity: int, keep: set[str] | frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    chosen = plan_eviction(store, capacity, keep)
    if not chosen:
        return []
    return store.remove_entries(chosen, reason=f"over capacity ({capacity} tokens)")
