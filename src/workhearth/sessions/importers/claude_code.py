"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

A Claude Code file is a DAG of records linked by ``uuid``/``parentUuid``. The
conversation is the path from the newest leaf back to the root:

- ``progress``, ``system`` and other records without a message are links of
  that path: walked through, never emitted;
- a ``compact_boundary`` system record has no parent; its ``logicalParentUuid``
  continues the path into the history before the compaction, and the summary
  user message that follows it is kept as a user message;
- one assistant reply is written as several records (one per content block)
  sharing ``message.id``; they are merged into one message, blocks in order;
- parallel tool calls fork the DAG: a tool result can hang off an earlier
  piece of the reply rather than the path, so pieces and results are gathered
  by id, not only from the path;
- subagent conversations (``isSidechain`` records, ``agent_progress`` records,
  or ``<session>/subagents/agent-*.jsonl`` files) become separate sidechains.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import ImportFormatError
from workhearth.models.messages import Block, Message, ThinkingBlock, ToolResultBlock
from workhearth.sessions.importers import (
    ImportedSession,
    first_text,
    last_model,
    last_text,
    read_json_lines_noting,
)

Record = dict[str, Any]

_SYNTHETIC_MODEL = "<synthetic>"  # Claude Code's model name for locally made replies

# User texts that are Claude Code's own wrapping around local commands, not prompts.
_LOCAL_OUTPUT = re.compile(
    r"\A\s*<(local-command-caveat|local-command-stdout|local-command-stderr)>.*</\1>\s*\Z",
    re.DOTALL,
)
_COMMAND_WRAPPER = re.compile(
    r"\A\s*(?:<(command-name|command-message|command-args)>(.*?)</\1>\s*)+\Z", re.DOTALL
)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)


def load_claude_code(path: Path) -> ImportedSession:
    """Read a Claude Code session file (and its ``subagents/`` folder when present)."""
    path = Path(path)
    values, bad_lines = read_json_lines_noting(path)
    records = [v for v in values if isinstance(v, dict)]
    if not values:
        raise ImportFormatError(f"{path} is not a Claude Code transcript (no JSON lines)")
    if not any(isinstance(r.get("type"), str) for r in records):
        raise ImportFormatError(f"{path} is not a Claude Code transcript (no Claude Code records)")
    main, side = _split_sidechain_records(records)
    session = _build_session(main, records)
    session.note_bad_lines(bad_lines)
    session.sidechains = _all_sidechains(path, records, side)
    if session.agent_id is None and main and main[0].get("isSidechain"):
        session.agent_id = first_text(main, "agentId")
    return session


def _split_sidechain_records(records: list[Record]) -> tuple[list[Record], list[Record]]:
    """The main conversation's records and the sidechain (subagent) records."""
    main = [r for r in records if not r.get("isSidechain")]
    side = [r for r in records if r.get("isSidechain")]
    if not any(r.get("uuid") for r in main) and side:
        # Why: a subagent file on its own holds only sidechain records; it is the conversation.
        main, side = side, []
    return main, side


def _all_sidechains(path: Path, records: list[Record], side: list[Record]) -> list[ImportedSession]:
    """Every subagent conversation: sidechain records, progress echoes and subagent files."""
    titles = _task_titles(records)
    sidechains: dict[str, ImportedSession] = {}
    for key, group in _group_sidechains(side).items():
        sidechains[key] = _sidechain(group, key, titles)
    for key, group in _agent_progress_groups(records).items():
        sidechains.setdefault(key, _sidechain(group, key, titles))
    # Files win over what progress records echoed: they hold the whole subagent run.
    for key, sub in _subagent_files(path, titles).items():
        sidechains[key] = sub
    return sorted(sidechains.values(), key=lambda s: s.created or "")


# --- building one conversation ------------------------------------------------------


def _build_session(records: list[Record], all_records: list[Record]) -> ImportedSession:
    """Walk the newest chain of ``records`` and turn it into an ImportedSession."""
    chain, broken = _walk_chain(records)
    messages = _messages(chain, records)
    session = ImportedSession(
        source_id=first_text(records, "sessionId"),
        workspace=first_text(records, "cwd"),
        title=_title(all_records, chain),
        created=first_text(records, "timestamp"),
        model=last_model(messages),
        messages=messages,
        sidechains=[],
        updated=last_text(records, "timestamp"),
    )
    if broken:
        session.warnings.append(f"chain broken at missing parent {broken}; older history lost")
        session.skipped.append(
            {"line": None, "reason": f"history before missing parent {broken} is lost"}
        )
    return session


def _walk_chain(records: list[Record]) -> tuple[list[Record], str | None]:
    """Records from the root to the newest leaf, oldest first, and a missing parent if any.

    The newest leaf is the last-written record (file order) that no other record
    names as parent; files are append-only, so a rewound or edited branch is
    always written after the branch it replaced.
    """
    by_uuid: dict[str, Record] = {}
    order: dict[str, int] = {}
    referenced: set[str] = set()
    for i, rec in enumerate(records):
        uid = rec.get("uuid")
        if isinstance(uid, str) and uid not in by_uuid:
            by_uuid[uid] = rec
            order[uid] = i
        for key in ("parentUuid", "logicalParentUuid"):
            if isinstance(rec.get(key), str):
                referenced.add(rec[key])
    leaves = [uid for uid in by_uuid if uid not in referenced]
    if not leaves:
        # Why: only a cycle leaves no leaf; start from the last record and let `seen` stop it.
        leaves = list(by_uuid)
    if not leaves:
        return [], None
    cur: Record | None = by_uuid[max(leaves, key=order.__getitem__)]
    chain: list[Record] = []
    seen: set[str] = set()
    broken: str | None = None
    while cur is not None and cur["uuid"] not in seen:
        seen.add(cur["uuid"])
        chain.append(cur)
        refs = [cur[k] for k in ("parentUuid", "logicalParentUuid") if isinstance(cur.get(k), str)]
        parents = [by_uuid[ref] for ref in refs if ref in by_uuid]
        if refs and not parents:
            broken = refs[0]
        cur = parents[0] if parents else None
    chain.reverse()
    return chain, broken


def _messages(chain: list[Record], pool: list[Record]) -> list[Message]:
    """Canonical messages for ``chain``; ``pool`` supplies off-chain pieces and results."""
    pieces: dict[str, list[Record]] = {}
    results: dict[str, list[tuple[Record, dict[str, Any]]]] = {}
    on_chain = {id(r) for r in chain}
    for rec in pool:
        msg = rec.get("message")
        if rec.get("type") == "assistant" and isinstance(msg, dict):
            pieces.setdefault(_assistant_key(rec), []).append(rec)
        elif rec.get("type") == "user" and isinstance(msg, dict):
            for block in _blocks_of(msg):
                if block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    results.setdefault(block["tool_use_id"], []).append((rec, block))

    out: list[Message] = []
    emitted: set[str] = set()
    answered: set[str] = set()  # tool_use ids whose result has been placed
    for rec in chain:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue  # progress, system, snapshots: links of the chain only
        if rec.get("type") == "assistant":
            key = _assistant_key(rec)
            if key in emitted:
                continue
            emitted.add(key)
            merged = _merge_assistant(key, pieces.get(key, [rec]))
            if merged is None:
                continue
            out.append(merged)
            reply = _gather_results(merged, results, on_chain, answered)
            if reply is not None:
                out.append(reply)
        elif rec.get("type") == "user":
            user = _user_message(rec, answered)
            if user is not None:
                out.append(user)
    return out


def _assistant_key(rec: Record) -> str:
    mid = rec["message"].get("id")
    return mid if isinstance(mid, str) and mid else str(rec.get("uuid"))


def _merge_assistant(key: str, parts: list[Record]) -> Message | None:
    """One assistant message from the records that share ``message.id``, blocks in file order."""
    blocks: list[Block] = []
    seen_uuids: set[str | None] = set()
    seen_tools: set[str] = set()
    model: str | None = None
    for rec in parts:
        uid = rec.get("uuid")
        if uid in seen_uuids:
            continue
        seen_uuids.add(uid)
        msg = rec["message"]
        if isinstance(msg.get("model"), str) and msg["model"] != _SYNTHETIC_MODEL:
            model = msg["model"]
        for block in _convert_blocks(_blocks_of(msg)):
            if block["type"] == "tool_use":
                if block["id"] in seen_tools:
                    continue
                seen_tools.add(block["id"])
            blocks.append(block)
    if not blocks:
        return None
    message: Message = {"role": "assistant", "content": blocks, "id": key}
    if model:
        message["model"] = model
    return message


def _gather_results(
    assistant: Message,
    results: dict[str, list[tuple[Record, dict[str, Any]]]],
    on_chain: set[int],
    answered: set[str],
) -> Message | None:
    """The user message answering ``assistant``'s tool calls, wherever the results were written.

    Why: with parallel tool calls Claude Code hangs each result off the piece of
    the reply that asked for it, so some results sit on side branches of the DAG.
    A result on the chain wins; otherwise the last one written.
    """
    blocks: list[Block] = []
    first_uuid: str | None = None
    for block in assistant["content"]:
        if block["type"] != "tool_use" or block["id"] in answered:
            continue
        found = results.get(block["id"])
        if not found:
            continue
        chained = [pair for pair in found if id(pair[0]) in on_chain]
        rec, raw = chained[0] if chained else found[-1]
        answered.add(block["id"])
        converted = _convert_blocks([raw])
        if converted:
            blocks.extend(converted)
            first_uuid = first_uuid or rec.get("uuid")
    if not blocks:
        return None
    message: Message = {"role": "user", "content": blocks}
    if first_uuid:
        message["id"] = first_uuid
    return message


def _user_message(rec: Record, answered: set[str]) -> Message | None:
    """A user record as a message, without results already placed and without wrapper noise."""
    raw = [
        b
        for b in _blocks_of(rec["message"])
        if not (b.get("type") == "tool_result" and b.get("tool_use_id") in answered)
    ]
    blocks = _convert_blocks(raw)
    if not blocks or all(b["type"] == "text" and _is_wrapper_noise(b["text"]) for b in blocks):
        return None
    message: Message = {"role": "user", "content": blocks}
    if isinstance(rec.get("uuid"), str):
        message["id"] = rec["uuid"]
    return message


def _is_wrapper_noise(text: str) -> bool:
    """True for Claude Code's local-command wrappers that carry no user prompt.

    Kept on purpose: a slash command with arguments (the arguments are the
    user's words) and the expanded prompt of a custom command (``isMeta``).
    """
    if _LOCAL_OUTPUT.match(text):
        return True
    if _COMMAND_WRAPPER.match(text):
        args = _COMMAND_ARGS.search(text)
        return args is None or not args.group(1).strip()
    return False


# --- content blocks ---------------------------------------------------------------


def _blocks_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _convert_blocks(raw: Iterable[dict[str, Any]]) -> list[Block]:
    """Anthropic-style blocks as canonical blocks; empty text and unsigned empty thinking dropped."""
    out: list[Block] = []
    for b in raw:
        kind = b.get("type")
        convert = _BLOCK_CONVERTERS.get(kind) if isinstance(kind, str) else None
        block = convert(b) if convert is not None else None
        if block is not None:
            out.append(block)
    return out


def _text_block(b: dict[str, Any]) -> Block | None:
    text = b.get("text")
    if isinstance(text, str) and text.strip():
        return {"type": "text", "text": text}
    return None


def _thinking_block(b: dict[str, Any]) -> Block | None:
    thinking = b.get("thinking") or ""
    signature = b.get("signature") or ""
    if not thinking and not signature:
        return None
    block: ThinkingBlock = {"type": "thinking", "thinking": thinking}
    if "signature" in b and isinstance(b["signature"], str):
        block["signature"] = b["signature"]
    return block


def _redacted_thinking_block(b: dict[str, Any]) -> Block | None:
    return {"type": "redacted_thinking", "data": str(b.get("data") or "")}


def _tool_use_block(b: dict[str, Any]) -> Block | None:
    if not isinstance(b.get("id"), str):
        return None
    tool_input = b.get("input")
    return {
        "type": "tool_use",
        "id": b["id"],
        "name": str(b.get("name") or ""),
        "input": tool_input if isinstance(tool_input, dict) else {"input": tool_input},
    }


def _tool_result_block(b: dict[str, Any]) -> Block | None:
    if not isinstance(b.get("tool_use_id"), str):
        return None
    result: ToolResultBlock = {
        "type": "tool_result",
        "tool_use_id": b["tool_use_id"],
        "content": _result_content(b.get("content")),
    }
    if "is_error" in b:
        result["is_error"] = bool(b["is_error"])
    return result


def _image_block(b: dict[str, Any]) -> Block | None:
    if not isinstance(b.get("source"), dict):
        return None
    return {"type": "image", "source": b["source"]}


# Anthropic block type -> its converter (None drops the block); other types are dropped.
_BLOCK_CONVERTERS: dict[str, Callable[[dict[str, Any]], Block | None]] = {
    "text": _text_block,
    "thinking": _thinking_block,
    "redacted_thinking": _redacted_thinking_block,
    "tool_use": _tool_use_block,
    "tool_result": _tool_result_block,
    "image": _image_block,
}


def _result_content(content: Any) -> str | list[dict[str, Any]]:
    """A tool result's content: a string, or a list of text and image items."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return orjson.dumps(content).decode()
    items: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, dict) and item.get("type") == "text":
            items.append({"type": "text", "text": str(item.get("text") or "")})
        elif isinstance(item, dict) and item.get("type") == "image":
            items.append({"type": "image", "source": item.get("source") or {}})
        elif isinstance(item, dict):
            # Why: a block type the canonical format lacks (document, tool_reference…) is named, not lost silently.
            items.append({"type": "text", "text": f"[{item.get('type', 'unknown')} omitted]"})
        else:
            items.append({"type": "text", "text": str(item)})
    return items


# --- metadata ------------------------------------------------------------------------


def _title(records: list[Record], chain: list[Record]) -> str | None:
    """A user-set title (``custom-title``) or Claude Code's summary of this chain."""
    custom: list[str] = [r["customTitle"] for r in records if isinstance(r.get("customTitle"), str)]
    if custom:
        return custom[-1]
    uuids = {r.get("uuid") for r in chain}
    summaries: list[tuple[object, str]] = [
        (r.get("leafUuid"), r["summary"])
        for r in records
        if r.get("type") == "summary" and isinstance(r.get("summary"), str)
    ]
    for leaf, summary in reversed(summaries):
        if leaf in uuids:
            return summary
    return summaries[-1][1] if summaries else None


# --- sidechains ------------------------------------------------------------------------


def _sidechain(records: list[Record], agent_id: str, titles: dict[str, str]) -> ImportedSession:
    session = _build_session(records, records)
    session.agent_id = first_text(records, "agentId") or agent_id
    session.title = session.title or titles.get(session.agent_id)
    return session


def _group_sidechains(side: list[Record]) -> dict[str, list[Record]]:
    """Sidechain records of the main file, one group per agent (or per root when unnamed)."""
    by_uuid = {r["uuid"]: r for r in side if isinstance(r.get("uuid"), str)}
    groups: dict[str, list[Record]] = {}
    for rec in side:
        key = rec.get("agentId")
        if not isinstance(key, str):
            key = _root_uuid(rec, by_uuid)
        groups.setdefault(key, []).append(rec)
    return groups


def _root_uuid(rec: Record, by_uuid: dict[str, Record]) -> str:
    seen: set[str] = set()
    while isinstance(rec.get("parentUuid"), str) and rec["parentUuid"] in by_uuid:
        if rec["parentUuid"] in seen:
            break
        seen.add(rec["parentUuid"])
        rec = by_uuid[rec["parentUuid"]]
    return str(rec.get("uuid"))


def _agent_progress_groups(records: list[Record]) -> dict[str, list[Record]]:
    """Subagent messages that Claude Code echoed into ``agent_progress`` records.

    They carry no parent links, so each agent's records form a chain in file order.
    """
    groups: dict[str, list[Record]] = {}
    seen: set[str] = set()
    for rec in records:
        data = rec.get("data")
        if rec.get("type") != "progress" or not isinstance(data, dict):
            continue
        inner = data.get("message")
        if data.get("type") != "agent_progress" or not isinstance(inner, dict):
            continue
        key = data.get("agentId") or rec.get("parentToolUseID")
        uid = inner.get("uuid")
        if not isinstance(key, str) or uid in seen:
            continue
        if uid:
            seen.add(uid)
        linked = dict(inner)
        prev = groups.get(key)
        linked["parentUuid"] = prev[-1].get("uuid") if prev else None
        linked.setdefault("uuid", f"{key}-{len(prev or [])}")
        linked.setdefault("sessionId", rec.get("sessionId"))
        linked.setdefault("cwd", rec.get("cwd"))
        linked.setdefault("timestamp", rec.get("timestamp"))
        linked["agentId"] = key
        groups.setdefault(key, []).append(linked)
    return groups


def _subagent_files(path: Path, titles: dict[str, str]) -> dict[str, ImportedSession]:
    """Sidechains from ``<session>/subagents/agent-*.jsonl`` next to the main file."""
    folder = path.with_suffix("") / "subagents"
    found: dict[str, ImportedSession] = {}
    if not folder.is_dir():
        return found
    for file in sorted(folder.glob("agent-*.jsonl")):
        values, bad = read_json_lines_noting(file)
        records = [v for v in values if isinstance(v, dict)]
        if not records:
            continue
        key = first_text(records, "agentId") or file.stem.removeprefix("agent-")
        sub = _sidechain(records, key, titles)
        sub.skipped_lines = len(bad)
        sub.skipped[:0] = [{**b, "file": str(file)} for b in bad]
        found[key] = sub
    return found


def _task_titles(records: list[Record]) -> dict[str, str]:
    """Agent id → the description its parent gave the Task call that started it."""
    descriptions: dict[str, str] = {}
    for rec in records:
        msg = rec.get("message")
        if rec.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        for block in _blocks_of(msg):
            tool_input = block.get("input")
            if block.get("type") == "tool_use" and isinstance(tool_input, dict):
                if isinstance(tool_input.get("description"), str):
                    descriptions[str(block.get("id"))] = tool_input["description"]
    titles: dict[str, str] = {}
    for rec in records:
        data = rec.get("data")
        if isinstance(data, dict) and data.get("type") == "agent_progress":
            tool_id, agent = rec.get("parentToolUseID"), data.get("agentId")
            if isinstance(agent, str) and tool_id in descriptions:
                titles.setdefault(agent, descriptions[tool_id])
        result = rec.get("toolUseResult")
        msg = rec.get("message")
        if (
            isinstance(result, dict)
            and isinstance(result.get("agentId"), str)
            and isinstance(msg, dict)
        ):
            for block in _blocks_of(msg):
                if block.get("tool_use_id") in descriptions:
                    titles.setdefault(result["agentId"], descriptions[block["tool_use_id"]])
    return titles
