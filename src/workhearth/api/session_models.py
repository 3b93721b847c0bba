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


class RewindIn(BaseModel):
    """``POST /v1/sessions/{id}/rewind`` and the ``session_rewind`` tool (DESIGN §6): undo
    turn ``to`` and every later one."""

    model_config = ConfigDict(extra="forbid")
    to: int = Field(ge=1, le=1_000_000, description="The turn to undo, with every later one.")
    dry_run: bool = Field(False, description="Only say what would change.")
    files_only: bool = Field(False, description="Put back the files; keep the conversation.")
    conversation_only: bool = Field(
        False, description="Rewind the conversation; leave the files as they are."
    )
    force: bool = Field(
        False, description="Also replace files changed outside the task (trashed first)."
    )


class RewindFileOut(BaseModel):
    path: str
    action: Literal["restore", "create", "delete"]
    conflict: bool
    diff: str | None


class RewindPlanOut(BaseModel):
    """DESIGN §8: what a rewind changes (or, with ``dry_run``, would change)."""

    session_id: str
    to_turn: int
    files: list[RewindFileOut]
    conversation: bool


class TurnOut(BaseModel):
    """One prompt of a session: ``turn`` is None once a rewind took it out of the conversation;
    ``files_undone``: a rewind put its file changes back."""

    turn: int | None
    seq: int
    prompt: str
    files: list[str]
    undone: bool
    files_undone: bool
    skipped: list[str] = Field(description="Changed paths whose bytes were not kept, and why.")


class TurnsOut(BaseModel):
    """``GET /v1/sessions/{id}/turns``, as ``hearth rewind ID --list --json`` prints it."""

    session_id: str
    turns: list[TurnOut]


class TeamQuestionOut(BaseModel):
    id: str
    text: str
    choices: list[str]
    default: str


class TeamReviewOut(BaseModel):
    """The reviewer's last look at a step: PASS or FAIL, its notes, which round (0: the
    first look), and the reviewer's own session (its messages)."""

    verdict: str
    notes: str
    round: int
    session: str | None = None


class TeamStepOut(BaseModel):
    """One line of the board: a step, its specialist and where it stands."""

    model_config = ConfigDict(extra="allow")
    id: str
    title: str
    owner: str
    depends_on: list[str]
    status: str
    session: str | None = None
    started: float | None = None
    ended: float | None = None
    summary: str | None = None
    error: str | None = None
    review: TeamReviewOut | None = None


class TeamOut(BaseModel):
    """``GET /v1/tasks/{id}/team``: a team task's phase (start, questions, plan, running,
    done, failed), its questions and answers, its plan (Markdown), board and report."""

    session_id: str
    phase: str
    questions: list[TeamQuestionOut]
    answers: dict[str, str]
    plan: str | None
    plan_version: int
    steps: list[TeamStepOut]
    report: str | None
