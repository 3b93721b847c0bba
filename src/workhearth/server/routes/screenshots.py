"""``GET /v1/sessions/{id}/screenshots/{name}``: a picture the agent's browser took of its
page (issue 25), for the page's task stream (``tool_result`` events name it).

Only pictures in the session's ``tool-outputs/`` (JPEG after each browser action,
PNG from ``browser_screenshot``), opened when the session is sealed; the name is a
file name, never a path. Behind the same login and Host checks as every ``/v1/`` route.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi import Path as PathParam
from fastapi.responses import Response

from workhearth.app import Workhearth
from workhearth.errors import NotFoundError
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import ID_MAX, errors

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])
SessionId = Annotated[
    str, PathParam(max_length=ID_MAX, description="A session id (or unique prefix).")
]
Hearth = Annotated[Workhearth, Depends(hearth_dep)]
_NAME = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_.\-]{0,150}\.(jpg|png)$")
_TYPES = {"jpg": "image/jpeg", "png": "image/png"}


@router.get("/{session_id}/screenshots/{name}", response_class=Response, responses=errors(404, 409))
def screenshot(session_id: SessionId, name: str, wh: Hearth) -> Response:
    """A picture of the agent's browser kept in the session's tool outputs."""
    found = _NAME.match(name)
    if found is None or ".." in name:
        raise NotFoundError("no such screenshot")
    with wh.sessions.open(session_id) as session:
        try:
            data = session.read_file(f"tool-outputs/{name}")
        except FileNotFoundError:
            raise NotFoundError("no such screenshot") from None
    return Response(
        data,
        media_type=_TYPES[found.group(1)],
        headers={"Cache-Control": "private, max-age=3600"},
    )
