"""Move sessions in and out: export (JSONL, Markdown, bundle) and import (bundle, other tools).

A bundle is a zip holding ``bundle.json`` (format, session id, original workspace),
the transcript byte-for-byte (an encrypted session stays encrypted) and the tool
outputs. Importing it elsewhere rewrites only the meta line, to point at the new
workspace, so the task resumes on the other machine. A session's sidechains
(subagent runs) travel with it under ``sidechains/<id>/`` and stay linked to it.

Importing reports what it left out (``skipped``: damaged or unreadable lines, lost
history) instead of quietly importing less than there was.
"""

from __future__ import annotations

import io
import os
import time
import zipfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from workhearth.errors import HearthError, ImportFormatError, UsageError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.models.messages import Message, result_text
from workhearth.sessions.codec import decode_line, encode_line, line_ok
from workhearth.sessions.listing import parse_time
from workhearth.sessions.session import TOOL_OUTPUTS, TRANSCRIPT, Session
from workhearth.sessions.store import _ID as SESSION_ID
from workhearth.sessions.store import SessionStore

if TYPE_CHECKING:
    from workhearth.sessions.importers import ImportedSession

BUNDLE_FORMAT = "workhearth-session-bundle"
BUNDLE_VERSION = 1
EXPORT_FORMATS = ("jsonl", "markdown", "bundle")


@dataclass(frozen=True)
class ImportResult:
    """One imported session: where it went and what of the source was left out.

    Its JSON (``hearth sessions import --json``) is a contract: keep the field order.
    """

    session_id: str
    workspace: str
    path: str
    messages: int | None  # None for an encrypted bundle: not read without its key
    sidechains: list[ImportResult]  # subagent runs, linked to this session
    skipped: list[dict[str, Any]]  # {"line": n | None, "reason": …[, "file": …]}

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------- export
def export_jsonl(session: Session) -> bytes:
    """Every event, decrypted, one JSON object per line (a readable copy, not a transcript)."""
    from workhearth.sessions.log import scan

    out = io.BytesIO()
    for event in scan(session.transcript, session.id, opener=session._opener()):
        out.write(orjson.dumps(event) + b"\n")
    return out.getvalue()


def _block_markdown(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "thinking":
        return "> *thinking:* " + str(block.get("thinking", "")).replace("\n", "\n> ")
    if kind == "redacted_thinking":
        return "> *thinking (redacted)*"
    if kind == "tool_use":
        args = orjson.dumps(block.get("input", {}), option=orjson.OPT_INDENT_2).decode()
        return f"**tool call** `{block.get('name')}` (`{block.get('id')}`)\n\n```json\n{args}\n```"
    if kind == "tool_result":
        content = result_text(block.get("content") or "")
        label = "tool error" if block.get("is_error") else "tool result"
        return f"**{label}** (`{block.get('tool_use_id')}`)\n\n```\n{content}\n```"
    if kind == "image":
        return "*[image]*"
    return ""


def export_markdown(session: Session) -> bytes:
    state = session.load()
    lines = [f"# {state.title or 'Session ' + session.id}", ""]
    lines.append(f"- session: `{session.id}`")
    lines.append(f"- workspace: `{session.workspace}`")
    if session.meta.model:
        lines.append(f"- model: `{session.meta.model}`")
    lines.append("")
    for msg in state.messages:
        lines.append(f"## {msg['role']}")
        lines.append("")
        for block in msg.get("content", []):
            text = _block_markdown(block)  # type: ignore[arg-type]
            if text:
                lines.extend([text, ""])
    return "\n".join(lines).encode("utf-8")


def sidechains_of(store: SessionStore, session_id: str) -> list[Session]:
    """The sessions whose ``parent_session`` is ``session_id``, and theirs, oldest first.

    Why the meta line only: it is one line per session, so this stays cheap.
    """
    children: dict[str, list[Session]] = {}
    for folder in store._all_folders():
        side = Session(folder, store.config)
        try:
            parent = side.meta.parent_session
        except (HearthError, OSError):  # an unreadable session is nobody's sidechain here
            continue
        if isinstance(parent, str):
            children.setdefault(parent, []).append(side)
    found: list[Session] = []
    todo = [session_id]
    while todo:
        for side in sorted(children.pop(todo.pop(0), []), key=lambda s: s.id):
            found.append(side)
            todo.append(side.id)
    return found


def _write_session(zf: zipfile.ZipFile, session: Session, prefix: str) -> None:
    transcript = session.transcript.read_bytes()
    if session.header_rebuilt:
        # Why: the other machine must be able to read the header; ship the rebuilt
        # one (still marked "rebuilt") in place of the damaged line.
        transcript = encode_line(session.meta.event) + transcript.partition(b"\n")[2]
    zf.writestr(prefix + TRANSCRIPT, transcript)
    outputs = session.folder / TOOL_OUTPUTS
    if outputs.is_dir():
        for path in sorted(outputs.iterdir()):
            if path.is_file():
                zf.writestr(f"{prefix}{TOOL_OUTPUTS}/{path.name}", path.read_bytes())


def export_bundle(session: Session, sidechains: list[Session] | None = None) -> bytes:
    """A zip of the session and its ``sidechains`` (each under ``sidechains/<id>/``)."""
    session.meta  # noqa: B018 - fails early on a damaged header
    sides = sidechains or []
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        manifest: dict[str, Any] = {
            "format": BUNDLE_FORMAT,
            "version": BUNDLE_VERSION,
            "session_id": session.id,
            "workspace": session.workspace,
            "encrypted": session.encrypted,
        }
        if sides:
            manifest["sidechains"] = [s.id for s in sides]
        zf.writestr("bundle.json", orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        _write_session(zf, session, "")
        for side in sides:
            _write_session(zf, side, f"sidechains/{side.id}/")
    return buf.getvalue()


def export_session(session: Session, fmt: str, store: SessionStore | None = None) -> bytes:
    """``session`` as ``fmt``; a bundle also carries its sidechains when ``store`` is given."""
    if fmt == "jsonl":
        return export_jsonl(session)
    if fmt == "markdown":
        return export_markdown(session)
    if fmt == "bundle":
        return export_bundle(session, sidechains_of(store, session.id) if store else None)
    raise UsageError(f"unknown export format {fmt!r}; use {', '.join(EXPORT_FORMATS)}")


# ---------------------------------------------------------------- import
_DAMAGED = "checksum mismatch: the line was altered or damaged"


def is_bundle(path: Path) -> bool:
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as zf:
        return "bundle.json" in zf.namelist()


def _damaged_lines(transcript: bytes) -> list[dict[str, Any]]:
    """Each line of a bundled transcript that the reader will skip (1-based), and why.

    Why here and not from the reader's counts: the person importing is told which
    lines, and a line changed by hand fails its checksum exactly like a garbled one.
    """
    out: list[dict[str, Any]] = []
    lines = transcript.split(b"\n")
    for number, line in enumerate(lines, start=1):
        if not line.strip(b"\x00 \r\t"):
            if b"\x00" in line:
                out.append({"line": number, "reason": "zero-filled"})
            continue
        if line_ok(line):
            continue
        last = number == len(lines)  # only a file that does not end in a newline has one
        out.append(
            {"line": number, "reason": "cut short at the end of the file" if last else _DAMAGED}
        )
    return out


_OTHER_DAMAGE = (
    ("duplicate", "line(s) repeating an earlier sequence number"),
    ("foreign", "line(s) of another session"),
    ("undecodable", "line(s) that could not be decoded or decrypted"),
)


def _other_damage(session: Session) -> list[dict[str, Any]]:
    """What the reader skipped that is not a bad line: duplicates, another session's lines…"""
    damage = session.damage
    return [
        {"line": None, "reason": f"{damage[kind]} {label}"}
        for kind, label in _OTHER_DAMAGE
        if damage.get(kind)
    ]


def _bundle_entry(
    zf: zipfile.ZipFile, path: Path, sid: str, prefix: str
) -> tuple[dict[str, Any], bytes, list[str]]:
    """A bundled session's meta, its transcript after the meta line, and its tool outputs."""
    try:
        transcript = zf.read(prefix + TRANSCRIPT)
    except KeyError:
        raise ImportFormatError(f"{path}: the bundle lacks {prefix}{TRANSCRIPT}") from None
    first, _, rest = transcript.partition(b"\n")
    meta = decode_line(first) if line_ok(first) else None
    valid = bool(meta) and meta.get("type") == "meta" and meta.get("sid") == sid  # type: ignore[union-attr]
    if not valid or not SESSION_ID.match(sid):
        raise ImportFormatError(f"{path}: the bundled transcript has no valid meta line")
    folder = f"{prefix}{TOOL_OUTPUTS}/"
    outputs = [
        n for n in zf.namelist() if n.startswith(folder) and "/" not in n.removeprefix(folder)
    ]
    return meta, rest, outputs  # type: ignore[return-value]


def import_bundle(store: SessionStore, path: Path, workspace: str | None = None) -> ImportResult:
    """Unpack a bundle (and its sidechains) as sessions of ``workspace`` (default: the bundle's own)."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportFormatError(f"{path} is not a workhearth bundle ({exc})") from None
    with zf:
        if "bundle.json" not in zf.namelist():
            raise ImportFormatError(f"{path} is not a workhearth bundle: no bundle.json")
        try:
            manifest = orjson.loads(zf.read("bundle.json"))
        except orjson.JSONDecodeError:
            raise ImportFormatError(
                f"{path} is not a workhearth bundle: bundle.json is not JSON"
            ) from None
        if (
            not isinstance(manifest, dict)
            or manifest.get("format") != BUNDLE_FORMAT
            or manifest.get("version") != BUNDLE_VERSION
        ):
            raise ImportFormatError(f"{path}: unsupported bundle format or version")
        sid = str(manifest.get("session_id", ""))
        sides = manifest.get("sidechains") or []
        if not isinstance(sides, list) or not all(isinstance(s, str) for s in sides):
            raise ImportFormatError(f"{path}: bundle.json lists its sidechains wrongly")
        # Why check every entry first: a refused bundle must leave nothing half-imported.
        wanted = [(sid, ""), *((s, f"sidechains/{s}/") for s in sides)]
        entries = [(s, prefix, *_bundle_entry(zf, path, s, prefix)) for s, prefix in wanted]
        for each_id, *_ in entries:
            if store.find_folder(each_id) is not None:
                raise UsageError(
                    f"session {each_id} already exists here; delete it first to re-import"
                )
        main_meta = entries[0][2]
        ws = str(Path(workspace).absolute()) if workspace else str(main_meta.get("workspace"))
        written = [
            _unpack(store, zf, each_id, meta, rest, outputs, ws)
            for each_id, _prefix, meta, rest, outputs in entries
        ]
    main, *sidechains = written
    return replace(main, sidechains=sidechains)


def _unpack(
    store: SessionStore,
    zf: zipfile.ZipFile,
    sid: str,
    meta: dict[str, Any],
    rest: bytes,
    outputs: list[str],
    ws: str,
) -> ImportResult:
    """Write one bundled session under ``ws`` and say what of it could not be read."""
    if ws != meta.get("workspace"):
        meta["imported_from_workspace"] = meta.get("workspace")
        meta["workspace"] = ws
    folder = store.sessions_dir(ws) / sid
    make_private_dir(folder)
    # Why: only the meta line changes (workspace remap); every other line, encrypted
    # or not, is kept byte-for-byte so its checksum and AEAD tag stay valid.
    atomic_write(folder / TRANSCRIPT, encode_line(meta) + rest)
    for name in outputs:
        leaf = Path(name).name
        if leaf and not leaf.startswith("."):
            make_private_dir(folder / TOOL_OUTPUTS)
            atomic_write(folder / TOOL_OUTPUTS / leaf, zf.read(name))
    # +1: the meta line, checked already, came first.
    skipped = [{**bad, "line": bad["line"] + 1} for bad in _damaged_lines(rest)]
    session = Session(folder, store.config)
    count = None
    if not session.encrypted:
        state = session.load()
        count = len(state.messages)
        skipped += _other_damage(session)
        _set_mtime(folder / TRANSCRIPT, state.updated)
    return ImportResult(sid, ws, str(folder), count, [], skipped)


def _set_mtime(transcript: Path, stamp: float | None) -> None:
    """Date the file by its last event, so listings sort it by when it was worked on."""
    if stamp and 0 < stamp <= time.time():
        os.utime(transcript, (stamp, stamp))


def _write_imported(
    store: SessionStore,
    imported: ImportedSession,
    workspace: str,
    fmt: str,
    source: Path,
    parent: str | None = None,
) -> ImportResult:
    updated = parse_time(imported.updated)
    if updated is not None and updated > time.time():
        updated = None  # a source clock ahead of ours would list it above everything
    extra: dict[str, Any] = {
        "imported_from": {
            "format": fmt,
            "source_id": imported.source_id,
            "path": str(source),
            "original_workspace": imported.workspace,
            "updated": updated,
        }
    }
    if parent:
        extra["parent_session"] = parent
        extra["agent_id"] = imported.agent_id
    session = store.create(model=imported.model, workspace=workspace, extra_meta=extra)
    messages: list[Message] = imported.messages
    with session:
        for msg in messages:
            session.append_message(msg)
        if imported.title:
            session.append("title", {"title": imported.title})
    _set_mtime(session.transcript, updated)
    sidechains = [
        _write_imported(store, side, workspace, fmt, source, parent=session.id)
        for side in imported.sidechains
    ]
    return ImportResult(
        session.id,
        workspace,
        str(session.folder),
        len(messages),
        sidechains,
        list(imported.skipped),
    )


def import_path(
    store: SessionStore, path: Path, fmt: str | None = None, workspace: str | None = None
) -> ImportResult:
    """Import a bundle or another tool's transcript as new session(s)."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder; name one transcript or bundle file")
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if fmt not in (None, "bundle", "claude-code", "qwen-code"):
        raise UsageError(f"unknown import format {fmt!r}; use claude-code, qwen-code or bundle")
    if workspace is not None and not Path(workspace).is_dir():
        what = "is not a folder" if Path(workspace).exists() else "does not exist"
        raise UsageError(f"workspace {workspace} {what}; give an existing folder to --workspace")
    if fmt == "bundle" or (fmt is None and is_bundle(path)):
        return import_bundle(store, path, workspace)
    from workhearth.sessions import importers

    fmt = fmt or importers.detect_format(path)
    if fmt == "bundle":
        raise ImportFormatError(f"{path} is not a workhearth bundle: no bundle.json")
    imported = importers.load(path, fmt)
    ws = str(Path(workspace).absolute()) if workspace else (imported.workspace or store.workspace)
    return _write_imported(store, imported, ws, fmt, path)
