"""``create_app``: the FastAPI application of ``hearth serve`` (REST API + web workbench).

Layout: the :class:`~workhearth.server.security.Guard` middleware wraps everything
(Host, Origin, body size, security headers); every ``/v1`` router needs the bearer
token or the login cookie; ``/login`` turns the one-time URL into that cookie; the
page's files are served from ``server/web/``.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from workhearth import __version__
from workhearth.config import Config
from workhearth.errors import (
    BusyError,
    CorruptDataError,
    EncryptionKeyError,
    HearthError,
    ImportFormatError,
    NotFoundError,
    SessionLockedError,
    StorageError,
    UsageError,
)
from workhearth.server import login
from workhearth.server.deps import MemoryPool, allowed_methods
from workhearth.server.errors import HttpError, error_response, status_code_word
from workhearth.server.mounts import LocalMount, add_routes, running
from workhearth.server.routes import (
    audit,
    check,
    files,
    memory,
    screenshots,
    sessions,
    skills,
    tasks,
    trash,
    trust,
    wiki,
)
from workhearth.server.schemas import BODY_MAX, COMMON, ErrorOut, InfoOut, errors
from workhearth.server.security import COOKIE, Auth, Guard, RequireLogin
from workhearth.server.tasks import task_service

WEB_DIR = Path(__file__).parent / "web"
SWITCH_INTERVAL = 0.001
log = logging.getLogger("workhearth.server")

# Why an order: the first class an error is an instance of decides its status.
_STATUS: list[tuple[type[HearthError], int]] = [
    (NotFoundError, 404),
    (SessionLockedError, 409),
    (StorageError, 507),
    (BusyError, 503),
    (UsageError, 422),
    (ImportFormatError, 422),
    (EncryptionKeyError, 409),
    (CorruptDataError, 409),
]


def status_of(exc: HearthError) -> int:
    for cls, status in _STATUS:
        if isinstance(exc, cls):
            return status
    # Why: SkillError and other caller mistakes carry exit code 2 like UsageError.
    return 422 if exc.exit_code == 2 else 400


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """While a server runs, what existed when it was built is left out of collections.

    Why: a full collection walked the ~130k objects of the loaded modules and app
    (FastAPI, pydantic, MCP) every few saves, ~50 ms with the GIL held: the whole
    server stalled, and that was the search p99 under saves (bench/server_load.py).
    What exists once the server is built lives as long as it does.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def create_app(
    config: Config,
    *,
    token: str,
    workspace: Path | None = None,
    extra_hosts: frozenset[str] = frozenset(),
    env: Mapping[str, str] | None = None,
    mounts: Mapping[str, LocalMount] | None = None,
) -> FastAPI:
    """The server for one home; ``workspace`` is the default of requests that name none.

    ``env`` is the environment tasks give their shell commands (``hearth serve``
    passes its own); ``extra_hosts`` are Host names allowed besides localhost
    (``--allow-remote``); ``mounts`` are served beside the API by path (``hearth
    serve``: the MCP server at ``/mcp``).
    """
    # Why the home: sign-ins outlive a restart of the server (same token, same cookie).
    auth = Auth(token, home=config.home)
    # Why here: /mcp answers only with the token or the login cookie, as /v1 does.
    mounted = {
        path: mount(
            config,
            (workspace or Path.cwd()).absolute(),
            lambda r: auth.allowed(r.headers.get("authorization"), r.cookies.get(COOKIE)),
        )
        for path, mount in (mounts or {}).items()
    }

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Why: searches run on the event loop, and each SQLite call gives up the GIL;
        # while a save's CPU work runs in a worker thread, taking it back waits out the
        # switch interval (5 ms by default) every time: a search's p99 under 20
        # saves/s went from ~56 to ~49 ms at 1 ms (bench/server_load.py).
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
        try:
            with frozen_heap():
                async with running(mounted.values()):
                    yield
        finally:
            sys.setswitchinterval(interval)
            app.state.tasks.close()
            app.state.memories.close()

    app = FastAPI(
        title="workhearth",
        version=__version__,
        description="Local REST API of hearth serve: memory, sessions, tasks, skills, trash, audit.",
        lifespan=lifespan,
        # Why: Swagger UI and ReDoc load scripts from a CDN and run inline script, which
        # the page's Content-Security-Policy forbids; /openapi.json is the contract.
        docs_url=None,
        redoc_url=None,
    )
    app.state.config = config
    app.state.workspace = (workspace or Path.cwd()).absolute()
    app.state.auth = auth
    app.state.memories = MemoryPool(config)
    # Why: /v1/trust names the variables a folder's MCP servers would inherit.
    app.state.env = dict(env or {})
    app.state.tasks = task_service(config, app.state.workspace, env)

    _install_error_handlers(app)
    # Why no auth dependency: RequireLogin checks every /v1/ path before routing.
    api: dict[str, Any] = {"responses": errors(*COMMON)}
    for module in (memory, sessions, skills, trash, audit, files, trust, tasks, check, wiki):
        app.include_router(module.router, **api)
    app.include_router(check.session_router, **api)
    app.include_router(screenshots.router, **api)
    memory.serve_search_first(app)  # the hottest route, before FastAPI's routing
    add_routes(app, mounted)  # /mcp: behind the same Guard and login check

    @app.get("/v1/info", response_model=InfoOut, tags=["server"], **api)
    async def info() -> dict[str, str]:
        """Version, default workspace and home (no secrets)."""
        return {
            "version": __version__,
            "workspace": str(app.state.workspace),
            "home": str(config.home),
        }

    # Why before the catch-all below: it holds POST /v1/logins.
    login.install(app, auth)

    @app.api_route(
        "/v1/{rest:path}",
        methods=["GET", "POST", "PATCH", "DELETE"],
        include_in_schema=False,
    )
    def no_route(rest: str, request: Request) -> None:
        # Why: without this, an unknown /v1 path falls through to the page's files.
        if allowed_methods(request.app, request.url.path):
            raise HTTPException(405)
        raise HttpError(404, "no such API route", code="no_route")

    _install_web(app)
    # Why this order: the last added runs first (Host, Origin and size before the token).
    app.add_middleware(RequireLogin, auth=auth)
    app.add_middleware(Guard, body_max=BODY_MAX, extra_hosts=extra_hosts)
    return app


def _error(
    status: int,
    detail: str,
    headers: Mapping[str, str] | None = None,
    *,
    code: str | None = None,
    params: Mapping[str, Any] | None = None,
) -> JSONResponse:
    """``{"detail", "code", "params"}`` (DESIGN §6); see :mod:`workhearth.server.errors`."""
    return error_response(status, detail, code or status_code_word(status), params, headers)


_UNPARSABLE_BODY = "There was an error parsing the body"  # FastAPI's 400 for a body it cannot read
NOT_JSON = "the request body is not valid JSON"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HearthError)
    async def hearth_error(_request: Request, exc: HearthError) -> JSONResponse:
        # Why exc.message, not str(exc): the CLI's flag hints (cli_hint) are not for the page.
        return _error(status_of(exc), exc.message, code=exc.code, params=exc.params)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if login.wants_page(request):
            return login.error_page(exc.status_code)  # a browser gets a page for people
        if exc.status_code in (404, 405):
            # Why: Starlette's Allow names only the first route of the path (GET and POST
            # /login are two routes), and the page's static mount answers any path; a
            # method the path does not take is a 405 listing exactly those it does.
            allowed = allowed_methods(app, request.url.path)
            if allowed and request.method not in allowed:
                return _error(405, "method not allowed", {"Allow": ", ".join(sorted(allowed))})
            if exc.status_code == 405:
                if _is_api(request):
                    return _error(404, "no such API route", code="no_route")
                return _error(404, "Not Found")
        if exc.status_code == 400 and exc.detail == _UNPARSABLE_BODY:
            # Why: a body that is not JSON (or not UTF-8) is bad input like any other:
            # one documented status (422) and a message that says what is wrong.
            return _error(422, NOT_JSON, code="not_json")
        coded = exc if isinstance(exc, HttpError) else None
        return _error(
            exc.status_code,
            str(exc.detail),
            getattr(exc, "headers", None),
            code=coded.code if coded else None,
            params=coded.params if coded else None,
        )

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if login.wants_page(request):
            return login.error_page(422)
        code, params = problem_code(exc.errors())
        return _error(422, describe(exc.errors()), code=code, params=params)

    @app.exception_handler(Exception)
    async def bug(_request: Request, _exc: Exception) -> JSONResponse:
        # Why: a bug still answers in the documented shape, and with none of its text
        # (which may hold paths or values); the traceback goes to the server's log.
        return _error(500, "internal error", code="server_error")

    @app.exception_handler(UnicodeError)
    async def not_text(_request: Request, exc: UnicodeError) -> JSONResponse:
        reason = getattr(exc, "reason", exc)
        return _error(422, f"text is not valid UTF-8 ({reason})", code="not_utf8")


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


def _where(problem: Mapping[str, Any]) -> str:
    loc = [str(p) for p in problem.get("loc", ()) if p not in ("body", "query", "path")]
    return ".".join(loc) or "request body"


_PLAIN = {
    "string_too_long": "at most {max_length} characters",
    "too_long": "at most {max_length} items",
    "extra_forbidden": "is not a field of this request",
    "missing": "is required",
    "literal_error": "must be one of {expected}",
    "greater_than_equal": "must be at least {ge}",
    "less_than_equal": "must be at most {le}",
    "int_parsing": "must be a whole number",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_parsing": "must be true or false",
    "bool_type": "must be true or false",
    "string_type": "must be text",
    "dict_type": "must be an object",
    "list_type": "must be a list",
}


def _plain(kind: str, ctx: Mapping[str, Any], msg: str) -> str:
    """What pydantic's error ``kind`` means, in words for people (not "String should have…")."""
    if kind == "string_too_short":
        least = ctx.get("min_length")
        return "must not be empty" if least == 1 else f"at least {least} characters"
    if kind in _PLAIN:
        with contextlib.suppress(KeyError):
            return _PLAIN[kind].format_map({k: str(v) for k, v in ctx.items()})
    return msg or "is invalid"


def describe(problems: Any) -> str:
    """One line for pydantic's error list: where (``tags.3``) and what was wrong."""
    if not problems:
        return "invalid request"
    first = problems[0]
    if first.get("type") == "json_invalid":
        return NOT_JSON
    message = _plain(str(first.get("type", "")), first.get("ctx") or {}, str(first.get("msg", "")))
    more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
    return f"{_where(first)}: {message}{more}"


# pydantic's error kinds -> our codes (the page words them: web/strings-errors.js).
_KIND_CODES = {
    "missing": "required",
    "string_too_short": "empty",
    "string_too_long": "too_long",
    "too_long": "too_many",
    "extra_forbidden": "unknown_field",
    "literal_error": "invalid_choice",
    "greater_than_equal": "out_of_range",
    "less_than_equal": "out_of_range",
}


def problem_code(problems: Any) -> tuple[str, dict[str, str | int]]:
    """The code and params of the first problem in pydantic's error list."""
    if not problems:
        return "invalid", {}
    first = problems[0]
    kind = str(first.get("type", ""))
    if kind == "json_invalid":
        return "not_json", {}
    ctx = first.get("ctx") or {}
    params: dict[str, str | int] = {"field": _where(first)}
    for key in ("max_length", "ge", "le"):
        if isinstance(ctx.get(key), int) and not isinstance(ctx.get(key), bool):
            params["limit"] = ctx[key]
    return _KIND_CODES.get(kind, "invalid_field"), params


def _install_web(app: FastAPI) -> None:
    # Why no html=True: "/" is login.install's gate (workbench or sign-in page); the
    # page's files need no token (they hold none).
    app.mount("/", StaticFiles(directory=WEB_DIR), name="web")


__all__ = ["ErrorOut", "create_app", "describe", "frozen_heap", "status_of"]
