"""What every tool receives (:class:`ToolContext`) and returns (:class:`ToolResult`)."""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workhearth.agent.approval import Approver, Gate, Mode, Policy, deny_all
from workhearth.agent.audit import AuditLog, Decision
from workhearth.agent.changes import Change
from workhearth.agent.history import FileHistory
from workhearth.agent.safefs import SafeFS
from workhearth.errors import HearthError, UsageError
from workhearth.sessions.session import Session
from workhearth.shell.runner import end_orphans
from workhearth.shell.sandbox import Sandbox
from workhearth.shell.snapshot import Snapshot

if TYPE_CHECKING:
    from workhearth.agent.browser.session import BrowserSession
    from workhearth.agent.changes import ChangeDetector
    from workhearth.agent.loop import RunResult
    from workhearth.agent.receipts import OfficeChecker
    from workhearth.agent.tools.skills import SkillState
    from workhearth.memory.api import Memory
    from workhearth.sessions.store import SessionStore

Subagent = Callable[[str, str], "RunResult"]
"""Runs ``(prompt, parent call id)`` as a subagent in a new linked session; see tools/task.py."""

# Why: the model sees this much of an output; the rest is one read_file away.
OUTPUT_LIMIT = 8_000


@dataclass(frozen=True)
class Shown:
    """What a person watching sees of a call, beside its outcome (issue 25): one ``line``
    in place of the tool's name and subject, and a ``screenshot`` (a file name in the
    session's ``tool-outputs/``; "" for none). The model never gets it."""

    line: str
    screenshot: str = ""


@dataclass(frozen=True)
class ToolResult:
    """What the model gets back: ``content`` text, flagged ``is_error`` when the call failed.

    ``changes``: what the call changed on disk, when the context tracks it (agent/changes.py).
    ``shown``: what the surfaces show of it, when the tool said (``ToolContext.shown``).
    """

    content: str
    is_error: bool = False
    changes: tuple[Change, ...] = ()
    shown: Shown | None = None


def command_records(session: Session) -> Path:
    """Where the process groups of a session's running commands are recorded."""
    return session.folder / "running"


def end_orphaned_commands(session: Session) -> None:
    """End the commands a dead hearth left running for ``session`` (checked, never a reused PID)."""
    end_orphans(command_records(session))


class ToolError(HearthError):
    """A tool could not do what was asked; the model sees the message as an error result."""


class _Shared:
    """Per-session state every per-call copy of a context shares."""

    def __init__(self, snapshot: Snapshot | None) -> None:
        self.snapshot = snapshot
        self.memory_lock = threading.Lock()
        self.snapshot_lock = threading.Lock()


@dataclass
class ToolContext:
    """Everything a tool may use. One per session; :meth:`for_call` makes the per-call copy.

    ``snapshot`` is the shell captured at session start (None: captured on the
    first ``shell`` call from ``env``). ``sandbox`` confines shell commands in
    quest mode. ``gate`` holds the session's approvals ("always" answers), and
    is built from ``mode``, ``policy`` and ``approver`` when not given.
    ``subagent`` is filled by the runner; without it the ``task`` tool is not offered.
    """

    session: Session
    fs: SafeFS
    mode: Mode = "agent"
    memory: Memory | None = None
    sessions: SessionStore | None = None
    approver: Approver = deny_all
    audit: AuditLog | None = None
    policy: Policy = field(default_factory=Policy)
    snapshot: Snapshot | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    sandbox: Sandbox | None = None
    shell_timeout: float = 120.0
    deadline: float | None = None  # time.monotonic() by which a quest must stop
    call_id: str = ""
    history: FileHistory | None = None
    gate: Gate | None = None
    output_limit: int = OUTPUT_LIMIT
    subagent: Subagent | None = field(default=None, repr=False)
    shared: _Shared | None = field(default=None, repr=False)
    skills: SkillState | None = field(default=None, repr=False)  # None: no skills offered
    # Why: a tool that asks the user itself (read_file on a credential store) records
    # the answer here, so the audit line says what was decided, not "allowed-by-mode".
    decided: Decision | None = field(default=None, repr=False)
    # Why (issue 25): arguments of this call the audit must not keep (a secret the model
    # put in a password field), named by the tool while it runs.
    masked: tuple[str, ...] = field(default=(), repr=False)
    # Why (issue 18): what each call with side effects changed on disk; None: not tracked.
    changes: ChangeDetector | None = field(default=None, repr=False)
    # Why (issue 21): office files a call produced are checked before the model hears back.
    office: OfficeChecker | None = field(default=None, repr=False)
    # Why (issue 25): the session's browser, when one was found; None: no browser tools.
    browser: BrowserSession | None = field(default=None, repr=False)
    # Why (issue 25): what a person sees of this call, set by the tool while it runs
    # (agent/browser/view.py); the registry puts it in the result.
    shown: Shown | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.history is None:
            self.history = FileHistory(self.session)
        if self.gate is None:
            self.gate = Gate(self.mode, self.policy, self.approver)
        if self.shared is None:
            self.shared = _Shared(self.snapshot)
            # Why here: the session's tools are about to run again (a run, a resume, a
            # web task); a command that a killed hearth left running must end first.
            end_orphaned_commands(self.session)

    def for_call(self, call_id: str) -> ToolContext:
        """The same context for one tool call (history, gate and snapshot stay shared)."""
        return dataclasses.replace(self, call_id=call_id, decided=None, masked=(), shown=None)

    @property
    def workspace(self) -> Path:
        return self.fs.roots[0].path

    def read_fs(self, path: str | Path) -> SafeFS:
        """Where a READ of ``path`` goes: a skill folder's reader, else the authorized folders.

        Why: skill folders are read-only additions; writes always go through ``fs``.
        """
        reader = self.skills.reader_for(path) if self.skills is not None else None
        return reader or self.fs

    def show(self, path: str | Path) -> str:
        """A path as the model should see it: relative to the workspace when inside it."""
        full = Path(self.read_fs(path).display(path))
        try:
            return str(full.relative_to(self.workspace)) or "."
        except ValueError:
            return str(full)

    def output_id(self) -> str:
        """The call id, or a fresh one when the provider's id cannot name a file."""
        try:
            path = self.session.tool_output_path(self.call_id)
        except UsageError:
            return "call-" + secrets.token_hex(6)
        # Why: some servers reuse ids like call_0 every turn; never overwrite an earlier output.
        n = 1
        candidate = self.call_id
        while path.exists():
            n += 1
            candidate = f"{self.call_id}-{n}"
            path = self.session.tool_output_path(candidate)
        return candidate


def bound(ctx: ToolContext, text: str, limit: int | None = None) -> str:
    """``text`` if short; else its head and tail, the whole saved in the session's tool outputs."""
    limit = limit or ctx.output_limit
    if len(text) <= limit:
        return text
    path = ctx.session.write_tool_output(ctx.output_id(), text)
    half = limit // 2
    head, tail = text[:half], text[-half:]
    cut = head.rfind("\n")
    if cut > half // 2:
        head = head[: cut + 1]
    cut = tail.find("\n")
    if 0 <= cut < half // 2:
        tail = tail[cut + 1 :]
    omitted = len(text) - len(head) - len(tail)
    note = (
        f"\n[… {omitted} characters omitted. The full output ({len(text)} characters) is in "
        f"{path}; read it with read_file and offset/limit …]\n"
    )
    return head + note + tail
