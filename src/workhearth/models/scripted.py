"""``ScriptedModel``: a streaming model that answers from a script, in order.

It sits where a provider sits (the edge of the program, like the local protocol
servers in the tests), so the agent loop and reflection can be tested without a
network, and users can test their own tools and prompts the same way.

Each step is a reply text, a whole assistant message (see :func:`calling` for
one that calls tools), an exception to raise, or a callable
``(system, messages) -> str | Message`` that looks at the request while it is
made. Calling the model more times than scripted raises ``AssertionError`` at
once; :meth:`ScriptedModel.assert_done` raises it when steps were left unused.
"""

from __future__ import annotations

import copy
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from workhearth.models.base import ModelRequest
from workhearth.models.messages import Message, ToolUseBlock, message_text, text_message
from workhearth.models.streaming import (
    Completion,
    Done,
    StopReason,
    StreamEvent,
    StreamingChatModel,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
    tool_spec,
)

Reply = str | Message
Step = Reply | BaseException | Callable[[str | None, list[Message]], Reply]

_ids = itertools.count(1)


def calling(*calls: tuple[str, Mapping[str, Any]], text: str = "") -> Message:
    """An assistant message calling tools: ``calling(("read_file", {"path": "a.txt"}))``."""
    content: list[Any] = [{"type": "text", "text": text}] if text else []
    for name, arguments in calls:
        block: ToolUseBlock = {
            "type": "tool_use",
            "id": f"call_{next(_ids)}",
            "name": name,
            "input": dict(arguments),
        }
        content.append(block)
    return {"role": "assistant", "content": content}


@dataclass
class Request:
    """One call the model received."""

    system: str | None
    messages: list[Message]
    max_tokens: int | None
    tools: list[str] = field(default_factory=list)  # the names of the tools offered

    @property
    def text(self) -> str:
        """The text of the last message (what the caller asked this time)."""
        return message_text(self.messages[-1]) if self.messages else ""


class ScriptedModel(StreamingChatModel):
    def __init__(self, steps: Iterable[Step] = (), name: str = "scripted:test") -> None:
        self.name = name
        self._steps: deque[Step] = deque(steps)
        self.requests: list[Request] = []

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        system, messages = request.system, request.messages
        # Why: a deep copy, so a caller mutating its list later cannot rewrite the record.
        offered = [tool_spec(t).name for t in request.tools or ()]
        self.requests.append(Request(system, copy.deepcopy(messages), request.max_tokens, offered))
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
        message = (
            text_message("assistant", step, model=self.name)
            if isinstance(step, str)
            else copy.deepcopy(step)
        )
        calls: list[ToolUseBlock] = []
        for block in message["content"]:
            if block["type"] == "text":
                yield TextDelta(block["text"])
            elif block["type"] == "tool_use":
                calls.append(block)
                yield ToolCallStarted(block["id"], block["name"])
                yield ToolCallFinished(block)
        stop: StopReason = "tool_use" if calls else "end_turn"
        yield Done(Completion(message, Usage(), stop, self.name))

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
