"""Canonical messages to provider request formats and back (DESIGN §3).

Adapters translate; they do not repair. Feed them a conversation that
:func:`workhearth.sessions.reconstruct.repair` produced (or one already valid)
and the result passes :mod:`workhearth.models.validate`.

Blocks are passed through without copying whenever they already have the
provider's shape, so a signed thinking block reaches Anthropic byte for byte.
The output shares those block dicts with the input: treat it as read-only.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from workhearth.errors import ImportFormatError
from workhearth.models.messages import Block, Message

# Keys the Anthropic Messages API accepts on each block; anything else (our own
# bookkeeping) is rejected by the API with "Extra inputs are not permitted".
ANTHROPIC_BLOCK_KEYS: dict[str, frozenset[str]] = {
    "text": frozenset({"type", "text", "cache_control"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "tool_use": frozenset({"type", "id", "name", "input", "cache_control"}),
    "tool_result": frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
    "image": frozenset({"type", "source", "cache_control"}),
}

_JOIN = "\n\n"


def has_signature(block: Block | dict[str, Any]) -> bool:
    """True for a thinking block that carries a non-empty signature (Anthropic can verify it)."""
    signature = block.get("signature")
    return isinstance(signature, str) and signature != ""


def tool_arguments_json(tool_input: Any) -> str:
    """Serialise tool input the way OpenAI expects ``function.arguments``: a JSON string."""
    try:
        return orjson.dumps(tool_input).decode()
    except TypeError:
        # Why: orjson refuses integers beyond 64 bits and similar; json copes with them.
        return json.dumps(tool_input, ensure_ascii=False)


# --------------------------------------------------------------------------- Anthropic


def to_anthropic(system: str | None, messages: list[Message]) -> dict[str, Any]:
    """``{"system": str | None, "messages": [...]}`` for the Anthropic Messages API.

    Message keys other than ``role`` and ``content`` (``id``, ``model``) are left
    out. Thinking blocks without a signature are dropped: the API refuses them,
    and they come from another provider's reasoning or a stream that was cut off.
    """
    out: list[dict[str, Any]] = []
    for msg in messages:
        content: list[Any] = []
        for block in msg["content"]:
            if block.get("type") == "thinking" and not has_signature(block):
                continue
            content.append(_anthropic_block(block))
        out.append({"role": msg["role"], "content": content})
    return {"system": system or None, "messages": out}


def _anthropic_block(block: Block) -> Any:
    allowed = ANTHROPIC_BLOCK_KEYS.get(block.get("type", ""))
    if allowed is None or block.keys() <= allowed:
        return block
    return {key: value for key, value in block.items() if key in allowed}


# --------------------------------------------------------------------------- OpenAI


def to_openai(system: str | None, messages: list[Message]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions ``messages``.

    - system prompt first, when there is one;
    - assistant text joins into ``content``, ``tool_use`` becomes ``tool_calls``;
      thinking and redacted thinking are dropped (no portable field for them), and
      an assistant message left with nothing is skipped;
    - each ``tool_result`` becomes its own ``role: "tool"`` message right after the
      assistant message, in order; images a tool returned follow in a user message
      (tool messages carry text only);
    - user text becomes a string (text blocks joined by a blank line), or a list of
      parts with ``image_url`` when the message holds images.
    """
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for msg in messages:
        if msg["role"] == "assistant":
            _openai_assistant(msg["content"], out)
        else:
            _openai_user(msg["content"], out)
    return out


def _openai_assistant(blocks: list[Block], out: list[dict[str, Any]]) -> None:
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(block["text"])  # type: ignore[typeddict-item]
        elif kind == "tool_use":
            calls.append(
                {
                    "id": block["id"],  # type: ignore[typeddict-item]
                    "type": "function",
                    "function": {
                        "name": block["name"],  # type: ignore[typeddict-item]
                        "arguments": tool_arguments_json(block["input"]),  # type: ignore[typeddict-item]
                    },
                }
            )
    if not texts and not calls:
        # Why: OpenAI rejects an assistant message with neither content nor tool_calls;
        # one that held only thinking says nothing this format can carry.
        return
    entry: dict[str, Any] = {"role": "assistant", "content": _JOIN.join(texts) if texts else None}
    if calls:
        entry["tool_calls"] = calls
    out.append(entry)


def _openai_user(blocks: list[Block], out: list[dict[str, Any]]) -> None:
    parts: list[dict[str, Any]] = []
    tool_images: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "tool_result":
            text, images = _tool_result_text(block.get("content", ""))  # type: ignore[arg-type]
            call_id = block["tool_use_id"]  # type: ignore[typeddict-item]
            out.append({"role": "tool", "tool_call_id": call_id, "content": text})
            if images:
                tool_images.append(
                    {"type": "text", "text": f"(Images returned by tool call {call_id}.)"}
                )
                tool_images.extend(images)
        elif kind == "text":
            parts.append({"type": "text", "text": block["text"]})  # type: ignore[typeddict-item]
        elif kind == "image":
            parts.append(_image_part(block["source"]))  # type: ignore[typeddict-item]
    parts = tool_images + parts
    if not parts:
        return
    if all(part["type"] == "text" for part in parts):
        out.append({"role": "user", "content": _JOIN.join(part["text"] for part in parts)})
    else:
        out.append({"role": "user", "content": parts})


def _tool_result_text(content: str | list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(content, str):
        return content, []
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for item in content:
        if item.get("type") == "text":
            texts.append(item.get("text", ""))
        elif item.get("type") == "image" and isinstance(item.get("source"), dict):
            images.append(_image_part(item["source"]))
    return "\n".join(texts), images


def _image_part(source: dict[str, Any]) -> dict[str, Any]:
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = source.get("url", "")
    return {"type": "image_url", "image_url": {"url": url}}


# --------------------------------------------------------------------------- import


def from_openai(messages: list[dict[str, Any]]) -> tuple[str | None, list[Message]]:
    """Read OpenAI Chat Completions messages back into ``(system, canonical messages)``.

    System and developer messages join into the system prompt. ``tool`` messages
    and the user message after them become one canonical user message (tool
    results first). ``reasoning_content`` (DeepSeek, Qwen) becomes an unsigned
    thinking block. Arguments that are not a JSON object are kept as
    ``{"arguments": <raw string>}`` so nothing is lost.

    Raises :class:`ImportFormatError` for a message this format cannot hold.
    """
    system_parts: list[str] = []
    out: list[Message] = []
    for index, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise ImportFormatError(f"message {index} is not an object")
        role = msg.get("role")
        content = msg.get("content")
        if role in ("system", "developer"):
            text = _parts_text(content)
            if text:
                system_parts.append(text)
            continue
        if role == "user":
            blocks = _user_blocks(content)
        elif role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str):
                raise ImportFormatError(f"message {index}: tool message without tool_call_id")
            blocks = [
                {"type": "tool_result", "tool_use_id": call_id, "content": _parts_text(content)}
            ]
        elif role == "assistant":
            blocks = _assistant_blocks(msg, index)
        else:
            raise ImportFormatError(f"message {index}: unknown role {role!r}")
        if not blocks:
            continue
        canonical_role = "assistant" if role == "assistant" else "user"
        if canonical_role == "user" and out and out[-1]["role"] == "user":
            # Why: tool messages and the user text after them are one canonical turn.
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": canonical_role, "content": blocks})  # type: ignore[typeddict-item]
    return (_JOIN.join(system_parts) or None), out


def _parts_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    raise ImportFormatError(f"unsupported message content {type(content).__name__}")


def _user_blocks(content: Any) -> list[Any]:
    if isinstance(content, str) or content is None:
        return [{"type": "text", "text": content}] if content else []
    if not isinstance(content, list):
        raise ImportFormatError(f"unsupported user content {type(content).__name__}")
    blocks: list[Any] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and part.get("text"):
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "image_url":
            url = part.get("image_url", {}).get("url", "")
            blocks.append({"type": "image", "source": _image_source(url)})
    return blocks


def _image_source(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}


def _assistant_blocks(msg: dict[str, Any], index: int) -> list[Any]:
    blocks: list[Any] = []
    reasoning = msg.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        blocks.append({"type": "thinking", "thinking": reasoning})
    text = _parts_text(msg.get("content"))
    if text:
        blocks.append({"type": "text", "text": text})
    for call in msg.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(call.get("id"), str):
            raise ImportFormatError(f"message {index}: malformed tool call")
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": function.get("name", ""),
                "input": _parse_arguments(function.get("arguments")),
            }
        )
    return blocks


def _parse_arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        parsed = json.loads(raw)
    except (TypeError, ValueError):
        return {"arguments": raw}
    return parsed if isinstance(parsed, dict) else {"arguments": raw}
