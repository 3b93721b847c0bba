"""``/v1/tasks``: start, resume and stop agent tasks, stream their events, answer approvals.

A task is named by its session id. The app puts one :class:`TaskService` in
``app.state.tasks`` and includes this router behind its login check.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Path, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from workhearth.api.session_models import TaskOut, TaskStarted, TeamOut
from workhearth.server.errors import HttpError
from workhearth.server.schemas import ID_MAX, PATH_MAX, errors
from workhearth.server.tasks import Task, TaskConflict, TaskService, sse_stream

# Why no auth dependency here: create_app serves every /v1/ path behind RequireLogin.
router = APIRouter(prefix="/v1/tasks", tags=["tasks"])
SessionId = Annotated[str, Path(max_length=ID_MAX, description="The task's session id.")]
CallId = Annotated[str, Path(max_length=ID_MAX, description="The tool call awaiting approval.")]
# Why below the 64 KB body limit: an over-long task is a 422 that says so, not a 413.
TASK_MAX = 32 * 1024
NAME_MAX = 200


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Answers = Annotated[
    dict[Annotated[str, Field(max_length=NAME_MAX)], Annotated[str, Field(max_length=TASK_MAX)]],
    Field(max_length=50, description="A team task's answers: question id -> answer."),
]


def _team(answers: dict[str, str] | None, approve: bool = False, nudge: str | None = None) -> Any:
    from workhearth.tasks.team.run import TeamOptions

    return TeamOptions(answers=answers, yes=approve, nudge=nudge or None)


class TaskIn(_Strict):
    task: str = Field("", max_length=TASK_MAX, description="What to do, in the user's words.")
    workspace: str | None = Field(None, max_length=PATH_MAX, description="Absolute folder path.")
    mode: Literal["ask", "agent", "quest"] | None = None
    model: str | None = Field(None, max_length=NAME_MAX)
    skill: str | None = Field(None, max_length=NAME_MAX)
    example: str | None = Field(None, max_length=NAME_MAX)
    values: dict[str, Annotated[str, Field(max_length=PATH_MAX)]] = Field(
        default_factory=dict, max_length=50
    )
    team: bool = Field(False, description="A team task: questions, a plan, specialists.")
    answers: Answers | None = None


class ResumeIn(_Strict):
    """Optional: ``task`` gives a finished session its next instruction (a chat's next turn);
    for a team task ``answers`` answer its questions, ``approve`` approves its plan and
    ``nudge`` asks the lead to change it."""

    task: str | None = Field(None, max_length=TASK_MAX)
    mode: Literal["ask", "agent", "quest"] | None = None
    model: str | None = Field(None, max_length=NAME_MAX)
    answers: Answers | None = None
    approve: bool = False
    nudge: str | None = Field(None, max_length=TASK_MAX)


class ApprovalIn(_Strict):
    answer: Literal["once", "always", "deny"]
    # Why (issue 25): a question that asks the user to type something (a password for the
    # agent's browser) gets it here, with the yes; it goes to the tool only.
    value: str | None = Field(None, max_length=1024)


def tasks_dep(request: Request) -> TaskService:
    return request.app.state.tasks


Tasks = Annotated[TaskService, Depends(tasks_dep)]


@contextlib.contextmanager
def _http_errors() -> Iterator[None]:
    """A busy or finished session is a 409; other library errors go to the app's handlers."""
    try:
        yield
    except TaskConflict as exc:
        raise HttpError(409, exc.message, code=exc.code, params=exc.params) from None


def _started(task: Task) -> dict[str, Any]:
    return {"session_id": task.session_id, "status": task.status}


@router.post("", status_code=201, response_model=TaskStarted, responses=errors(400, 404))
def start(body: TaskIn, tasks: Tasks) -> dict[str, Any]:
    """Start a task in a new session; it runs in the server's background until it ends."""
    with _http_errors():
        task = tasks.start(
            body.task,
            # Why `or None`: a form's empty field means "not given".
            workspace=body.workspace or None,
            mode=body.mode,
            model=body.model or None,
            skill=body.skill or None,
            example=body.example or None,
            values=body.values,
            team=_team(body.answers) if body.team else None,
        )
    return _started(task)


@router.get("/{session_id}", response_model=TaskOut, responses=errors(404))
def get_task(session_id: SessionId, tasks: Tasks) -> dict[str, Any]:
    """A task's status and the approval it waits for, if any."""
    with _http_errors():
        return tasks.info(session_id)


@router.post(
    "/{session_id}/resume",
    status_code=202,
    response_model=TaskStarted,
    responses=errors(400, 404, 409),
)
def resume(session_id: SessionId, tasks: Tasks, body: ResumeIn | None = None) -> dict[str, Any]:
    """Continue a stopped or crashed session (or, with ``task``, give it its next instruction)."""
    with _http_errors():
        team = None
        if body is not None and (body.answers or body.approve or body.nudge):
            team = _team(body.answers, body.approve, body.nudge)
        task = tasks.resume(
            session_id,
            prompt=body.task if body else None,
            mode=body.mode if body else None,
            model=(body.model or None) if body else None,
            team=team,
        )
    return _started(task)


@router.post(
    "/{session_id}/stop", status_code=202, response_model=TaskOut, responses=errors(404, 409)
)
def stop(session_id: SessionId, tasks: Tasks) -> dict[str, Any]:
    """Ask a running task to stop; it ends at its next step (``done`` event, reason ``stopped``)."""
    with _http_errors():
        return tasks.stop(session_id).as_dict()


@router.post(
    "/{session_id}/approvals/{call_id}",
    status_code=204,
    response_class=Response,
    responses=errors(404),
)
def approve(session_id: SessionId, call_id: CallId, body: ApprovalIn, tasks: Tasks) -> Response:
    """Answer the approval a task waits for: once, always (this session) or deny; with
    ``value`` when the question asks the user to type one (its ``secret`` says what)."""
    with _http_errors():
        tasks.answer(session_id, call_id, body.answer, body.value)
    return Response(status_code=204)


@router.get(
    "/{session_id}/events",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "Server-sent events"},
        **errors(404),
    },
)
def events(
    session_id: SessionId,
    tasks: Tasks,
    last_event_id: Annotated[str | None, Header(max_length=40)] = None,
) -> StreamingResponse:
    """The task's events as SSE: a replay of those so far, then live ones, ending with ``done``.

    First ``run`` {run, messages_before, after, status} (no id): the run the events
    belong to and how many transcript messages precede them. Then ``prompt`` {text},
    ``text`` {text} (streamed as it comes), ``tool_call`` {id, name, summary},
    ``tool_result`` {id, name, subject, ok, summary, changes?, line?, screenshot?} (a
    browser action in words, its picture: ``/v1/sessions/{id}/screenshots/{screenshot}``),
    ``approval`` {call_id, tool, summary, secret?} (secret: what to type, a password), ``approval_cancelled`` {call_id}, ``notice`` {message}, ``status``
    {status, reason?}, ``done`` {reason, status, message?}. Each has an id
    ``<run>-<seq>``; a reconnect sending that ``Last-Event-ID`` gets only what came after
    it, and one naming another run (a restart, a new turn) gets this run from its start.
    A session with no task in this server gets its status and ``done`` at once.
    """
    with _http_errors():
        task = tasks.subscribe(session_id)
    return StreamingResponse(
        sse_stream(task, last_event_id, tasks.heartbeat, tasks.closing),
        media_type="text/event-stream",
        # Why: proxies (nginx) must pass each event on at once, not buffer the stream.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/{session_id}/team", response_model=TeamOut, responses=errors(404))
def team_state(session_id: SessionId, tasks: Tasks) -> dict[str, Any]:
    """A team task's phase, questions, plan, steps (the board) and report."""
    with _http_errors():
        return tasks.team_info(session_id)
