"""Any OpenAI-compatible Chat Completions endpoint, streamed (Qwen/DashScope, DeepSeek,
GLM, Kimi, Ollama, vLLM, OpenAI itself).

The request is ``POST {base_url}/chat/completions`` with ``stream: true``; the reply
arrives as ``data: {chunk}`` lines ending with ``data: [DONE]``. Text comes in
``delta.content``, reasoning in ``delta.reasoning_content`` (DeepSeek, Qwen) or
``delta.reasoning``, and tool calls as ``delta.tool_calls`` fragments keyed by
``index`` whose ``function.arguments`` strings concatenate into JSON.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

from workhearth.errors import ModelError
from workhearth.models.adapters import to_openai
from workhearth.models.base import ModelRequest
from workhearth.models.http import (
    HttpChatModel,
    RetryableError,
    raise_for_status,
)
from workhearth.models.messages import Block, Message, ToolUseBlock
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

_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}
# Why: OpenAI's reasoning models refuse ``max_tokens`` and want ``max_completion_tokens``.
_COMPLETION_TOKENS_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def openai_tools(tools: Sequence[ToolLike]) -> list[dict[str, Any]]:
    """Tools in Chat Completions form: ``{"type": "function", "function": {...}}``."""
    out = []
    for tool in tools:
        spec = tool_spec(tool)
        out.append(
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.description,
                    "parameters": dict(spec.parameters),
                },
            }
        )
    return out


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: str = ""
    announced: bool = False


@dataclass
class _Reply:
    """What one streamed reply has accumulated so far."""

    thinking: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    ids: set[str] = field(default_factory=set)
    finish: str | None = None
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    done: bool = False


class OpenAIChatModel(HttpChatModel):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint."""

    prefix = "openai"

    # ------------------------------------------------------------------ request

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        system, messages, tools = request.system, request.messages, request.tools
        max_tokens = request.max_tokens
        body: dict[str, Any] = {
            "model": self.settings.model,
            "messages": to_openai(system, messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        limit = max_tokens or self.settings.max_tokens
        if limit:
            reasoning = self.settings.model.lower().startswith(_COMPLETION_TOKENS_PREFIXES)
            body["max_completion_tokens" if reasoning else "max_tokens"] = limit
        if tools:
            body["tools"] = openai_tools(tools)
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.settings.api_key:
            headers["authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    # ------------------------------------------------------------------ stream

    def attempt(self, body: dict[str, Any], timeout: httpx.Timeout) -> Iterator[StreamEvent]:
        url = self.settings.base_url.rstrip("/") + "/chat/completions"
        with self._client.stream(
            "POST", url, json=body, headers=self._headers(), timeout=timeout
        ) as response:
            raise_for_status(response, self.settings)
            reply = _Reply()
            yield from self._events(response.iter_lines(), reply)
            if not reply.done and reply.finish is None:
                raise RetryableError("stream_cut", "the stream ended before the reply was complete")
            yield from self._finish(reply)

    def _events(self, lines: Iterable[str], reply: _Reply) -> Iterator[StreamEvent]:
        for sse in iter_sse(lines):
            if sse.data.strip() == "[DONE]":
                reply.done = True
                return
            try:
                chunk = sse.json()
            except ValueError:
                raise ModelError(
                    f"{self.settings.name}: the provider sent a chunk that is not JSON",
                    kind="provider",
                    model=self.settings.name,
                ) from None
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                self._stream_error(chunk)
            reply.model = chunk.get("model") or reply.model
            if isinstance(chunk.get("usage"), dict):
                reply.usage = _usage(chunk["usage"])
            for choice in chunk.get("choices") or ():
                if isinstance(choice, dict) and choice.get("index", 0) == 0:
                    yield from self._delta(choice, reply)

    def _delta(self, choice: dict[str, Any], reply: _Reply) -> Iterator[StreamEvent]:
        delta = choice.get("delta") or {}
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            reply.thinking.append(reasoning)
            yield ThinkingDelta(reasoning)
        content = delta.get("content")
        if isinstance(content, str) and content:
            reply.text.append(content)
            yield TextDelta(content)
        for fragment in delta.get("tool_calls") or ():
            call = _merge_fragment(reply.calls, fragment)
            if call is not None and call.name and not call.announced:
                if not call.id or call.id in reply.ids:
                    # Why: some local servers send no id, or the same id for parallel calls.
                    call.id = _new_call_id()
                reply.ids.add(call.id)
                call.announced = True
                yield ToolCallStarted(call.id, call.name)
        if choice.get("finish_reason"):
            reply.finish = choice["finish_reason"]

    def _stream_error(self, chunk: dict[str, Any]) -> None:
        error = chunk["error"]
        detail = error.get("message") or error.get("type") if isinstance(error, dict) else error
        code = error.get("code") if isinstance(error, dict) else None
        if code in (429, "rate_limit_exceeded") or (isinstance(code, int) and code >= 500):
            raise RetryableError("server", f"provider error in stream: {detail}")
        raise ModelError(
            f"{self.settings.name}: provider error in stream: {detail}",
            kind="provider",
            model=self.settings.name,
        )

    def _finish(self, reply: _Reply) -> Iterator[StreamEvent]:
        blocks: list[Block] = []
        thinking = "".join(reply.thinking)
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking})
        text = "".join(reply.text)
        if text:
            blocks.append({"type": "text", "text": text})
        for _, call in sorted(reply.calls.items()):
            if not call.announced:
                continue  # a fragment that never named its function
            block: ToolUseBlock = {
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": parse_tool_input(call.arguments),
            }
            blocks.append(block)
            yield ToolCallFinished(block)
        stop = _FINISH.get(reply.finish or "stop", "unknown")
        if stop == "end_turn" and any(b["type"] == "tool_use" for b in blocks):
            stop = "tool_use"  # Why: some servers say "stop" even when they called tools.
        message: Message = {"role": "assistant", "content": blocks}
        message["model"] = reply.model or self.settings.model
        yield Done(
            Completion(
                message=message,
                usage=reply.usage,
                stop_reason=stop,
                model=self.settings.name,
                cost=cost_of(reply.usage, self.settings),
            )
        )


def _merge_fragment(calls: dict[int, _Call], fragment: Any) -> _Call | None:
    """Fold one ``delta.tool_calls`` entry into the calls collected so far."""
    if not isinstance(fragment, dict):
        return None
    new_id = fragment.get("id")
    index = fragment.get("index")
    if not isinstance(index, int):
        index = max(calls, default=0)
    call = calls.get(index)
    if call is not None and new_id and call.id and new_id != call.id:
        # Why: a server that reuses one index for parallel calls still gives each its own id.
        index = max(calls) + 1
        call = None
    if call is None:
        call = calls[index] = _Call()
    if new_id and not call.id:
        call.id = str(new_id)
    function = fragment.get("function") or {}
    name = function.get("name")
    if isinstance(name, str) and name and name != call.name:
        call.name += name  # Why: servers that repeat the whole name each chunk are left as is.
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        call.arguments += arguments
    elif isinstance(arguments, dict):
        call.arguments = json.dumps(arguments, ensure_ascii=False)
    return call


def _usage(raw: dict[str, Any]) -> Usage:
    details = raw.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_tokens=int(cached or raw.get("prompt_cache_hit_tokens") or 0),
    )


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"
