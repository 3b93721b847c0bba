"""One task: a run of the agent on one session, its events, its approval, its end.

Its events are the one record of what the run did, for every surface: the terminal
prints them, the page streams them, ``sessions show`` reads the transcript they came
from. ``text`` {text}, ``tool_call`` {id, name, summary}, ``tool_result`` {id, ok,
summary, line?, screenshot?}, ``approval`` {call_id, tool, summary}, ``approval_cancelled`` {call_id},
``status`` {status, reason?}, ``done`` {reason, status, message?}.

Statuses (DESIGN §6): ``running``, ``waiting`` (for an approval), ``stopped`` (by the
user), ``failed`` (it ended on an error — a model error, a crash, a limit reached —
with the reason in words), ``done``. A failed tool call does not fail the task: a
``grep`` that finds nothing exits 1, and the model goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from workhearth.agent.approval import Answer, ApprovalRequest
from workhearth.agent.loop import ToolEvent
from workhearth.errors import NotFoundError, UsageError
from workhearth.models.streaming import TextDelta
from workhearth.tasks.words import brief, outcome_text

Status = Literal["running", "waiting", "stopped", "failed", "done"]
STATUSES: tuple[Status, ...] = ("running", "waiting", "stopped", "failed", "done")
ANSWERS: tuple[Answer, ...] = ("once", "always", "deny")
# How each way a run can end reads as a status. Why "failed" for the limits: the task
# did not finish what it was asked, and says why; "stopped" is only the user's stop.
_ENDS: dict[str, Status] = {
    "done": "done",
    "nothing_to_do": "done",
    "interrupted": "stopped",
    "stopped": "stopped",
    # A team task waits for the user (issue 23): its questions, or its plan's approval.
    "questions": "waiting",
    "plan": "waiting",
}
_REASONS = {
    "max_steps": "it reached its step limit ([quest] max_steps)",
    "time": "it reached its time limit ([quest] max_seconds)",
    "cost": "it reached its cost limit ([quest] max_cost)",
    "error": "it ended on an error",
    "file_check": "a file it produced fails its check",
}


def final_status(reason: str) -> Status:
    """The status of a run that ended for ``reason`` (a RunResult status, or ``stopped``)."""
    return _ENDS.get(reason, "failed")


def failure_words(reason: str, message: str | None) -> str | None:
    """Why a failed task failed, in words (None for one that did not fail)."""
    if final_status(reason) != "failed":
        return None
    return message or _REASONS.get(reason, f"it ended: {reason}")


class TaskStopped(KeyboardInterrupt):
    """Raised in the task thread at its next event after a stop.

    Why a KeyboardInterrupt: the loop already turns one into a clean
    ``interrupted`` end (turn closed, transcript resumable) and the shell runner
    kills a running command on it, exactly as Ctrl-C does in ``hearth run``.
    """


@dataclass(frozen=True)
class TaskEvent:
    """One event of a task's stream; ``seq`` counts from 1 within the task."""

    seq: int
    name: str
    data: dict[str, Any]


def parse_event_id(value: str | None, run: str) -> int:
    """The seq a ``Last-Event-ID`` names within ``run`` (0: none, or another run's)."""
    if not value:
        return 0
    prefix, _, seq = value.rpartition("-")
    # Why not isdigit(): it accepts digits int() refuses ("²").
    if prefix != run or not seq or not all("0" <= c <= "9" for c in seq) or len(seq) > 9:
        return 0
    return int(seq)


@dataclass
class PendingApproval:
    call_id: str
    tool: str
    summary: str
    answer: Answer | None = None
    answered: threading.Event = field(default_factory=threading.Event)
    # Why (issue 25): what the user types with a yes (a password), in words; "" for none.
    # The value typed goes to the tool only, never into an event.
    secret: str = ""
    value: str | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, str]:
        out = {"call_id": self.call_id, "tool": self.tool, "summary": self.summary}
        return {**out, "secret": self.secret} if self.secret else out


class Task:
    """One run of the agent on one session, its events and its pending approval."""

    def __init__(self, session_id: str, *, base: int | None = None) -> None:
        self.session_id = session_id
        # Why a run id: event ids are ``<run>-<seq>``, so a page re-attaching after a
        # restart (a new run, seq from 1 again) knows its Last-Event-ID is of another run.
        self.run = secrets.token_hex(4)
        # The transcript's message count before this run: the page shows the transcript
        # up to here and this run's events after it, so nothing shows twice.
        self.base = base
        self.events: list[TaskEvent] = []
        self.reason: str | None = None  # set when the run ended
        self.message: str | None = None  # why it failed, in words
        self.stop_requested = False
        self.pending: PendingApproval | None = None
        self.thread: threading.Thread | None = None
        self.on_event: Callable[[TaskEvent], None] | None = None  # a foreground renderer
        # Aborts the model request under way (set once the run's agent exists).
        self.cancel: Callable[[], None] | None = None
        # Ends the commands the run has running (set by the service).
        self.interrupt: Callable[[], object] | None = None
        # A team task's answers, approval and board (tasks/team/run.py TeamOptions).
        self.team: Any = None
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._call_ids = itertools.count(1)

    # -------------------------------------------------------------- status
    @property
    def finished(self) -> bool:
        return self.reason is not None

    @property
    def status(self) -> Status:
        if self.reason is not None:
            return final_status(self.reason)
        return "waiting" if self.pending is not None else "running"

    # -------------------------------------------------------------- events
    def publish(self, name: str, data: dict[str, Any]) -> None:
        with self._lock:
            event = TaskEvent(len(self.events) + 1, name, data)
            self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
        self.wake()

    def wake(self) -> None:
        """Wake every subscriber: a new event, or the server is closing."""
        with self._lock:
            waiters = list(self._waiters)
        for loop, event in waiters:
            # Why: subscribers wait on their own event loop; wake them from this thread.
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop is closed: its subscriber is gone
                pass

    def since(self, seq: int) -> list[TaskEvent]:
        with self._lock:
            return self.events[seq:]

    async def follow(
        self, after: int, heartbeat: float, closing: threading.Event | None = None
    ) -> AsyncIterator[TaskEvent | None]:
        """The events after ``after`` (a replay), then live ones until ``done``.

        Yields None after ``heartbeat`` quiet seconds (a surface keeps its line
        open with it) and ends early once ``closing`` is set.
        """
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        waiter = (loop, wake)
        with self._lock:
            self._waiters.add(waiter)
        try:
            last = after
            while True:
                wake.clear()
                fresh = self.since(last)
                for event in fresh:
                    yield event
                    last = event.seq
                    if event.name == "done":  # the task's last event
                        return
                if fresh:
                    continue
                if closing is not None and closing.is_set():
                    return
                try:
                    await asyncio.wait_for(wake.wait(), heartbeat)
                except TimeoutError:
                    yield None
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    # ----------------------------------------------------------- approvals
    def ask(self, request: ApprovalRequest) -> Answer:
        """Publish the question and wait for the answer (``unasked`` once stopped)."""
        call_id = request.call_id or f"approval-{next(self._call_ids)}"
        secret = request.secret
        pending = PendingApproval(
            call_id, request.tool, request.summary, secret=secret.prompt if secret else ""
        )
        with self._lock:
            if self.stop_requested:
                return "unasked"
            self.pending = pending
        self.publish("approval", pending.as_dict())
        self.publish("status", {"status": "waiting"})
        pending.answered.wait()
        with self._lock:
            self.pending = None
        if pending.answer is None:
            self.publish("approval_cancelled", {"call_id": call_id})
            return "unasked"
        self.publish("status", {"status": "running"})
        if secret is not None and pending.answer != "deny":
            secret.value, pending.value = pending.value, None
        return pending.answer

    def answer(self, call_id: str, answer: Answer, value: str | None = None) -> None:
        """``value``: what the question asked the user to type (a password), with a yes."""
        with self._lock:
            pending = self.pending
            if pending is None or pending.call_id != call_id or pending.answered.is_set():
                raise NotFoundError("no such pending approval")
            if pending.secret and answer != "deny" and not value:
                raise UsageError(f"type {pending.secret}, or deny", code="approval_value")
            pending.answer = answer
            pending.value = value if pending.secret else None
            pending.answered.set()

    def stop(self) -> None:
        """Stop at once: end the commands running, cancel the model request under way and
        the approval asked."""
        with self._lock:
            self.stop_requested = True
            pending = self.pending
            cancel, interrupt = self.cancel, self.interrupt
        if interrupt is not None:
            # Why: a long command would otherwise hold the stop until it ends by itself.
            interrupt()
        if pending is not None:
            # Why "unasked", not "deny": stopping the task is not a "no" to this call.
            # The audit records ``not-asked`` (nobody answered, it did not run), the
            # run ends, and a resume asks again instead of telling the model "denied".
            pending.answered.set()
        if cancel is not None:
            # Why: a model that is slow to answer must not hold a stop for seconds.
            cancel()

    # ------------------------------------------------------------ listener
    def listener(self, event: Any) -> None:
        """The run's listener: stream events as task events; the stop point between them."""
        if isinstance(event, TextDelta):
            self._check_stop()
            if event.text:
                self.publish("text", {"text": event.text})
        elif isinstance(event, ToolEvent):
            if event.phase == "start":
                # Why only here: a call that already ran keeps its result in the transcript.
                self._check_stop()
                self.publish(
                    "tool_call",
                    {"id": event.call_id, "name": event.name, "summary": brief(event.arguments)},
                )
            elif event.outcome is not None:
                data = {
                    "id": event.call_id,
                    "name": event.name,
                    "subject": brief(event.arguments),
                    "ok": not event.outcome.is_error,
                    "summary": outcome_text(event.outcome.content, event.outcome.is_error),
                }
                changes = getattr(event.outcome, "changes", None)
                if changes:
                    # Why: what changed on disk during this call (agent.changes), as measured.
                    data["changes"] = [c.as_dict() for c in changes]
                shown = getattr(event.outcome, "shown", None)
                if shown is not None:
                    # Why (issue 25): the browser's action in words and its picture.
                    data["line"] = shown.line
                    if shown.screenshot:
                        data["screenshot"] = shown.screenshot
                self.publish("tool_result", data)

    def _check_stop(self) -> None:
        if self.stop_requested:
            raise TaskStopped

    def attach(self, agent: Any) -> None:
        """Keep the run's stop handle (its model's cancel); a stop that came first applies now."""
        with self._lock:
            self.cancel = agent.model.cancel
            stopped = self.stop_requested
        if stopped:
            agent.model.cancel()

    def finish(self, reason: str, message: str | None = None) -> None:
        """The end: the status every surface shows, and why when it failed."""
        self.reason = reason
        self.message = failure_words(reason, message)
        status = self.status
        data: dict[str, Any] = {"reason": reason, "status": status}
        if self.message:
            data["message"] = self.message
        self.publish(
            "status", {"status": status, **({"reason": self.message} if self.message else {})}
        )
        self.publish("done", data)

    def as_dict(self) -> dict[str, Any]:
        pending = self.pending
        return {
            "session_id": self.session_id,
            "status": self.status,
            "reason": self.message,
            "pending_approval": pending.as_dict() if pending is not None else None,
            "run": self.run,
            "messages_before": self.base,
        }


class EventApprover:
    """An Approver whose questions are task events and whose answers come back through
    :meth:`Task.answer` (the page's ``POST …/approvals/{call_id}``)."""

    human = True

    def __init__(self, task: Task) -> None:
        self.task = task

    def ask(self, request: ApprovalRequest) -> Answer:
        return self.task.ask(request)


__all__ = [
    "ANSWERS",
    "STATUSES",
    "EventApprover",
    "PendingApproval",
    "Status",
    "Task",
    "TaskEvent",
    "TaskStopped",
    "failure_words",
    "final_status",
    "parse_event_id",
]
