"""Qwen Code chat recordings, and the Gemini CLI formats Qwen Code forked from.

Qwen Code writes ``~/.qwen/projects/<project>/chats/<sessionId>.jsonl`` (older
releases: ``~/.qwen/tmp/<hash>/chats/``): one ChatRecord per line with ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp``, ``type`` (``user`` | ``assistant``
| ``tool_result`` | ``system``), ``cwd``, ``model`` and ``message``, a Gemini
``Content`` (``{role, parts}``). Like Qwen Code's own resume, the conversation
is the parent chain of the last record; records sharing a ``uuid`` are one
message whose parts are concatenated. A ``chat_compression`` system record
keeps the original history on the chain; the summary turns of its
``compressedHistory`` are emitted where the compression happened.

Gemini CLI formats read too: a JSON document (``{"messages": [...]}`` or a list)
of message records ``{type: 'user' | 'gemini', content, toolCalls, thoughts}``,
the same records as JSONL with ``$rewindTo`` lines, and ``/chat save``
checkpoints (a JSON list of ``Content``).

Mapping: ``functionCall`` → ``tool_use``; ``functionResponse`` → ``tool_result``
in a user message; ``thought`` parts → unsigned ``thinking`` blocks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import ImportFormatError
from workhearth.models.messages import Block, Message, Role, ToolResultBlock
from workhearth.sessions.importers import (
    ImportedSession,
    first_text,
    last_model,
    last_text,
    read_json_lines_noting,
)

Record = dict[str, Any]

# Gemini CLI tool-call states that mean the call ended without a usable result.
_FAILED_STATES = frozenset({"error", "cancelled", "canceled"})


def load_qwen_code(path: Path) -> ImportedSession:
    """Read a Qwen Code recording or a Gemini CLI conversation / checkpoint file."""
    path = Path(path)
    values, bad_lines = read_json_lines_noting(path)
    if not values:
        try:
            values, bad_lines = [orjson.loads(path.read_bytes())], []
        except orjson.JSONDecodeError:
            raise ImportFormatError(
                f"{path} is not a Qwen Code transcript (no JSON lines)"
            ) from None

    if len(values) == 1 and isinstance(values[0], list):
        session = _from_gemini_list(values[0])
    elif (
        len(values) == 1
        and isinstance(values[0], dict)
        and isinstance(values[0].get("messages"), list)
    ):
        session = _from_gemini_conversation(values[0], values[0]["messages"])
    else:
        records = [v for v in values if isinstance(v, dict)]
        if any("uuid" in r and isinstance(r.get("message"), dict) for r in records):
            session = _from_chat_records(records)
        elif any(_is_gemini_record(r) or "$rewindTo" in r for r in records):
            session = _from_gemini_jsonl(records)
        else:
            raise ImportFormatError(f"{path} is not a Qwen Code transcript (no chat records)")
    session.note_bad_lines(bad_lines)
    return session


# --- Qwen Code ChatRecords ------------------------------------------------------------


def _from_chat_records(records: list[Record]) -> ImportedSession:
    main = [r for r in records if not r.get("isSidechain")]
    side = [r for r in records if r.get("isSidechain")]
    if not main:
        # Why: a subagent's own file holds only sidechain records; it is the conversation.
        main, side = side, []
    session = _chat_session(main)
    groups: dict[str, list[Record]] = {}
    for rec in side:
        groups.setdefault(str(rec.get("agentId") or "agent"), []).append(rec)
    for agent_id, group in groups.items():
        sub = _chat_session(group)
        sub.agent_id = agent_id
        session.sidechains.append(sub)
    return session


def _chat_session(records: list[Record]) -> ImportedSession:
    messages = _chat_messages(_chain(records))
    return ImportedSession(
        source_id=first_text(records, "sessionId"),
        workspace=first_text(records, "cwd"),
        title=_custom_title(records),
        created=first_text(records, "timestamp"),
        model=last_model(messages),
        messages=messages,
        sidechains=[],
        updated=last_text(records, "timestamp"),
    )


def _chat_messages(chain: list[Record]) -> list[Message]:
    """Canonical messages for the records of a chain, tool results of one step together."""
    pairing = _Pairing()
    messages: list[Message] = []
    for rec in chain:
        if rec.get("type") == "system":
            if rec.get("subtype") == "chat_compression":
                messages.extend(_compression_summary(rec, chain, pairing))
            continue
        content = rec.get("message")
        if not isinstance(content, dict):
            continue
        role: Role = "assistant" if rec.get("type") == "assistant" else "user"
        blocks = _record_blocks(rec, content, role, pairing)
        if not blocks:
            continue
        if messages and _joins_results(messages[-1], rec):
            # Why: Qwen Code records one line per finished tool call; the API wants them together.
            messages[-1]["content"].extend(blocks)
            continue
        messages.append(_chat_message(rec, role, blocks))
    return messages


def _record_blocks(
    rec: Record, content: dict[str, Any], role: Role, pairing: _Pairing
) -> list[Block]:
    """A record's parts as blocks; results of a failed tool call are marked as errors."""
    blocks = _convert_parts(content.get("parts"), role, pairing, str(rec.get("uuid")))
    if rec.get("type") == "tool_result" and _tool_failed(rec.get("toolCallResult")):
        for block in blocks:
            if block["type"] == "tool_result":
                block["is_error"] = True
    return blocks


def _joins_results(previous: Message, rec: Record) -> bool:
    """Whether a tool_result record belongs in ``previous``, a user message of only results."""
    return (
        rec.get("type") == "tool_result"
        and previous["role"] == "user"
        and all(b["type"] == "tool_result" for b in previous["content"])
    )


def _chat_message(rec: Record, role: Role, blocks: list[Block]) -> Message:
    message: Message = {"role": role, "content": blocks}
    if rec.get("uuid"):
        message["id"] = str(rec["uuid"])
    if role == "assistant" and isinstance(rec.get("model"), str) and rec["model"]:
        message["model"] = rec["model"]
    return message


def _custom_title(records: list[Record]) -> str | None:
    """The last title the user set (a ``custom_title`` system record)."""
    titles = [
        r["systemPayload"]["customTitle"]
        for r in records
        if r.get("subtype") == "custom_title"
        and isinstance(r.get("systemPayload"), dict)
        and isinstance(r["systemPayload"].get("customTitle"), str)
    ]
    return titles[-1] if titles else None


def _chain(records: list[Record]) -> list[Record]:
    """The parent chain of the last record, oldest first; same-uuid records merged."""
    by_uuid: dict[str, Record] = {}
    last: str | None = None
    for rec in records:
        uid = rec.get("uuid")
        if not isinstance(uid, str):
            continue
        last = uid
        if uid not in by_uuid:
            by_uuid[uid] = dict(rec)
            continue
        # Why: Qwen Code may write one message over several lines that share a uuid.
        base = by_uuid[uid]
        extra = rec.get("message")
        if isinstance(extra, dict):
            if isinstance(base.get("message"), dict):
                parts = list(base["message"].get("parts") or []) + list(extra.get("parts") or [])
                base["message"] = {**base["message"], "parts": parts}
            else:
                base["message"] = extra
        for key in ("model", "toolCallResult"):
            base.setdefault(key, rec.get(key))
    chain: list[Record] = []
    seen: set[str] = set()
    while last is not None and last in by_uuid and last not in seen:
        seen.add(last)
        chain.append(by_uuid[last])
        parent = by_uuid[last].get("parentUuid")
        last = parent if isinstance(parent, str) else None
    chain.reverse()
    return chain


def _compression_summary(rec: Record, chain: list[Record], pairing: _Pairing) -> list[Message]:
    """The summary turns a chat_compression record put before the history it kept.

    ``compressedHistory`` is the summary turns followed by the retained tail of
    the original history; the tail is already on the chain, so only the leading
    entries that match no earlier record are emitted.
    """
    payload = rec.get("systemPayload")
    history = payload.get("compressedHistory") if isinstance(payload, dict) else None
    if not isinstance(history, list):
        return []
    earlier = [r["message"].get("parts") for r in chain if isinstance(r.get("message"), dict)]
    out: list[Message] = []
    for i, content in enumerate(history):
        if not isinstance(content, dict) or content.get("parts") in earlier:
            break
        role: Role = "assistant" if content.get("role") == "model" else "user"
        blocks = _convert_parts(content.get("parts"), role, pairing, f"{rec.get('uuid')}-{i}")
        if blocks:
            out.append({"role": role, "content": blocks, "id": f"{rec.get('uuid')}#{i}"})
    return out


def _tool_failed(info: Any) -> bool:
    return isinstance(info, dict) and (info.get("status") == "error" or bool(info.get("error")))


# --- Gemini parts → canonical blocks --------------------------------------------------


class _Pairing:
    """Gives id-less function calls an id and matches id-less responses to them by name."""

    def __init__(self) -> None:
        self.open: dict[str, list[str]] = {}

    def call(self, name: str, call_id: Any, fallback: str) -> str:
        tool_id = call_id if isinstance(call_id, str) and call_id else fallback
        self.open.setdefault(name, []).append(tool_id)
        return tool_id

    def response(self, name: str, call_id: Any, fallback: str) -> str:
        waiting = self.open.get(name, [])
        if isinstance(call_id, str) and call_id:
            if call_id in waiting:
                waiting.remove(call_id)
            return call_id
        return waiting.pop(0) if waiting else fallback


def _convert_parts(parts: Any, role: str, pairing: _Pairing, key: str) -> list[Block]:
    if isinstance(parts, (str, dict)):
        parts = [parts]
    if not isinstance(parts, list):
        return []
    blocks: list[Block] = []
    for i, part in enumerate(parts):
        if isinstance(part, str):
            part = {"text": part}
        if not isinstance(part, dict):
            continue
        block = _convert_part(part, pairing, f"{key}-{i}")
        if block is not None:
            blocks.append(block)
    if role == "assistant":
        # Why: a tool_result can only travel in a user message; none belong to the model.
        blocks = [b for b in blocks if b["type"] != "tool_result"]
    return blocks


def _convert_part(part: dict[str, Any], pairing: _Pairing, fallback_id: str) -> Block | None:
    """One Gemini part as a block (None when it says nothing); ``fallback_id`` names an id-less call."""
    if isinstance(part.get("text"), str):
        return _text_part(part)
    call = part.get("functionCall")
    if isinstance(call, dict):
        return _function_call(call, pairing, fallback_id)
    resp = part.get("functionResponse")
    if isinstance(resp, dict):
        return _function_response(resp, pairing, fallback_id)
    data = part.get("inlineData")
    if isinstance(data, dict):
        return _inline_data(data)
    if isinstance(part.get("fileData"), dict):
        uri = part["fileData"].get("fileUri") or "file"
        return {"type": "text", "text": f"[attached {uri}]"}
    return None


def _text_part(part: dict[str, Any]) -> Block | None:
    text = part["text"]
    if not text.strip():
        return None
    if part.get("thought") is True:
        return {"type": "thinking", "thinking": text}
    return {"type": "text", "text": text}


def _function_call(call: dict[str, Any], pairing: _Pairing, fallback_id: str) -> Block:
    name = str(call.get("name") or "")
    args = call.get("args")
    return {
        "type": "tool_use",
        "id": pairing.call(name, call.get("id"), fallback_id),
        "name": name,
        "input": args if isinstance(args, dict) else {},
    }


def _function_response(resp: dict[str, Any], pairing: _Pairing, fallback_id: str) -> Block:
    name = str(resp.get("name") or "")
    content, failed = _response_content(resp.get("response"))
    result: ToolResultBlock = {
        "type": "tool_result",
        "tool_use_id": pairing.response(name, resp.get("id"), fallback_id),
        "content": content,
    }
    if failed:
        result["is_error"] = True
    return result


def _inline_data(data: dict[str, Any]) -> Block:
    """An inline image as an image block; any other attachment is named, not carried."""
    mime = str(data.get("mimeType") or "application/octet-stream")
    if mime.startswith("image/") and isinstance(data.get("data"), str):
        source = {"type": "base64", "media_type": mime, "data": data["data"]}
        return {"type": "image", "source": source}
    return {"type": "text", "text": f"[{mime} attachment omitted]"}


def _response_content(response: Any) -> tuple[str, bool]:
    """A function response as tool_result text, and whether it reports an error."""
    if isinstance(response, str):
        return response, False
    if isinstance(response, dict):
        output, error = response.get("output"), response.get("error")
        if isinstance(output, str) and set(response) <= {"output"}:
            return output, False
        if isinstance(error, str) and error and not output:
            return error, True
        if isinstance(output, str):
            return output, bool(error)
    if response is None:
        return "", False
    return orjson.dumps(response).decode(), False


# --- Gemini CLI message records -------------------------------------------------------


def _is_gemini_record(rec: Record) -> bool:
    return (
        isinstance(rec.get("id"), str)
        and rec.get("type") in ("user", "gemini")
        and "content" in rec
    )


def _from_gemini_jsonl(records: list[Record]) -> ImportedSession:
    """Gemini CLI JSONL: metadata lines, message records (last write wins), ``$rewindTo``."""
    meta: dict[str, Any] = {}
    messages: dict[str, Record] = {}
    for rec in records:
        if isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in ids else 0
            for mid in ids[cut:]:
                del messages[mid]
        elif isinstance(rec.get("$set"), dict):
            meta.update(rec["$set"])
        elif isinstance(rec.get("id"), str) and "type" in rec:
            messages[rec["id"]] = rec
        elif "sessionId" in rec:
            meta.update(rec)
    return _from_gemini_conversation(meta, list(messages.values()))


def _from_gemini_list(items: list[Any]) -> ImportedSession:
    """A JSON list: a ``/chat save`` checkpoint (Content) or bare message records."""
    if all(isinstance(i, dict) and "parts" in i for i in items):
        pairing = _Pairing()
        messages: list[Message] = []
        for i, content in enumerate(items):
            role: Role = "assistant" if content.get("role") == "model" else "user"
            blocks = _convert_parts(content.get("parts"), role, pairing, f"turn-{i}")
            if blocks:
                messages.append({"role": role, "content": blocks})
        return ImportedSession(None, None, None, None, None, messages, [])
    return _from_gemini_conversation({}, items)


def _from_gemini_conversation(meta: dict[str, Any], records: Iterable[Any]) -> ImportedSession:
    pairing = _Pairing()
    messages: list[Message] = []
    for rec in records:
        if not isinstance(rec, dict):
            continue
        mid = rec.get("id")
        if rec.get("type") == "user":
            blocks = _convert_parts(rec.get("content"), "user", pairing, str(mid))
            if blocks:
                messages.append(_with_id({"role": "user", "content": blocks}, mid))
        elif rec.get("type") == "gemini":
            messages.extend(_gemini_turn(rec, pairing))
        # info / error / warning records are UI notices, not conversation.
    directories = meta.get("directories")
    return ImportedSession(
        source_id=meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None,
        workspace=directories[0] if isinstance(directories, list) and directories else None,
        title=meta.get("summary") if isinstance(meta.get("summary"), str) else None,
        created=meta.get("startTime") if isinstance(meta.get("startTime"), str) else None,
        model=last_model(messages),
        messages=messages,
        sidechains=[],
        updated=meta.get("lastUpdated") if isinstance(meta.get("lastUpdated"), str) else None,
    )


def _gemini_turn(rec: Record, pairing: _Pairing) -> list[Message]:
    """One ``gemini`` record: thoughts, text and tool calls, then a user message of results."""
    mid = rec.get("id")
    blocks: list[Block] = []
    for thought in rec.get("thoughts") or []:
        if isinstance(thought, dict):
            text = "\n\n".join(
                str(thought[k]) for k in ("subject", "description") if thought.get(k)
            )
            if text.strip():
                blocks.append({"type": "thinking", "thinking": text})
    blocks.extend(_convert_parts(rec.get("content"), "assistant", pairing, str(mid)))
    results: list[Block] = []
    for i, call in enumerate(rec.get("toolCalls") or []):
        if not isinstance(call, dict):
            continue
        name = str(call.get("name") or "")
        tool_id = pairing.call(name, call.get("id"), f"{mid}-call-{i}")
        args = call.get("args")
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_id,
                "name": name,
                "input": args if isinstance(args, dict) else {},
            }
        )
        result = _call_result(call, tool_id)
        if result is not None:
            results.append(result)
    out: list[Message] = []
    if blocks:
        message = _with_id({"role": "assistant", "content": blocks}, mid)
        if isinstance(rec.get("model"), str) and rec["model"]:
            message["model"] = rec["model"]
        out.append(message)
    if results:
        out.append(
            _with_id({"role": "user", "content": results}, f"{mid}-results" if mid else None)
        )
    return out


def _call_result(call: Record, tool_id: str) -> Block | None:
    """A recorded tool call's outcome as a tool_result, or None while it never finished."""
    status = call.get("status")
    found = [
        b
        for b in _convert_parts(call.get("result"), "user", _Pairing(), tool_id)
        if b["type"] == "tool_result"
    ]
    if found:
        block = found[0]
        block["tool_use_id"] = tool_id
        if status in _FAILED_STATES:
            block["is_error"] = True
        return block
    display = call.get("resultDisplay")
    if status in _FAILED_STATES or status == "success":
        text = display if isinstance(display, str) else f"tool call {status}"
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        if status in _FAILED_STATES:
            block["is_error"] = True
        return block
    return None


# --- helpers ---------------------------------------------------------------------------


def _with_id(message: Message, mid: Any) -> Message:
    if isinstance(mid, str) and mid:
        message["id"] = mid
    return message
