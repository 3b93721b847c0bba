"""Resume repair: make whatever a crash left into a conversation both APIs accept (DESIGN §3).

:func:`repair` is pure and runs in one linear pass (plus a look at the tail), so
it stays fast on 100k-message transcripts. It never mutates its input and never
copies a string: output messages are new dicts and lists, but the blocks inside
are the input's own dicts unless a block had to change (a renamed tool id, a
cleaned tool result). Treat the output's blocks as read-only.

What it guarantees, for any input:

- the conversation starts with a user message and roles alternate;
- no empty message and no empty text, thinking or redacted-thinking block;
- every ``tool_use`` is answered in the next (user) message, ``tool_result``
  blocks come first there and answer only that assistant message; ids are unique;
- a thinking block with a signature is never dropped, edited or moved within its
  message, and signed or redacted thinking always leads its assistant message;
- an assistant message never holds only unsigned thinking (it would be empty for
  both providers);
- the result is ``interrupted_*`` exactly when it ends on a user message, so a
  caller answers it by calling the model, and ``none`` when it ends on an answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from workhearth.models.adapters import has_signature
from workhearth.models.messages import Block, Message, text_message

Interruption = Literal["none", "interrupted_prompt", "interrupted_turn"]

INTERRUPTED_TOOL_TEXT = (
    "Interrupted: this tool call did not finish before the session stopped; "
    "it may need to be re-run."
)
MISSING_START_TEXT = "(The earlier part of this conversation is not available.)"
CONTINUED_TEXT = "(continued)"
INTERRUPTED_REPLY_TEXT = (
    "(The previous reply was interrupted before it finished. Continue from where it stopped.)"
)

_USER_BLOCKS = frozenset({"text", "image", "tool_result"})
_MESSAGE_KEYS = ("role", "content")


@dataclass(slots=True)
class Repaired:
    """The repaired conversation and what the repair had to do."""

    messages: list[Message]
    interruption: Interruption
    closed_tool_calls: list[str] = field(default_factory=list)  # ids given synthetic results
    dropped_blocks: int = 0


def repair(messages: list[Message]) -> Repaired:
    """Rebuild a valid conversation from ``messages`` (see the module docstring)."""
    return _Repair().run(messages)


# --------------------------------------------------------------------------- block kinds


def _leads(block: Block) -> bool:
    """Blocks Anthropic requires before any text or tool_use of their message."""
    kind = block["type"]
    return kind == "redacted_thinking" or (kind == "thinking" and has_signature(block))


def _unsigned_thinking(block: Block) -> bool:
    return block["type"] == "thinking" and not has_signature(block)


def _body(block: Block) -> bool:
    return block["type"] in ("text", "tool_use")


def _filled(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _clean_block(block: Any, role: str) -> Any:
    """The block if it is usable in a ``role`` message, a cleaned copy, or None to drop it."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        return block if _filled(block.get("text")) else None
    if role == "assistant":
        if kind == "thinking":
            if has_signature(block):
                return block  # Why: signed thinking is opaque; it is never touched.
            # Unsigned thinking (another provider's reasoning) is kept when it says something.
            return block if _filled(block.get("thinking")) else None
        if kind == "redacted_thinking":
            return block if _filled(block.get("data")) else None
        if kind == "tool_use":
            ok = _filled(block.get("id")) and _filled(block.get("name"))
            return block if ok and isinstance(block.get("input"), dict) else None
        return None
    if kind == "image":
        return block if isinstance(block.get("source"), dict) else None
    if kind == "tool_result":
        return _clean_tool_result(block) if _filled(block.get("tool_use_id")) else None
    return None


def _clean_tool_result(block: dict[str, Any]) -> dict[str, Any] | None:
    content = block.get("content", "")
    if isinstance(content, str):
        return block
    if not isinstance(content, list):
        return None
    kept = [
        item
        for item in content
        if isinstance(item, dict) and (item.get("type") != "text" or _filled(item.get("text")))
    ]
    if len(kept) == len(content):
        return block
    return {**block, "content": kept}


# --------------------------------------------------------------------------- the pass


class _Repair:
    """State of one repair pass; :meth:`run` is the whole algorithm."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.dropped = 0
        self.closed: list[str] = []
        self.tail_damaged = False
        self.seen_tool_ids: set[str] = set()
        self.rename_count: dict[str, int] = {}
        # The assistant message last emitted: original tool id -> new ids, in order.
        self.window: dict[str, list[str]] = {}
        self.window_order: list[str] = []
        self.answered: set[str] = set()
        # The user message being gathered (several input messages may merge into it).
        self.user_results: list[Block] | None = None
        self.user_other: list[Block] = []
        self.user_extra: dict[str, Any] = {}

    def run(self, messages: list[Message]) -> Repaired:
        cleaned = self._clean(messages)
        self._strip_unfinished_tail(cleaned)
        for role, blocks, extra in cleaned:
            if role == "user":
                self._add_user(blocks, extra)
            else:
                for number, segment in enumerate(_segments(blocks)):
                    # Why: a later segment is a new message; two messages must not share an id.
                    seg_extra = extra if number == 0 else _without_id(extra)
                    self._add_assistant(segment, seg_extra)
        self._flush_user(at_end=True)
        out = self.out
        if out and out[-1]["role"] == "assistant" and (
            self.tail_damaged or not any(_body(block) for block in out[-1]["content"])
        ):
            # Why: an answer that stopped after its reasoning (or mid-thought) is not an
            # answer; ending on a user note tells the model what happened, and Anthropic
            # refuses a final assistant message that is only thinking (no prefill).
            out.append(text_message("user", INTERRUPTED_REPLY_TEXT))
            self.tail_damaged = True
        if not out or out[-1]["role"] == "assistant":
            interruption: Interruption = "none"
        elif self.tail_damaged:
            interruption = "interrupted_turn"
        else:
            interruption = "interrupted_prompt"
        return Repaired(out, interruption, self.closed, self.dropped)

    # ----------------------------------------------------------------- preparation

    def _clean(self, messages: list[Message]) -> list[tuple[str, list[Block], dict[str, Any]]]:
        """Drop unusable blocks, empty messages and exact repeats of the previous message."""
        cleaned: list[tuple[str, list[Block], dict[str, Any]]] = []
        prev: Any = None
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            role = msg.get("role")
            content = msg.get("content")
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            if not isinstance(content, list):
                continue
            if role not in ("user", "assistant"):
                self.dropped += len(content)
                continue
            if prev is not None and prev.get("role") == role and msg == prev:
                # Why: the same message written twice (a retried append) is one message.
                self.dropped += len(content)
                continue
            prev = msg
            blocks = content
            for pos, block in enumerate(content):
                if _clean_block(block, role) is not block:
                    # Slow path only for messages that need it; most pass untouched.
                    kept = (_clean_block(b, role) for b in content[pos:])
                    blocks = content[:pos] + [b for b in kept if b is not None]
                    self.dropped += len(content) - len(blocks)
                    break
            if not blocks:
                continue
            extra = {key: value for key, value in msg.items() if key not in _MESSAGE_KEYS}
            cleaned.append((role, blocks, extra))
        return cleaned

    def _strip_unfinished_tail(self, cleaned: list[tuple[str, list[Block], dict[str, Any]]]) -> None:
        """Drop unsigned thinking that ends the conversation: the stream stopped inside it."""
        while cleaned and cleaned[-1][0] == "assistant":
            role, blocks, extra = cleaned[-1]
            keep = len(blocks)
            while keep and _unsigned_thinking(blocks[keep - 1]):
                keep -= 1
            if keep == len(blocks):
                return
            self.dropped += len(blocks) - keep
            self.tail_damaged = True
            if keep:
                cleaned[-1] = (role, blocks[:keep], extra)
                return
            cleaned.pop()

    # ----------------------------------------------------------------- user side

    def _add_user(self, blocks: list[Block], extra: dict[str, Any]) -> None:
        if self.user_results is None:
            self.user_results, self.user_other, self.user_extra = [], [], extra
        for block in blocks:
            if block["type"] != "tool_result":
                self.user_other.append(block)
                continue
            original = block["tool_use_id"]  # type: ignore[typeddict-item]
            new_id = next(
                (tid for tid in self.window.get(original, ()) if tid not in self.answered), None
            )
            if new_id is None:
                # Why: a result whose call is gone (or answered already) breaks both APIs.
                self.dropped += 1
                continue
            self.answered.add(new_id)
            if new_id != original:
                block = {**block, "tool_use_id": new_id}  # type: ignore[assignment]
            self.user_results.append(block)

    def _flush_user(self, *, at_end: bool) -> None:
        """Emit the gathered user message, closing unanswered tool calls first."""
        missing = [tid for tid in self.window_order if tid not in self.answered]
        if missing:
            self.closed.extend(missing)
            if at_end:
                self.tail_damaged = True
        content: list[Block] = []
        if self.user_results is not None:
            content.extend(self.user_results)
        content.extend(
            {"type": "tool_result", "tool_use_id": tid, "content": INTERRUPTED_TOOL_TEXT, "is_error": True}
            for tid in missing
        )
        content.extend(self.user_other)
        if content:
            message: Message = {"role": "user", "content": content}
            message.update(self.user_extra)  # type: ignore[typeddict-item]
            self.out.append(message)
        self.user_results, self.user_other, self.user_extra = None, [], {}
        self.window, self.window_order, self.answered = {}, [], set()

    # ----------------------------------------------------------------- assistant side

    def _add_assistant(self, blocks: list[Block], extra: dict[str, Any]) -> None:
        if all(_unsigned_thinking(block) for block in blocks):
            # Why: reasoning with no answer is an unfinished turn; both adapters would
            # send an empty message for it.
            self.dropped += len(blocks)
            return
        self._flush_user(at_end=False)
        out = self.out
        if not out:
            out.append(text_message("user", MISSING_START_TEXT))
        elif out[-1]["role"] == "assistant":
            # The previous assistant has no tool_use: the flush above would have
            # answered it with a user message.
            prev = out[-1]["content"]
            if not any(_leads(block) for block in blocks) or not any(_body(b) for b in prev):
                prev.extend(self._claim_tool_ids(blocks))
                return
            # Why: merging would put signed thinking after text, which Anthropic refuses,
            # and a signature may not be moved; a short user turn keeps both messages
            # intact and valid for both APIs.
            out.append(text_message("user", CONTINUED_TEXT))
        message: Message = {"role": "assistant", "content": self._claim_tool_ids(blocks)}
        message.update(extra)  # type: ignore[typeddict-item]
        out.append(message)

    def _claim_tool_ids(self, blocks: list[Block]) -> list[Block]:
        """Copy ``blocks``, giving repeated tool ids fresh names, and open their window."""
        content: list[Block] = []
        for block in blocks:
            if block["type"] == "tool_use":
                original = block["id"]  # type: ignore[typeddict-item]
                new_id = original
                if new_id in self.seen_tool_ids:
                    new_id = self._fresh_id(original)
                    block = {**block, "id": new_id}  # type: ignore[assignment]
                self.seen_tool_ids.add(new_id)
                self.window.setdefault(original, []).append(new_id)
                self.window_order.append(new_id)
            content.append(block)
        return content

    def _fresh_id(self, original: str) -> str:
        number = self.rename_count.get(original, 1)
        while True:
            number += 1
            candidate = f"{original}_{number}"
            if candidate not in self.seen_tool_ids:
                self.rename_count[original] = number
                return candidate


def _segments(blocks: list[Block]) -> list[list[Block]]:
    """Split an assistant message where signed/redacted thinking follows text or tool_use.

    Almost every message is one segment and is returned as is.
    """
    segments: list[list[Block]] = []
    start = 0
    body_seen = False
    for pos, block in enumerate(blocks):
        if _leads(block):
            if body_seen:
                segments.append(blocks[start:pos])
                start, body_seen = pos, False
        elif _body(block):
            body_seen = True
    if start == 0:
        return [blocks]
    segments.append(blocks[start:])
    return segments


def _without_id(extra: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in extra.items() if key != "id"}
