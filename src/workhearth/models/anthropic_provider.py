"""The Anthropic Messages API, streamed.

``POST {base_url}/v1/messages`` with ``stream: true`` answers with named events:
``message_start``, then per content block ``content_block_start`` /
``content_block_delta`` (``text_delta``, ``thinking_delta``, ``signature_delta``,
``input_json_delta``) / ``content_block_stop``, then ``message_delta`` (stop
reason, output tokens) and ``message_stop``; ``ping`` keeps the line alive and
``error`` reports a failure (``overloaded_error`` midway, for instance).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from workhearth.errors import ModelError
from workhearth.models.adapters import to_anthropic
from workhearth.models.base import ModelRequest
from workhearth.models.http import (
    HttpChatModel,
    RetryableError,
    raise_for_status,
)
from workhearth.models.messages import Block, Message
from workhearth.models.streaming import (
    Completion,
    Done,
    StopReason,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolLike,
    Usage,
    cost_of,
    iter_sse,
    parse_tool_input,
    tool_spec,
)

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
_STOP_REASONS = frozenset(
    {"end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"}
)
_RETRYABLE_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


def anthropic_tools(tools: Sequence[ToolLike]) -> list[dict[str, Any]]:
    """Tools in Messages API form: ``{"name", "description", "input_schema"}``."""
    out = []
    for tool in tools:
        spec = tool_spec(tool)
        out.append(
            {
                "name": spec.name,
                "description": spec.description,
                "input_schema": dict(spec.parameters),
            }
        )
    return out


@dataclass
class _Reply:
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    json_parts: dict[int, list[str]] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str | None = None
    model: str | None = None
    done: bool = False


class AnthropicChatModel(HttpChatModel):
    """A model behind the Anthropic Messages API (or a proxy that speaks it)."""

    prefix = "anthropic"
    default_context_window = 200_000

    # ------------------------------------------------------------------ request

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        system, messages, tools = request.system, request.messages, request.tools
        max_tokens = request.max_tokens
        payload = to_anthropic(system, messages)
        limit = max_tokens or self.settings.max_tokens or DEFAULT_MAX_TOKENS
        body: dict[str, Any] = {"model": self.settings.model, "max_tokens": limit}
        if payload["system"]:
            body["system"] = payload["system"]
        body["messages"] = payload["messages"]
        budget = self.settings.thinking_budget
        if budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            # Why: the API requires max_tokens above the thinking budget.
            body["max_tokens"] = max(limit, budget + 1024)
        if tools:
            body["tools"] = anthropic_tools(tools)
        body["stream"] = True
        return body

    def _url(self) -> str:
        base = self.settings.base_url.rstrip("/")
        # Why: ANTHROPIC_BASE_URL is the host root by convention, but people paste ".../v1".
        return base + ("/messages" if base.endswith("/v1") else "/v1/messages")

    def _headers(self) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": API_VERSION,
        }
        if self.settings.api_key:
            headers["x-api-key"] = self.settings.api_key
        return headers

    # ------------------------------------------------------------------ stream

    def attempt(self, body: dict[str, Any], timeout: httpx.Timeout) -> Iterator[StreamEvent]:
        with self._client.stream(
            "POST",
            self._url(),
            json=body,
            headers=self._headers(),
            timeout=timeout,
        ) as response:
            raise_for_status(response, self.settings)
            reply = _Reply()
            yield from self._events(response.iter_lines(), reply)
            if not reply.done:
                raise RetryableError("stream_cut", "the stream ended before message_stop")
            yield self._finish(reply)

    def _events(self, lines: Iterable[str], reply: _Reply) -> Iterator[StreamEvent]:
        for sse in iter_sse(lines):
            try:
                data = sse.json()
            except ValueError:
                raise ModelError(
                    f"{self.settings.name}: the provider sent an event that is not JSON",
                    kind="provider",
                    model=self.settings.name,
                ) from None
            if not isinstance(data, dict):
                continue
            kind = sse.event or data.get("type", "")
            if kind == "message_start":
                message = data.get("message") or {}
                reply.model = message.get("model")
                _add_usage(reply.usage, message.get("usage"))
            elif kind == "content_block_start":
                yield from self._block_start(data, reply)
            elif kind == "content_block_delta":
                yield from self._block_delta(data, reply)
            elif kind == "content_block_stop":
                yield from self._block_stop(data, reply)
            elif kind == "message_delta":
                delta = data.get("delta") or {}
                reply.stop_reason = delta.get("stop_reason") or reply.stop_reason
                _add_usage(reply.usage, data.get("usage"))
            elif kind == "message_stop":
                reply.done = True
                return
            elif kind == "error":
                self._stream_error(data)
            # "ping" and event types added later are ignored, as the API asks.

    def _block_start(self, data: dict[str, Any], reply: _Reply) -> Iterator[StreamEvent]:
        index = data.get("index", len(reply.blocks))
        start = data.get("content_block") or {}
        kind = start.get("type")
        if kind == "text":
            reply.blocks[index] = {"type": "text", "text": start.get("text", "")}
        elif kind == "thinking":
            reply.blocks[index] = {
                "type": "thinking",
                "thinking": start.get("thinking", ""),
                "signature": start.get("signature", ""),
            }
        elif kind == "redacted_thinking":
            reply.blocks[index] = {"type": "redacted_thinking", "data": start.get("data", "")}
        elif kind == "tool_use":
            reply.blocks[index] = {
                "type": "tool_use",
                "id": start.get("id", ""),
                "name": start.get("name", ""),
                "input": {},
            }
            reply.json_parts[index] = []
            yield ToolCallStarted(start.get("id", ""), start.get("name", ""))
        # Why: server-tool blocks (web search results…) have no canonical form; they are
        # skipped rather than stored in a shape no adapter can send back.

    def _block_delta(self, data: dict[str, Any], reply: _Reply) -> Iterator[StreamEvent]:
        block = reply.blocks.get(data.get("index", -1))
        delta = data.get("delta") or {}
        if block is None:
            return
        kind = delta.get("type")
        if kind == "text_delta" and block["type"] == "text":
            block["text"] += delta.get("text", "")
            if delta.get("text"):
                yield TextDelta(delta["text"])
        elif kind == "thinking_delta" and block["type"] == "thinking":
            block["thinking"] += delta.get("thinking", "")
            if delta.get("thinking"):
                yield ThinkingDelta(delta["thinking"])
        elif kind == "signature_delta" and block["type"] == "thinking":
            block["signature"] += delta.get("signature", "")
        elif kind == "input_json_delta" and block["type"] == "tool_use":
            reply.json_parts[data["index"]].append(delta.get("partial_json", ""))

    def _block_stop(self, data: dict[str, Any], reply: _Reply) -> Iterator[StreamEvent]:
        index = data.get("index", -1)
        block = reply.blocks.get(index)
        if block is not None and block["type"] == "tool_use":
            block["input"] = parse_tool_input("".join(reply.json_parts.pop(index, [])))
            yield ToolCallFinished(block)  # type: ignore[arg-type]

    def _stream_error(self, data: dict[str, Any]) -> None:
        error = data.get("error") or {}
        kind = error.get("type", "error") if isinstance(error, dict) else "error"
        detail = error.get("message", kind) if isinstance(error, dict) else str(error)
        if kind in _RETRYABLE_ERRORS:
            raise RetryableError("server", f"{kind}: {detail}")
        raise ModelError(
            f"{self.settings.name}: provider error in stream ({kind}): {detail}",
            kind="provider",
            model=self.settings.name,
        )

    def _finish(self, reply: _Reply) -> Done:
        blocks: list[Block] = []
        for _, block in sorted(reply.blocks.items()):
            if block["type"] == "text" and not block["text"]:
                continue
            if block["type"] == "thinking" and not block["signature"]:
                del block["signature"]  # an unsigned block must not pretend to be signed
            blocks.append(block)  # type: ignore[arg-type]
        usage = Usage(
            input_tokens=reply.usage.get("input_tokens", 0)
            + reply.usage.get("cache_read_input_tokens", 0)
            + reply.usage.get("cache_creation_input_tokens", 0),
            output_tokens=reply.usage.get("output_tokens", 0),
            cache_read_tokens=reply.usage.get("cache_read_input_tokens", 0),
            cache_write_tokens=reply.usage.get("cache_creation_input_tokens", 0),
        )
        stop: StopReason = reply.stop_reason if reply.stop_reason in _STOP_REASONS else "unknown"  # type: ignore[assignment]
        message: Message = {"role": "assistant", "content": blocks}
        message["model"] = reply.model or self.settings.model
        return Done(
            Completion(
                message=message,
                usage=usage,
                stop_reason=stop,
                model=self.settings.name,
                cost=cost_of(usage, self.settings),
            )
        )


def _add_usage(total: dict[str, int], raw: Any) -> None:
    """Fold a usage object in; counts are cumulative, so the larger one wins."""
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        if isinstance(value, int) and not isinstance(value, bool):
            total[key] = max(value, total.get(key, 0))
