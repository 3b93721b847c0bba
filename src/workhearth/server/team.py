"""Team mode of ``hearth serve --store postgresql://…``: the memory bank of a team.

The ``/v1/memory`` routes of DESIGN §6 with the same shapes, status codes and
limits as local mode, backed by :class:`~workhearth.bank.server.store.PgBank`. Every
request carries a team user's bearer token (``hearth team user add``); the
server, never the client, decides whose entries a request sees. There is no
``server.token``, no login page, no agent task, no state of its own: several
servers may share one database behind any load balancer. ``/mcp`` is the same
bank's MCP face (workhearth.mcp.server.team, mounted by whoever starts the server),
with the same tokens.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from workhearth import __version__
from workhearth.api.errors import MemoryNotFound
from workhearth.api.workbench_models import TeamInfoOut
from workhearth.bank.server.pool import StoreUnreachable
from workhearth.bank.server.store import VALUE_REFUSED, PgBank, psycopg
from workhearth.errors import NotFoundError, UsageError
from workhearth.memory.search import DEFAULT_LIMIT
from workhearth.server.errors import HttpError, error_response
from workhearth.server.mounts import TeamMount, add_routes, running
from workhearth.server.schemas import (
    BODY_MAX,
    COMMON,
    LIMIT_MAX,
    LIST_LIMIT_MAX,
    QUERY_MAX,
    SAVED_BEFORE,
    EntryListOut,
    EntryOut,
    MemoryEditIn,
    MemorySaveIn,
    SearchOut,
    errors,
)
from workhearth.server.security import Guard

NOT_LOGGED_IN = (
    "a team token is needed: send Authorization: Bearer <the token of hearth team user add>"
)
TEAM_ONLY = (
    "this is a team bank server: it serves only /v1/memory and /mcp; "
    "agent tasks, sessions, skills and files stay on each person's own hearth"
)
IDEMPOTENCY_MAX = 128


async def team_user(request: Request) -> str:
    """The team user whose bearer token this request carries, else a 401.

    Why a thread: the token's hash is looked up in the database on every request
    (no cache: a removed user is refused at once, by every server).
    """
    scheme, _, value = (request.headers.get("authorization") or "").partition(" ")
    token = value.strip()
    user = None
    if scheme.lower() == "bearer" and token:
        bank: PgBank = request.app.state.bank
        user = await run_in_threadpool(bank.user_for_token, token)
    if user is None:
        raise HttpError(
            401, NOT_LOGGED_IN, code="not_signed_in", headers={"WWW-Authenticate": "Bearer"}
        )
    return user


User = Annotated[str, Depends(team_user)]
router = APIRouter(prefix="/v1/memory", tags=["memory"])


def _bank(request: Request) -> PgBank:
    return request.app.state.bank


@router.post(
    "",
    status_code=201,
    response_model=EntryOut,
    responses=SAVED_BEFORE,
)
def save(
    body: MemorySaveIn,
    request: Request,
    response: Response,
    user: User,
    idempotency_key: Annotated[
        str | None,
        Header(
            max_length=IDEMPOTENCY_MAX,
            description="A key per save: the same key again answers 200 with the first save's entry.",
        ),
    ] = None,
) -> dict:
    """Save a confirmed sentence for the caller (secrets refused unless ``redact``).

    ``workspace`` is accepted for the local API's shape and ignored: the team bank
    has one bank per user.
    """
    entry = _bank(request).save(
        user,
        body.content,
        body.level,
        list(body.tags),
        [c.model_dump() for c in body.contexts],
        redact=body.redact,
        idempotency_key=idempotency_key or None,
    )
    if entry.existed:
        response.status_code = 200
    return entry.as_dict()


@router.get("/search", response_model=SearchOut)
def search(
    request: Request,
    user: User,
    q: Annotated[str, Query(max_length=QUERY_MAX, description="Words to find.")],
    limit: Annotated[int, Query(ge=1, le=LIMIT_MAX)] = DEFAULT_LIMIT,
    workspace: Annotated[str | None, Query(include_in_schema=False)] = None,
) -> dict:
    """The caller's best hits first; nothing found is a 200 with an empty list."""
    return {"results": [h.as_dict() for h in _bank(request).search(user, q, limit)]}


@router.get("", response_model=EntryListOut)
def list_entries(
    request: Request,
    user: User,
    limit: Annotated[int, Query(ge=1, le=LIST_LIMIT_MAX)] = 20,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
    tag: Annotated[str | None, Query(max_length=64)] = None,
    workspace: Annotated[str | None, Query(include_in_schema=False)] = None,
) -> dict:
    """The caller's entries newest first; pass ``next_cursor`` back as ``cursor``."""
    entries, next_cursor = _bank(request).list(user, limit, cursor or None, tag or None)
    return {"entries": [e.as_dict() for e in entries], "next_cursor": next_cursor}


@router.patch("/{entry_id}", response_model=EntryOut, responses=errors(404))
def edit(entry_id: str, body: MemoryEditIn, request: Request, user: User) -> dict:
    """Replace the text of one of the caller's entries (its id stays)."""
    try:
        return _bank(request).edit(user, entry_id, body.content, body.redact).as_dict()
    except NotFoundError:
        raise MemoryNotFound() from None


@router.delete("/{entry_id}", status_code=204, response_class=Response, responses=errors(404))
def delete(entry_id: str, request: Request, user: User) -> Response:
    """Delete one of the caller's entries (restore brings it back)."""
    try:
        _bank(request).delete(user, entry_id)
    except NotFoundError:
        raise MemoryNotFound() from None
    return Response(status_code=204)


@router.post("/{entry_id}/restore", response_model=EntryOut, responses=errors(404, 409))
def restore(entry_id: str, request: Request, user: User) -> dict:
    """Undo a delete: the entry comes back under its id."""
    try:
        return _bank(request).restore(user, entry_id).as_dict()
    except NotFoundError:
        raise MemoryNotFound() from None
    except UsageError as exc:
        raise HttpError(409, exc.message, code=exc.code, params=exc.params) from None


@router.api_route(
    "/{rest:path}", methods=["GET", "POST", "PATCH", "DELETE"], include_in_schema=False
)
def anything_else(rest: str, request: Request, user: User) -> None:
    """An id with a slash in it is malformed too: the same 404 as any other."""
    from workhearth.server.deps import allowed_methods

    if allowed_methods(request.app, request.url.path):
        raise HTTPException(405)
    raise MemoryNotFound()


def create_team_app(
    bank: PgBank,
    *,
    extra_hosts: frozenset[str] = frozenset(),
    close_bank: bool = True,
    mounts: Mapping[str, TeamMount] | None = None,
) -> FastAPI:
    """The team bank server over ``bank``; ``extra_hosts``: Host names besides localhost;
    ``mounts``: served beside the API by path (``hearth serve``: the MCP face at ``/mcp``)."""
    from workhearth.server.app import _install_error_handlers, frozen_heap

    mounted = {path: mount(bank) for path, mount in (mounts or {}).items()}

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            with frozen_heap():
                async with running(mounted.values()):
                    yield
        finally:
            if close_bank:
                bank.close()

    app = FastAPI(
        title="workhearth team bank",
        version=__version__,
        description="Team memory bank of hearth serve --store: /v1/memory with per-user tokens.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.bank = bank
    app.state.tasks = None  # Why: server/serve.py's shutdown asks; team mode runs no tasks
    _install_error_handlers(app)

    @app.exception_handler(StoreUnreachable)
    @app.exception_handler(psycopg.OperationalError)
    async def store_down(_request: Request, _exc: Exception) -> JSONResponse:
        # Why 503 and no detail of libpq: its text may name hosts and users; the
        # client queues a save on a 503 and sends it again later.
        return error_response(
            503, "the team store is unreachable", "store_unreachable", headers={"Retry-After": "2"}
        )

    @app.exception_handler(psycopg.DataError)
    async def store_refused(_request: Request, _exc: Exception) -> JSONResponse:
        # Why a 422: PostgreSQL refused a value the checks let through (its class 22,
        # "data exception", is about the value sent). Sending it again can never
        # work, so the client's queue must give it up instead of retrying forever.
        return error_response(422, VALUE_REFUSED, "value_refused")

    app.include_router(router, responses=errors(*COMMON))

    @app.get("/v1/info", tags=["server"], response_model=TeamInfoOut)
    def info(_user: User) -> dict[str, str]:
        """Version and mode (no secrets)."""
        return {"version": __version__, "mode": "team"}

    add_routes(app, mounted)  # /mcp: the memory tools per user

    @app.api_route(
        "/{rest:path}", methods=["GET", "POST", "PATCH", "DELETE", "PUT"], include_in_schema=False
    )
    def not_here(rest: str) -> JSONResponse:
        # Why 404 with a reason: a page or client pointed at a team server should say
        # why /v1/tasks, /mcp or / are not here, not look like a broken route.
        return error_response(404, TEAM_ONLY, "team_only")

    app.add_middleware(Guard, body_max=BODY_MAX, extra_hosts=extra_hosts)
    return app


__all__ = ["TEAM_ONLY", "create_team_app", "team_user"]
