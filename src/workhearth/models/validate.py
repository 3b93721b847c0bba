"""Strict checks of provider request payloads, written from the APIs' real rules.

Each function returns human-readable problems; an empty list means the provider
should accept the conversation. They are stricter than the providers where the
providers are vague, so a payload that passes here is safe to send. Used by the
tests and by ``hearth sessions verify``.
"""

from __future__ import annotations

import json
from typing import Any

from workhearth.models.adapters import ANTHROPIC_BLOCK_KEYS

_THINKING = frozenset({"thinking", "redacted_thinking"})


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


# --------------------------------------------------------------------------- Anthropic


def _claim_id(value: Any, what: str, seen: set[Any], ids: list[Any], problems: list[str]) -> None:
    """Record a tool call id; report it when missing or already used in the conversation."""
    if _blank(value):
        problems.append(f"{what} has no id")
    elif value in seen:
        problems.append(f"{what} id {value} is not unique")
    else:
        seen.add(value)
        ids.append(value)


def anthropic_problems(payload: dict[str, Any]) -> list[str]:
    """Problems the Anthropic Messages API would reject in ``{"system", "messages"}``."""
    problems: list[str] = []
    system = payload.get("system")
    if system is not None and not isinstance(system, str | list):
        problems.append("system must be a string, a list of text blocks, or absent")
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return [*problems, "payload has no 'messages' list"]
    if not messages:
        return [*problems, "conversation has no messages"]

    seen_tool_ids: set[str] = set()
    pending: list[str] = []  # tool_use ids of the previous assistant message
    prev_role: str | None = None
    for index, msg in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(msg, dict):
            problems.append(f"{where} is not an object")
            prev_role, pending = None, []
            continue
        extra = sorted(set(msg) - {"role", "content"})
        if extra:
            problems.append(f"{where} has keys the API does not accept: {', '.join(extra)}")
        role = msg.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"{where} has role {role!r}; only user and assistant are allowed")
        if index == 0 and role != "user":
            problems.append(f"{where}: the first message must be a user message")
        if prev_role is not None and role == prev_role:
            problems.append(f"{where}: roles must alternate, but it follows another {role} message")

        blocks = _anthropic_blocks(msg.get("content"), where, problems)
        if role == "assistant":
            if pending:
                problems.append(
                    f"{where}: tool_use {', '.join(pending)} of messages[{index - 1}] "
                    "got no tool_result in the next message"
                )
            pending = _check_assistant_blocks(blocks, where, seen_tool_ids, problems)
        else:
            _check_user_blocks(blocks, where, pending, index, problems)
            pending = []
        prev_role = role if isinstance(role, str) else None
    if pending:
        problems.append(
            f"messages[{len(messages) - 1}]: tool_use {', '.join(pending)} "
            "has no tool_result (the conversation ends on it)"
        )
    return problems


def _anthropic_blocks(content: Any, where: str, problems: list[str]) -> list[Any]:
    if isinstance(content, str):
        if _blank(content):
            problems.append(f"{where}: content is empty")
            return []
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        problems.append(f"{where}: content must be a string or a list of blocks")
        return []
    if not content:
        problems.append(f"{where}: content is empty")
    good = []
    for pos, block in enumerate(content):
        if not isinstance(block, dict):
            problems.append(f"{where}.content[{pos}] is not an object")
            continue
        allowed = ANTHROPIC_BLOCK_KEYS.get(block.get("type"))  # type: ignore[arg-type]
        if allowed is None:
            problems.append(f"{where}.content[{pos}] has unknown block type {block.get('type')!r}")
            continue
        extra = sorted(set(block) - allowed)
        if extra:
            problems.append(f"{where}.content[{pos}] has keys the API does not accept: {extra}")
        good.append((pos, block))
    return good


def _check_assistant_blocks(
    blocks: list[Any], where: str, seen_tool_ids: set[str], problems: list[str]
) -> list[str]:
    """Check one assistant message's blocks; return its tool_use ids."""
    tool_ids: list[str] = []
    body_seen = False
    for pos, block in blocks:
        at = f"{where}.content[{pos}]"
        kind = block["type"]
        if kind in _THINKING:
            if body_seen:
                problems.append(f"{at}: {kind} must come before text and tool_use blocks")
            if kind == "thinking":
                if not isinstance(block.get("thinking"), str):
                    problems.append(f"{at}: thinking must be a string")
                if _blank(block.get("signature")):
                    problems.append(f"{at}: thinking block has no signature")
            elif _blank(block.get("data")):
                problems.append(f"{at}: redacted_thinking has no data")
            continue
        body_seen = True
        if kind == "text":
            if _blank(block.get("text")):
                problems.append(f"{at}: text block is empty")
        elif kind == "tool_use":
            _claim_id(block.get("id"), f"{at}: tool_use", seen_tool_ids, tool_ids, problems)
            if _blank(block.get("name")):
                problems.append(f"{at}: tool_use has no name")
            if not isinstance(block.get("input"), dict):
                problems.append(f"{at}: tool_use input must be an object")
        else:
            problems.append(f"{at}: {kind} is not allowed in an assistant message")
    return tool_ids


def _check_user_blocks(
    blocks: list[Any], where: str, pending: list[str], index: int, problems: list[str]
) -> None:
    answered: set[str] = set()
    other_seen = False
    for pos, block in blocks:
        at = f"{where}.content[{pos}]"
        kind = block["type"]
        if kind == "tool_result":
            if other_seen:
                problems.append(f"{at}: tool_result blocks must come first in the message")
            tool_id = block.get("tool_use_id")
            if tool_id in answered:
                problems.append(f"{at}: second tool_result for {tool_id}")
            elif tool_id not in pending:
                problems.append(
                    f"{at}: tool_result for {tool_id!r} answers no tool_use of messages[{index - 1}]"
                )
            else:
                answered.add(tool_id)
            _check_tool_result_content(block.get("content", ""), at, problems)
            if "is_error" in block and not isinstance(block["is_error"], bool):
                problems.append(f"{at}: is_error must be a boolean")
            continue
        other_seen = True
        if kind == "text":
            if _blank(block.get("text")):
                problems.append(f"{at}: text block is empty")
        elif kind == "image":
            _check_image_source(block.get("source"), at, problems)
        else:
            problems.append(f"{at}: {kind} is not allowed in a user message")
    missing = [tool_id for tool_id in pending if tool_id not in answered]
    if missing:
        problems.append(
            f"{where}: tool_use {', '.join(missing)} of messages[{index - 1}] has no tool_result here"
        )


def _check_tool_result_content(content: Any, at: str, problems: list[str]) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        problems.append(f"{at}: tool_result content must be a string or a list of blocks")
        return
    for pos, item in enumerate(content):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "text":
            if _blank(item.get("text")):
                problems.append(f"{at}.content[{pos}]: text block is empty")
        elif kind == "image":
            _check_image_source(item.get("source"), f"{at}.content[{pos}]", problems)
        else:
            problems.append(f"{at}.content[{pos}]: {kind!r} is not allowed in a tool_result")


def _check_image_source(source: Any, at: str, problems: list[str]) -> None:
    if not isinstance(source, dict):
        problems.append(f"{at}: image has no source")
    elif source.get("type") == "base64":
        if _blank(source.get("media_type")) or _blank(source.get("data")):
            problems.append(f"{at}: base64 image needs media_type and data")
    elif source.get("type") == "url":
        if _blank(source.get("url")):
            problems.append(f"{at}: url image has no url")
    else:
        problems.append(f"{at}: image source type must be base64 or url")


# --------------------------------------------------------------------------- OpenAI


def openai_problems(messages: list[dict[str, Any]]) -> list[str]:
    """Problems OpenAI Chat Completions would reject in a ``messages`` list."""
    if not isinstance(messages, list):
        return ["messages must be a list"]
    if not messages:
        return ["conversation has no messages"]
    problems: list[str] = []
    seen_call_ids: set[str] = set()
    pending: list[str] = []  # tool_call ids still waiting for their tool message
    pending_from = -1
    answered: set[str] = set()
    conversation_started = False
    for index, msg in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(msg, dict):
            problems.append(f"{where} is not an object")
            continue
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id in pending:
                pending.remove(call_id)
                answered.add(call_id)
            elif call_id in answered:
                problems.append(f"{where}: second tool message for tool call {call_id}")
            else:
                problems.append(
                    f"{where}: tool message for {call_id!r} does not answer a tool call "
                    "of the assistant message just before it"
                )
            _check_openai_tool_content(msg.get("content"), where, problems)
            continue

        if pending:
            problems.append(
                f"{where}: tool calls {', '.join(pending)} of messages[{pending_from}] "
                "need their tool messages before any other message"
            )
        pending, answered = [], set()
        if role in ("system", "developer"):
            if index != 0:
                problems.append(f"{where}: a {role} message may only come first")
            if _openai_content_empty(msg.get("content")):
                problems.append(f"{where}: {role} content is empty")
            continue
        if role == "user":
            if _openai_content_empty(msg.get("content")):
                problems.append(f"{where}: user content is empty")
            else:
                _check_openai_parts(msg.get("content"), where, problems)
        elif role == "assistant":
            if not conversation_started:
                problems.append(f"{where}: the first non-system message must be a user message")
            pending = _check_openai_assistant(msg, where, seen_call_ids, problems)
            pending_from = index
        else:
            problems.append(f"{where} has unknown role {role!r}")
        conversation_started = True
    if pending:
        problems.append(
            f"messages[{pending_from}]: tool calls {', '.join(pending)} are never answered "
            "(the conversation ends on them)"
        )
    return problems


def _openai_content_empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return content == ""
    return isinstance(content, list) and not content


def _check_openai_parts(content: Any, where: str, problems: list[str]) -> None:
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        problems.append(f"{where}: content must be a string or a list of parts")
        return
    for pos, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        at = f"{where}.content[{pos}]"
        if kind == "text":
            if not isinstance(part.get("text"), str) or not part["text"]:
                problems.append(f"{at}: text part is empty")
        elif kind == "image_url":
            image = part.get("image_url")
            if not isinstance(image, dict) or _blank(image.get("url")):
                problems.append(f"{at}: image_url part has no url")
        elif kind not in ("input_audio", "file", "refusal"):
            problems.append(f"{at}: unknown content part type {kind!r}")


def _check_openai_tool_content(content: Any, where: str, problems: list[str]) -> None:
    if isinstance(content, str):
        return
    if isinstance(content, list) and all(
        isinstance(part, dict) and part.get("type") == "text" for part in content
    ):
        return
    problems.append(f"{where}: tool message content must be a string or text parts")


def _check_openai_assistant(
    msg: dict[str, Any], where: str, seen_call_ids: set[str], problems: list[str]
) -> list[str]:
    """Check one assistant message; return the ids of its tool calls."""
    content = msg.get("content")
    has_content = not _openai_content_empty(content)
    if has_content:
        _check_openai_parts(content, where, problems)
    calls = msg.get("tool_calls")
    if calls is None:
        if not has_content:
            problems.append(f"{where}: assistant message has neither content nor tool_calls")
        return []
    if not isinstance(calls, list) or not calls:
        problems.append(f"{where}: tool_calls must be a non-empty list when present")
        return []
    ids: list[str] = []
    for pos, call in enumerate(calls):
        at = f"{where}.tool_calls[{pos}]"
        if not isinstance(call, dict):
            problems.append(f"{at} is not an object")
            continue
        _claim_id(call.get("id"), f"{at}: tool call", seen_call_ids, ids, problems)
        if call.get("type") != "function":
            problems.append(f"{at}: type must be 'function'")
        function = call.get("function")
        if not isinstance(function, dict) or _blank(function.get("name")):
            problems.append(f"{at}: function name is missing")
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            problems.append(f"{at}: function.arguments must be a JSON string")
            continue
        try:
            parsed = json.loads(arguments)
        except ValueError:
            problems.append(f"{at}: function.arguments is not valid JSON")
            continue
        if not isinstance(parsed, dict):
            problems.append(f"{at}: function.arguments must encode a JSON object")
    return ids
