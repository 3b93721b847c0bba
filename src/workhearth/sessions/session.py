"""One session on disk: its folder, its log writer, its folded state."""

from __future__ import annotations

import contextlib
import gc
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import orjson

from workhearth.config import Config
from workhearth.errors import CorruptDataError, UsageError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.models.adapters import to_anthropic, to_openai
from workhearth.models.messages import Message
from workhearth.sessions.codec import check_schema
from workhearth.sessions.header import rebuild_meta
from workhearth.sessions.log import LogWriter, Opener, ScanResult, read_meta, scan
from workhearth.sessions.meta import SessionMeta
from workhearth.sessions.reconstruct import Interruption, repair
from workhearth.sessions.snapshot import (
    SessionSummary,
    load_snapshot,
    read_summary,
    write_snapshot,
)
from workhearth.sessions.state import BusinessState, SessionState

if TYPE_CHECKING:
    from workhearth.sessions.crypto import SessionCipher

TRANSCRIPT = "transcript.jsonl"
SNAPSHOT = "snapshot.zst"
TOOL_OUTPUTS = "tool-outputs"
RECEIPTS = "receipts"  # DESIGN §2: receipts/<sha256>.json, `hearth check` of produced files
_RECEIPT_NAME = re.compile(r"^[0-9a-f]{64}(\.json|-[0-9]{1,3}\.png)$")
# Why: rewrite the snapshot once the unsnapshotted tail is big enough to matter.
SNAPSHOT_TAIL_BYTES = 1 << 20
_CALL_ID = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
Format = Literal["anthropic", "openai"]


@dataclass(frozen=True)
class RewindRequest:
    """What :meth:`Session.rewind` was asked (REST and MCP bodies carry the same)."""

    to: int | None
    dry_run: bool = False
    files_only: bool = False
    conversation_only: bool = False
    force: bool = False
    undo: bool = False


Rewind = Callable[["Session", RewindRequest], dict[str, Any]]


class Session:
    """A session folder. Reading needs no lock; the first append takes the writer lock."""

    def __init__(
        self,
        folder: Path,
        config: Config,
        meta: SessionMeta | None = None,
        *,
        rewinder: Rewind | None = None,
    ) -> None:
        self.folder = folder
        self._rewinder = rewinder
        self.id = folder.name
        self.config = config
        self.transcript = folder / TRANSCRIPT
        self._meta = meta
        self._cipher: SessionCipher | None = None
        self._writer: LogWriter | None = None
        self._state: SessionState | None = None
        self._scan = ScanResult()

    # ----------------------------------------------------------------- meta
    @property
    def meta(self) -> SessionMeta:
        if self._meta is None:
            try:
                event = read_meta(self.transcript)
                check_schema(event, self.id)
            except CorruptDataError:
                # Why: one damaged byte in the header must not hide every good line
                # after it; rebuild what it held from what can be checked.
                event, self._cipher = rebuild_meta(self.folder, self.transcript, self.config)
            self._meta = SessionMeta.from_event(event, self.id)
        return self._meta

    @property
    def header_rebuilt(self) -> bool:
        """True when the meta line is damaged and was rebuilt (see :mod:`.header`)."""
        return self.meta.rebuilt

    @property
    def encrypted(self) -> bool:
        return self.meta.encrypted

    @property
    def workspace(self) -> str:
        return self.meta.workspace

    @property
    def cipher(self) -> SessionCipher | None:
        encrypted = self.encrypted  # rebuilding a damaged header may set the cipher
        if self._cipher is None and encrypted:
            from workhearth.sessions.crypto import SessionCipher

            self._cipher = SessionCipher.open(self.config.encryption, self.id, self.meta.encryption)
        return self._cipher

    def _opener(self) -> Opener | None:
        cipher = self.cipher
        if cipher is None:
            return None
        sid = self.id

        def open_event(seq: int, envelope: dict[str, Any]) -> dict[str, Any] | None:
            plain = cipher.open_event(seq, envelope)
            if plain is None:
                return None
            try:
                inner = orjson.loads(plain)
            except orjson.JSONDecodeError:
                return None
            if not isinstance(inner, dict):
                return None
            inner["seq"] = seq
            inner["sid"] = sid
            return inner

        return open_event

    # ----------------------------------------------------------------- load
    def load(self, use_snapshot: bool = True, save_snapshot: bool = True) -> SessionState:
        """Fold the transcript into state: snapshot plus tail, or the whole log."""
        if self._state is not None and self._writer is not None:
            return self._state  # Why first: the cached path allocates nothing, so no GC pause
        with paused_gc():
            return self._load(use_snapshot, save_snapshot)

    def _load(self, use_snapshot: bool, save_snapshot: bool) -> SessionState:
        cipher = self.cipher  # raises a clear error on a wrong key before any parsing
        open_blob = cipher.open_blob if cipher else None
        snap = None
        if use_snapshot:
            snap = load_snapshot(self.folder / SNAPSHOT, self.transcript, self.id, open_blob)
        result = ScanResult()
        if snap is not None:
            state = snap.state
            start = snap.end_offset
            result.end_offset = snap.end_offset
            result.last_seq = state.last_seq
            for key, value in snap.damage.items():
                if hasattr(result.damage, key):
                    setattr(result.damage, key, value)
        else:
            state = SessionState()
            start = 0
        for event in scan(
            self.transcript,
            self.id,
            start=start,
            max_seq=state.last_seq,
            opener=self._opener(),
            result=result,
        ):
            state.apply(event)
        if self.header_rebuilt:
            snap_meta = state.meta
            if snap_meta.get("sid") == self.id and not snap_meta.get("rebuilt"):
                # Why: a snapshot written before the damage holds the header itself,
                # checked by its own checksum: better than what was salvaged.
                self._meta = SessionMeta.from_event({**snap_meta, "rebuilt": True}, self.id)
            state.meta = self.meta.event
        elif not state.meta:
            raise CorruptDataError(f"session {self.id}: the meta line is unreadable")
        self._state = state
        self._scan = result
        tail = result.end_offset - start
        if save_snapshot and result.last_crc and tail >= SNAPSHOT_TAIL_BYTES:
            self._save_snapshot()
        return state

    def _save_snapshot(self) -> None:
        assert self._state is not None
        if not self._scan.last_crc:
            return
        cipher = self.cipher
        try:
            write_snapshot(
                self.folder / SNAPSHOT,
                self._state,
                self._scan.end_offset,
                self._scan.last_crc,
                self._scan.damage.as_dict(),
                cipher.seal_blob if cipher else None,
            )
        except OSError:
            # Why: the snapshot is only a cache; reading must work on a read-only or
            # full disk (EROFS, ENOSPC, EACCES, EDQUOT), so a cache that cannot be
            # written is skipped and rebuilt by a later load.
            pass

    def summary(self) -> SessionSummary:
        """Title, message count and update time, from the snapshot header when fresh."""
        cipher = self.cipher if self.encrypted else None
        head = read_summary(
            self.folder / SNAPSHOT, self.transcript, self.id, cipher.open_blob if cipher else None
        )
        if head is None:
            state = self.load()
            head = SessionSummary(state.title, len(state.messages), state.updated)
        return head

    @property
    def damage(self) -> dict[str, int]:
        return self._scan.damage.as_dict()

    def warnings(self) -> list[str]:
        """What a reader should be told about damage found by the last load."""
        out: list[str] = []
        if self.header_rebuilt:
            out.append(
                f"session {self.id}: the transcript header (meta line) is damaged; "
                "rebuilt from the folder name, the other lines and the snapshot"
            )
        skipped = self._scan.damage.total
        if skipped:
            out.append(
                f"session {self.id}: {skipped} damaged line(s) skipped "
                f"(details: hearth sessions verify {self.id})"
            )
        return out

    def messages(self) -> list[Message]:
        return list(self.load().messages)

    # ---------------------------------------------------------------- write
    def writer(self) -> LogWriter:
        if self._writer is None:
            state = self.load()
            cipher = self.cipher
            self._writer = LogWriter(
                self.transcript,
                self.id,
                self.config.fsync,
                sealer=cipher.seal_event if cipher else None,
                known_seq=state.last_seq,
            )
        return self._writer

    def append(self, event_type: str, payload: dict[str, Any]) -> int:
        """Append one event (written before this returns) and fold it into the state."""
        if event_type == "meta":
            raise UsageError("a session has exactly one meta event")
        writer = self.writer()
        seq = writer.append(event_type, payload)
        assert self._state is not None
        event = {"seq": seq, "sid": self.id, "type": event_type, **payload}
        self._state.apply(event)
        return seq

    def append_message(self, message: Message) -> int:
        return self.append("message", {"message": message})

    def checkpoint(self, state: BusinessState | Mapping[str, Any]) -> int:
        """Record the business state (a :class:`BusinessState`, or its JSON object)."""
        if isinstance(state, BusinessState):
            return self.append("checkpoint", {"state": state.as_event()})
        return self.append("checkpoint", {"state": dict(state)})

    def turn_end(self) -> None:
        if self._writer is not None:
            self._writer.turn_end()

    def before_side_effect(self) -> None:
        if self._writer is not None:
            self._writer.before_side_effect()

    def close(self) -> None:
        if self._writer is not None:
            writer, self._writer = self._writer, None
            grew = writer.size - self._scan.end_offset
            writer.close()
            if grew >= SNAPSHOT_TAIL_BYTES:
                self._state = None
                self.load()  # refolds the tail and rewrites the snapshot

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------- tool outputs
    def tool_output_path(self, call_id: str) -> Path:
        if not _CALL_ID.match(call_id):
            raise UsageError(f"bad tool call id {call_id!r}")
        return self.folder / TOOL_OUTPUTS / f"{call_id}.txt"

    def write_tool_output(self, call_id: str, text: str) -> Path:
        path = self.tool_output_path(call_id)
        self._write_sealed(path, f"tool-output:{call_id}", text.encode("utf-8"))
        return path

    def read_tool_output(self, call_id: str) -> str:
        path = self.tool_output_path(call_id)
        return self._read_sealed(path, f"tool-output:{call_id}").decode("utf-8")

    # ------------------------------------------------------------- receipts
    def write_receipt_file(self, name: str, data: bytes) -> Path:
        """Keep a receipt's file (``<sha256>.json``, ``<sha256>-<n>.png``) under
        ``receipts/``, sealed like the transcript when the session is encrypted."""
        path = self._receipt_path(name)
        self._write_sealed(path, f"receipt:{name}", data)
        return path

    def read_receipt_file(self, name: str) -> bytes:
        return self._read_sealed(self._receipt_path(name), f"receipt:{name}")

    def write_file(self, name: str, data: bytes, *, durable: bool = True) -> Path:
        """Keep ``data`` at ``name`` (a path inside the session folder) atomically, sealed
        like the transcript when the session is encrypted (rewind journals, issue 22);
        ``durable=False``: whole after a kill, not promised after a power loss."""
        path = self._inside(name)
        self._write_sealed(path, f"file:{name}", data, durable=durable)
        return path

    def read_file(self, name: str) -> bytes:
        """What :meth:`write_file` kept at ``name``."""
        return self._read_sealed(self._inside(name), f"file:{name}")

    def _inside(self, name: str) -> Path:
        parts = name.split("/")
        if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise UsageError(f"bad session file name {name!r}")
        return self.folder.joinpath(*parts)

    def rewind(
        self,
        to: int | None = None,
        *,
        dry_run: bool = False,
        files_only: bool = False,
        conversation_only: bool = False,
        force: bool = False,
        undo: bool = False,
    ) -> dict[str, Any]:
        """Undo turn ``to`` and every later one (files and conversation), or ``undo`` the last
        rewind: the plan (DESIGN §8), carried out unless ``dry_run``. Needs a session opened
        through :class:`~workhearth.Workhearth` (which knows how to touch the files)."""
        if self._rewinder is None:
            raise UsageError("rewinding needs a session opened through Workhearth(...).sessions")
        return self._rewinder(
            self,
            RewindRequest(to, dry_run, files_only, conversation_only, force, undo),
        )

    def events(self, after_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Every good event of the transcript with a seq above ``after_seq``, in order
        (opened when the session is encrypted); the fold's input, unfolded."""
        for event in scan(self.transcript, self.id, opener=self._opener()):
            if event["seq"] > after_seq:
                yield event

    def _write_sealed(self, path: Path, label: str, data: bytes, *, durable: bool = True) -> None:
        """A file of this session, sealed under ``label`` when the session is encrypted."""
        make_private_dir(path.parent)
        cipher = self.cipher
        sealed = cipher.seal_blob(label, data) if cipher is not None else data
        atomic_write(path, sealed, durable=durable)

    def _read_sealed(self, path: Path, label: str) -> bytes:
        data = path.read_bytes()
        cipher = self.cipher
        return cipher.open_blob(label, data) if cipher is not None else data

    def receipt_names(self) -> list[str]:
        """The receipts kept for this session (``<sha256>.json`` names), oldest first."""
        folder = self.folder / RECEIPTS
        try:
            found = [p for p in folder.iterdir() if _RECEIPT_NAME.match(p.name)]
        except FileNotFoundError:
            return []
        return [
            p.name for p in sorted(found, key=lambda p: p.stat().st_mtime_ns) if p.suffix == ".json"
        ]

    def _receipt_path(self, name: str) -> Path:
        if not _RECEIPT_NAME.match(name):
            raise UsageError(f"bad receipt name {name!r}")
        return self.folder / RECEIPTS / name

    # ---------------------------------------------------------------- resume
    def resume(self, format: Format = "anthropic") -> Resumed:
        """The conversation rebuilt for a provider, plus the restored business state."""
        if format not in ("anthropic", "openai"):
            raise UsageError(f"unknown format {format!r}; use openai or anthropic")
        with paused_gc():
            state = self.load()
            repaired = repair(state.messages)
            business = state.business
            if format == "openai":
                messages = to_openai(None, repaired.messages)
            else:
                messages = to_anthropic(None, repaired.messages)["messages"]
        return Resumed(
            system=business.system,
            messages=messages,
            canonical=repaired.messages,
            interruption=repaired.interruption,
            closed_tool_calls=repaired.closed_tool_calls,
            state=business,
            damage=self.damage,
        )


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic GC while building a big object graph that has no cycles.

    Why: loading a large session creates a million fresh objects; the collector's
    passes over them while they are being built cost more than the parsing and
    repair themselves. Nothing is frozen afterwards: ``gc.freeze()`` would also move
    every other object of the process into the permanent generation, garbage cycles
    included, which leaked in every load of a long-running server.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@dataclass
class Resumed:
    """What resume rebuilt: provider-ready messages and the business state to restore."""

    system: str | None
    messages: list[dict[str, Any]]
    canonical: list[Message]
    interruption: Interruption
    closed_tool_calls: list[str]
    state: BusinessState
    damage: dict[str, int]


def file_mode_ok(path: Path) -> bool:
    return (os.stat(path).st_mode & 0o077) == 0
