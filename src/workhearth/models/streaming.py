"""The events of :meth:`ChatModel.stream <workhearth.models.base.ChatModel.stream>`.

A model yields typed events while the reply arrives, so a terminal can print as
the model writes, and ends with :class:`Done`, which holds the whole reply as a
canonical assistant message plus usage and stop reason.

Also here: the Server-Sent Events parser both providers share, and the tool
description (:class:`ToolSpec`) each provider turns into its own format.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from workhearth.config import ModelSettings
from workhearth.models.base import ChatModel
from workhearth.models.messages import Message, ToolUseBlock

# Why: both APIs' own vocabularies; OpenAI finish reasons are mapped onto these.
StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal", "unknown"
]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: ``parameters`` is a JSON schema of the input object."""

    name: str
    description: str
    parameters: Mapping[str, Any]


ToolLike = ToolSpec | Mapping[str, Any]


def tool_spec(tool: ToolLike) -> ToolSpec:
    """Accept a :class:`ToolSpec` or a ``{"name", "description", "parameters"}`` dict."""
    if isinstance(tool, ToolSpec):
        return tool
    schema = tool.get("parameters", tool.get("input_schema"))
    return ToolSpec(
        name=str(tool["name"]),
        description=str(tool.get("description", "")),
        parameters=schema if isinstance(schema, Mapping) else {"type": "object", "properties": {}},
    )


@dataclass(frozen=True)
class Usage:
    """Tokens of one call. ``input_tokens`` includes the cached part (read or written)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


def cost_of(usage: Usage, settings: ModelSettings) -> float | None:
    """Estimated cost from the configured per-million prices, or None when unpriced."""
    if settings.price_in is None and settings.price_out is None:
        return None
    return (
        usage.input_tokens * (settings.price_in or 0.0)
        + usage.output_tokens * (settings.price_out or 0.0)
    ) / 1_000_000


@dataclass(frozen=True)
class Completion:
    """One finished reply.

    ``model`` is the configured name of the model that answered (a config table
    name or an ``openai:NAME`` spec; the registry resolves it again), and
    ``message["model"]`` the model id the provider reported.
    """

    message: Message
    usage: Usage
    stop_reason: StopReason
    model: str
    cost: float | None = None

    @property
    def tool_calls(self) -> list[ToolUseBlock]:
        return [b for b in self.message["content"] if b.get("type") == "tool_use"]  # type: ignore[misc]


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStarted:
    """The model began a tool call; its input is still arriving."""

    id: str
    name: str


@dataclass(frozen=True)
class ToolCallFinished:
    """A tool call is complete; ``block`` is the canonical ``tool_use`` block."""

    block: ToolUseBlock


@dataclass(frozen=True)
class Done:
    completion: Completion


StreamEvent = TextDelta | ThinkingDelta | ToolCallStarted | ToolCallFinished | Done


# Why: the name the agent and the providers grew up with; it is the one model base.
StreamingChatModel = ChatModel


# --------------------------------------------------------------------------- SSE


@dataclass
class SSE:
    """One Server-Sent Event: ``event`` is ``""`` when the server sent no ``event:`` line."""

    event: str = ""
    data: str = ""

    def json(self) -> Any:
        return json.loads(self.data)


def iter_sse(lines: Iterable[str]) -> Iterator[SSE]:
    """Parse SSE lines (without their line ends) into events, per the WHATWG rules.

    ``data:`` lines of one event join with newlines; a blank line dispatches;
    ``:`` lines are comments (keep-alives). An event not closed by a blank line
    when the stream ends is dropped: it may be cut in the middle.
    """
    event = ""
    data: list[str] | None = None
    for line in lines:
        if line == "":
            if data is not None:
                yield SSE(event or "", "\n".join(data))
            event, data = "", None
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data = [*(data or []), value]
        elif name == "event":
            event = value
        # Why: "id" and "retry" matter only to browsers that reconnect; we retry ourselves.


def parse_tool_input(raw: str) -> dict[str, Any]:
    """Streamed tool arguments to an input object; non-objects kept as ``{"arguments": raw}``."""
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except ValueError:
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": raw}
