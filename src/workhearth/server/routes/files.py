"""``/v1/files``: files of the workspace, for the page's file pickers (skill file variables).

Listed through :class:`~workhearth.agent.safefs.SafeFS`, the same confined walk the
agent's ``list_dir`` and ``glob`` tools use: nothing outside the authorized
workspace, links listed but never entered, hearth's home refused by inode. Hidden
files and folders are left out, and folders like ``.git`` or ``node_modules`` are
not walked at all.
"""

from __future__ import annotations

import posixpath
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools.search import SKIP_DIRS
from workhearth.agent.workspace import Workspaces
from workhearth.api.workbench_models import FilesOut
from workhearth.app import Workhearth
from workhearth.errors import HearthError, NotFoundError, UsageError
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import PATH_MAX, errors

router = APIRouter(prefix="/v1/files", tags=["files"])
Hearth = Annotated[Workhearth, Depends(hearth_dep)]
LIMIT_MAX = 1000
# Why a cap on what is looked at, not only on what is returned: a prefix that matches
# nothing in a huge tree must not walk all of it.
VISIT_MAX = 20_000
DOWNLOAD_MAX = 200 * 1024 * 1024


@router.get("", response_model=FilesOut)
def list_files(
    wh: Hearth,
    prefix: Annotated[
        str,
        Query(max_length=PATH_MAX, description="Only paths starting with this (relative, with /)."),
    ] = "",
    limit: Annotated[int, Query(ge=1, le=LIMIT_MAX)] = 200,
) -> dict:
    """Files under the workspace whose relative path starts with ``prefix``, folder by folder."""
    if "\x00" in prefix or prefix.startswith("/") or ".." in prefix.split("/"):
        raise UsageError("prefix must be a path relative to the workspace, without ..")
    workspaces = Workspaces(wh.paths, current=wh.workspace)
    roots = workspaces.roots()
    if not roots or roots[0] != wh.workspace:
        return {"files": [], "truncated": False}  # Why: a workspace inside hearth's home
    fs = SafeFS(roots[:1], protected=workspaces.protected())
    # Why start at the prefix's folder: "docs/re" needs only docs/ walked.
    folder = posixpath.dirname(prefix)
    if any(part.startswith(".") for part in folder.split("/") if part):
        return {"files": [], "truncated": False}
    base = f"{folder}/" if folder else ""
    files: list[str] = []
    try:
        walk = fs.walk(folder or ".", skip=SKIP_DIRS)
        for visited, entry in enumerate(walk):
            if visited >= VISIT_MAX:
                return {"files": files, "truncated": True}
            rel = base + entry.rel
            if entry.kind != "file" or not rel.startswith(prefix):
                continue
            if any(part.startswith(".") for part in entry.rel.split("/")):
                continue
            if len(files) == limit:
                return {"files": files, "truncated": True}
            files.append(rel)
    except (OSError, HearthError):
        # Why: a prefix naming no folder (yet), an unreadable one or a link out (PathDenied)
        # matches nothing.
        return {"files": [], "truncated": False}
    return {"files": files, "truncated": False}


@router.get("/content", response_class=Response, responses=errors(404, 422))
def file_content(
    wh: Hearth,
    path: Annotated[
        str, Query(min_length=1, max_length=PATH_MAX, description="Relative to the workspace.")
    ],
) -> Response:
    """A workspace file's bytes, as a download (a produced report, for the user to open).

    Why a download and never inline: a file the agent wrote must not run as a page of
    this origin (an .html or .svg would); ``nosniff`` keeps browsers from guessing.
    """
    if "\x00" in path or path.startswith("/") or ".." in path.split("/"):
        raise UsageError("path must be relative to the workspace, without ..")
    workspaces = Workspaces(wh.paths, current=wh.workspace)
    roots = workspaces.roots()
    if not roots or roots[0] != wh.workspace:
        raise NotFoundError("no such file in the workspace")
    fs = SafeFS(roots[:1], protected=workspaces.protected())
    try:
        if fs.stat(path).size > DOWNLOAD_MAX:
            raise UsageError(f"larger than {DOWNLOAD_MAX >> 20} MB")
        data = fs.read_bytes(path)
    except (OSError, HearthError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise NotFoundError("no such file in the workspace") from None
    name = posixpath.basename(path)
    return Response(
        data,
        media_type="application/octet-stream",
        headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        },
    )
