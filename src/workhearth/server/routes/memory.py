"""``/v1/memory``: the bank face of memory over HTTP (DESIGN §4, §6).

Any id that does not name an entry of this workspace's memory (unknown, malformed,
deleted, another workspace's) gets the same 404 body, so the answer leaks nothing.
"""

from __future__ import annotations

from typing import Annotated

import orjson
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path, Query, Request, Response
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from workhearth.api.errors import MemoryNotFound
from workhearth.api.models import EntryListOut, EntryOut, SearchOut
from workhearth.app import Workhearth
from workhearth.errors import NotFoundError, UsageError
from workhearth.memory.api import Memory
from workhearth.server.deps import (
    MemoryPool,
    allowed_methods,
    hearth_dep,
    open_hearth,
    query_of,
    workspace_path,
    writer_dep,
)
from workhearth.server.errors import HttpError
from workhearth.server.schemas import (
    LIST_LIMIT_MAX,
    SAVED_BEFORE,
    MemoryEditIn,
    MemorySaveIn,
    SearchQuery,
    errors,
    query_openapi,
)

router = APIRouter(prefix="/v1/memory", tags=["memory"])
# Why no length limit: an over-long id is malformed, and malformed ids get the same 404.
EntryId = Annotated[str, Path(description="The entry's id.")]
# Why scope="function": the memory goes back to the pool when the route returns, not
# after the response is sent.
Hearth = Annotated[Workhearth, Depends(hearth_dep, scope="function")]
Writer = Annotated[Workhearth, Depends(writer_dep, scope="function")]


@router.post(
    "",
    status_code=201,
    response_model=EntryOut,
    responses=SAVED_BEFORE,
)
def save(body: MemorySaveIn, request: Request, response: Response) -> dict:
    """Save a confirmed sentence (secrets refused unless ``redact``)."""
    with open_hearth(request, body.workspace, write=True) as wh:
        entry = wh.memory.save(
            body.content,
            level=body.level,
            tags=list(body.tags),
            contexts=[c.model_dump() for c in body.contexts],
            redact=body.redact,
        )
    if entry.existed:
        response.status_code = 200
    return entry.as_dict()


@router.get("/search", response_model=SearchOut, openapi_extra=query_openapi(SearchQuery))
async def search(request: Request) -> Response:
    """Best hits first; a search that finds nothing is a 200 with an empty list."""
    query = query_of(SearchQuery, request)
    if not query.q.strip():
        return _json({"results": []})
    path = workspace_path(request, query.workspace)
    pool: MemoryPool = request.app.state.memories
    # Why on the event loop: see MemoryPool.loop_reader.
    memory = pool.loop_reader(path)
    if memory is None:
        memory = pool.adopt(path, await run_in_threadpool(pool.open_reader, path))
    return _search(memory, query.q, query.limit)


class _SearchEndpoint:
    """:func:`search` as a plain ASGI endpoint, for :func:`serve_search_first`."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await search(Request(scope, receive))
        await response(scope, receive, send)


def serve_search_first(app: FastAPI) -> None:
    """Put ``GET /v1/memory/search`` first in the app's routes, as a plain Starlette route.

    Why: FastAPI's own work for a route (matching through the included routers,
    solving its parameters, its request and response wrappers) cost a search request
    ~0.07 ms of CPU, a tenth of it. The same :func:`search` answers; its FastAPI
    route stays the documented one (OpenAPI, the 405s of ``allowed_methods``), and
    errors still go through the app's exception handlers. Other methods on the path
    fall through to the routes after it.
    """
    app.router.routes.insert(
        0, Route(f"{router.prefix}/search", _SearchEndpoint(), methods=["GET"])
    )


def _search(memory: Memory, q: str, limit: int) -> Response:
    # Why the hits themselves: orjson writes a dataclass as its fields in order, the
    # bytes of ``Hit.as_dict`` (tests/server/test_search_route.py), without a dict per hit.
    return _json({"results": memory.search(q, limit=limit)})


def _json(data: dict) -> Response:
    """Why not the response model: the hits are already of its shape (``HitOut``, checked
    by the schema tests), and validating them again cost a tenth of a search."""
    return Response(orjson.dumps(data), media_type="application/json")


@router.get("", response_model=EntryListOut)
def list_entries(
    wh: Hearth,
    limit: Annotated[int, Query(ge=1, le=LIST_LIMIT_MAX)] = 20,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
    tag: Annotated[str | None, Query(max_length=64)] = None,
) -> dict:
    """Entries newest first; pass ``next_cursor`` back as ``cursor`` for the next page."""
    entries, next_cursor = wh.memory.list(limit=limit, cursor=cursor or None, tag=tag or None)
    return {"entries": [e.as_dict() for e in entries], "next_cursor": next_cursor}


@router.patch("/{entry_id}", response_model=EntryOut, responses=errors(404))
def edit(entry_id: EntryId, body: MemoryEditIn, wh: Writer) -> dict:
    """Replace an entry's text (its id stays); confirms a pending entry."""
    try:
        return wh.memory.edit(entry_id, body.content, redact=body.redact).as_dict()
    except NotFoundError:
        raise MemoryNotFound() from None


@router.delete("/{entry_id}", status_code=204, response_class=Response, responses=errors(404))
def delete(entry_id: EntryId, wh: Writer) -> Response:
    """Remove an entry (a copy is kept in ``.memory_evicted.log``; restore brings it back)."""
    try:
        wh.memory.delete(entry_id)
    except NotFoundError:
        raise MemoryNotFound() from None
    return Response(status_code=204)


@router.post("/{entry_id}/restore", response_model=EntryOut, responses=errors(404, 409))
def restore(entry_id: EntryId, wh: Writer) -> dict:
    """Undo a committed delete: the entry comes back under its id."""
    try:
        return wh.memory.restore(entry_id).as_dict()
    except NotFoundError:
        raise MemoryNotFound() from None
    except UsageError as exc:
        raise HttpError(409, exc.message, code=exc.code, params=exc.params) from None


@router.api_route(
    "/{rest:path}", methods=["GET", "POST", "PATCH", "DELETE"], include_in_schema=False
)
def anything_else(rest: str, request: Request) -> None:
    """An id with a slash in it (``m-0%2F1``) is malformed too: the same 404 as any other."""
    if allowed_methods(request.app, request.url.path):
        raise HTTPException(405)
    raise MemoryNotFound()
