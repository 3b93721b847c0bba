"""Output shapes only the REST API answers with today (the workbench page's), and its errors.

Why here too: ``api/`` holds every wire shape, so a tool or command that comes to
answer with one of these takes it from here instead of declaring it again.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class ErrorOut(BaseModel):
    detail: str = Field(description="One line in English; never a filesystem path.")
    code: str = Field(
        description="A stable word for what went wrong (e.g. memory_secret, too_long); "
        "the page words it in the user's language."
    )
    params: dict[str, str | int] = Field(
        description="The values the words need, e.g. {field, limit}."
    )


# ------------------------------------------------------------------- trust
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


# ------------------------------------------------------------------ server
class InfoOut(BaseModel):
    version: str
    workspace: str
    home: str


class TeamInfoOut(BaseModel):
    """``GET /v1/info`` of a team bank server: no folders (it has none of its own)."""

    version: str
    mode: Literal["team"]


class LoginUrlOut(BaseModel):
    url: str = Field(description="A one-time login URL: it works once, for expires_in seconds.")
    expires_in: int
