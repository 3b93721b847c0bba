"""Context-window compaction (DESIGN §5): older turns become one ``compact`` event.

When the conversation nears the model's window, the oldest turns are summarised
by the model and replaced (in the folded state, never in the log) by that
summary. The cut always falls before a user message that starts a turn, so a
``tool_use`` and its ``tool_result`` are never split.
"""

from __future__ import annotations

import orjson

from workhearth.models.messages import Message, message_text, result_text
from workhearth.models.streaming import StreamingChatModel
from workhearth.models.tokens import count_tokens
from workhearth.sessions.backend import SessionBackend

SUMMARY_SYSTEM = (
    "You compress the early part of a work session so it can continue within a limited "
    "context. Write a faithful summary: the user's goals and constraints, decisions made, "
    "files created or changed (with paths), commands run and their results, open questions "
    "and what remains to do. Keep names, numbers and paths exact. No preamble."
)


class Compactor:
    """Callable the agent loop runs before each step; returns True when it compacted."""

    def __init__(self, threshold: float = 0.75, keep: float = 0.35, reserve: int = 4_096) -> None:
        self.threshold = threshold
        self.keep = keep
        self.reserve = reserve
        self._tokens: dict[int, int] = {}
        # (messages counted, their total, first seq, last seq): the sum kept step by step.
        self._counted: tuple[int, int, int, int] = (0, 0, 0, 0)

    def _size(self, seq: int, message: Message) -> int:
        size = self._tokens.get(seq)
        if size is None:
            size = count_tokens(orjson.dumps(message["content"]).decode()) + 4
            self._tokens[seq] = size
        return size

    def _total(self, messages: list[Message], seqs: list[int]) -> int:
        """The conversation's size in tokens, adding only what came since the last call.

        Why: summing every message each step made a step cost more the longer a run
        went. A rewind or a compaction changes the first or the last seq counted.
        """
        count, total, first, last = self._counted
        if not (count and len(seqs) >= count and seqs[0] == first and seqs[count - 1] == last):
            count, total = 0, 0
        for seq, message in zip(seqs[count:], messages[count:], strict=True):
            total += self._size(seq, message)
        if seqs:
            self._counted = (len(seqs), total, seqs[0], seqs[-1])
        return total

    def __call__(self, session: SessionBackend, model: StreamingChatModel) -> bool:
        state = session.load()
        messages, seqs = state.messages, state.seqs
        # Why: keep room for the reply, but never more than a quarter of a small window.
        window = model.context_window - min(self.reserve, model.context_window // 4)
        if self._total(messages, seqs) < self.threshold * window or len(messages) < 3:
            return False
        sizes = [self._size(seq, m) for seq, m in zip(seqs, messages, strict=True)]
        cut = self._cut(messages, sizes, int(self.keep * window), int(0.6 * window))
        if cut <= 0:
            return False
        summary = self._summarise(model, messages[:cut], window)
        session.append("compact", {"summary": summary, "upto_seq": seqs[cut - 1]})
        return True

    @staticmethod
    def _can_cut_before(messages: list[Message], i: int) -> bool:
        """A cut before ``messages[i]`` keeps every tool_use with its tool_result.

        A user message that starts a turn is a cut point; so is an assistant
        message (the tool results it follows answer the turn before it), which
        lets one long task's tool loop be compacted too.
        """
        msg = messages[i]
        if msg["role"] == "assistant":
            return True
        return not any(b.get("type") == "tool_result" for b in msg["content"])

    def _cut(
        self, messages: list[Message], sizes: list[int], keep_tokens: int, max_keep: int
    ) -> int:
        """Index of the first kept message: about ``keep_tokens`` kept, never over ``max_keep``.

        When even the last turn is too big to keep (one huge tool result), every
        message is summarised; the summary then stands alone as the user's turn.
        """
        n = len(messages)
        best = n if messages[-1]["role"] == "user" else 0
        kept = 0
        for i in range(n - 1, 0, -1):
            kept += sizes[i]
            if kept > max_keep:
                break
            if self._can_cut_before(messages, i):
                best = i
                if kept >= keep_tokens:
                    break
        return best

    def _summarise(self, model: StreamingChatModel, older: list[Message], window: int) -> str:
        lines = []
        for m in older:
            for b in m["content"]:
                kind = b.get("type")
                if kind == "text":
                    lines.append(f"{m['role']}: {b.get('text', '')}")
                elif kind == "tool_use":
                    lines.append(
                        f"tool call {b.get('name')}: {orjson.dumps(b.get('input', {})).decode()}"
                    )
                elif kind == "tool_result":
                    content = b.get("content") or ""
                    lines.append(
                        f"tool result: {result_text(content if isinstance(content, list) else str(content))}"
                    )
        transcript = "\n".join(lines)
        budget_chars = max(4_000, int(window * 0.6) * 3)
        if len(transcript) > budget_chars:
            # Why: the part being summarised may itself exceed the window; keep both ends.
            half = budget_chars // 2
            transcript = transcript[:half] + "\n[…]\n" + transcript[-half:]
        reply = model.complete(
            SUMMARY_SYSTEM,
            [{"role": "user", "content": [{"type": "text", "text": transcript}]}],
        )
        text = message_text(reply).strip()
        return text or "(earlier conversation omitted)"


def summarise(model: StreamingChatModel, messages: list[Message]) -> str:
    """``messages`` summed up by ``model`` the way a compaction does (a rewind's
    ``--summarize`` keeps such a summary of the turns it undoes)."""
    return Compactor()._summarise(model, messages, model.context_window)
