"""Canonical messages (DESIGN §3): plain dicts shaped like Anthropic content blocks.

They stay plain JSON-ready dicts (not classes) because the session log stores and
reloads millions of them; these TypedDicts document the shape for type checkers.

A message is ``{"role": "user" | "assistant", "content": [block, ...]}`` with an
optional ``"id"`` (stable message id) and ``"model"`` (which model answered).
The system prompt is not a message; it travels beside the list.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict


class TextBlock(TypedDict):
    type: Literal["text"]
    text: str


class ThinkingBlock(TypedDict):
    """Model reasoning. ``signature`` is opaque: never edited, merged or reordered."""

    type: Literal["thinking"]
    thinking: str
    signature: NotRequired[str]


class RedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


class ToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any]


class ToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[dict[str, Any]]
    is_error: NotRequired[bool]
    line: NotRequired[str]  # what a person saw of the call (agent/tools/context.Shown); never sent


class ImageBlock(TypedDict):
    """``source`` is ``{"type": "base64", "media_type": …, "data": …}`` or ``{"type": "url", "url": …}``."""

    type: Literal["image"]
    source: dict[str, Any]


Block = (
    TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock
)
Role = Literal["user", "assistant"]


class Message(TypedDict):
    role: Role
    content: list[Block]
    id: NotRequired[str]
    model: NotRequired[str]


BLOCK_TYPES = frozenset(
    {"text", "thinking", "redacted_thinking", "tool_use", "tool_result", "image"}
)


def text_message(role: Role, text: str, **extra: Any) -> Message:
    msg: Message = {"role": role, "content": [{"type": "text", "text": text}]}
    msg.update(extra)  # type: ignore[typeddict-item]
    return msg


def message_text(message: Message, sep: str = "") -> str:
    """The text of ``message``'s ``text`` blocks, joined with ``sep``."""
    return sep.join(str(b.get("text", "")) for b in message["content"] if b.get("type") == "text")


def result_text(content: str | list[dict[str, Any]], sep: str = "\n") -> str:
    """The text of a ``tool_result``'s content (a string, or text blocks among others)."""
    if isinstance(content, str):
        return content
    return sep.join(str(c.get("text", "")) for c in content if isinstance(c, dict) and "text" in c)
