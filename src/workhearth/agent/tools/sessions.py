"""Session tools: ``session_list`` and ``session_read`` (the shared lookup of DESIGN §3)."""

from __future__ import annotations

from typing import Annotated, Any

import orjson
from pydantic import Field

from workhearth.agent.tools.context import ToolContext, ToolError
from workhearth.agent.tools.registry import tool
from workhearth.memory.secrets import redact
from workhearth.models.messages import result_text
from workhearth.sessions.store import COUNT_MAX, LIST_LIMIT, SessionStore

BLOCK_LIMIT = 2_000


def _store(ctx: ToolContext) -> SessionStore:
    if ctx.sessions is None:
        raise ToolError("the session store is not available here")
    return ctx.sessions


def _when(ts: float | None) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "?"


@tool(read_only=True)
def session_list(
    ctx: ToolContext,
    limit: Annotated[int, Field(ge=1, le=LIST_LIMIT, description="How many, newest first")] = 10,
) -> str:
    """List recent work sessions (all workspaces), newest first: id, last update, title,
    workspace and message count. Read one with session_read."""
    infos = _store(ctx).list(limit)
    if not infos:
        return "No sessions yet"
    lines = []
    for info in infos:
        mark = " (this session)" if info.session_id == ctx.session.id else ""
        lines.append(
            f"{info.session_id}{mark}  {_when(info.updated)}  {info.title or '(untitled)'}"
            f"  [{info.messages if info.messages is not None else '?'} messages]  {info.workspace}"
        )
    return "\n".join(lines)


def _cut(text: str) -> str:
    return text if len(text) <= BLOCK_LIMIT else text[:BLOCK_LIMIT] + f"…[{len(text)} characters]"


def _masked(text: str) -> str:
    # Why: a key a tool printed in another session must not come back through recall.
    return _cut(redact(text[: BLOCK_LIMIT + 4_096]) + text[BLOCK_LIMIT + 4_096 :])


def _block(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return _cut(str(block.get("text", "")))
    if kind == "tool_use":
        args = orjson.dumps(block.get("input", {})).decode()
        return f"[tool call {block.get('name')}: {_masked(args)}]"
    if kind == "tool_result":
        content = result_text(block.get("content") or "", " ")
        flag = " (error)" if block.get("is_error") else ""
        return f"[tool result{flag}: {_masked(str(content))}]"
    if kind in ("thinking", "redacted_thinking"):
        return ""
    return f"[{kind}]"


@tool(read_only=True)
def session_read(
    ctx: ToolContext,
    session_id: Annotated[str, Field(min_length=1, description="Id (or unique prefix)")],
    count: Annotated[
        int, Field(ge=1, le=COUNT_MAX, description="How many of the last messages")
    ] = 10,
) -> str:
    """Read the last messages of a work session (text, tool calls and results, cut when long)."""
    data = _store(ctx).read_transcript(session_id, count)
    lines = [f"session {data.session_id}: last {data.returned} of {data.total} messages"]
    for message in data.messages:
        blocks = [b for b in (_block(b) for b in message.get("content", [])) if b]
        lines.append(f"\n## {message.get('role', '?')}\n" + "\n".join(blocks))
    return "\n".join(lines)
