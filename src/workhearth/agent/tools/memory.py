"""Memory tools: ``memory_search`` and ``memory_save`` over the same bank as ``hearth memory``.

A saved entry is a plain sentence the user confirmed (DESIGN §4). In agent mode
the user is asked about the exact sentence before it is saved; in quest mode,
or when nobody answered in person (``--yes``), it is saved as *pending*, for
the user to confirm later.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from workhearth.agent.tools.context import ToolContext, ToolError
from workhearth.agent.tools.registry import tool
from workhearth.memory.api import Memory


def _memory(ctx: ToolContext) -> Memory:
    if ctx.memory is None:
        raise ToolError("memory is not available in this session")
    return ctx.memory


@tool(read_only=True)
def memory_search(
    ctx: ToolContext,
    query: Annotated[str, Field(min_length=1, max_length=512, description="Words to look for")],
    limit: Annotated[int, Field(ge=1, le=50)] = 6,
) -> str:
    """Search long-term memory (the user's and this project's notes, Chinese included) by
    words. Returns the best matching lines with their entry id, importance and file."""
    assert ctx.shared is not None
    with ctx.shared.memory_lock:  # Why: read-only tools run in parallel threads
        hits = _memory(ctx).search(query, limit=limit)
    if not hits:
        return f"No memory matches {query!r}"
    out = []
    for h in hits:
        ident = f"[{h.entry_id}] " if h.entry_id else ""
        out.append(
            f"{ident}({h.level}, {h.layer or 'memory'}) {h.path}:{h.line_start}-{h.line_end}"
            f"  score {h.score:.2f}\n  " + h.text.replace("\n", "\n  ")
        )
    return "\n".join(out)


def _preview(ctx: ToolContext, args: BaseModel) -> str:
    a = args
    tags = f" tags: {', '.join(a.tags)}" if a.tags else ""  # type: ignore[attr-defined]
    return f'remember ({a.level}{tags}): "{a.content}"'  # type: ignore[attr-defined]


@tool(read_only=False, preview=_preview, allow_always=False)
def memory_save(
    ctx: ToolContext,
    content: Annotated[
        str,
        Field(
            min_length=1,
            max_length=8_000,
            description="One plain, self-contained sentence worth remembering",
        ),
    ],
    level: Literal["critical", "normal", "low"] = "normal",
    tags: Annotated[list[str], Field(max_length=32)] = [],  # noqa: B006 (pydantic copies it)
) -> str:
    """Save one fact to this project's long-term memory, as a plain sentence the user would
    agree with (a preference, a decision, how something works here). Never save secrets.
    In agent mode the user confirms the exact sentence first."""
    assert ctx.gate is not None
    pending = ctx.mode != "agent" or not ctx.approver.human
    provenance = {"session_id": ctx.session.id, "origin": f"agent:{ctx.call_id or 'call'}"}
    assert ctx.shared is not None
    with ctx.shared.memory_lock:
        entry = _memory(ctx).save(
            content,
            level=level,
            tags=list(tags),
            contexts=[provenance],
            source="agent",
            pending=pending,
        )
    if entry.layer == "queued":
        # Why: with a team bank ([bank] url) that is unreachable, the save waits in
        # the local outbox; the model must not claim it is in the bank yet.
        return f"Queued the memory save for the team bank (it is sent when the bank answers): {entry.id}"
    state = "pending the user's confirmation" if entry.pending else "confirmed by the user"
    return f"Saved memory entry {entry.id} ({entry.level}, {state})"
