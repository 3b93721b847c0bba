"""``/v1/trash``: deleted files and sessions, and putting them back."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Path, Request

from workhearth.server.schemas import ID_MAX, TrashItemOut, TrashListOut, TrashRestoreIn, errors
from workhearth.trash import Trash

router = APIRouter(prefix="/v1/trash", tags=["trash"])
ItemId = Annotated[str, Path(max_length=ID_MAX, description="A trash item's id.")]


def _trash(request: Request) -> Trash:
    return Trash(request.app.state.config.paths.trash)


@router.get("", response_model=TrashListOut)
def list_trash(request: Request) -> dict:
    """What is in the trash, newest first."""
    return {"items": [asdict(i) for i in _trash(request).list()]}


@router.post("/{item_id}/restore", response_model=TrashItemOut, responses=errors(404))
def restore(item_id: ItemId, request: Request, body: TrashRestoreIn | None = None) -> dict:
    """Put a trashed file, folder or session back where it was (422 if something is there now)."""
    overwrite = body.overwrite if body is not None else False
    return asdict(_trash(request).restore(item_id, overwrite=overwrite))
