"""``create_app``: the FastAPI application of ``hearth serve`` (REST API + web workbench).

Layout: the :class:`~workhearth.server.security.Guard` middleware wraps everything
(Host, Origin, body size, security headers); every ``/v1`` router needs the bearer
token or the login cookie; ``/login`` turns the one-time URL into that cookie; the
page's files are served from ``server/web/``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

from fastapi import FastAPI, Form, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from workhearth import __version__
from workhearth.config import Config
from workhearth.errors import (
    CorruptDataError,
    EncryptionKeyError,
    HearthError,
    ImportFormatError,
    NotFoundError,
    SessionLockedError,
    StorageError,
    UsageError,
)
from workhearth.server.deps import MemoryPool, allowed_methods
from workhearth.server.routes import audit, files, memory, sessions, skills, trash, trust
from workhearth.server.schemas import BODY_MAX, COMMON, ID_MAX, ErrorOut, InfoOut, LoginIn, errors
from workhearth.server.security import COOKIE, SESSION_TTL, Auth, Guard, RequireLogin

WEB_DIR = Path(__file__).parent / "web"
SWITCH_INTERVAL = 0.001
log = logging.getLogger("workhearth.server")

# Why an order: the first class an error is an instance of decides its status.
_STATUS: list[tuple[type[HearthError], int]] = [
    (NotFoundError, 404),
    (SessionLockedError, 409),
    (StorageError, 507),
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


def _optional(module: str) -> ModuleType | None:
    """The tasks code lands separately; the server runs without it until it does."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None


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
) -> FastAPI:
    """The server for one home; ``workspace`` is the default of requests that name none.

    ``env`` is the environment tasks give their shell commands (``hearth serve``
    passes its own); ``extra_hosts`` are Host names allowed besides localhost
    (``--allow-remote``).
    """
    auth = Auth(token)
    tasks_mod = _optional("workhearth.server.tasks")
    tasks_routes = _optional("workhearth.server.routes.tasks")

    from workhearth.mcp.http import mcp_http_app

    # Why here: /mcp answers only with the token or the login cookie, as /v1 does.
    mcp_app = mcp_http_app(
        config,
        (workspace or Path.cwd()).absolute(),
        authorize=lambda r: auth.allowed(r.headers.get("authorization"), r.cookies.get(COOKIE)),
    )

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
                async with mcp_app.lifespan():
                    yield
        finally:
            sys.setswitchinterval(interval)
            if app.state.tasks is not None:
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
    app.state.tasks = (
        tasks_mod.task_service(config, app.state.workspace, env) if tasks_mod is not None else None
    )

    _install_error_handlers(app)
    # Why no auth dependency: RequireLogin checks every /v1/ path before routing.
    api: dict[str, Any] = {"responses": errors(*COMMON)}
    for module in (memory, sessions, skills, trash, audit, files, trust):
        app.include_router(module.router, **api)
    if tasks_routes is not None:
        app.include_router(tasks_routes.router, **api)
    # /mcp: behind the same Guard; a plain ASGI route (a Mount would redirect /mcp to /mcp/).
    app.router.routes.append(Route("/mcp", endpoint=mcp_app))

    @app.get("/v1/info", response_model=InfoOut, tags=["server"], **api)
    async def info() -> dict[str, str]:
        """Version, default workspace and home (no secrets)."""
        return {
            "version": __version__,
            "workspace": str(app.state.workspace),
            "home": str(config.home),
        }

    @app.api_route(
        "/v1/{rest:path}",
        methods=["GET", "POST", "PATCH", "DELETE"],
        include_in_schema=False,
    )
    def no_route(rest: str, request: Request) -> None:
        # Why: without this, an unknown /v1 path falls through to the page's files.
        if allowed_methods(request.app, request.url.path):
            raise HTTPException(405)
        raise HTTPException(404, "no such API route")

    _install_login(app, auth)
    _install_web(app)
    # Why this order: the last added runs first (Host, Origin and size before the token).
    app.add_middleware(RequireLogin, auth=auth)
    app.add_middleware(Guard, body_max=BODY_MAX, extra_hosts=extra_hosts)
    return app


def _error(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=status, headers=headers)


_UNPARSABLE_BODY = "There was an error parsing the body"  # FastAPI's 400 for a body it cannot read
NOT_JSON = "the request body is not valid JSON"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HearthError)
    async def hearth_error(_request: Request, exc: HearthError) -> JSONResponse:
        return _error(status_of(exc), exc.message.splitlines()[0] if exc.message else "failed")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code in (404, 405):
            # Why: Starlette's Allow names only the first route of the path (GET and POST
            # /login are two routes), and the page's static mount answers any path; a
            # method the path does not take is a 405 listing exactly those it does.
            allowed = allowed_methods(app, request.url.path)
            if allowed and request.method not in allowed:
                return _error(405, "method not allowed", {"Allow": ", ".join(sorted(allowed))})
            if exc.status_code == 405:
                return _error(404, "no such API route" if _is_api(request) else "Not Found")
        if exc.status_code == 400 and exc.detail == _UNPARSABLE_BODY:
            # Why: a body that is not JSON (or not UTF-8) is bad input like any other:
            # one documented status (422) and a message that says what is wrong.
            return _error(422, NOT_JSON)
        return _error(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, describe(exc.errors()))

    @app.exception_handler(UnicodeError)
    async def not_text(_request: Request, exc: UnicodeError) -> JSONResponse:
        return _error(422, f"text is not valid UTF-8 ({getattr(exc, 'reason', exc)})")


def _is_api(request: Request) -> bool:
    return request.url.path.startswith("/v1/")


def describe(problems: Any) -> str:
    """One line for pydantic's error list: where (``tags.3``) and what was wrong."""
    if not problems:
        return "invalid request"
    first = problems[0]
    if first.get("type") == "json_invalid":
        return NOT_JSON
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path")]
    where = ".".join(loc) or "request body"
    message = str(first.get("msg", "is invalid"))
    ctx = first.get("ctx") or {}
    kind = first.get("type", "")
    if kind == "string_too_long":
        message = f"at most {ctx.get('max_length')} characters"
    elif kind == "too_long":
        message = f"at most {ctx.get('max_length')} items"
    elif kind == "extra_forbidden":
        message = "is not a field of this request"
    elif kind == "missing":
        message = "is required"
    more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
    return f"{where}: {message}{more}"


_LOGIN_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>workhearth: log in</title></head>
<body><main>
<h1>This login link was used or has expired</h1>
<p>Each link printed by <code>hearth serve</code> works once, for a few minutes.
Restart <code>hearth serve</code> for a new one, or paste the token from
<code>$HEARTH_HOME/server.token</code>:</p>
<form method="post" action="/login">
<label>Token <input type="password" name="token" autocomplete="off" required></label>
<button type="submit">Log in</button>
</form>
</main></body></html>
"""


def _cookie_response(auth: Auth, sid: str, request: Request) -> Response:
    response = RedirectResponse("/", status_code=303)
    response.set_cookie(
        COOKIE,
        sid,
        max_age=int(SESSION_TTL),
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _install_login(app: FastAPI, auth: Auth) -> None:
    login_errors = {
        **errors(403, 413, 421, 422),
        303: {"description": "Logged in: the session cookie is set; go to /"},
        401: {"description": "Link used, expired or wrong", "content": {"text/html": {}}},
    }

    @app.get("/login", tags=["server"], status_code=303, responses=login_errors)
    def login(request: Request, token: Annotated[str, Query(max_length=ID_MAX)] = "") -> Response:
        """Open the one-time URL ``hearth serve`` printed: sets the session cookie, then ``/``."""
        sid = auth.use_login(token) if token else None
        if sid is None:
            return HTMLResponse(_LOGIN_PAGE, status_code=401)
        return _cookie_response(auth, sid, request)

    @app.post("/login", tags=["server"], status_code=303, responses=login_errors)
    def login_form(request: Request, form: Annotated[LoginIn, Form()]) -> Response:
        """Log a second browser in with the token of ``$HEARTH_HOME/server.token``."""
        sid = auth.login_with_token(form.token)
        if sid is None:
            return HTMLResponse(_LOGIN_PAGE, status_code=401)
        return _cookie_response(auth, sid, request)

    @app.post(
        "/logout",
        tags=["server"],
        status_code=204,
        response_class=Response,
        responses=errors(403, 421),
    )
    def logout(request: Request) -> Response:
        """End this browser's session (the cookie stops working at once)."""
        sid = request.cookies.get(COOKIE)
        if sid:
            auth.end_session(sid)
        response = Response(status_code=204)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    app.state.new_login = auth.new_login


_PLACEHOLDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>workhearth</title></head>
<body><main><h1>workhearth</h1>
<p>The server is running. The web workbench is not installed in this build;
the REST API is described at <a href="/openapi.json">/openapi.json</a>.</p>
</main></body></html>
"""


def _install_web(app: FastAPI) -> None:
    if (WEB_DIR / "index.html").is_file():
        # Why html=True: "/" answers index.html; the page's files need no token (they hold none).
        app.mount("/", StaticFiles(directory=WEB_DIR, html=True), name="web")
        return

    @app.get("/", include_in_schema=False)
    def placeholder() -> HTMLResponse:
        return HTMLResponse(_PLACEHOLDER)


__all__ = ["ErrorOut", "create_app", "describe", "frozen_heap", "status_of"]
