"""Context assembly (DESIGN §4): what memory the agent reads at session start.

Critical entries first, then normal, then low; inside a level, chunks that match
the task come first (by score), then the newest. Every budget is a ceiling on the
text as it is rendered, headings and markers included, counted offline
(:func:`~workhearth.models.tokens.count_tokens`): each layer stays inside its own
budget, and a shared ``budget`` caps the whole text (the layers share it, in one
importance order). The wiki's pages (:mod:`~workhearth.memory.wiki_source`) are one
more source of chunks, all ``low``, with a budget of their own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from workhearth.memory.bank import LEVEL_RANK
from workhearth.memory.index import MemoryIndex
from workhearth.models.tokens import count_tokens

TITLES = {
    "user": "About the user (user memory)",
    "project": "This project (project memory)",
    "wiki": "This project's wiki (hearth wiki pages)",
}
# Why a share: the wiki is the model's own summary, large and about everything, so
# it would match most topics; it may inform the context, never crowd it (issue 24).
WIKI_SHARE = 0.25
PART_SEPARATOR = "\n\n"  # between headings and picks; whitespace, so it costs no token


class ChunkSource(Protocol):
    """What context assembly reads from a memory layer or the wiki."""

    @property
    def layer(self) -> str: ...

    @property
    def index(self) -> MemoryIndex: ...

    def level(self, entry_id: str | None) -> str:
        """The importance of an indexed chunk (by the entry it belongs to, if any)."""
        ...

    def shown(self, rel: str) -> str:
        """An indexed file's path as the reader is told it."""
        ...


@dataclass
class Pick:
    layer: str
    path: str
    line_start: int
    text: str
    tokens: int
    level: str


def heading(layer: str) -> str:
    return f"## {TITLES.get(layer, layer)}"


def marker(pick: Pick) -> str:
    """The line before a pick's text, naming where it comes from."""
    return f"<!-- {pick.path}:{pick.line_start} ({pick.level}) -->"


def pick_cost(pick: Pick) -> int:
    """Tokens of a pick as rendered. The counter counts no whitespace, so the parts
    of the text add up; ``pick.tokens`` is the index's count of its text."""
    return count_tokens(marker(pick)) + pick.tokens


def render(picks_by_layer: Mapping[str, Sequence[Pick]]) -> str:
    parts: list[str] = []
    for layer, picks in picks_by_layer.items():
        if not picks:
            continue
        parts.append(heading(layer))
        parts.extend(f"{marker(pick)}\n{pick.text}" for pick in picks)
    return PART_SEPARATOR.join(parts)


def ranked(store: ChunkSource, topic: str | None) -> list[tuple[tuple[int, float, int], Pick]]:
    """Every chunk of a layer with its sort key: (level rank, -score, -chunk id).

    Scores are relative to the layer's best match, so two layers rank on one scale.
    """
    rows = store.index.chunks()
    if not rows:
        return []
    scores: dict[int, float] = {}
    if topic and topic.strip():
        scores = store.index.searcher().candidates(topic[:512], limit=50)
    best = max(scores.values(), default=0.0) or 1.0
    out = []
    for cid, path, line, text, entry_id, tokens in rows:
        level = store.level(entry_id)
        key = (LEVEL_RANK.get(level, 1), -scores.get(cid, 0.0) / best, -cid)
        out.append((key, Pick(store.layer, store.shown(path), line, text, tokens, level)))
    return out


def pick_chunks(
    stores: Sequence[ChunkSource],
    topic: str | None,
    layer_budgets: Mapping[str, int],
    budget: int | None = None,
) -> dict[str, list[Pick]]:
    """The chunks to inject, per layer in importance order, so that each layer's
    rendered part fits its budget and the whole rendered text fits ``budget``."""
    order = [
        (key[0], key[1], n, key[2], pick)
        for n, store in enumerate(stores)
        for key, pick in ranked(store, topic)
    ]
    order.sort(key=lambda item: item[:4])
    picked: dict[str, list[Pick]] = {store.layer: [] for store in stores}
    used = dict.fromkeys(picked, 0)
    total = 0
    for *_key, pick in order:
        cost = pick_cost(pick)
        if not picked[pick.layer]:
            # Why: a layer's heading is injected with its first pick, and counts.
            cost += count_tokens(heading(pick.layer))
        if used[pick.layer] + cost > layer_budgets[pick.layer]:
            continue  # a smaller chunk further down may still fit
        if budget is not None and total + cost > budget:
            continue
        picked[pick.layer].append(pick)
        used[pick.layer] += cost
        total += cost
    return picked
