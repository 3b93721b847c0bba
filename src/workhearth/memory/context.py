"""Context assembly (DESIGN §4): what memory the agent reads at session start.

Per layer, within its token budget: critical entries first, then normal, then
low; inside a level, chunks that match the task come first (by score), then the
newest. A layer that fits its budget whole is injected whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from workhearth.memory.bank import LEVEL_RANK
from workhearth.memory.layer import LayerStore


@dataclass
class Pick:
    layer: str
    path: str
    line_start: int
    text: str
    tokens: int
    level: str


def pick_chunks(store: LayerStore, topic: str | None, budget: int) -> list[Pick]:
    rows = store.index.chunks()
    if not rows:
        return []
    levels = {cid: store.meta.level(eid) for cid, _p, _l, _t, eid, _n in rows}
    scores: dict[int, float] = {}
    if topic and topic.strip():
        scores = store.index.searcher().candidates(topic[:512], limit=50)
    order = sorted(
        rows,
        key=lambda r: (LEVEL_RANK.get(levels[r[0]], 1), -scores.get(r[0], 0.0), -r[0]),
    )
    picked: list[Pick] = []
    used = 0
    for cid, path, line, text, _eid, tokens in order:
        if used + tokens > budget:
            continue  # a smaller chunk further down may still fit
        picked.append(Pick(store.layer, path, line, text, tokens, levels[cid]))
        used += tokens
    return picked


def render(picks_by_layer: dict[str, list[Pick]]) -> str:
    titles = {"user": "About the user (user memory)", "project": "This project (project memory)"}
    parts: list[str] = []
    for layer, picks in picks_by_layer.items():
        if not picks:
            continue
        parts.append(f"## {titles.get(layer, layer)}")
        for pick in picks:
            parts.append(f"<!-- {pick.path}:{pick.line_start} ({pick.level}) -->\n{pick.text}")
    return "\n\n".join(parts)
