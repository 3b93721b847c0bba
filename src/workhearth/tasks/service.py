"""The task service: one lifecycle for every surface that starts the agent (DESIGN §7).

``hearth run`` / ``hearth resume`` drive it in the foreground (the terminal answers
approvals and prints the events); the page drives it in the background (a thread per
task; approvals come back over HTTP). Later starters (team tasks, schedules) use the
same calls. Either way a run gets the same tools — the starter hands in how to build
the extra ones (MCP servers live above this layer) — the same events, the same
statuses and the same end, recorded in the session so a restarted server, ``hearth
sessions show`` and the page all tell the same story.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workhearth.agent.approval import Approver
from workhearth.agent.browser.session import kill_browser_of
from workhearth.agent.receipts import failing_products
from workhearth.agent.runner import (
    MODES,
    RunOptions,
    check_browser_config,
    check_model,
    new_session,
    resume,
    session_model,
)
from workhearth.agent.tools import Tool
from workhearth.agent.tools.context import command_records
from workhearth.app import Workhearth
from workhearth.config import Config
from workhearth.errors import (
    ConfigError,
    HearthError,
    NotFoundError,
    SessionLockedError,
    UsageError,
)
from workhearth.sessions.backend import SessionBackend
from workhearth.sessions.reconstruct import repair
from workhearth.sessions.session import RewindRequest, Session
from workhearth.sessions.state import SessionState
from workhearth.shell.runner import interrupt_commands
from workhearth.tasks.rewind import Rewinder, RewindPlan, Turn, rewind_session
from workhearth.tasks.task import (
    ANSWERS,
    EventApprover,
    Status,
    Task,
    TaskEvent,
    failure_words,
    final_status,
)
from workhearth.tasks.team.run import TEAM_META, TeamOptions, TeamResult, is_team, run_team
from workhearth.tasks.words import NO_MODEL

# Why a bound: finished tasks are kept only so a page can re-attach to their end;
# the transcript holds everything, so old ones can go.
KEEP_FINISHED = 64
HEARTBEAT = 15.0  # seconds a quiet event stream waits before it says it is alive
OUTCOME = "outcome"  # the key of a run's end in the session's business state
Warn = Callable[[str], None]
# Builds a run's extra tools (MCP servers' tools) for a workspace; None: none.
ToolsFor = Callable[[Workhearth, Warn], Callable[[], Sequence[Tool]] | None]

log = logging.getLogger(__name__)


class TaskConflict(HearthError):
    """The session is busy (a live task holds it) or has nothing to do (HTTP 409)."""

    code = "task_conflict"


def record_outcome(session: SessionBackend, status: Status, reason: str | None) -> None:
    """Write how the run ended into the session (a checkpoint), for every later reader."""
    state = session.load().business
    state.extra[OUTCOME] = {"status": status, "reason": reason, "at": time.time()}
    session.checkpoint(state)


def transcript_status(
    session: SessionBackend, state: SessionState | None = None
) -> tuple[Status, str | None]:
    """A session's status and failure reason when no task of this process runs it.

    The end its last run recorded, if that run failed; else ``stopped`` when the last
    run did not finish (a turn to continue), ``done`` when it did. ``state``: the
    session already loaded (a reader's load parses the transcript again).
    """
    state = state if state is not None else session.load()
    outcome = state.business.extra.get(OUTCOME)
    if isinstance(outcome, dict) and outcome.get("status") in ("failed", "waiting"):
        reason = outcome.get("reason")
        return outcome["status"], reason if isinstance(reason, str) else None
    messages = repair(state.messages).messages
    return ("stopped" if messages and messages[-1]["role"] == "user" else "done"), None


def _team_end(outcome: TeamResult) -> tuple[str, str | None]:
    """A team run's end as a run's reason and message (waiting: ``questions`` or ``plan``)."""
    if outcome.status == "waiting":
        return outcome.reason or "plan", None
    if outcome.status == "failed":
        return "error", outcome.reason
    return outcome.status, None


def _products_hold_up(session: Session, reason: str, message: str | None) -> tuple[str, str | None]:
    """Issue #21: a run that says it is done, while a file it produced (still there,
    unchanged) fails its check, ends ``failed``, the reason naming file and problem."""
    try:
        failing = failing_products(session, Path(session.workspace))
    except (HearthError, OSError) as exc:
        log.warning("task %s: its files' receipts could not be read (%s)", session.id, exc)
        return reason, message
    if not failing:
        return reason, message
    words = "; ".join(f"{r['path']} {_first_problem(r)}" for r in failing[:3])
    more = f" and {len(failing) - 3} more files" if len(failing) > 3 else ""
    return "file_check", f"a file it produced fails its check: {words}{more}"


def _first_problem(receipt: dict[str, Any]) -> str:
    for problem in receipt.get("problems", []):
        if problem.get("kind") != "skipped":
            where = f" ({problem['where']})" if problem.get("where") else ""
            return f"{problem.get('message', 'fails')}{where}"
    return "fails"


class TaskService:
    """The tasks of one process: at most one live task per session.

    ``config`` is read once by the starter; ``workspace`` is where a task without its
    own runs; ``env`` is the environment runs give their commands (the process
    edge's own); ``tools_for`` builds a run's extra tools.
    """

    def __init__(
        self,
        config: Config,
        workspace: Path | str,
        env: Mapping[str, str] | None = None,
        *,
        tools_for: ToolsFor | None = None,
    ) -> None:
        self.config = config
        self.workspace = Path(workspace).absolute()
        self.env = dict(env or {})
        self.tools_for = tools_for
        self.heartbeat = HEARTBEAT
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()
        self.closing = threading.Event()

    # ------------------------------------------------------------ building
    def hearth(self, workspace: Path | str | None) -> Workhearth:
        return Workhearth(config=self.config, workspace=workspace or self.workspace)

    def require_model(self, wh: Workhearth, model: str | None) -> None:
        """Fail before any session exists: no model at all, an unknown one, a missing key."""
        if model is None and not self.config.models.configured:
            raise ConfigError(NO_MODEL, code="model_none")
        check_model(wh, model)
        check_browser_config(wh)

    def options(
        self,
        task: Task,
        wh: Workhearth,
        *,
        mode: str | None,
        model: str | None,
        approver: Approver | None = None,
        **extra: Any,
    ) -> RunOptions:
        """The run's options: its events go to ``task``; approvals to ``approver`` (default:
        the task's own events, answered by :meth:`answer`)."""
        if mode is not None and mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")

        def notice(message: str) -> None:
            task.publish("notice", {"message": message})

        return RunOptions(
            mode=mode,
            model=model,
            env=self.env,
            listener=task.listener,
            on_agent=task.attach,
            approver=approver if approver is not None else EventApprover(task),
            # Why the same factory for every starter: a web task gets the tools a CLI run gets.
            extra_tools=self.tools_for(wh, notice) if self.tools_for is not None else None,
            **extra,
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
            return transcript_status(self.hearth(None).sessions.open(session_id))[0]
        except HearthError:  # gone, damaged or sealed with a key we lack: nothing to say
            return None

    def info(self, session_id: str) -> dict[str, Any]:
        """``{"session_id", "status", "reason", "pending_approval"}`` (NotFoundError if unknown)."""
        task = self.live(session_id)
        if task is not None:
            return task.as_dict()
        session = self.hearth(None).sessions.open(session_id)
        task = self.live(session.id)  # ``session_id`` may have been a prefix
        if task is not None:
            return task.as_dict()
        status, reason = transcript_status(session)
        return {
            "session_id": session.id,
            "status": status,
            "reason": reason,
            "pending_approval": None,
        }

    def subscribe(self, session_id: str) -> Task:
        """The task whose events a stream sends: the session's last one in this process.

        A session this process never ran (or ran before a restart) gets a finished
        stand-in holding only its status and ``done``: its history is in the transcript.
        """
        task = self.get(session_id)
        if task is not None:
            return task
        session = self.hearth(None).sessions.open(session_id)
        task = self.get(session.id)
        if task is not None:
            return task
        state = session.load()
        status, reason = transcript_status(session, state)
        # Why base = every message: the whole history is in the transcript, none in events.
        stand_in = Task(session.id, base=len(state.messages))
        stand_in.finish({"failed": "error", "stopped": "stopped"}.get(status, "done"), reason)
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
        team: TeamOptions | None = None,
    ) -> Task:
        """A new session working on ``prompt`` (or ``skill``'s ``example`` filled with
        ``values``), in the background. Checked before anything exists: its folder,
        prompt, skill and model. With ``team``: a team task (issue 23) that waits for its
        questions' answers and its plan's approval (``resume`` gives them)."""
        if mode is not None and mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        wh = self.hearth(self._workspace(workspace))
        prompt = self._prompt(wh, prompt, skill, example, values)
        self.require_model(wh, model)
        if skill:
            from workhearth.agent.tools import SkillState

            SkillState(wh.skills).load(skill)  # Why: an unknown skill leaves no session
        if team is not None and skill:
            raise UsageError("a team task takes no skill")
        extra = {TEAM_META: True} if team is not None else None
        session = wh.sessions.create(model=model, mode=mode or "agent", extra_meta=extra)
        task = Task(session.id)
        task.team = self._team(team)
        # Why the skill as an option: the user's words stay the prompt and the title.
        opts = self.options(task, wh, mode=mode, model=model, skill=skill)
        self._launch(task, wh, session, opts, prompt)
        return task

    def _workspace(self, workspace: str | None) -> Path:
        if workspace is None or not workspace.strip():
            return self.workspace
        path = Path(workspace).expanduser()
        if "\x00" in workspace or not path.is_absolute():
            raise UsageError("workspace must be an absolute path", code="workspace_not_absolute")
        try:
            folder = path.is_dir()
        except OSError:  # a name too long for the file system, a folder we may not read
            folder = False
        if not folder:
            raise UsageError("workspace must be an existing folder", code="workspace_missing")
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
                raise UsageError("the task is empty", code="task_empty")
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
    def prepare_resume(
        self, session_id: str, *, prompt: str | None, model: str | None, waiting_ok: bool = False
    ) -> tuple[Workhearth, Session]:
        """Check a resume before it starts: the session, its folder, its model, its lock."""
        wh = self.hearth(None)
        session = wh.sessions.open(session_id)
        if self.live(session.id) is not None:
            raise TaskConflict(f"session {session.id} is already running", code="task_running")
        finished = transcript_status(session)[0] == "done"
        if not (prompt and prompt.strip()) and finished and not waiting_ok:
            raise TaskConflict(
                f"session {session.id} is finished; send a task to give it its next instruction",
                code="task_finished",
            )
        # Why the session's own folder: its files and authorized roots are there, not
        # in the folder the server happened to start in.
        folder = session.workspace or str(self.workspace)
        if not Path(folder).is_dir():
            raise UsageError(
                "the session's workspace is no longer a folder",
                code="workspace_missing",
                cli_hint=folder,
            )
        wh = self.hearth(folder)
        self.require_model(wh, session_model(wh, session, RunOptions(model=model)))
        try:
            # Why now: another process (a `hearth resume` in a terminal) holding the
            # session must be a 409 for this request, not a failure in the background.
            session.writer()
        except SessionLockedError:
            session.close()
            raise
        return wh, session

    def resume(
        self,
        session_id: str,
        *,
        prompt: str | None = None,
        mode: str | None = None,
        model: str | None = None,
        team: TeamOptions | None = None,
    ) -> Task:
        """Continue a stopped, failed or crashed session in the background; with
        ``prompt``, give it its next instruction; ``team``: a team task's answers,
        approval or nudge."""
        if team is not None:
            prompt = None  # Why: a team task's next words are answers or a nudge, not a prompt
        wh, session = self.prepare_resume(
            session_id, prompt=prompt, model=model, waiting_ok=team is not None
        )
        task = Task(session.id)
        task.team = self._team(team)
        opts = self.options(task, wh, mode=mode, model=model)
        self._launch(task, wh, session, opts, prompt.strip() if prompt else None)
        return task

    # ------------------------------------------------------------- running
    def _register(self, task: Task, session: SessionBackend) -> None:
        with self._lock:
            current = self._tasks.get(session.id)
            if current is not None and not current.finished:
                session.close()
                raise TaskConflict(f"session {session.id} is already running", code="task_running")
            self._tasks[session.id] = task
            self._forget_old()
        if task.base is None:
            task.base = len(session.load().messages)
        task.publish("status", {"status": "running"})

    def _launch(
        self, task: Task, wh: Workhearth, session: Session, opts: RunOptions, prompt: str | None
    ) -> None:
        self._register(task, session)
        task.thread = threading.Thread(
            target=self.run,
            args=(task, wh, session, opts, prompt),
            name=f"hearth-task-{session.id}",
            # Why daemon: a killed or stopped server must not wait on a model; every
            # message is already on disk, and the session resumes from its transcript.
            daemon=True,
        )
        task.thread.start()

    def run_here(
        self,
        wh: Workhearth,
        session: Session,
        opts: RunOptions,
        prompt: str | None,
        on_event: Callable[[TaskEvent], None],
        *,
        team: TeamOptions | None = None,
    ) -> Task:
        """Run a task in this thread (the terminal): ``on_event`` renders each event."""
        task = Task(session.id)
        task.team = team
        task.on_event = on_event
        opts.listener = task.listener
        given = opts.on_agent

        def attach(agent: Any) -> None:
            if given is not None:
                given(agent)  # Why: a caller's own hook (a bench swapping the model) first
            task.attach(agent)

        opts.on_agent = attach
        self._register(task, session)
        self.run(task, wh, session, opts, prompt)
        return task

    def run_team_new(
        self,
        wh: Workhearth,
        prompt: str,
        opts: RunOptions,
        team: TeamOptions,
        on_event: Callable[[TaskEvent], None],
    ) -> Task:
        """A new team task (issue 23) of ``wh``'s workspace, led in this thread."""
        if not prompt.strip():
            raise UsageError("the task is empty")
        self.require_model(wh, opts.model)
        session = wh.sessions.create(
            model=opts.model, mode=opts.mode or "agent", extra_meta={TEAM_META: True}
        )
        return self.run_here(wh, session, opts, prompt, on_event, team=team)

    def run_new(
        self,
        wh: Workhearth,
        prompt: str,
        opts: RunOptions,
        on_event: Callable[[TaskEvent], None],
    ) -> Task:
        """A new session of ``wh``'s workspace working on ``prompt``, in this thread."""
        session = new_session(wh, prompt, opts)
        return self.run_here(wh, session, opts, prompt, on_event)

    def _forget_old(self) -> None:
        finished = [sid for sid, t in self._tasks.items() if t.finished]
        for sid in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._tasks[sid]

    def run(
        self, task: Task, wh: Workhearth, session: Session, opts: RunOptions, prompt: str | None
    ) -> None:
        """The run from start to end; never raises (the end is ``task``'s last event)."""
        records = command_records(session)
        # Why (issue 25): a stop also ends the run's browser at once, mid-page or not.
        task.interrupt = lambda: (interrupt_commands(records), kill_browser_of(session.id))
        reason, message = "error", None
        if prompt is not None:
            # Why: the run appends the prompt to the transcript after ``base``; a page
            # re-attaching mid-run shows it from here, once.
            task.publish("prompt", {"text": prompt})
        try:
            # Why (issue 22): a rewind a crash cut short is finished before the session goes on.
            Rewinder.for_session(session).complete_pending()
            if is_team(session):
                reason, message = _team_end(
                    run_team(wh, session, opts, prompt, task.team or TeamOptions(yes=opts.yes))
                )
            else:
                result = resume(wh, session, opts, prompt)
                reason, message = result.status, result.error
        except KeyboardInterrupt:  # a stop (or Ctrl-C) outside the loop's own handling
            reason = "interrupted"
        except HearthError as exc:
            message = str(exc)
        except Exception as exc:  # a bug: keep the process up, and say it in the log
            log.exception("task %s failed", task.session_id)
            message = f"internal error: {type(exc).__name__}: {exc}"
        finally:
            session.close()
        if task.stop_requested and reason not in ("done", "nothing_to_do"):
            reason, message = "stopped", None
        if reason == "done":
            reason, message = _products_hold_up(session, reason, message)
        self._record(wh, session.id, reason, message)
        task.finish(reason, message)

    def _team(self, team: TeamOptions | None) -> TeamOptions | None:
        if team is not None:
            team.parallel = self.config.team_parallel  # Why: [team] parallel, read once
        return team

    def team_info(self, session_id: str) -> dict[str, Any]:
        """A team task's phase, questions, plan, board and report (``GET /v1/tasks/{id}/team``)."""
        from workhearth.tasks.team.run import team_view

        with self.hearth(None).sessions.open(session_id) as session:
            if not is_team(session):
                raise NotFoundError(f"session {session.id} is not a team task")
            return team_view(session)

    def rewind_turns(self, session_id: str) -> tuple[str, list[Turn]]:
        """The session's full id and its turns, for ``rewind --list`` (a rewind a crash cut
        short is completed first, unless the session is running)."""
        wh = self.hearth(None)
        with wh.sessions.open(session_id) as session:
            rewinder = Rewinder.for_session(session)
            if self.live(session.id) is None:
                with contextlib.suppress(SessionLockedError):
                    rewinder.complete_pending()
            return session.id, rewinder.turns()

    def rewind(
        self,
        session_id: str,
        *,
        to: int | None = None,
        undo: bool = False,
        files: bool = True,
        conversation: bool = True,
        dry_run: bool = False,
        force: bool = False,
        summarize: bool = False,
        on_step: Callable[[str], None] | None = None,
    ) -> RewindPlan:
        """Rewind a session to just before turn ``to`` (or ``undo`` the last rewind): the plan,
        carried out unless ``dry_run`` (DESIGN §6, §8). Refused while the session runs."""
        wh = self.hearth(None)
        session = wh.sessions.open(session_id)
        if self.live(session.id) is not None:
            session.close()
            raise TaskConflict(
                f"session {session.id} is running; stop it before rewinding", code="task_running"
            )
        request = RewindRequest(to, dry_run, not conversation, not files, force, undo)
        with session:
            plan = rewind_session(wh, session, request, summarize=summarize, on_step=on_step)
        if not dry_run and plan.conversation:
            # Why: a finished run's events replay to every new stream; once its turns were
            # rewound they are gone, and the transcript alone tells the conversation.
            with self._lock:
                task = self._tasks.get(session.id)
                if task is not None and task.finished:
                    del self._tasks[session.id]
        return plan

    def _record(self, wh: Workhearth, session_id: str, reason: str, message: str | None) -> None:
        """Keep the end in the transcript, so every surface tells it after a restart too."""
        try:
            status = final_status(reason)
            # Why: a waiting team task says what it waits for (``questions`` or ``plan``).
            words = reason if status == "waiting" else failure_words(reason, message)
            with wh.sessions.open(session_id) as session:
                record_outcome(session, status, words)
        except HearthError as exc:  # a full disk, a session deleted meanwhile
            log.warning("task %s: its end was not recorded (%s)", session_id, exc)

    # -------------------------------------------------------------- stop
    def stop(self, session_id: str) -> Task:
        """Ask a live task to stop; it ends at its next event (or approval question)."""
        task = self.live(session_id)
        if task is None:
            self.hearth(None).sessions.open(session_id)  # NotFoundError for an unknown id
            raise TaskConflict(f"session {session_id} is not running", code="task_not_running")
        task.stop()
        return task

    def answer(self, session_id: str, call_id: str, answer: str, value: str | None = None) -> None:
        if answer not in ANSWERS:
            raise UsageError(f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}")
        task = self.live(session_id)
        if task is None:
            raise NotFoundError("no such pending approval", code="approval_unknown")
        task.answer(call_id, answer, value)

    def end_streams(self) -> None:
        """End every open event stream now (the process is stopping; tasks go on until close)."""
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


__all__ = [
    "KEEP_FINISHED",
    "OUTCOME",
    "TaskConflict",
    "TaskService",
    "ToolsFor",
    "record_outcome",
    "transcript_status",
]
