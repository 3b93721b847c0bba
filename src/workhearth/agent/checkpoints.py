"""Checkpoints: what each turn changed on disk, with the bytes to undo it (issue 22).

A stat walk after a shell command says *that* ``data.csv`` changed; its old bytes
are gone by then. So hearth keeps a baseline: the content of every file in the
authorized folders, captured once per workspace into ``checkpoints-store/`` (DESIGN
§2: content-addressed, zstd-compressed, shared by the workspace's sessions) and
kept current by the change detector's walks (agent/changes.py). After each call
with side effects, the files it changed are read and stored; the call's line in
``sessions/<id>/checkpoints/turn-<seq>.jsonl`` (``seq``: the seq of the user's
prompt that started the turn) records each changed path's state before and after.
A rewind (tasks/rewind.py) puts the "before" of the earliest change back.

Rules:

* The baseline index (``index.msgpack``: each path's stat and content hash) makes
  the capture incremental across runs: a file whose stat did not change is not read
  again. A stale index only costs reading again; rewind never trusts it, only the
  turn manifests.
* A walk at a new turn's first call takes changes made between turns (by the user,
  another program) into the baseline without charging them to the task.
* Never hard links: the store holds copies (a user's in-place write would change a
  linked copy too). Files over ``max_bytes`` and everything under ``.git/`` are not
  kept; the manifest says so (``skipped``) and a rewind names them.
* An encrypted session keeps its index and manifests sealed in its own folder and its
  contents sealed under names keyed by the session key (no plaintext, no bare hashes).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson
import zstandard

from workhearth.agent.safefs import SafeFS
from workhearth.errors import CorruptDataError, HearthError, NotFoundError
from workhearth.fsutil import append_line, atomic_write, fsync_dir, make_private_dir, syncfs
from workhearth.sessions.crypto import SessionCipher

if TYPE_CHECKING:
    from workhearth.sessions.session import Session
    from workhearth.sessions.state import SessionState

__all__ = [
    "DEFAULT_MAX_BYTES",
    "CallRecord",
    "Capture",
    "ContentStore",
    "FileState",
    "current_turn",
    "is_prompt",
    "prompt_seqs",
    "read_records",
]

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
FOLDER = "checkpoints"  # in the session folder
STORE = "checkpoints-store"  # in the project folder
INDEX = "index.msgpack"
SEALED_INDEX = "index.bin"
_RAW, _ZSTD = b"r", b"z"
_TOUCH_EVERY = 86_400.0
# Why: past this many new objects one filesystem sync is cheaper than an fsync each.
_FSYNC_EACH = 64

Stat = tuple[str, int, int, int, int]  # as agent/changes.py: kind, size, mtime_ns, inode, mode


@dataclass(frozen=True, slots=True)
class FileState:
    """What a path held: a file (its content's sha256, or why it was not kept), a folder,
    or a link (its text)."""

    kind: str  # "file" | "dir" | "symlink" | "other"
    mode: int
    size: int = 0
    sha: str | None = None
    link: str | None = None
    skipped: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "mode": self.mode}
        if self.kind == "file":
            out["size"] = self.size
        for key in ("sha", "link", "skipped"):
            if (value := getattr(self, key)) is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: object) -> FileState | None:
        if not isinstance(data, dict):
            return None
        return cls(
            kind=str(data.get("kind", "file")),
            mode=int(data.get("mode", 0o644)),
            size=int(data.get("size", 0)),
            sha=data.get("sha"),
            link=data.get("link"),
            skipped=data.get("skipped"),
        )

    def same(self, other: FileState | None) -> bool:
        """Whether ``other`` holds the same thing (a folder's time and size never count)."""
        if other is None or other.kind != self.kind or other.mode != self.mode:
            return False
        if self.kind == "file":
            if self.sha is None or other.sha is None:
                return self.size == other.size and self.sha == other.sha
            return self.sha == other.sha
        return self.link == other.link


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------ the store
class ContentStore:
    """``checkpoints-store/objects/``: file contents by sha256, each written once.

    An object is one byte (``z`` zstd, ``r`` raw when compressing does not pay) and
    the payload; in an encrypted session it is sealed and named by the session's
    keyed hash. Objects are written by temp file and rename; :meth:`flush` makes the
    new ones durable before a manifest line names them.
    """

    def __init__(self, folder: Path, cipher: SessionCipher | None = None) -> None:
        self.folder = folder
        self.cipher = cipher
        self._pending: list[Path] = []
        self._compressor = zstandard.ZstdCompressor(level=3)

    def path(self, digest: str) -> Path:
        name = digest if self.cipher is None else self.cipher.keyed_name(digest)
        return self.folder / "objects" / name[:2] / name[2:]

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

    def touch(self, digest: str) -> bool:
        """Mark kept content as still in use (retention removes what is not); False when
        it is no longer kept."""
        try:
            os.utime(self.path(digest))
        except FileNotFoundError:
            return False
        return True

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Keep ``data``; its sha256. Already kept content is not written again."""
        digest = digest or sha256(data)
        path = self.path(digest)
        if self.touch(digest):
            return digest
        packed = self._compressor.compress(data)
        body = _ZSTD + packed if len(packed) < len(data) else _RAW + data
        if self.cipher is not None:
            body = self.cipher.seal_blob("checkpoint", body)
        if not path.parent.is_dir():
            make_private_dir(path.parent)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
        self._pending.append(path)
        return digest

    def get(self, digest: str) -> bytes:
        """The content whose sha256 is ``digest``; NotFoundError when it is not kept
        (expired, or never captured)."""
        try:
            body = self.path(digest).read_bytes()
        except FileNotFoundError:
            raise NotFoundError(f"content {digest[:12]} is no longer kept") from None
        if self.cipher is not None:
            body = self.cipher.open_blob("checkpoint", body)
        kind, payload = body[:1], body[1:]
        try:
            data = zstandard.ZstdDecompressor().decompress(payload) if kind == _ZSTD else payload
        except zstandard.ZstdError:
            data = b""
        if sha256(data) != digest:
            raise CorruptDataError(f"checkpoint content {digest[:12]} is damaged")
        return data

    def flush(self) -> None:
        """Make every object written since the last flush durable."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        if len(pending) > _FSYNC_EACH and syncfs(self.folder):
            return
        for path in pending:
            with contextlib.suppress(FileNotFoundError):
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
        for parent in {p.parent for p in pending}:
            fsync_dir(parent)


# ------------------------------------------------------------------ turns
def is_prompt(message: Mapping[str, Any]) -> bool:
    """A user's prompt: a user message of text, not tool results or a summary."""
    if message.get("role") != "user":
        return False
    mid = str(message.get("id") or "")
    if mid.startswith(("compact-", "rewind-")):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and all(
        isinstance(b, dict) and b.get("type") in ("text", "image") for b in content
    )


def prompt_seqs(state: SessionState) -> list[int]:
    """The seqs of the user's prompts in the rebuilt conversation: its turns, in order."""
    return [seq for m, seq in zip(state.messages, state.seqs, strict=True) if is_prompt(m)]


def current_turn(session: Session) -> int | None:
    """The seq of the prompt that started the session's current turn."""
    state = session.load()
    for message, seq in zip(reversed(state.messages), reversed(state.seqs), strict=True):
        if is_prompt(message):
            return seq
    return None


# ------------------------------------------------------------------ manifests
@dataclass(frozen=True)
class CallRecord:
    """One call's line in a turn manifest: what each path held before and after it."""

    turn: int  # the seq of the turn's prompt
    call_id: str
    tool: str
    time: float
    changes: tuple[tuple[str, FileState | None, FileState | None], ...]
    # Why checkpoints stopped at this call (the turn's later changes were not kept).
    stopped: str | None = None


def _manifest_label(turn: int) -> str:
    return f"checkpoint-manifest:{turn}"


def write_record(session: Session, record: CallRecord) -> None:
    folder = session.folder / FOLDER
    make_private_dir(folder)
    line: dict[str, Any] = {
        "call": record.call_id,
        "tool": record.tool,
        "t": record.time,
        "changes": [
            {
                "path": path,
                "before": None if before is None else before.as_json(),
                "after": None if after is None else after.as_json(),
            }
            for path, before, after in record.changes
        ],
    }
    if record.stopped:
        line["stopped"] = record.stopped
    raw = orjson.dumps(line)
    cipher = session.cipher
    if cipher is not None:
        sealed = cipher.seal_blob(_manifest_label(record.turn), raw)
        raw = orjson.dumps({"sealed": base64.b64encode(sealed).decode("ascii")})
    append_line(folder / f"turn-{record.turn}.jsonl", raw + b"\n")


def read_records(session: Session) -> list[CallRecord]:
    """Every call's record of the session, oldest first (damaged lines skipped)."""
    folder = session.folder / FOLDER
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    cipher = session.cipher
    out: list[CallRecord] = []
    for name in names:
        if not (name.startswith("turn-") and name.endswith(".jsonl")):
            continue
        try:
            turn = int(name[5:-6])
            raw = (folder / name).read_bytes()
        except (ValueError, OSError):
            continue
        for text in raw.splitlines():
            record = _parse_line(text, turn, cipher)
            if record is not None:
                out.append(record)
    out.sort(key=lambda r: r.time)
    return out


def _parse_line(text: bytes, turn: int, cipher: SessionCipher | None) -> CallRecord | None:
    try:
        line = orjson.loads(text)
        if "sealed" in line:
            if cipher is None:
                return None
            line = orjson.loads(
                cipher.open_blob(_manifest_label(turn), base64.b64decode(line["sealed"]))
            )
        changes = tuple(
            (
                str(c["path"]),
                FileState.from_json(c.get("before")),
                FileState.from_json(c.get("after")),
            )
            for c in line["changes"]
        )
        stopped = line.get("stopped")
        return CallRecord(
            turn,
            str(line["call"]),
            str(line["tool"]),
            float(line["t"]),
            changes,
            str(stopped) if stopped else None,
        )
    except (ValueError, TypeError, KeyError, CorruptDataError):
        return None


# ------------------------------------------------------------------ capture
class _Index(msgspec.Struct, array_like=True):
    stat: tuple[str, int, int, int, int]
    state: tuple[str, int, int, str | None, str | None, str | None]
    touched: float = 0.0  # when its content was last marked in use (retention)


def _pack(state: FileState) -> tuple[str, int, int, str | None, str | None, str | None]:
    return (state.kind, state.mode, state.size, state.sha, state.link, state.skipped)


def _unpack(t: tuple[str, int, int, str | None, str | None, str | None]) -> FileState:
    return FileState(*t)


def skip_reason(path: str, kind: str, size: int, max_bytes: int) -> str | None:
    """Why a path's content is not kept, if it is not."""
    if ".git" in path.split("/"):
        return "git internals"
    if kind == "file" and size > max_bytes:
        return f"larger than {max_bytes // (1024 * 1024)} MB"
    if kind == "other":
        return "not a regular file"
    return None


class Capture:
    """The content of the authorized folders as the change detector last saw them."""

    def __init__(
        self,
        session: Session,
        fs: SafeFS,
        store: ContentStore,
        *,
        index_path: Path,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_total: int | None = None,
    ) -> None:
        self.session = session
        self.max_total = max_total
        self.fs = fs
        self.store = store
        self.index_path = index_path
        self.max_bytes = max_bytes
        self.known: dict[str, tuple[Stat, FileState]] = {}
        self._touched: dict[str, float] = {}
        self.turn: int | None = None
        self._dirty = False
        self._saved_at = 0.0

    @classmethod
    def for_session(
        cls,
        session: Session,
        fs: SafeFS,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_total: int | None = None,
    ) -> Capture:
        """Capture into the store shared by the workspace (sealed ones for an encrypted
        session, with the index in its own folder)."""
        project = session.folder.parent.parent
        cipher = session.cipher
        store = ContentStore(project / STORE, cipher)
        if cipher is None:
            index = project / STORE / INDEX
        else:
            index = session.folder / FOLDER / SEALED_INDEX
        return cls(session, fs, store, index_path=index, max_bytes=max_bytes, max_total=max_total)

    # ------------------------------------------------------------ the index
    def _load_index(self) -> dict[str, _Index]:
        try:
            raw = self.index_path.read_bytes()
            cipher = self.store.cipher
            if cipher is not None:
                raw = cipher.open_blob("checkpoint-index", raw)
            return msgspec.msgpack.decode(raw, type=dict[str, _Index])
        except (OSError, msgspec.DecodeError, msgspec.ValidationError, CorruptDataError):
            return {}

    def save_index(self, force: bool = False) -> None:
        """Keep the index for the next run (at most every few seconds unless ``force``)."""
        if not self._dirty or (not force and time.monotonic() - self._saved_at < 5.0):
            return
        touched = self._touched
        data = msgspec.msgpack.encode(
            {
                path: _Index(st, _pack(state), touched.get(path, 0.0))
                for path, (st, state) in self.known.items()
            }
        )
        cipher = self.store.cipher
        if cipher is not None:
            data = cipher.seal_blob("checkpoint-index", data)
        try:
            make_private_dir(self.index_path.parent)
            atomic_write(self.index_path, data)
        except OSError:
            return  # Why: the index only saves reading again; a full disk must not stop a call
        self._dirty = False
        self._saved_at = time.monotonic()

    # ------------------------------------------------------------ reading a path
    def _state(self, path: str, st: Stat) -> FileState:
        kind, size, _mtime, _inode, mode = st
        reason = skip_reason(path, kind, size, self.max_bytes)
        if reason is not None:
            return FileState(kind, mode, size, skipped=reason)
        if kind == "dir":
            return FileState("dir", mode)
        if kind == "symlink":
            try:
                return FileState("symlink", mode, link=self.fs.stat(path, follow=False).link)
            except (OSError, HearthError):
                return FileState("symlink", mode, skipped="could not be read")
        try:
            data = self.fs.read_bytes(path, max_bytes=self.max_bytes)
        except (OSError, HearthError) as exc:
            reason = "could not be read" if isinstance(exc, OSError) else str(exc)
            return FileState("file", mode, size, skipped=reason[:200])
        return FileState("file", mode, len(data), sha=self.store.put(data))

    def _states(self, listing: Mapping[str, Stat], old: Mapping[str, _Index]) -> None:
        now = time.time()
        for path, st in listing.items():
            kept = old.get(path)
            if kept is not None and tuple(kept.stat) == st:
                state = _unpack(kept.state)
                # Why once a day: retention keeps what was used within its days (>= 1), and
                # marking 10,000 contents at every run's first call cost half a second.
                if state.sha is None or now - kept.touched < _TOUCH_EVERY:
                    self.known[path] = (st, state)
                    self._touched[path] = kept.touched
                    continue
                if self.store.touch(state.sha):
                    self.known[path] = (st, state)
                    self._touched[path] = now
                    self._dirty = True
                    continue
            self.known[path] = (st, self._state(path, st))
            self._touched[path] = now
            self._dirty = True

    # ------------------------------------------------------------ the detector's hooks
    def start(self, listing: Mapping[str, Stat]) -> None:
        """The first walk: the baseline, read only where the index is out of date."""
        if self.max_total is not None:
            total = sum(st[1] for st in listing.values() if st[0] == "file")
            if total > self.max_total:
                raise HearthError(
                    f"the authorized folders hold {total // 2**20:,} MB, over "
                    f"[checkpoints] max_total_mb ({self.max_total // 2**20:,})"
                )
        self.known = {}
        old = self._load_index()
        self._states(listing, old)
        if len(self.known) != len(old):
            self._dirty = True
        self.store.flush()
        self.save_index(force=True)

    def resync(self, listing: Mapping[str, Stat]) -> None:
        """A walk at a new turn: changes made since the last one join the baseline."""
        old = {
            path: _Index(st, _pack(state), self._touched.get(path, 0.0))
            for path, (st, state) in self.known.items()
        }
        self.known = {}
        self._states(listing, old)
        if len(listing) != len(old):
            self._dirty = True
        self.store.flush()

    def _change(
        self, path: str, st: Stat | None
    ) -> tuple[str, FileState | None, FileState | None] | None:
        """Take ``path``'s new stat into the baseline; its change, if it is one."""
        before = self.known.get(path)
        if before is not None and st is not None and st[0] == before[0][0] == "dir":
            if st[4] == before[0][4]:
                self.known[path] = (st, before[1])  # a folder's time moved: not a change
                return None
        state = None if st is None else self._state(path, st)
        if state is None:
            self.known.pop(path, None)
        else:
            assert st is not None
            self.known[path] = (st, state)
        if before is not None and state is not None and before[1].same(state):
            return None  # touched, same bytes
        if ".git" in path.split("/"):
            return None
        return (path, None if before is None else before[1], state)

    def after_call(self, after: Mapping[str, Stat], tool: str, call_id: str) -> None:
        """Record what the call changed (paths whose stat differs from the last walk)."""
        known = self.known
        # Why compare first: sorting 10,000 paths on every call cost more than the rest.
        moved = [p for p, st in after.items() if (k := known.get(p)) is None or k[0] != st]
        moved += list(known.keys() - after.keys())
        changes: list[tuple[str, FileState | None, FileState | None]] = []
        for path in sorted(moved, key=lambda p: p.split("/")):
            change = self._change(path, after.get(path))
            if change is not None:
                changes.append(change)
        self._dirty = self._dirty or bool(moved)
        if not changes or self.turn is None:
            return
        self.store.flush()
        # Why no index save here: a stale index only costs reading again; close() saves it.
        write_record(
            self.session, CallRecord(self.turn, call_id, tool, time.time(), tuple(changes))
        )
