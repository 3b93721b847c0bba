"""Request models of the REST API (DESIGN §6), with the bank limits of DESIGN §4.

The response shapes are :mod:`workhearth.api`'s (the MCP tools answer with the same
classes); routes name them from there.

The limits come from the library (``memory.bank``, ``memory.search``) so the API and
the library refuse the same things; the library checks them again (and secrets),
so a request that slips past a model is still refused, with the library's message.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workhearth.api.models import (
    ID_MAX,
    ContextIn,
    EntryListOut,
    EntryOut,
    HitOut,
    ProvenanceOut,
    SearchOut,
)
from workhearth.api.workbench_models import ErrorOut, InfoOut
from workhearth.memory.bank import (
    CONTENT_MAX,
    LIST_LIMIT_MAX,
    SNIPPETS_MAX,
    TAG_MAX,
    TAGS_MAX,
)
from workhearth.memory.search import DEFAULT_LIMIT, LIMIT_MAX, QUERY_MAX

BODY_MAX = 64 * 1024
PATH_MAX = 4096
WORKSPACE_HELP = "Absolute path of the workspace folder (default: the server's working folder)."


class SearchQuery(BaseModel):
    """The query string of ``GET /v1/memory/search`` (read by :func:`deps.query_of`)."""

    q: str = Field(max_length=QUERY_MAX, description="Words to find.")
    limit: int = Field(DEFAULT_LIMIT, ge=1, le=LIMIT_MAX)
    workspace: str | None = Field(None, max_length=PATH_MAX, description=WORKSPACE_HELP)


def query_openapi(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI ``parameters`` of a query-string model, as FastAPI would list its fields."""
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    parameters = []
    for name, prop in schema["properties"].items():
        param: dict[str, Any] = {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": prop,
        }
        if "description" in prop:
            param["description"] = prop["description"]
        parameters.append(param)
    return {"parameters": parameters}


_ERROR_TEXT = {
    400: "Bad request",
    401: "Not logged in: no valid bearer token or session cookie",
    403: "Refused (a state-changing request from a foreign Origin)",
    404: "Not found (the message never says whether the id exists elsewhere)",
    409: "Conflict with the current state",
    413: "Request body over 64 KB",
    421: "Host header is not this server's (DNS rebinding guard)",
    422: "Invalid input; detail says which field and why",
    507: "The disk refused the write; nothing half-written was kept",
}
COMMON = (401, 403, 413, 421, 422, 507)


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` for error codes (all answer ``{"detail", "code", "params"}``)."""
    return {c: {"model": ErrorOut, "description": _ERROR_TEXT[c]} for c in sorted(set(codes))}


class _Strict(BaseModel):
    # Why: a misspelt field ("conent") must be an error, not silently ignored; and
    # "redact": 0 or "1" is not a yes or no.
    model_config = ConfigDict(extra="forbid", strict=True)


# ------------------------------------------------------------------ memory
Tag = Annotated[str, Field(min_length=1, max_length=TAG_MAX)]


class MemorySaveIn(_Strict):
    content: str = Field(min_length=1, max_length=CONTENT_MAX)
    level: Literal["critical", "normal", "low"] = "normal"
    tags: list[Tag] = Field(default_factory=list, max_length=TAGS_MAX)
    contexts: list[ContextIn] = Field(default_factory=list, max_length=SNIPPETS_MAX)
    redact: bool = False
    workspace: str | None = Field(None, max_length=PATH_MAX)


# Why: a save of a sentence already saved answers 200 with that entry, not 201.
SAVED_BEFORE: dict[int | str, dict[str, Any]] = {
    200: {"model": EntryOut, "description": "Already saved: the existing entry"}
}


class MemoryEditIn(_Strict):
    content: str = Field(min_length=1, max_length=CONTENT_MAX)
    redact: bool = False


# ------------------------------------------------------------- trust / skills
class TrustIn(_Strict):
    """The items the user saw and said yes to: item -> the hash GET /v1/trust gave."""

    hashes: dict[str, Annotated[str, Field(max_length=128)]] = Field(max_length=16)


class RenderIn(_Strict):
    example: str = Field(min_length=1, max_length=ID_MAX)
    values: dict[str, str] = Field(default_factory=dict, max_length=64)


# ------------------------------------------------------------------- trash
class TrashRestoreIn(_Strict):
    overwrite: bool = False


class LoginIn(BaseModel):
    token: str = Field(max_length=ID_MAX)


# Why these names here too: modules that name the REST limits import the shapes they
# answer with from the same place; the shapes themselves live in workhearth.api.
__all__ = [
    "BODY_MAX",
    "COMMON",
    "ID_MAX",
    "LIMIT_MAX",
    "LIST_LIMIT_MAX",
    "QUERY_MAX",
    "ContextIn",
    "EntryListOut",
    "EntryOut",
    "ErrorOut",
    "HitOut",
    "InfoOut",
    "ProvenanceOut",
    "SearchOut",
    "errors",
]
