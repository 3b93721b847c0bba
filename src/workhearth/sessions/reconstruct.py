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

Choices worth knowing:

- Same-role neighbours merge. User messages always can (tool results move
  first). Assistant messages merge unless that would put signed or redacted
  thinking after text or tool_use; then a short ``(continued)`` user message goes
  between them instead, since a signature may not be moved and Anthropic wants
  thinking first. A message that already has thinking after text is split the
  same way.
- ``interrupted_turn`` describes the end of the conversation: tool calls closed
  in its last user message, unfinished thinking dropped at the end, or a last
  reply that holds only thinking (kept, then followed by a user note, because
  Anthropic refuses a final assistant message that is only thinking). Calls
  closed earlier (a lost result message) are listed in ``closed_tool_calls``
  but do not change the classification.
- Synthetic messages (notes, synthetic results) carry no ``id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from workhearth.models.adapters import has_signature
from workhearth.models.messages import Block, Message, text_message

Interruption = Literal["none", "interrupted_prompt", "interrupted_turn"]

# Why these words (issue 18): a call cut off by a crash may have done all, part or none
# of its work; the model must check before it re-runs a command with side effects.
INTERRUPTED_TOOL_TEXT = (
    "Interrupted: this tool call did not finish before the session stopped; its outcome "
    "is unknown: it may have run partly, fully or not at all. Check its effects before "
    "re-running it."
)
MISSING_START_TEXT = "(The earlier part of this conversation is not available.)"
CONTINUED_TEXT = "(continued)"
INTERRUPTED_REPLY_TEXT = (
    "(The previous reply was interrupted before it finished. Continue from where it stopped.)"
)

_MESSAGE_KEYS = ("role", "content")
_NO_EXTRA: dict[str, Any] = {}  # shared, never written to


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

# What a kept block is, as bits, so each message is scanned once.
_LEAD = 1  # signed thinking or redacted thinking: Anthropic wants it before any body block
_BODY = 2  # text or tool_use
_TOOL = 4  # tool_use
_UNSIGNED = 8  # thinking without a signature (another provider's reasoning, or cut off)
_SPLIT = 16  # (message flag) a lead block follows a body block


def _filled(value: Any) -> bool:
    return type(value) is str and value != "" and not value.isspace()


def _clean_block(block: Any, role: str) -> tuple[Any, int]:
    """``(block, kind bits)``: the block itself, a cleaned copy, or None to drop it."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text":
        return (block if _filled(block.get("text")) else None), _BODY
    if role == "assistant":
        if kind == "thinking":
            if has_signature(block):
                # Why: signed thinking is opaque and never touched; only a block too
                # damaged to be thinking at all (no thinking string) is dropped.
                return (block if isinstance(block.get("thinking"), str) else None), _LEAD
            # Unsigned thinking is kept when it says something.
            return (block if _filled(block.get("thinking")) else None), _UNSIGNED
        if kind == "redacted_thinking":
            return (block if _filled(block.get("data")) else None), _LEAD
        if kind == "tool_use":
            ok = _filled(block.get("id")) and _filled(block.get("name"))
            ok = ok and isinstance(block.get("input"), dict)
            return (block if ok else None), _BODY | _TOOL
        return None, 0
    if kind == "image":
        return (block if isinstance(block.get("source"), dict) else None), 0
    if kind == "tool_result":
        return (_clean_tool_result(block) if _filled(block.get("tool_use_id")) else None), 0
    return None, 0


def _kinds(blocks: list[Block]) -> int:
    """The kind bits of already-clean assistant blocks, ``_SPLIT`` included."""
    flags = 0
    for block in blocks:
        bits = _clean_block(block, "assistant")[1]
        if bits & _LEAD and flags & _BODY:
            flags |= _SPLIT
        flags |= bits
    return flags


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

_Cleaned = tuple[str, list[Block], dict[str, Any], int]  # role, blocks, extra keys, kind bits


class _Repair:
    """State of one repair pass; :meth:`run` is the whole algorithm."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.dropped = 0
        self.closed: list[str] = []
        self.tail_damaged = False
        self.seen_tool_ids: set[str] = set()
        self.rename_count: dict[str, int] = {}
        self.last_kinds = 0  # kind bits of out[-1] when it is an assistant message
        # Tool calls of the assistant message last emitted: original id -> new ids.
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
        for role, blocks, extra, kinds in cleaned:
            if role == "user":
                self._add_user(blocks, extra)
            elif kinds & _SPLIT:
                for number, segment in enumerate(_segments(blocks)):
                    # Why: a later segment is a new message; two messages must not share an id.
                    seg_extra = extra if number == 0 else _without_id(extra)
                    self._add_assistant(segment, seg_extra, _kinds(segment))
            else:
                self._add_assistant(blocks, extra, kinds)
        self._flush_user(at_end=True)
        out = self.out
        if (
            out
            and out[-1]["role"] == "assistant"
            and (self.tail_damaged or not self.last_kinds & _BODY)
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

    def _clean(self, messages: list[Message]) -> list[_Cleaned]:
        """Drop unusable blocks, empty messages and exact repeats of the previous message."""
        cleaned: list[_Cleaned] = []
        prev: Any = None
        for msg in messages:
            parsed = _role_and_content(msg)
            if parsed is None:
                continue
            role, content = parsed
            if role != "user" and role != "assistant":
                self.dropped += len(content)
                continue
            if prev is not None and prev["role"] == role and msg == prev:
                # Why: the same message written twice (a retried append) is one message.
                self.dropped += len(content)
                continue
            prev = msg
            blocks, kinds = self._clean_blocks(content, role)
            if blocks:
                cleaned.append((role, blocks, _extra_keys(msg), kinds))
        return cleaned

    def _clean_blocks(self, content: list[Any], role: str) -> tuple[list[Any], int]:
        """The kept blocks (``content`` itself when none changed) and their kind bits."""
        blocks: list[Any] = content
        kinds = 0
        for pos, block in enumerate(content):
            kept, bits = _clean_block(block, role)
            if kept is not block:
                if blocks is content:  # first change: copy what came before
                    blocks = content[:pos]
                if kept is None:
                    self.dropped += 1
                    continue
            if blocks is not content:
                blocks.append(kept)
            if bits & _LEAD and kinds & _BODY:
                kinds |= _SPLIT
            kinds |= bits
        return blocks, kinds

    def _strip_unfinished_tail(self, cleaned: list[_Cleaned]) -> None:
        """Drop unsigned thinking that ends the conversation: the stream stopped inside it."""
        while cleaned and cleaned[-1][0] == "assistant":
            role, blocks, extra, _ = cleaned[-1]
            keep = len(blocks)
            while keep and _kinds(blocks[keep - 1 : keep]) == _UNSIGNED:
                keep -= 1
            if keep == len(blocks):
                return
            self.dropped += len(blocks) - keep
            self.tail_damaged = True
            if keep:
                cleaned[-1] = (role, blocks[:keep], extra, _kinds(blocks[:keep]))
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
            original = block["tool_use_id"]
            new_id = None
            for candidate in self.window.get(original, ()):
                if candidate not in self.answered:
                    new_id = candidate
                    break
            if new_id is None:
                # Why: a result whose call is gone (or answered already) breaks both APIs.
                self.dropped += 1
                continue
            self.answered.add(new_id)
            if new_id != original:
                block = {**block, "tool_use_id": new_id}
            self.user_results.append(block)

    def _flush_user(self, *, at_end: bool) -> None:
        """Emit the gathered user message, closing unanswered tool calls first."""
        content: list[Block] = self.user_results if self.user_results is not None else []
        if len(self.answered) < len(self.window_order):
            missing = [tid for tid in self.window_order if tid not in self.answered]
            self.closed.extend(missing)
            self.tail_damaged = self.tail_damaged or at_end
            content.extend(
                {
                    "type": "tool_result",
                    "tool_use_id": tid,
                    "content": INTERRUPTED_TOOL_TEXT,
                    "is_error": True,
                }
                for tid in missing
            )
        content.extend(self.user_other)
        if content:
            message: Message = {"role": "user", "content": content}
            message.update(self.user_extra)  # type: ignore[typeddict-item]
            self.out.append(message)
        if self.user_results is not None:
            self.user_results, self.user_other, self.user_extra = None, [], {}
        if self.window_order:
            self.window, self.window_order, self.answered = {}, [], set()

    # ----------------------------------------------------------------- assistant side

    def _add_assistant(self, blocks: list[Block], extra: dict[str, Any], kinds: int) -> None:
        if kinds == _UNSIGNED:
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
            if not kinds & _LEAD or not self.last_kinds & _BODY:
                out[-1]["content"].extend(self._claim_tool_ids(blocks, kinds))
                self.last_kinds |= kinds
                return
            # Why: merging would put signed thinking after text, which Anthropic refuses,
            # and a signature may not be moved; a short user turn keeps both messages
            # intact and valid for both APIs.
            out.append(text_message("user", CONTINUED_TEXT))
        message: Message = {"role": "assistant", "content": self._claim_tool_ids(blocks, kinds)}
        message.update(extra)  # type: ignore[typeddict-item]
        out.append(message)
        self.last_kinds = kinds

    def _claim_tool_ids(self, blocks: list[Block], kinds: int) -> list[Block]:
        """Copy ``blocks``, giving repeated tool ids fresh names, and open their window."""
        if not kinds & _TOOL:
            return list(blocks)
        content: list[Block] = []
        for block in blocks:
            if block["type"] == "tool_use":
                original = block["id"]
                new_id = original
                if new_id in self.seen_tool_ids:
                    new_id = self._fresh_id(original)
                    block = {**block, "id": new_id}
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
    """Split an assistant message before each lead block that follows text or tool_use."""
    segments: list[list[Block]] = []
    start = 0
    body_seen = False
    for pos, block in enumerate(blocks):
        bits = _clean_block(block, "assistant")[1]
        if bits & _LEAD and body_seen:
            segments.append(blocks[start:pos])
            start, body_seen = pos, False
        elif bits & _BODY:
            body_seen = True
    segments.append(blocks[start:])
    return segments


def _role_and_content(msg: Any) -> tuple[Any, list[Any]] | None:
    """A message's role and its content as a block list; None when it has no usable content."""
    if not isinstance(msg, dict):
        return None
    content = msg.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return None
    return msg.get("role"), content


def _extra_keys(msg: Message) -> dict[str, Any]:
    """The message's keys besides role and content (an id, a timestamp...)."""
    if len(msg) == 2:
        return _NO_EXTRA
    return {key: value for key, value in msg.items() if key not in _MESSAGE_KEYS}


def _without_id(extra: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in extra.items() if key != "id"}


class GrowingRepair:
    """:func:`repair` for a transcript that grows by whole agent steps, at the cost of
    the step, not of the whole conversation (the agent loop asks once per step).

    After a full repair whose result ends exactly on the transcript's last message (a
    prompt or tool results waiting for the model), later calls check that the messages
    seen then are still there (same objects, same seqs: no rewind, no compaction) and
    that what was appended is steps repair would keep as they are: an assistant message
    with clean blocks and fresh tool ids, answered exactly by the next user message,
    results first. Then the result is the earlier one plus copies of those messages,
    which is what a full repair returns; anything else falls back to a full repair.
    """

    def __init__(self) -> None:
        self._conversation: list[Message] | None = None
        self._count = 0
        self._first: tuple[int, int] = (0, 0)  # (seq, id) of the first message seen
        self._last: tuple[int, int] = (0, 0)  # (seq, id) of the last message seen
        self._tool_ids: set[str] = set()

    def repair(self, messages: list[Message], seqs: list[int]) -> Repaired:
        grown = self._grow(messages, seqs)
        if grown is not None:
            return grown
        repaired = repair(messages)
        self._remember(messages, seqs, repaired)
        return repaired

    def _remember(self, messages: list[Message], seqs: list[int], repaired: Repaired) -> None:
        self._conversation = None
        out = repaired.messages
        if (
            repaired.interruption != "interrupted_prompt"
            or repaired.closed_tool_calls
            or len(seqs) != len(messages)
            or not messages
            or out[-1].get("content") != messages[-1].get("content")
        ):
            return
        self._conversation = list(out)
        self._count = len(messages)
        self._first = (seqs[0], id(messages[0]))
        self._last = (seqs[-1], id(messages[-1]))
        self._tool_ids = {
            str(b.get("id"))
            for m in out
            if m["role"] == "assistant"
            for b in m["content"]
            if b.get("type") == "tool_use"
        }

    def _grow(self, messages: list[Message], seqs: list[int]) -> Repaired | None:
        conversation, n = self._conversation, self._count
        if conversation is None or len(messages) < n or len(seqs) != len(messages):
            return None
        if (seqs[0], id(messages[0])) != self._first or (
            seqs[n - 1],
            id(messages[n - 1]),
        ) != self._last:
            return None  # rewound or compacted since
        fresh = messages[n:]
        if len(fresh) % 2:
            return None
        tool_ids = set(self._tool_ids)
        added: list[Message] = []
        for reply, answer in zip(fresh[::2], fresh[1::2], strict=True):
            step = _clean_step(reply, answer, tool_ids)
            if step is None:
                return None
            added.extend(step)
        conversation.extend(added)
        self._tool_ids = tool_ids
        self._count = len(messages)
        self._last = (seqs[-1], id(messages[-1]))
        return Repaired(list(conversation), "interrupted_prompt")


def _clean_step(reply: Any, answer: Any, tool_ids: set[str]) -> list[Message] | None:
    """Copies of one step (an assistant reply, the user message answering it) when
    :func:`repair` would keep both as they are; None when it would change anything.
    ``tool_ids`` (the ids used so far) gets the reply's calls."""
    blocks = _step_content(reply, "assistant")
    answers = _step_content(answer, "user")
    if blocks is None or answers is None:
        return None
    calls = _clean_calls(blocks, tool_ids)
    if calls is None:
        return None
    results = _leading_results(answers)
    if results is None:
        return None
    answered = [b["tool_use_id"] for b in answers[:results]]
    if sorted(answered) != sorted(calls) or len(set(answered)) != len(answered):
        return None
    tool_ids.update(calls)
    return [
        {**reply, "content": list(blocks)},  # type: ignore[typeddict-item]
        {**answer, "content": list(answers)},  # type: ignore[typeddict-item]
    ]


def _step_content(message: Any, role: str) -> list[Any] | None:
    """The non-empty block list of a ``role`` message; None for anything else."""
    if not isinstance(message, dict) or message.get("role") != role:
        return None
    content = message.get("content")
    return content if isinstance(content, list) and content else None


def _clean_calls(blocks: list[Any], tool_ids: set[str]) -> list[str] | None:
    """The tool ids a reply calls when repair would keep it as it is and it calls any."""
    kinds = 0
    calls: list[str] = []
    for block in blocks:
        kept, bits = _clean_block(block, "assistant")
        if kept is not block or (bits & _LEAD and kinds & _BODY):
            return None  # dropped, cleaned, or a split repair would make
        kinds |= bits
        if bits & _TOOL:
            if block["id"] in tool_ids or block["id"] in calls:
                return None  # repair would rename it
            calls.append(block["id"])
    if kinds == _UNSIGNED or not calls:
        return None
    return calls


def _leading_results(answers: list[Any]) -> int | None:
    """How many tool results open an answer repair would keep; None when it would change it."""
    results = 0
    for position, block in enumerate(answers):
        kept, _ = _clean_block(block, "user")
        if kept is not block:
            return None
        if block["type"] == "tool_result":
            if results != position:
                return None  # a result after other blocks: repair moves it first
            results += 1
    return results
