"""The agent loop: ask the model, run the tools it calls, record everything, repeat.

Every message is appended to the session before the next step (DESIGN §5), so a
crash at any point resumes from the transcript: the resume engine closes tool
calls that never got a result, and :meth:`Agent.run` carries on from there.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from workhearth.agent.tools.context import ToolResult
from workhearth.errors import ModelError
from workhearth.models.base import ModelRequest
from workhearth.models.messages import (
    Block,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    message_text,
)
from workhearth.models.streaming import (
    Completion,
    Done,
    StreamEvent,
    StreamingChatModel,
    TextDelta,
    ToolSpec,
    Usage,
)
from workhearth.sessions.backend import SessionBackend
from workhearth.sessions.reconstruct import GrowingRepair

Status = Literal["done", "max_steps", "time", "cost", "interrupted", "error", "nothing_to_do"]


class ToolBox(Protocol):
    """What the loop needs from the tool registry."""

    def specs(self) -> Sequence[ToolSpec]: ...

    def read_only(self, name: str) -> bool: ...

    def call(self, name: str, arguments: Mapping[str, Any], call_id: str) -> ToolResult: ...


@dataclass
class Limits:
    """Quest boundaries; ``None`` means no limit."""

    max_steps: int | None = 50
    max_seconds: float | None = None
    max_cost: float | None = None


@dataclass
class RunResult:
    status: Status
    text: str
    steps: int
    session_id: str
    usage: Usage = field(default_factory=Usage)
    cost: float | None = None
    models: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.status in ("done", "nothing_to_do")


@dataclass
class ToolEvent:
    """Emitted around each tool call so a terminal can show progress."""

    phase: Literal["start", "end"]
    name: str
    call_id: str
    arguments: dict[str, Any]
    outcome: ToolResult | None = None


@dataclass
class _Halt:
    """Why a run stops while it waits for the model; ``error`` says what failed."""

    status: Status
    error: str | None = None


Listener = Callable[[StreamEvent | ToolEvent], None]
Compactor = Callable[[SessionBackend, StreamingChatModel], bool]


class Agent:
    def __init__(
        self,
        *,
        session: SessionBackend,
        model: StreamingChatModel,
        tools: ToolBox,
        system: str,
        mode: str,
        limits: Limits | None = None,
        listener: Listener | None = None,
        compactor: Compactor | None = None,
        parallel_tools: int = 4,
    ) -> None:
        self.session = session
        self._repair = GrowingRepair()
        self.model = model
        self.tools = tools
        self.system = system
        self.mode = mode
        self.limits = limits or Limits()
        self.listener = listener or (lambda _e: None)
        # (name, activation text) of the skill a new task starts with (``--skill``).
        self.skill_intro: tuple[str, str] | None = None
        self.compactor = compactor
        self.parallel_tools = parallel_tools
        # Why: a resumed session keeps counting where it stopped, so quest cost limits hold.
        previous = session.load().business
        used = previous.usage or {}
        self.usage = Usage(int(used.get("input_tokens", 0)), int(used.get("output_tokens", 0)))
        self.cost: float | None = previous.cost
        self.models: list[str] = []

    def _introduce_skill(self, name: str, text: str) -> None:
        """The skill a task starts with, as its own ``activate_skill`` call and result.

        Why: the user's words stay the prompt (and the session's title); the skill's
        instructions reach the model as its own part of the context, exactly as if it
        had activated the skill, and every surface shows the call ("using skill …").
        """
        call_id = f"skill_{uuid.uuid4().hex[:16]}"
        args = {"name": name}
        self.listener(ToolEvent("start", "activate_skill", call_id, args))
        self.session.append_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": call_id, "name": "activate_skill", "input": args}
                ],
            }
        )
        self.session.append_message(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": text,
                        "is_error": False,
                    }
                ],
            }
        )
        self.listener(ToolEvent("end", "activate_skill", call_id, args, ToolResult(text)))

    # ---------------------------------------------------------------- state
    def checkpoint(self, *, pinned: str | None = None) -> None:
        """Record the business state; ``pinned``: the model ``--model`` switched to."""
        business = self.session.load().business
        business = dataclasses.replace(
            business,
            mode=self.mode,
            model=self.models[-1] if self.models else business.model,
            system=self.system,
            system_prompt_hash=hashlib.sha256(self.system.encode()).hexdigest()[:16],
            usage={
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
            cost=self.cost,
            tier=getattr(self.model, "tier", None),
            pinned=pinned or business.pinned,
            # Why: a new run's state supersedes how the last run ended (tasks.service).
            extra={k: v for k, v in business.extra.items() if k != "outcome"},
        )
        self.session.checkpoint(business)

    def _conversation(self) -> list[Message]:
        # Why not repair() each step: it is linear in the conversation, so a long run
        # paid more per step the longer it ran; the loop's own steps extend the last
        # result (GrowingRepair checks they are steps repair would keep unchanged).
        state = self.session.load()
        repaired = self._repair.repair(state.messages, state.seqs)
        if repaired.closed_tool_calls and repaired.messages:
            # Why: make the transcript say what the model will be told: those calls
            # were interrupted. Appended once; later repairs find them answered.
            last = repaired.messages[-1]
            closures = [
                b
                for b in last["content"]
                if b.get("type") == "tool_result"
                and b.get("tool_use_id") in repaired.closed_tool_calls
            ]
            if last["role"] == "user" and closures:
                self.session.append_message({"role": "user", "content": closures})
                state = self.session.load()
                repaired = self._repair.repair(state.messages, state.seqs)
        return repaired.messages

    # ------------------------------------------------------------------ run
    def run(self, task: str | None = None) -> RunResult:
        """Work on ``task`` (or continue the session's unfinished one) until done or a limit."""
        started = time.monotonic()
        deadline = None if self.limits.max_seconds is None else started + self.limits.max_seconds
        if task:
            self._record_task(task)
        messages = self._conversation()
        if not messages or messages[-1]["role"] != "user":
            last = message_text(messages[-1]) if messages else ""
            return RunResult("nothing_to_do", last, 0, self.session.id)
        steps = 0
        text = ""
        while True:
            limit = self._limit_reached(steps, deadline)
            if limit is not None:
                return self._stop(limit, text, steps)
            steps += 1
            reply = self._reply(messages, deadline)
            if isinstance(reply, _Halt):
                return self._stop(reply.status, text, steps, error=reply.error)
            text = message_text(reply.message) or text
            if not reply.tool_calls:
                self.checkpoint()
                self.session.turn_end()
                return self._stop("done", text, steps)
            if not self._answer_calls(reply.tool_calls):
                return self._stop("interrupted", text, steps)
            messages = self._conversation()

    def _record_task(self, task: str) -> None:
        """Append a new task (and the skill it starts with) as the user's turn."""
        self.session.append_message({"role": "user", "content": [{"type": "text", "text": task}]})
        if self.skill_intro is not None:
            self._introduce_skill(*self.skill_intro)
        self.session.turn_end()

    def _limit_reached(self, steps: int, deadline: float | None) -> Status | None:
        """The quest limit that stops the run before its next step, if any."""
        if self.limits.max_steps is not None and steps >= self.limits.max_steps:
            return "max_steps"
        if deadline is not None and time.monotonic() > deadline:
            return "time"
        if self.limits.max_cost is not None and (self.cost or 0.0) >= self.limits.max_cost:
            return "cost"
        return None

    def _reply(self, messages: list[Message], deadline: float | None) -> Completion | _Halt:
        """The model's next reply (compacting first when due), or why the run must stop."""
        try:
            if self.compactor is not None and self.compactor(self.session, self.model):
                messages = self._conversation()
            return self._ask(messages, deadline)
        except KeyboardInterrupt:
            self.session.turn_end()
            return _Halt("interrupted")
        except ModelError as exc:
            self.session.turn_end()
            if exc.kind == "deadline":
                # Why: nothing of the unfinished reply was stored, so a resume asks again.
                return _Halt("time")
            return _Halt("error", str(exc))

    def _answer_calls(self, calls: list[ToolUseBlock]) -> bool:
        """Run the reply's tool calls and record their results; False when interrupted."""
        try:
            results = self._run_tools(calls)
        except KeyboardInterrupt:
            self.session.turn_end()
            return False
        content: list[Block] = [*results]
        self.session.append_message({"role": "user", "content": content})
        self.checkpoint()
        self.session.turn_end()
        return True

    def _stop(
        self, status: Status, text: str, steps: int, *, error: str | None = None
    ) -> RunResult:
        return RunResult(
            status,
            text,
            steps,
            self.session.id,
            self.usage,
            self.cost,
            list(self.models),
            error=error,
        )

    def _ask(self, messages: list[Message], deadline: float | None = None) -> Completion:
        """One model reply, streamed to the listener and stored whole once it is complete.

        Past ``deadline`` the reply is abandoned between two of its events (the
        stream is closed, so the provider stops too): a ``deadline`` ModelError, as
        the provider raises when the time runs out while it waits.
        """
        completion: Completion | None = None
        request = ModelRequest(self.system, messages, tools=self.tools.specs(), deadline=deadline)
        stream = self.model.stream(request)
        try:
            for event in stream:
                self.listener(event)
                if isinstance(event, Done):
                    completion = event.completion
                elif deadline is not None and time.monotonic() > deadline:
                    raise ModelError(f"{self.model.name}: out of time", kind="deadline")
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        if completion is None:
            raise ModelError(
                f"{self.model.name}: the reply ended without a result", kind="stream_cut"
            )
        message = completion.message
        if not message["content"]:
            # Why: an empty reply is not a valid message for either API; say so instead of storing it.
            message = {
                "role": "assistant",
                "content": [{"type": "text", "text": "(the model returned nothing)"}],
            }
            completion = Completion(
                message, completion.usage, "end_turn", completion.model, completion.cost
            )
        message["model"] = completion.model  # which configured model answered this turn
        self.session.append_message(message)
        self.usage = self.usage + completion.usage
        if completion.cost is not None:
            self.cost = (self.cost or 0.0) + completion.cost
        self.models.append(completion.model)
        if completion.stop_reason == "max_tokens" and completion.tool_calls:
            # Why: a tool call cut by the token limit has partial input; never run it.
            raise ModelError(
                "the reply hit max_tokens in the middle of a tool call", kind="provider"
            )
        return completion

    def _run_tools(self, calls: list[ToolUseBlock]) -> list[ToolResultBlock]:
        def one(call: ToolUseBlock) -> ToolResultBlock:
            args = call.get("input") or {}
            self.listener(ToolEvent("start", call["name"], call["id"], args))
            outcome = self.tools.call(call["name"], args, call["id"])
            self.listener(ToolEvent("end", call["name"], call["id"], args, outcome))
            block: ToolResultBlock = {
                "type": "tool_result",
                "tool_use_id": call["id"],
                "content": outcome.content or "(no output)",
            }
            if outcome.is_error:
                block["is_error"] = True
            if outcome.shown is not None:
                # Why (issue 25): a thread read back from the transcript shows the same
                # caption as the live event; the adapters leave the key out of requests.
                block["line"] = outcome.shown.line
            return block

        # Why: read-only calls of one turn are independent and run side by side;
        # anything with side effects runs alone, in the order the model asked.
        if len(calls) > 1 and all(self.tools.read_only(c["name"]) for c in calls):
            with ThreadPoolExecutor(max_workers=self.parallel_tools) as pool:
                return list(pool.map(one, calls))
        return [one(c) for c in calls]


def print_stream(write: Callable[[str], None]) -> Listener:
    """A listener that writes text as it streams and one line per tool call."""

    def listener(event: StreamEvent | ToolEvent) -> None:
        if isinstance(event, TextDelta):
            write(event.text)
        elif isinstance(event, ToolEvent) and event.phase == "start":
            write(f"\n[{event.name}] ")
        elif isinstance(event, ToolEvent) and event.outcome is not None:
            write("error\n" if event.outcome.is_error else "ok\n")

    return listener
