"""``ScriptedModel``: a fake :class:`ChatModel` that answers from a script, in order.

Each step is a reply text, a whole assistant message, an exception to raise, or a
callable ``(system, messages) -> str | Message`` (to look at the request while it
is being made). Calling the model more times than scripted fails the test at
once; :meth:`ScriptedModel.assert_done` fails it when steps were left unused.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from workhearth.models.base import ChatModel
from workhearth.models.messages import Message, text_message

Reply = str | Message
Step = Reply | BaseException | Callable[[str | None, list[Message]], Reply]


@dataclass
class Request:
    """One call the model received."""

    system: str | None
    messages: list[Message]
    max_tokens: int | None

    @property
    def text(self) -> str:
        """The text of the last message (what the caller asked this time)."""
        if not self.messages:
            return ""
        return "".join(b["text"] for b in self.messages[-1]["content"] if b.get("type") == "text")


class ScriptedModel(ChatModel):
    def __init__(self, steps: Iterable[Step] = (), name: str = "scripted:test") -> None:
        self.name = name
        self._steps: deque[Step] = deque(steps)
        self.requests: list[Request] = []

    def complete(
        self,
        system: str | None,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
    ) -> Message:
        # Why: a deep copy, so a caller mutating its list later cannot rewrite the record.
        self.requests.append(Request(system, copy.deepcopy(messages), max_tokens))
        if not self._steps:
            raise AssertionError(
                f"{self.name} was called {len(self.requests)} times but only "
                f"{len(self.requests) - 1} replies were scripted"
            )
        step = self._steps.popleft()
        if isinstance(step, BaseException):
            raise step
        if callable(step):
            step = step(system, messages)
        if isinstance(step, str):
            return text_message("assistant", step, model=self.name)
        return step

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def assert_done(self) -> None:
        """Fail when scripted steps were never used (the code under test asked less than expected)."""
        if self._steps:
            raise AssertionError(
                f"{self.name}: {len(self._steps)} scripted step(s) unused after "
                f"{len(self.requests)} call(s)"
            )
