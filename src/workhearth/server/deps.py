"""What every route needs: the caller checked, and the library built for the asked workspace."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, HTTPException, Query, Request
from starlette.routing import compile_path

from workhearth.app import Workhearth
from workhearth.errors import UsageError
from workhearth.server.schemas import PATH_MAX
from workhearth.server.security import COOKIE, Auth

WorkspaceQuery = Annotated[
    str | None,
    Query(
        max_length=PATH_MAX,
        description="Absolute path of the workspace folder (default: the server's working folder).",
    ),
]


def allowed_methods(app: FastAPI, path: str) -> set[str]:
    """Every method the documented route at ``path`` takes (read from the OpenAPI paths).

    Like the router, a literal path (``/v1/memory/search``) wins over a template that
    also matches it (``/v1/memory/{entry_id}``).
    """
    found: dict[int, set[str]] = {}
    for template, item in app.openapi()["paths"].items():
        if compile_path(template)[0].match(path):
            found.setdefault(template.count("{"), set()).update(m.upper() for m in item)
    return found[min(found)] if found else set()


def require_auth(request: Request) -> None:
    """Bearer token or the login cookie; anything else is a 401 that says how to log in."""
    auth: Auth = request.app.state.auth
    if not auth.allowed(request.headers.get("authorization"), request.cookies.get(COOKIE)):
        raise HTTPException(
            401,
            "not logged in: open the login URL `hearth serve` printed, "
            "or send Authorization: Bearer <$HEARTH_HOME/server.token>",
            headers={"WWW-Authenticate": "Bearer"},
        )


def workspace_path(request: Request, workspace: str | None) -> Path:
    if workspace is None or workspace == "":
        return Path(request.app.state.workspace)
    if "\x00" in workspace or not os.path.isabs(workspace):
        raise UsageError("workspace must be an absolute path")
    path = Path(os.path.normpath(workspace))
    if not path.is_dir():
        raise UsageError("workspace must be an existing folder")
    return path


@contextlib.contextmanager
def open_hearth(request: Request, workspace: str | None) -> Iterator[Workhearth]:
    """A library object for this request's workspace, closed when the request ends.

    Why per request: the index connection and the meta cache of a long-lived object
    would not see a save made meanwhile by the CLI or an editor for up to the
    refresh interval; a fresh one reads what is on disk now.
    """
    wh = Workhearth(config=request.app.state.config, workspace=workspace_path(request, workspace))
    try:
        yield wh
    finally:
        if "memory" in wh.__dict__:
            wh.memory.close()


def hearth_dep(request: Request, workspace: WorkspaceQuery = None) -> Iterator[Workhearth]:
    with open_hearth(request, workspace) as wh:
        yield wh
