"""Agent tasks inside the server: background runs, their event streams, their approvals.

A task is one run of the real agent (:mod:`workhearth.agent.runner`, as ``hearth
run`` / ``hearth resume`` build it) on one session, in a thread of the server
process, so closing the browser never stops it. Its events (text deltas, tool
calls and results, approval questions, status changes, the end) are kept in
memory in order, so a page that subscribes late gets a replay and then the live
stream. The transcript stays the durable record: after a server restart the
page reads a session's messages through the sessions routes, and a session
whose last run did not finish shows as ``stopped`` and can be resumed.

In ``agent`` mode the run asks through :class:`WebApprover`: an ``approval``
event, then the task thread waits until the page answers (``once``, ``always``,
``deny``) or the task is stopped.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

from workhearth.agent.approval import Answer, ApprovalRequest
from workhearth.agent.loop import ToolEvent
from workhearth.agent.runner import MODES, RunOptions, check_model, resume
from workhearth.app import Workhearth
from workhearth.cli.run import NO_MODEL, brief, outcome_text
from workhearth.config import Config
from workhearth.errors import (
    ConfigError,
    HearthError,
    NotFoundError,
    SessionLockedError,
    UsageError,
)
from workhearth.models.streaming import TextDelta
from workhearth.sessions.reconstruct import repair
from workhearth.sessions.session import Session

Status = Literal["running", "waiting", "stopped", "done"]
ANSWERS: tuple[Answer, ...] = ("once", "always", "deny")
HEARTBEAT = 15.0  # seconds between SSE comments on a quiet stream
# Why a bound: finished tasks are kept only so a page can re-attach to their end;
# the transcript holds everything, so old ones can go.
KEEP_FINISHED = 64

log = logging.getLogger(__name__)


class TaskStopped(KeyboardInterrupt):
    """Raised in the task thread at its next event after a stop.

    Why a KeyboardInterrupt: the loop already turns one into a clean
    ``interrupted`` end (turn closed, transcript resumable) and the shell runner
    kills a running command on it, exactly as Ctrl-C does in ``hearth run``.
    """


class TaskConflict(HearthError):
    """The session is busy (a live task holds it) or has nothing to do (HTTP 409)."""


@dataclass(frozen=True)
class TaskEvent:
    """One event of a task's stream; ``seq`` counts from 1 within the task."""

    seq: int
    name: str
    data: dict[str, Any]

    def sse(self) -> bytes:
        body = orjson.dumps(self.data).decode()
        return f"id: {self.seq}\nevent: {self.name}\ndata: {body}\n\n".encode()


@dataclass
class PendingApproval:
    call_id: str
    tool: str
    summary: str
    answer: Answer | None = None
    answered: threading.Event = field(default_factory=threading.Event)

    def as_dict(self) -> dict[str, str]:
        return {"call_id": self.call_id, "tool": self.tool, "summary": self.summary}


class Task:
    """One run of the agent on one session, its events and its pending approval."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.events: list[TaskEvent] = []
        self.reason: str | None = None  # set when the run ended
        self.stop_requested = False
        self.pending: PendingApproval | None = None
        self.thread: threading.Thread | None = None
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
            return "stopped" if self.reason not in ("done", "nothing_to_do") else "done"
        return "waiting" if self.pending is not None else "running"

    # -------------------------------------------------------------- events
    def publish(self, name: str, data: dict[str, Any]) -> None:
        with self._lock:
            self.events.append(TaskEvent(len(self.events) + 1, name, data))
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

    async def stream(
        self, after: int = 0, heartbeat: float = HEARTBEAT, closing: threading.Event | None = None
    ) -> AsyncIterator[bytes]:
        """SSE bytes: the events after ``after`` (a replay), then live ones until the end.

        Ends early once ``closing`` is set (the server is shutting down).
        """
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()
        waiter = (loop, wake)
        with self._lock:
            self._waiters.add(waiter)
        try:
            # Why: tells EventSource how long to wait before it reconnects on its own.
            yield b"retry: 2000\n\n"
            last = after
            while True:
                wake.clear()
                fresh = self.since(last)
                for event in fresh:
                    yield event.sse()
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
                    # Why: a comment line keeps proxies and browsers from closing a quiet stream.
                    yield b": keep-alive\n\n"
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    # ----------------------------------------------------------- approvals
    def ask(self, request: ApprovalRequest) -> Answer:
        """Publish the question and wait for the page's answer (``unasked`` once stopped)."""
        call_id = request.call_id or f"approval-{next(self._call_ids)}"
        pending = PendingApproval(call_id, request.tool, request.summary)
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
            return "unasked"
        self.publish("status", {"status": "running"})
        return pending.answer

    def answer(self, call_id: str, answer: Answer) -> None:
        with self._lock:
            pending = self.pending
            if pending is None or pending.call_id != call_id or pending.answered.is_set():
                raise NotFoundError("no such pending approval")
            pending.answer = answer
            pending.answered.set()

    def stop(self) -> None:
        with self._lock:
            self.stop_requested = True
            pending = self.pending
        if pending is not None:
            # Why "unasked", not "deny": stopping the task is not a "no" to this call.
            # The audit records ``not-asked`` (nobody answered, it did not run), the
            # run ends, and a resume asks again instead of telling the model "denied".
            pending.answered.set()

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
                self.publish(
                    "tool_result",
                    {
                        "id": event.call_id,
                        "ok": not event.outcome.is_error,
                        "summary": outcome_text(event.outcome.content, event.outcome.is_error),
                    },
                )

    def _check_stop(self) -> None:
        if self.stop_requested:
            raise TaskStopped

    def finish(self, reason: str, message: str | None = None) -> None:
        data: dict[str, Any] = {"reason": reason}
        if message:
            data["message"] = message
        self.reason = reason
        self.publish("status", {"status": self.status})
        self.publish("done", data)

    def as_dict(self) -> dict[str, Any]:
        pending = self.pending
        return {
            "session_id": self.session_id,
            "status": self.status,
            "pending_approval": pending.as_dict() if pending is not None else None,
        }


class WebApprover:
    """An Approver whose answers come from the page (``POST …/approvals/{call_id}``)."""

    human = True

    def __init__(self, task: Task) -> None:
        self.task = task

    def ask(self, request: ApprovalRequest) -> Answer:
        return self.task.ask(request)


def transcript_status(session: Session) -> Status:
    """``stopped`` when the last run did not finish (it has a turn to continue), else ``done``."""
    messages = repair(session.load().messages).messages
    return "stopped" if messages and messages[-1]["role"] == "user" else "done"


class TaskManager:
    """The server's tasks: at most one live task per session, run in background threads.

    ``config`` is the server's configuration (read once at start); ``workspace`` is
    where a task without its own workspace runs; ``env`` is the environment runs
    give their commands (the server's own, passed in by ``hearth serve``).
    """

    def __init__(
        self,
        config: Config,
        workspace: Path | str,
        env: Mapping[str, str] | None = None,
        *,
        heartbeat: float = HEARTBEAT,
    ) -> None:
        self.config = config
        self.workspace = Path(workspace).absolute()
        # Why passed in: `hearth serve` (the process edge) hands over its environment,
        # so tasks' commands see the user's PATH and shell as `hearth run` does.
        self.env = dict(env or {})
        self.heartbeat = heartbeat
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()
        self.closing = threading.Event()

    def _hearth(self, workspace: Path | str | None) -> Workhearth:
        return Workhearth(config=self.config, workspace=workspace or self.workspace)

    def _require_model(self, wh: Workhearth, model: str | None) -> None:
        if model is None and not self.config.models.configured:
            raise ConfigError(NO_MODEL)
        check_model(wh, model)

    def _options(self, task: Task, mode: str | None, model: str | None) -> RunOptions:
        if mode is not None and mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        return RunOptions(
            mode=mode,
            model=model,
            env=self.env,
            listener=task.listener,
            approver=WebApprover(task),
        )

    # ------------------------------------------------------------ lookups
    def get(self, session_id: str) -> Task | None:
        with self._lock:
            return self._tasks.get(session_id)

    def live(self, session_id: str) -> Task | None:
        task = self.get(session_id)
        return task if task is not None and not task.finished else None

    def status(self, session_id: str) -> Status | None:
        """A session's status: its live task's, else what its transcript says (None: no such session)."""
        task = self.live(session_id)
        if task is not None:
            return task.status
        try:
            return transcript_status(self._hearth(None).sessions.open(session_id))
        except HearthError:  # gone, damaged or sealed with a key we lack: nothing to say
            return None

    def info(self, session_id: str) -> dict[str, Any]:
        """``{"session_id", "status", "pending_approval"}`` (NotFoundError for an unknown id)."""
        task = self.live(session_id)
        if task is not None:
            return task.as_dict()
        session = self._hearth(None).sessions.open(session_id)
        task = self.live(session.id)  # ``session_id`` may have been a prefix
        if task is not None:
            return task.as_dict()
        return {
            "session_id": session.id,
            "status": transcript_status(session),
            "pending_approval": None,
        }

    def subscribe(self, session_id: str) -> Task:
        """The task whose events a stream sends: the session's last one in this server.

        A session this server never ran (or ran before a restart) gets a finished
        stand-in holding only its status and ``done``: its history is in the transcript.
        """
        task = self.get(session_id)
        if task is not None:
            return task
        session = self._hearth(None).sessions.open(session_id)
        task = self.get(session.id)
        if task is not None:
            return task
        status = transcript_status(session)
        stand_in = Task(session.id)
        stand_in.finish(status)
        return stand_in

    # ------------------------------------------------------------- start
    def start(
        self,
        prompt: str,
        *,
        workspace: str | None = None,
        mode: str | None = None,
        model: str | None = None,
        skill: str | None = None,
        example: str | None = None,
        values: Mapping[str, str] | None = None,
    ) -> Task:
        """A new session working on ``prompt`` (or ``skill``'s ``example`` filled with ``values``)."""
        if mode is not None and mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        folder = self._workspace(workspace)
        wh = self._hearth(folder)
        prompt = self._prompt(wh, prompt, skill, example, values)
        self._require_model(wh, model)
        if skill:
            from workhearth.agent.tools import SkillState

            # Why: as `hearth run --skill`: the skill's instructions come with the task.
            prompt = f"{prompt}\n\n{SkillState(wh.skills).activate(skill)}"
        session = wh.sessions.create(model=model, mode=mode or "agent")
        task = Task(session.id)
        opts = self._options(task, mode, model)
        self._launch(task, wh, session, opts, prompt)
        return task

    def _workspace(self, workspace: str | None) -> Path:
        if workspace is None or not workspace.strip():
            return self.workspace
        path = Path(workspace).expanduser()
        if "\x00" in workspace or not path.is_absolute():
            raise UsageError("workspace must be an absolute path")
        try:
            folder = path.is_dir()
        except OSError:  # a name too long for the file system, a folder we may not read
            folder = False
        if not folder:
            raise UsageError("workspace must be an existing folder")
        return path

    def _prompt(
        self,
        wh: Workhearth,
        prompt: str,
        skill: str | None,
        example: str | None,
        values: Mapping[str, str] | None,
    ) -> str:
        if example is None:
            if values:
                raise UsageError("values fill the variables of an example: give example too")
            if not prompt.strip():
                raise UsageError("the task is empty")
            return prompt
        if skill is None:
            raise UsageError("example needs skill")
        if prompt.strip():
            raise UsageError("give a task or an example, not both")
        from workhearth.agent.workspace import Workspaces
        from workhearth.skills.library import make_file_check

        roots = Workspaces(wh.paths, current=wh.workspace).roots()
        return wh.skills.render(
            skill, example, dict(values or {}), file_check=make_file_check(roots)
        )

    # ------------------------------------------------------------ resume
    def resume(
        self,
        session_id: str,
        *,
        prompt: str | None = None,
        mode: str | None = None,
        model: str | None = None,
    ) -> Task:
        """Continue a stopped or crashed session; with ``prompt``, give it its next instruction."""
        wh = self._hearth(None)
        session = wh.sessions.open(session_id)
        if self.live(session.id) is not None:
            raise TaskConflict(f"session {session.id} is already running")
        if not (prompt and prompt.strip()) and transcript_status(session) == "done":
            raise TaskConflict(
                f"session {session.id} is finished; send a task to give it its next instruction"
            )
        # Why the session's own folder: its files and authorized roots are there, not
        # in the folder the server happened to start in.
        folder = session.workspace or str(self.workspace)
        if not Path(folder).is_dir():
            raise UsageError(f"the session's workspace {folder} is no longer a folder")
        wh = self._hearth(folder)
        from workhearth.agent.runner import session_model

        self._require_model(wh, session_model(wh, session, RunOptions(model=model)))
        task = Task(session.id)
        opts = self._options(task, mode, model)
        try:
            # Why now: another process (a `hearth resume` in a terminal) holding the
            # session must be a 409 for this request, not a failure in the background.
            session.writer()
        except SessionLockedError:
            session.close()
            raise
        self._launch(task, wh, session, opts, prompt.strip() if prompt else None)
        return task

    def _launch(
        self, task: Task, wh: Workhearth, session: Session, opts: RunOptions, prompt: str | None
    ) -> None:
        with self._lock:
            current = self._tasks.get(session.id)
            if current is not None and not current.finished:
                session.close()
                raise TaskConflict(f"session {session.id} is already running")
            self._tasks[session.id] = task
            self._forget_old()
        task.publish("status", {"status": "running"})
        task.thread = threading.Thread(
            target=self._run,
            args=(task, wh, session, opts, prompt),
            name=f"hearth-task-{session.id}",
            # Why daemon: a killed or stopped server must not wait on a model; every
            # message is already on disk, and the session resumes from its transcript.
            daemon=True,
        )
        task.thread.start()

    def _forget_old(self) -> None:
        finished = [sid for sid, t in self._tasks.items() if t.finished]
        for sid in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._tasks[sid]

    def _run(
        self, task: Task, wh: Workhearth, session: Session, opts: RunOptions, prompt: str | None
    ) -> None:
        reason, message = "error", None
        try:
            result = resume(wh, session, opts, prompt)
            reason, message = result.status, result.error
        except KeyboardInterrupt:  # a TaskStopped outside the loop's own handling
            reason = "interrupted"
        except HearthError as exc:
            message = str(exc)
        except Exception as exc:  # a bug: keep the server up, and say it in the log
            log.exception("task %s failed", task.session_id)
            message = f"internal error: {type(exc).__name__}"
        finally:
            session.close()
        if task.stop_requested and reason not in ("done", "nothing_to_do"):
            reason, message = "stopped", None
        task.finish(reason, message)

    # -------------------------------------------------------------- stop
    def stop(self, session_id: str) -> Task:
        """Ask a live task to stop; it ends at its next event (or approval question)."""
        task = self.live(session_id)
        if task is None:
            self._hearth(None).sessions.open(session_id)  # NotFoundError for an unknown id
            raise TaskConflict(f"session {session_id} is not running")
        task.stop()
        return task

    def answer(self, session_id: str, call_id: str, answer: str) -> None:
        if answer not in ANSWERS:
            raise UsageError(f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}")
        task = self.live(session_id)
        if task is None:
            raise NotFoundError("no such pending approval")
        task.answer(call_id, answer)

    def end_streams(self) -> None:
        """End every open event stream now (the server is stopping; tasks go on until close).

        Why: a page's stream never ends by itself, and the server waits for open
        requests before it shuts down. Call it on the event loop (it takes locks).
        """
        self.closing.set()
        with self._lock:
            tasks = list(self._tasks.values())
        for task in tasks:
            task.wake()

    def close(self, timeout: float = 5.0) -> None:
        """Stop every live task and wait (a little) for each to write its end."""
        with self._lock:
            live = [t for t in self._tasks.values() if not t.finished]
        for task in live:
            task.stop()
        for task in live:
            if task.thread is not None:
                task.thread.join(timeout)

    def wait(self, session_id: str, timeout: float | None = None) -> bool:
        """Wait for a session's task to end (tests, shutdown); True when it has."""
        task = self.get(session_id)
        if task is None or task.thread is None:
            return True
        task.thread.join(timeout)
        return not task.thread.is_alive()
