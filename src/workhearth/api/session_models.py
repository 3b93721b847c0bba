"""Output shapes of sessions and tasks that the REST API and the MCP tools answer with.

Why here: ``GET /v1/sessions…`` and the ``session_*`` tools describe the same library
objects (``sessions.store.SessionInfo``, ``Transcript``, ``LatestMessage``,
``FilesChanged``; ``tasks.task.Task``); one definition keeps them from drifting.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from workhearth.tasks.task import Status

# Why the service's own Literal: DESIGN §6 names one set of statuses for every surface.
TaskStatus = Status


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


class TaskStarted(BaseModel):
    session_id: str
    status: TaskStatus


class PendingOut(BaseModel):
    call_id: str
    tool: str
    summary: str


class TaskOut(BaseModel):
    session_id: str
    status: TaskStatus
    reason: str | None = Field(None, description="Why a failed task failed, in words.")
    pending_approval: PendingOut | None
    run: str | None = Field(None, description="The run this server holds events of (event ids).")
    messages_before: int | None = Field(
        None, description="Transcript messages before that run's events (none: no run here)."
    )
