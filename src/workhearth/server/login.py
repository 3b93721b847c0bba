"""Signing in to the workbench, and the pages people see outside it.

The one-time login URL ``hearth serve`` printed (or ``hearth serve --login-url``
asked for later) and the token form both set an HttpOnly session cookie that
outlives a server restart (:class:`~workhearth.server.security.Auth`). A browser
without it sees the sign-in page at ``/``, never the workbench; errors a browser
navigates to are pages in both languages, never raw JSON.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Form, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from workhearth.api.workbench_models import LoginUrlOut
from workhearth.server.schemas import ID_MAX, errors
from workhearth.server.security import COOKIE, LOGIN_TTL, SESSION_TTL, Auth

WEB_DIR = Path(__file__).parent / "web"
PAGE = "page.html"
# Why a fixed set: the page shows words for these; nothing the client sent is echoed.
REASONS = frozenset({"", "expired", "wrong", "signed_out", "restarted"})
_NOT_PAGES = ("/v1/", "/mcp")


@cache
def _template() -> str:
    return (WEB_DIR / PAGE).read_text(encoding="utf-8")


def standalone(page: str, *, reason: str = "", status: int = 200) -> HTMLResponse:
    """The sign-in page (``page="signin"``) or an error page for people."""
    html = _template().replace(
        'data-page="" data-reason="" data-status=""',
        f'data-page="{page}" data-reason="{reason if reason in REASONS else ""}" '
        f'data-status="{int(status)}"',
        1,
    )
    return HTMLResponse(html, status_code=status)


def wants_page(request: Request) -> bool:
    """Whether a browser navigated here (a page answers), rather than a program (JSON)."""
    path = request.url.path
    if path.startswith(_NOT_PAGES):
        return False
    return "text/html" in request.headers.get("accept", "")


def error_page(status: int) -> HTMLResponse:
    return standalone("error", status=status)


def _signed_in(auth: Auth, request: Request) -> bool:
    return auth.allowed(None, request.cookies.get(COOKIE))


def _cookie_response(sid: str, request: Request) -> Response:
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


def install(app: FastAPI, auth: Auth) -> None:
    """The login and logout routes, ``/`` (workbench or sign-in page), ``/favicon.ico``,
    and ``POST /v1/logins`` (a fresh login URL for ``hearth serve --login-url``)."""
    login_errors = {
        **errors(403, 413, 421, 422),
        303: {"description": "Signed in: the session cookie is set; go to /"},
        401: {"description": "Link used, expired or wrong", "content": {"text/html": {}}},
    }

    @app.get("/login", tags=["server"], status_code=303, responses=login_errors)
    def login(request: Request, token: Annotated[str, Query(max_length=ID_MAX)] = "") -> Response:
        """Open a one-time login URL: sets the session cookie, then ``/``."""
        sid = auth.use_login(token) if token else None
        if sid is None:
            return standalone("signin", reason="expired" if token else "", status=401)
        return _cookie_response(sid, request)

    @app.post("/login", tags=["server"], status_code=303, responses=login_errors)
    def login_form(
        request: Request, token: Annotated[str, Form(max_length=ID_MAX)] = ""
    ) -> Response:
        """Sign a second browser in with the token of ``$HEARTH_HOME/server.token``."""
        sid = auth.login_with_token(token.strip()) if token.strip() else None
        if sid is None:
            return standalone("signin", reason="wrong", status=401)
        return _cookie_response(sid, request)

    @app.post(
        "/logout",
        tags=["server"],
        status_code=204,
        response_class=Response,
        responses={**errors(403, 421), 303: {"description": "A form's sign-out: go to /"}},
    )
    def logout(request: Request) -> Response:
        """End this browser's session (the cookie stops working at once, here and after a restart)."""
        sid = request.cookies.get(COOKIE)
        if sid:
            auth.end_session(sid)
        # Why: a form post navigates, and then the sign-in page is what to show next.
        response: Response = (
            RedirectResponse("/", status_code=303)
            if wants_page(request)
            else Response(status_code=204)
        )
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    @app.post(
        "/v1/logins",
        tags=["server"],
        status_code=201,
        response_model=LoginUrlOut,
        responses=errors(403),
    )
    def new_login(request: Request) -> dict[str, object]:
        """A fresh one-time login URL (``hearth serve --login-url``); needs the bearer token."""
        if not auth.bearer(request.headers.get("authorization")):
            raise HTTPException(403, "a login URL is given only for the bearer token")
        base = str(request.base_url).rstrip("/")
        return {"url": f"{base}/login?token={auth.new_login()}", "expires_in": int(LOGIN_TTL)}

    index = WEB_DIR / "index.html"

    @app.get("/", include_in_schema=False)
    @app.get("/index.html", include_in_schema=False)
    def home(request: Request) -> Response:
        # Why a gate: a stranger sees how to sign in, not a workbench whose buttons fail.
        if _signed_in(auth, request):
            return FileResponse(index, media_type="text/html")
        return standalone("signin")

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        return FileResponse(WEB_DIR / "favicon.svg", media_type="image/svg+xml")

    app.state.new_login = auth.new_login


__all__ = ["LoginUrlOut", "error_page", "install", "standalone", "wants_page"]
