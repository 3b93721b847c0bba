"""Request and response models of the REST API (DESIGN §6), with the bank limits of DESIGN §4.

The limits come from the library (``memory.bank``, ``memory.search``) so the API and
the library refuse the same things; the library checks them again (and secrets),
so a request that slips past a model is still refused, with the library's message.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workhearth.api.models import EntryListOut, EntryOut, HitOut, ProvenanceOut, SearchOut
from workhearth.memory.bank import (
    CONTENT_MAX,
    LIST_LIMIT_MAX,
    ORIGIN_MAX,
    SNIPPET_MAX,
    SNIPPETS_MAX,
    TAG_MAX,
    TAGS_MAX,
)
from workhearth.memory.search import DEFAULT_LIMIT, LIMIT_MAX, QUERY_MAX

BODY_MAX = 64 * 1024
# Why: ids, paths and names in a request are short; bounding them keeps a hostile
# request from making the server walk or log megabytes.
ID_MAX = 200
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


class ErrorOut(BaseModel):
    detail: str = Field(description="One line in English; never a filesystem path.")
    code: str = Field(
        description="A stable word for what went wrong (e.g. memory_secret, too_long); "
        "the page words it in the user's language."
    )
    params: dict[str, str | int] = Field(
        description="The values the words need, e.g. {field, limit}."
    )


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


class ContextIn(_Strict):
    snippet: str = Field("", max_length=SNIPPET_MAX)
    session_id: str | None = Field(None, max_length=ID_MAX)
    message_id: str | None = Field(None, max_length=ID_MAX)
    origin: str | None = Field(None, max_length=ORIGIN_MAX)


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


# ---------------------------------------------------------------- sessions
TaskStatus = Literal["running", "waiting", "stopped", "failed", "done"]


class SessionOut(BaseModel):
    session_id: str
    workspace: str
    title: str | None
    messages: int | None
    created: float | None
    updated: float
    encrypted: bool
    path: str
    parent: str | None = None
    status: TaskStatus


class SessionListOut(BaseModel):
    sessions: list[SessionOut]


class MessageOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: list[dict[str, Any]]
    id: str | None = None
    model: str | None = None


class TranscriptOut(BaseModel):
    session_id: str
    total: int
    returned: int
    messages: list[MessageOut]
    warnings: list[str] | None = None


class LatestOut(BaseModel):
    session_id: str
    total: int
    message: MessageOut | None
    warnings: list[str] | None = None


class FileChangeOut(BaseModel):
    path: str = Field(description="Relative to the session's workspace when inside it.")
    kind: Literal["created", "modified", "deleted"]
    tool: str
    call_id: str
    entries: int | None = Field(
        None, description="A folder: how many entries inside it changed with it."
    )


class FilesChangedOut(BaseModel):
    """What a session's tool calls changed on disk, whichever tool (shell included)."""

    session_id: str
    changes: list[FileChangeOut]
    omitted: int = Field(description="Changes past the recorded cap, not listed.")
    untracked: str | None = Field(description="Why tracking stopped, when it did.")


# ------------------------------------------------------------------ skills
class TrustItemOut(BaseModel):
    item: str
    status: Literal["trusted", "changed", "untrusted"]


class TrustServerOut(BaseModel):
    name: str
    transport: str
    command_line: str
    receives: list[str]
    adds: list[str]


class TrustOut(BaseModel):
    """A folder's trust: what it brings, what is trusted, and what its servers would run."""

    folder: str
    trusted: bool
    trusted_at: float | None
    items: list[TrustItemOut]
    hashes: dict[str, str]
    pending: list[str]
    servers: list[TrustServerOut]
    mcp_json_unreadable: bool


class TrustIn(_Strict):
    """The items the user saw and said yes to: item -> the hash GET /v1/trust gave."""

    hashes: dict[str, Annotated[str, Field(max_length=128)]] = Field(max_length=16)


class SkillOut(BaseModel):
    name: str
    description: str
    descriptions: dict[str, str] = Field(
        default_factory=dict,
        description="The description by language {en, zh?} (zh from metadata description-zh).",
    )
    source: str
    path: str
    status: Literal["ok", "broken"]
    problems: list[str]


class VariableOut(BaseModel):
    name: str
    label: dict[str, str] = Field(
        default_factory=dict, description="The form's field name {zh, en}; empty: use name."
    )
    description: dict[str, str]
    type: str
    choices: list[str]
    default: str | None
    required: bool


class ExampleOut(BaseModel):
    id: str
    title: dict[str, str]
    description: dict[str, str]
    variables: list[VariableOut]


class SkillDetailOut(SkillOut):
    allowed_tools: list[str] | None
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    body: str | None
    examples: list[ExampleOut]


class RenderIn(_Strict):
    example: str = Field(min_length=1, max_length=ID_MAX)
    values: dict[str, str] = Field(default_factory=dict, max_length=64)


class RenderOut(BaseModel):
    prompt: str


# ----------------------------------------------------------- trash / audit
class TrashItemOut(BaseModel):
    id: str
    original: str
    deleted_at: float
    reason: str
    session: str | None
    size: int
    kind: str
    root: str | None = None


class FileVersionOut(BaseModel):
    """A version of a file that a session's tool overwrote (its file history)."""

    n: int
    original: str
    time: float
    call_id: str | None
    size: int
    file: str
    replaced_by: str | None = None


class TrashListOut(BaseModel):
    items: list[TrashItemOut]
    versions: list[FileVersionOut] = Field(
        default_factory=list,
        description="With ?session=: the versions that session's writes replaced, oldest first.",
    )


class FilesOut(BaseModel):
    files: list[str] = Field(description="Paths relative to the workspace, with /.")
    truncated: bool = Field(description="More files match than were listed.")


class TrashRestoreIn(_Strict):
    overwrite: bool = False


class AuditRecordOut(BaseModel):
    time: float
    session: str | None
    mode: str
    tool: str
    decision: str
    arguments: dict[str, Any]
    duration: float
    outcome: str
    summary: str
    call_id: str | None = None


class AuditListOut(BaseModel):
    records: list[AuditRecordOut]


class InfoOut(BaseModel):
    version: str
    workspace: str
    home: str


class LoginIn(BaseModel):
    token: str = Field(max_length=ID_MAX)


__all__ = [
    "BODY_MAX",
    "COMMON",
    "LIMIT_MAX",
    "LIST_LIMIT_MAX",
    "QUERY_MAX",
    "EntryListOut",
    "EntryOut",
    "HitOut",
    "ProvenanceOut",
    "SearchOut",
    "errors",
]
