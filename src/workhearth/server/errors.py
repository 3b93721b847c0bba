"""Error answers of the REST API: ``{"detail", "code", "params"}`` (DESIGN §6).

``detail`` is one English line; ``code`` is a stable word the page words in the
user's language (``web/strings-errors.js``, key ``error.code.<code>``) with
``params``. No answer carries a filesystem path: :func:`pathless` takes out any
that a message let through.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException
from fastapi.responses import JSONResponse

# Why two parts at least: "/proc" or "/v1" name no one's file; "/home/ana/x" does.
# Not after a word, ':' or '/', so "a/b", "1/2" and "http://…" are left alone; nor the
# API's own routes (/v1/memory).
_PATH = re.compile(r"(?<![\w:/.~-])(?!/v1/)~?(?:/[^\s/'\"()\[\],;:]+){2,}/?")
HIDDEN_PATH = "(a path)"


class HttpError(HTTPException):
    """An HTTP error raised by a route, with the code and params the page words it by."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        code: str,
        params: Mapping[str, str | int] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(status, detail, dict(headers) if headers else None)
        self.code = code
        self.params = dict(params or {})


def pathless(text: str) -> str:
    """``text`` with every absolute path (two parts or more) replaced by "(a path)"."""
    return _PATH.sub(HIDDEN_PATH, text)


def _param(value: Any) -> str | int:
    if isinstance(value, bool) or not isinstance(value, int):
        return pathless(str(value))
    return value


def error_response(
    status: int,
    detail: str,
    code: str,
    params: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The JSON answer of an error: one English line, its code, its params (no paths)."""
    first = detail.strip().splitlines()[0] if detail.strip() else "failed"
    body = {
        "detail": pathless(first),
        "code": code,
        "params": {str(k): _param(v) for k, v in (params or {}).items()},
    }
    return JSONResponse(body, status_code=status, headers=dict(headers) if headers else None)


# What an HTTP status means when nothing more precise was said (Starlette's own errors).
STATUS_CODES = {
    400: "bad_request",
    401: "not_signed_in",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "body_too_large",
    421: "host_refused",
    422: "invalid",
    507: "disk_refused",
}


def status_code_word(status: int) -> str:
    return STATUS_CODES.get(status, "server_error" if status >= 500 else "error")
