"""``/v1/trash``: deleted files and sessions, a task's overwritten file versions, and putting them back."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request

from workhearth.agent.history import FileHistory
from workhearth.api.workbench_models import FileVersionOut, TrashItemOut, TrashListOut
from workhearth.app import Workhearth
from workhearth.errors import NotFoundError
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import ID_MAX, TrashRestoreIn, errors
from workhearth.trash import Trash

router = APIRouter(prefix="/v1/trash", tags=["trash"])
ItemId = Annotated[
    str,
    Path(max_length=ID_MAX, description="A trash item's id (with ?session=: a version number)."),
]
SessionQuery = Annotated[
    str | None,
    Query(
        max_length=ID_MAX,
        description="A session id: its file history (the versions its writes replaced).",
    ),
]
Hearth = Annotated[Workhearth, Depends(hearth_dep)]


def _trash(request: Request) -> Trash:
    return Trash(request.app.state.config.paths.trash)


def _history(wh: Workhearth, session_id: str) -> FileHistory:
    return FileHistory(wh.sessions.open(session_id))


@router.get("", response_model=TrashListOut, responses=errors(404, 409))
def list_trash(request: Request, wh: Hearth, session: SessionQuery = None) -> dict:
    """What is in the trash, newest first; with ``session``, that session's items and the
    versions of files its tools overwrote (restore one with the same ``session``)."""
    items = _trash(request).list()
    if not session:
        return {"items": [asdict(i) for i in items], "versions": []}
    history = _history(wh, session)
    sid = history.session.id
    return {
        "items": [asdict(i) for i in items if i.session == sid],
        "versions": [v.as_dict() for v in history.list()],
    }


@router.post(
    "/{item_id}/restore",
    response_model=TrashItemOut | FileVersionOut,
    responses=errors(404, 409),
)
def restore(
    item_id: ItemId,
    request: Request,
    wh: Hearth,
    session: SessionQuery = None,
    body: TrashRestoreIn | None = None,
) -> dict[str, Any]:
    """Put a trashed file, folder or session back where it was (422 if something is there now).

    With ``session``: put version ``item_id`` of that session's file history back at
    its path, through the folders the session's tools had (a folder on the way that
    became a link out of them is refused); 422 when the file changed since the
    session wrote it, unless ``overwrite`` (what it replaces is kept as a new version).
    """
    overwrite = body.overwrite if body is not None else False
    if not session:
        return asdict(_trash(request).restore(item_id, overwrite=overwrite))
    history = _history(wh, session)
    if not item_id.isascii() or not item_id.isdigit():
        raise NotFoundError(f"no version {item_id!r} in the file history of session {session}")
    return history.restore(int(item_id), overwrite=overwrite).as_dict()
