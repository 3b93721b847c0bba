"""Local-mode security of ``hearth serve``: token, login cookie, Host and Origin checks.

The threat is another web page in the user's own browser (CSRF, DNS rebinding) and
other local users, not the user: the API needs the per-install bearer token (a file
only the user can read) or a session cookie the browser got by opening the one-time
login URL that ``hearth serve`` printed (as Jupyter does).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from starlette.requests import cookie_parser

from workhearth.errors import StorageError
from workhearth.fsutil import atomic_write, make_private_dir

TOKEN_FILE = "server.token"
COOKIE = "hearth_session"
LOGIN_TTL = 300.0  # seconds the printed login URL stays usable
SESSION_TTL = 7 * 24 * 3600.0
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def load_or_create_token(home: Path) -> str:
    """The bearer token in ``$HEARTH_HOME/server.token`` (0600), made on first start.

    Made atomically with ``O_EXCL`` on a temporary name then linked into place, so
    two servers starting at once agree on one token and nobody ever reads a
    half-written file.
    """
    path = home / TOKEN_FILE
    try:
        token = path.read_text(encoding="ascii").strip()
        if len(token) >= 32:
            return token
    except FileNotFoundError:
        pass
    except (OSError, UnicodeError) as exc:
        raise StorageError(f"cannot read {path}: {exc}") from exc
    try:
        make_private_dir(home)
        token = secrets.token_urlsafe(32)
        tmp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, token.encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            # Why link, not replace: a token another server made first wins (both use it).
            os.link(tmp, path)
        except FileExistsError:
            # An empty or short (damaged) file is replaced; a good one made meanwhile is kept.
            existing = path.read_text(encoding="ascii").strip()
            if len(existing) >= 32:
                return existing
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return token
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc.strerror or exc}") from exc


SESSIONS_FILE = "server.sessions"


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


class Auth:
    """The bearer token, the one-time login tokens and the cookie sessions of one home.

    Sessions outlive a restart: each is kept in ``$HEARTH_HOME/server.sessions`` (0600)
    as the SHA-256 of its id with its end, beside the digest of the token it was opened
    under. A changed ``server.token`` ends them all; logging out ends one at once in
    this server and in every server started after (a second server already running
    keeps what it read until its restart). One-time login URLs live in memory only.
    """

    def __init__(
        self,
        token: str,
        *,
        clock: Callable[[], float] = time.time,
        home: Path | None = None,
    ) -> None:
        self.token = token
        self._clock = clock
        self._lock = threading.Lock()
        self._logins: dict[str, float] = {}
        self._store = home / SESSIONS_FILE if home is not None else None
        self._sessions: dict[str, float] = self._load()
        self._saved = True  # False once a write failed: memory then holds what disk does not

    # ----------------------------------------------------------- persistence
    def _load(self) -> dict[str, float]:
        if self._store is None:
            return {}
        try:
            data = orjson.loads(self._store.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError):
            # Why: a damaged file costs a sign-in, never a server that will not start.
            return {}
        if not isinstance(data, dict) or data.get("token") != _digest(self.token):
            return {}
        sessions = data.get("sessions")
        now = self._clock()
        if not isinstance(sessions, dict):
            return {}
        return {
            str(k): float(v) for k, v in sessions.items() if isinstance(v, int | float) and v >= now
        }

    def _save(self) -> None:
        """Write the live sessions (under the lock); a failure costs only persistence."""
        if self._store is None:
            return
        now = self._clock()
        live = {k: v for k, v in self._sessions.items() if v >= now}
        self._sessions = live
        data = {"version": 1, "token": _digest(self.token), "sessions": live}
        try:
            atomic_write(self._store, orjson.dumps(data), 0o600)
            self._saved = True
        except OSError:  # a read-only or full home: sessions last as long as this server
            self._saved = False

    def _reload(self) -> None:
        """Take in sessions another server of this home opened or ended (under the lock)."""
        if self._store is not None and self._saved:
            self._sessions = self._load()

    # ----------------------------------------------------------- logins
    def new_login(self) -> str:
        """A token for one login URL: usable once, for :data:`LOGIN_TTL` seconds."""
        login = secrets.token_urlsafe(24)
        with self._lock:
            now = self._clock()
            self._logins = {k: v for k, v in self._logins.items() if v >= now}
            self._logins[login] = now + LOGIN_TTL
        return login

    def use_login(self, login: str) -> str | None:
        """A new session id if ``login`` is a live one-time token (which it no longer is)."""
        with self._lock:
            expires = self._logins.pop(login, None)
            if expires is None or expires < self._clock():
                return None
            return self._new_session()

    def login_with_token(self, token: str) -> str | None:
        """A new session id for someone who holds the bearer token itself (a second browser)."""
        if not hmac.compare_digest(token.encode(), self.token.encode()):
            return None
        with self._lock:
            return self._new_session()

    def _new_session(self) -> str:
        sid = secrets.token_urlsafe(32)
        self._reload()
        self._sessions[_digest(sid)] = self._clock() + SESSION_TTL
        self._save()
        return sid

    def end_session(self, sid: str) -> None:
        with self._lock:
            self._reload()
            self._sessions.pop(_digest(sid), None)
            self._save()

    def bearer(self, authorization: str | None) -> bool:
        """Whether ``authorization`` carries the bearer token itself."""
        if not authorization:
            return False
        scheme, _, value = authorization.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode(), self.token.encode()
        )

    def allowed(self, authorization: str | None, cookie: str | None) -> bool:
        if self.bearer(authorization):
            return True
        if cookie:
            key = _digest(cookie)
            with self._lock:
                expires = self._sessions.get(key)
                if expires is None and self._store is not None:
                    # Why: another server of this home (or its previous run) may have opened it.
                    self._reload()
                    expires = self._sessions.get(key)
                if expires is not None and expires >= self._clock():
                    return True
                self._sessions.pop(key, None)
        return False


def host_allowed(host: str, extra: frozenset[str] = frozenset()) -> bool:
    """Whether a ``Host`` header names this server (localhost / 127.0.0.1 / [::1], any port)."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[: host.find("]") + 1] if "]" in host else host
        rest = host[len(name) :]
    else:
        name, _, port = host.partition(":")
        rest = f":{port}" if port else ""
    if rest and not (rest.startswith(":") and rest[1:].isdigit()):
        return False
    return name in LOCAL_HOSTS or name in extra


def origin_allowed(origin: str, host: str, fetch_site: str | None = None) -> bool:
    """A state-changing request may come only from a page this server served.

    ``Origin: null`` (a privacy-minded browser's form post) passes only when the browser
    itself says the request is same-origin (``Sec-Fetch-Site``, which no page can set).
    """
    if origin == "null":
        return fetch_site == "same-origin"
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


_NO_BODY_METHODS = frozenset({"GET", "HEAD"})


def _first_headers(scope: Scope, *names: bytes) -> list[str | None]:
    """The first value of each named header (ASGI names are lower case), as Starlette reads them."""
    found: dict[bytes, str] = {}
    for name, value in scope["headers"]:
        if name in names and name not in found:
            found[name] = value.decode("latin-1")
    return [found.get(name) for name in names]


SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    # Why same-origin, not no-referrer: with no-referrer Chromium sends ``Origin: null``
    # on the page's own form posts (sign in, sign out), which the Origin check refuses;
    # other sites still get no Referer (the login URL's token never leaves).
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; object-src 'none'; "
        b"base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    ),
    (b"cache-control", b"no-store"),
]


class Guard:
    """ASGI middleware run before everything (page, API, /mcp later).

    Host check (421), foreign Origin on a state-changing request (403), body size
    (413, by Content-Length and by what actually arrives), and the security
    headers on every answer.
    """

    def __init__(self, app: ASGIApp, *, body_max: int, extra_hosts: frozenset[str]) -> None:
        self.app = app
        self.body_max = body_max
        self.extra_hosts = extra_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host, origin, length, site = _first_headers(
            scope, b"host", b"origin", b"content-length", b"sec-fetch-site"
        )
        host = host or ""
        if not host_allowed(host, self.extra_hosts):
            await _reply(
                send,
                421,
                "this server answers only to localhost (Host header refused)",
                code="host_refused",
            )
            return
        if scope["method"] in UNSAFE_METHODS and origin and not origin_allowed(origin, host, site):
            await _reply(
                send,
                403,
                "refused: the request comes from another site (Origin)",
                code="foreign_origin",
            )
            return
        too_big = f"request body is over {self.body_max // 1024} KB"
        limit = {"limit_kb": self.body_max // 1024}
        if length is not None and (not length.isdigit() or int(length) > self.body_max):
            await _reply(send, 413, too_big, code="body_too_large", params=limit)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                have = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in have]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        if length is None and scope["method"] in _NO_BODY_METHODS:
            # Why: nothing to count (a body without Content-Length is chunked, and only
            # GET and HEAD are let through without reading it: they have none).
            await self.app(scope, receive, send_secured)
            return
        body, complete = await _read_body(receive, self.body_max)
        if not complete:
            await _reply(send, 413, too_big, code="body_too_large", params=limit)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # Why: a streaming response waits here for the disconnect

        await self.app(scope, replay, send_secured)


NOT_LOGGED_IN = (
    "not signed in: open the login URL `hearth serve` printed (a new one: "
    "`hearth serve --login-url`), or send Authorization: Bearer <$HEARTH_HOME/server.token>"
)


class RequireLogin:
    """ASGI middleware: every path under ``prefix`` needs the bearer token or the login cookie.

    Anything else is a 401 that says how to log in, whatever the path or method
    (an unknown route or method included). Why here and not a FastAPI dependency:
    one check for every route, before any routing or parameter reading (which, as
    a dependency, cost a search request a few percent).
    """

    def __init__(self, app: ASGIApp, *, auth: Auth, prefix: str = "/v1/") -> None:
        self.app = app
        self.auth = auth
        self.prefix = prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(self.prefix):
            authorization, cookies = _first_headers(scope, b"authorization", b"cookie")
            if not self.auth.allowed(authorization, _cookie(cookies)):
                await _reply(
                    send,
                    401,
                    NOT_LOGGED_IN,
                    extra=[(b"www-authenticate", b"Bearer")],
                    code="not_signed_in",
                )
                return
        await self.app(scope, receive, send)


def _cookie(header: str | None) -> str | None:
    return cookie_parser(header).get(COOKIE) if header else None


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", True
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", False
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True


async def _reply(
    send: Send,
    status: int,
    detail: str,
    *,
    code: str,
    params: dict[str, Any] | None = None,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    body = orjson.dumps({"detail": detail, "code": code, "params": params or {}})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(extra or []),
                *SECURITY_HEADERS,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
