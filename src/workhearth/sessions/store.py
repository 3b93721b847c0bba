"""The session store: create, find, list, read and delete sessions (DESIGN §3 Lookup).

Sessions live under ``projects/<encoded-workspace>/sessions/<id>/``; ids are
unique across workspaces, so any session is found from any folder.
"""

from __future__ import annotations

import os
import re
import secrets
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from workhearth.config import Config
from workhearth.errors import CorruptDataError, EncryptionKeyError, NotFoundError, UsageError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.models.messages import Message
from workhearth.paths import HearthPaths
from workhearth.sessions.codec import SCHEMA_VERSION, NewerFormatError
from workhearth.sessions.listing import first_prompt
from workhearth.sessions.log import LogWriter, read_meta
from workhearth.sessions.meta import SessionMeta
from workhearth.sessions.session import TRANSCRIPT, Rewind, Session
from workhearth.trash import Trash

LIST_LIMIT = 30
COUNT_MIN, COUNT_MAX, COUNT_DEFAULT = 1, 30, 10
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,127}$")


def new_session_id() -> str:
    """Time-sortable and unique: ``YYYYMMDD-HHMMSS-<16 hex>``."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(8)


@dataclass
class SessionInfo:
    session_id: str
    workspace: str
    title: str | None
    messages: int | None
    created: float | None
    updated: float
    encrypted: bool
    path: str
    parent: str | None = None  # a sidechain's parent session (subagent run)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _message_view(msg: Message) -> dict[str, Any]:
    return {k: msg[k] for k in ("id", "role", "content", "model") if k in msg}


class SessionStore:
    """All sessions under one ``HEARTH_HOME``; ``workspace`` is where new ones go."""

    def __init__(
        self,
        config: Config,
        workspace: Path | str,
        *,
        rewinder: Rewind | None = None,
        project: Path | str | None = None,
    ) -> None:
        self.config = config
        self.paths: HearthPaths = config.paths
        self.workspace = str(Path(workspace).absolute())
        # Why apart from the workspace: a team specialist works in a scratch copy of the
        # project, and its sessions belong with the project's, not in a folder per copy.
        self.project = str(Path(project).absolute()) if project else self.workspace
        # Why given: rewinding touches the workspace's files, which is the task layer's
        # work; the library wires it in (app.py) so ``session.rewind(…)`` works.
        self.rewinder = rewinder

    def _session(self, folder: Path) -> Session:
        return Session(folder, self.config, rewinder=self.rewinder)

    # --------------------------------------------------------------- create
    def sessions_dir(self, workspace: str) -> Path:
        """A workspace's sessions folder, created (0700, with workspace.json) on first use."""
        project = self.paths.project(workspace)
        folder = project / "sessions"
        if not folder.is_dir():
            make_private_dir(folder)
            marker = project / "workspace.json"
            if not marker.exists():
                atomic_write(marker, orjson.dumps({"path": workspace}))
        return folder

    def create(
        self,
        *,
        model: str | None = None,
        mode: str = "agent",
        workspace: str | Path | None = None,
        encrypt: bool | None = None,
        session_id: str | None = None,
        extra_meta: dict[str, Any] | None = None,
    ) -> Session:
        """Create a session folder and write its meta line (durably, before returning)."""
        ws = str(Path(workspace).absolute()) if workspace else self.workspace
        sid = session_id or new_session_id()
        if not _ID.match(sid):
            raise UsageError(f"bad session id {sid!r}")
        folder = self.sessions_dir(self.project if ws == self.workspace else ws) / sid
        if self.find_folder(sid) is not None:
            raise UsageError(f"session {sid} already exists")
        make_private_dir(folder)
        encrypt = self.config.encryption.enabled if encrypt is None else encrypt
        encryption = None
        cipher = None
        if encrypt:
            from workhearth.sessions.crypto import SessionCipher

            cipher, encryption = SessionCipher.create(self.config.encryption, sid)
        meta = {
            "schema": SCHEMA_VERSION,
            "session_id": sid,
            "workspace": ws,
            "created": time.time(),
            "model": model,
            "mode": mode,
            "encryption": encryption,
        }
        if extra_meta:
            meta.update(extra_meta)
        with LogWriter(folder / TRANSCRIPT, sid, "always") as writer:
            writer.append("meta", meta)
        session = self._session(folder)
        session._cipher = cipher
        return session

    # ---------------------------------------------------------------- find
    def find_folder(self, session_id: str) -> Path | None:
        """The folder of the session with exactly this id, in any workspace."""
        if not _ID.match(session_id):
            return None
        for pattern in (f"*/sessions/{session_id}", f"*/*/sessions/{session_id}"):
            for folder in self.paths.projects.glob(pattern):
                if (folder / TRANSCRIPT).is_file():
                    return folder
        return None

    def open(self, session_id: str) -> Session:
        """Find a session by id (or a unique id prefix) from any workspace."""
        if not session_id or not _ID.match(session_id):
            raise NotFoundError(f"no session {session_id!r}")
        folder = self.find_folder(session_id)
        if folder is None:
            matches = [f for f in self._all_folders() if f.name.startswith(session_id)]
            if len(matches) > 1:
                raise UsageError(f"session id prefix {session_id!r} is ambiguous")
            folder = matches[0] if matches else None
        if folder is None:
            raise NotFoundError(f"no session {session_id!r}")
        return self._session(folder)

    def _all_folders(self) -> list[Path]:
        root = self.paths.projects
        if not root.is_dir():
            return []
        found = list(root.glob(f"*/sessions/*/{TRANSCRIPT}"))
        found += root.glob(f"*/*/sessions/*/{TRANSCRIPT}")
        return [p.parent for p in found]

    def last(self, workspace: str | Path | None = None) -> Session:
        """The newest session of a workspace (``--last``)."""
        ws = str(Path(workspace).absolute()) if workspace else self.workspace
        folder = self.paths.project(ws) / "sessions"
        stamped: list[tuple[float, Path]] = []
        if folder.is_dir():
            for sub in folder.iterdir():
                t = sub / TRANSCRIPT
                if t.is_file():
                    stamped.append((t.stat().st_mtime, sub))
        # Why linked ones are passed over: a subagent's or a team specialist's session
        # is part of the task that started it, which is what ``--last`` means to resume.
        for _, sub in sorted(stamped, reverse=True):
            session = self._session(sub)
            if not session.meta.parent_session:
                return session
        raise NotFoundError(f"no session in workspace {ws}")

    # ---------------------------------------------------------------- list
    def list(
        self, limit: int = LIST_LIMIT, workspace: str | Path | None = None
    ) -> list[SessionInfo]:
        """Newest sessions by update time, with title, workspace and message count."""
        folders = self._all_folders()
        if workspace is not None:
            prefix = self.paths.project(str(Path(workspace).absolute()))
            folders = [f for f in folders if f.parent.parent == prefix]
        stamped = sorted(
            ((f / TRANSCRIPT).stat().st_mtime, f) for f in folders if (f / TRANSCRIPT).exists()
        )
        out: list[SessionInfo] = []
        for mtime, folder in reversed(stamped[-limit:] if limit > 0 else stamped):
            out.append(self.info(Session(folder, self.config), mtime))
        return out

    def count(self) -> int:
        """How many sessions there are, without reading any of them."""
        return len(self._all_folders())

    def info(self, session: Session, mtime: float | None = None) -> SessionInfo:
        mtime = mtime if mtime is not None else session.transcript.stat().st_mtime
        try:
            meta = session.meta
        except CorruptDataError:
            meta = SessionMeta(session.id)
        except NewerFormatError:
            # Why listed: the user sees it is there and why it will not open.
            meta = SessionMeta.from_event(read_meta(session.transcript), session.id)
        title: str | None = None
        count: int | None = None
        updated = mtime
        try:
            head = session.summary()
            title, count = head.title, head.messages
            updated = head.updated or mtime
            # Why: like Claude Code's /resume, a session with no title shows its first prompt.
            title = title or first_prompt(session)
            source_time = meta.source_updated
            if source_time is not None and abs(mtime - source_time) < 1:
                updated = source_time  # imported and not continued since: the source's own time
        except EncryptionKeyError:
            title = "(encrypted)"
        except CorruptDataError:
            title = "(damaged)"
        except NewerFormatError:
            title = "(written by a newer hearth)"
        return SessionInfo(
            session_id=session.id,
            workspace=meta.workspace,
            title=title,
            messages=count,
            created=meta.created,
            updated=updated,
            encrypted=meta.encrypted,
            path=str(session.folder),
            parent=meta.parent_session,
        )

    # --------------------------------------------------------------- lookup
    def read_transcript(
        self, session_id: str, count: int = COUNT_DEFAULT, before: int | None = None
    ) -> Transcript:
        """The last ``count`` messages (clamped to 1..30); with ``before``, the last
        ``count`` of the first ``before`` messages (a page showing a run's events after them)."""
        count = max(COUNT_MIN, min(COUNT_MAX, int(count)))
        session = self.open(session_id)
        messages = session.load().messages
        upto = messages if before is None else messages[: max(0, int(before))]
        tail = upto[-count:] if upto else []
        return Transcript(
            session_id=session.id,
            total=len(messages),
            returned=len(tail),
            messages=[_message_view(m) for m in tail],
            warnings=session.warnings(),
        )

    def latest_message(self, session_id: str) -> LatestMessage:
        session = self.open(session_id)
        messages = session.load().messages
        return LatestMessage(
            session_id=session.id,
            total=len(messages),
            message=_message_view(messages[-1]) if messages else None,
            warnings=session.warnings(),
        )

    def files_changed(self, session_id: str) -> FilesChanged:
        """What the session's tool calls changed on disk, as its checkpoint recorded it."""
        session = self.open(session_id)
        business = session.load().business
        return FilesChanged(
            session_id=session.id,
            changes=[c for c in business.changes if _is_change(c)],
            omitted=business.changes_omitted or 0,
            untracked=business.changes_untracked,
        )

    def verify(self, session_id: str) -> VerifyReport:
        """Read the whole log (no snapshot) and report its damage."""
        session = self.open(session_id)
        state = session.load(use_snapshot=False, save_snapshot=False)
        damage = session.damage
        return VerifyReport(
            session_id=session.id,
            ok=sum(damage.values()) == 0 and not session.header_rebuilt,
            header_rebuilt=session.header_rebuilt,
            events=state.events,
            messages=len(state.messages),
            last_seq=state.last_seq,
            damage=damage,
            encrypted=session.encrypted,
            private=_private(session.folder),
        )

    def delete(self, session_id: str) -> DeletedSession:
        """Move a session folder to the trash (restorable with ``hearth trash restore``)."""
        session = self.open(session_id)
        item = Trash(self.paths.trash).put(
            session.folder, reason="sessions delete", session=session.id
        )
        return DeletedSession(session_id=session.id, trash_id=item.id)


@dataclass(frozen=True)
class Transcript:
    """``read_transcript``: the last messages; ``warnings`` only when the log is damaged."""

    session_id: str
    total: int
    returned: int
    messages: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return _without_empty_warnings(asdict(self))


@dataclass(frozen=True)
class LatestMessage:
    """``latest_message``: the newest message (None for an empty session)."""

    session_id: str
    total: int
    message: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return _without_empty_warnings(asdict(self))


@dataclass(frozen=True)
class FilesChanged:
    """``files_changed``: each change is ``{path, kind, tool, call_id[, entries]}``
    (agent/changes.py); ``omitted`` counts those past the recorded cap; ``untracked``
    says why tracking stopped, when it did."""

    session_id: str
    changes: list[dict[str, Any]]
    omitted: int = 0
    untracked: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _is_change(item: Any) -> bool:
    """A well-formed change record (a damaged or foreign one is left out, not shown wrong)."""
    return (
        isinstance(item, dict)
        and all(isinstance(item.get(k), str) for k in ("path", "tool", "call_id"))
        and item.get("kind") in ("created", "modified", "deleted")
        and (item.get("entries") is None or type(item.get("entries")) is int)
    )


@dataclass(frozen=True)
class VerifyReport:
    """``verify``: what a full read of the log found (``damage`` counts by kind)."""

    session_id: str
    ok: bool
    header_rebuilt: bool
    events: int
    messages: int
    last_seq: int
    damage: dict[str, int]
    encrypted: bool
    private: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DeletedSession:
    session_id: str
    trash_id: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _without_empty_warnings(data: dict[str, Any]) -> dict[str, Any]:
    """``warnings`` only when there is damage, so healthy answers keep their shape."""
    if not data["warnings"]:
        del data["warnings"]
    return data


def _private(folder: Path) -> bool:
    """Folder 0700 and every file inside 0600 (or stricter)."""
    if os.stat(folder).st_mode & 0o077:
        return False
    return all(not (p.stat().st_mode & 0o077) for p in folder.rglob("*") if not p.is_symlink())
