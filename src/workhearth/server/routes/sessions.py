"""``/v1/sessions``: list sessions (with their task status), read their messages and
the files their tool calls changed, and rewind them (issue 22)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request

from workhearth.api.session_models import (
    FilesChangedOut,
    LatestOut,
    RewindIn,
    RewindPlanOut,
    SessionListOut,
    TranscriptOut,
    TurnsOut,
)
from workhearth.app import Workhearth
from workhearth.server.deps import hearth_dep
from workhearth.server.errors import HttpError
from workhearth.server.schemas import ID_MAX, errors
from workhearth.sessions.store import COUNT_DEFAULT, COUNT_MAX, COUNT_MIN

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])
SessionId = Annotated[str, Path(max_length=ID_MAX, description="A session id (or unique prefix).")]
Hearth = Annotated[Workhearth, Depends(hearth_dep)]


def _status(request: Request, session_id: str) -> str:
    tasks = getattr(request.app.state, "tasks", None)
    status = tasks.status(session_id) if tasks is not None else None
    # Why "done": a session the server never ran is not running nor waiting here.
    return status or "done"


@router.get("", response_model=SessionListOut)
def list_sessions(
    request: Request,
    wh: Hearth,
    limit: Annotated[int, Query(ge=1, le=100, description="How many, newest first.")] = 30,
    here: Annotated[bool, Query(description="Only sessions of the workspace.")] = False,
) -> dict:
    """Newest sessions first, each with its task status (running, waiting, stopped, done)."""
    infos = wh.sessions.list(limit=limit, workspace=wh.workspace if here else None)
    return {"sessions": [{**i.as_dict(), "status": _status(request, i.session_id)} for i in infos]}


@router.get("/{session_id}/messages", response_model=TranscriptOut, responses=errors(404, 409))
def messages(
    session_id: SessionId,
    wh: Hearth,
    count: Annotated[int, Query(ge=COUNT_MIN, le=COUNT_MAX)] = COUNT_DEFAULT,
    before: Annotated[
        int | None,
        Query(ge=0, le=10**9, description="Only messages before this one (0-based index)."),
    ] = None,
) -> dict:
    """The last ``count`` messages of a session (with ``before``: of its first ``before``)."""
    return wh.sessions.read_transcript(session_id, count, before).as_dict()


@router.get("/{session_id}/latest", response_model=LatestOut, responses=errors(404, 409))
def latest(session_id: SessionId, wh: Hearth) -> dict:
    """The newest message of a session (``null`` when it has none)."""
    return wh.sessions.latest_message(session_id).as_dict()


@router.get("/{session_id}/changes", response_model=FilesChangedOut, responses=errors(404, 409))
def changes(session_id: SessionId, wh: Hearth) -> dict:
    """The files the session's tool calls created, modified or deleted, oldest first."""
    return wh.sessions.files_changed(session_id).as_dict()


@router.get("/{session_id}/turns", response_model=TurnsOut, responses=errors(404, 409))
def turns(session_id: SessionId, request: Request) -> dict:
    """The session's prompts in order, live ones numbered, each with the files it changed."""
    full_id, found = request.app.state.tasks.rewind_turns(session_id)
    return {"session_id": full_id, "turns": [t.as_dict() for t in found]}


@router.post("/{session_id}/rewind", response_model=RewindPlanOut, responses=errors(404, 409, 422))
def rewind(session_id: SessionId, body: RewindIn, request: Request) -> dict:
    """Undo turn ``to`` and every later one: files (also what commands changed) and the
    conversation; ``dry_run`` only says what would change. A file changed outside the task
    is a conflict (409) unless ``force``; a running session is a 409."""
    from workhearth.tasks.rewind import RewindRefused
    from workhearth.tasks.service import TaskConflict

    tasks = request.app.state.tasks
    try:
        plan = tasks.rewind(
            session_id,
            to=body.to,
            files=not body.conversation_only,
            conversation=not body.files_only,
            dry_run=body.dry_run,
            force=body.force,
        )
    except (RewindRefused, TaskConflict) as exc:
        raise HttpError(409, exc.message, code=exc.code, params=exc.params) from None
    return plan.as_dict()
