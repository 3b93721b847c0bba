"""``POST /v1/check``: a receipt per office file, for files inside the authorized folders.

The file is read through :class:`~workhearth.agent.safefs.SafeFS` (the agent's own
confined reads: no link out, hearth's home refused) into a private copy, and the copy
is checked, so what is checked is what was authorized at the moment it was read.
Thumbnails are served by ``GET /v1/check/thumbnails/{name}``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi import Path as PathParam
from fastapi.responses import Response

from workhearth.agent.receipts import kept_receipts
from workhearth.agent.safefs import SafeFS
from workhearth.agent.workspace import Workspaces
from workhearth.api.check_models import CheckIn, ReceiptOut
from workhearth.app import Workhearth
from workhearth.check import FORMATS, Tools, check_file
from workhearth.check.render import work_dir
from workhearth.errors import NotFoundError, UsageError
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import ID_MAX, errors

router = APIRouter(prefix="/v1/check", tags=["check"])
# Why a second router here: a session's receipts are the same shape, read from its folder.
session_router = APIRouter(prefix="/v1/sessions", tags=["check"])
SessionId = Annotated[
    str, PathParam(max_length=ID_MAX, description="A session id (or unique prefix).")
]
Hearth = Annotated[Workhearth, Depends(hearth_dep)]
THUMBS = "/v1/check/thumbnails/"
# Why a cap: LibreOffice reads the whole file; an API call must not hand it gigabytes.
SIZE_MAX = 200 * 1024 * 1024
_THUMB_NAME = re.compile(r"^[0-9a-f]{16}-[0-9]{1,3}\.png$")
_RECEIPT_THUMB = re.compile(r"^[0-9a-f]{64}-[0-9]{1,3}\.png$")


def _one(wh: Workhearth, fs: SafeFS, tools: Tools, given: str) -> dict[str, Any]:
    name = posixpath.basename(given.replace("\\", "/"))
    suffix = Path(name).suffix.lower()
    if "\x00" in given or suffix not in FORMATS:
        raise UsageError(
            f"{name or given!r}: hearth check reads .docx, .xlsx, .pptx and .pdf files"
        )
    try:
        if fs.stat(given).size > SIZE_MAX:
            raise UsageError(f"{name}: larger than {SIZE_MAX >> 20} MB")
        data = fs.read_bytes(given)
    except FileNotFoundError:
        raise NotFoundError(f"no file {name!r} in the authorized folders") from None
    except OSError as exc:
        raise UsageError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    with work_dir(tools, "api-") as tmp:
        copy = tmp / f"file{suffix}"
        copy.write_bytes(data)
        receipt = check_file(copy, tools, wh.paths.cache / "check")
    out = receipt.to_json()
    out["path"] = given
    out["thumbnails"] = [THUMBS + Path(t).name for t in receipt.thumbnails]
    return out


@router.post("", response_model=list[ReceiptOut], responses=errors(404, 422))
def check(body: CheckIn, wh: Hearth) -> list[dict[str, Any]]:
    """Check each file (.docx .xlsx .pptx .pdf): opens, formulas, glyphs, layout, thumbnails."""
    workspaces = Workspaces(wh.paths, current=wh.workspace)
    roots = workspaces.roots()
    if not roots:
        raise UsageError("this workspace is not an authorized folder")
    fs = SafeFS(roots, protected=workspaces.protected())
    tools = Tools.find(wh.paths.office_profile)
    return [_one(wh, fs, tools, given) for given in body.paths]


@router.get("/thumbnails/{name}", response_class=Response, responses=errors(404))
def thumbnail(name: str, wh: Hearth) -> Response:
    """A thumbnail made by a check (PNG)."""
    if not _THUMB_NAME.match(name):
        raise NotFoundError("no such thumbnail")
    try:
        data = (wh.paths.cache / "check" / name).read_bytes()
    except OSError:
        raise NotFoundError("no such thumbnail") from None
    return Response(
        data, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"}
    )


@session_router.get(
    "/{session_id}/receipts", response_model=list[ReceiptOut], responses=errors(404, 409)
)
def receipts(session_id: SessionId, wh: Hearth) -> list[dict[str, Any]]:
    """The receipts of the office files the session's tool calls produced, oldest first."""
    with wh.sessions.open(session_id) as session:
        found = kept_receipts(session)
        base = f"/v1/sessions/{session.id}/receipts/"
    for receipt in found:
        receipt["thumbnails"] = [base + name for name in receipt.get("thumbnails", [])]
    return found


@session_router.get(
    "/{session_id}/receipts/{name}", response_class=Response, responses=errors(404, 409)
)
def receipt_thumbnail(session_id: SessionId, name: str, wh: Hearth) -> Response:
    """A thumbnail kept with a session's receipt (PNG; opened when the session is sealed)."""
    if not _RECEIPT_THUMB.match(name):
        raise NotFoundError("no such thumbnail")
    with wh.sessions.open(session_id) as session:
        try:
            data = session.read_receipt_file(name)
        except FileNotFoundError:
            raise NotFoundError("no such thumbnail") from None
    return Response(
        data, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"}
    )
