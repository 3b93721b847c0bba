"""Move sessions in and out: export (JSONL, Markdown, bundle) and import (bundle, other tools).

A bundle is a zip holding ``bundle.json`` (format, session id, original workspace),
the transcript byte-for-byte (an encrypted session stays encrypted) and the tool
outputs. Importing it elsewhere rewrites only the meta line, to point at the new
workspace, so the task resumes on the other machine.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import orjson

from workhearth.errors import ImportFormatError, UsageError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.models.messages import Message, result_text
from workhearth.sessions.codec import decode_line, encode_line, line_ok
from workhearth.sessions.session import TOOL_OUTPUTS, TRANSCRIPT, Session
from workhearth.sessions.store import SessionStore

BUNDLE_FORMAT = "workhearth-session-bundle"
BUNDLE_VERSION = 1
EXPORT_FORMATS = ("jsonl", "markdown", "bundle")


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
    if state.meta.get("model"):
        lines.append(f"- model: `{state.meta['model']}`")
    lines.append("")
    for msg in state.messages:
        lines.append(f"## {msg['role']}")
        lines.append("")
        for block in msg.get("content", []):
            text = _block_markdown(block)  # type: ignore[arg-type]
            if text:
                lines.extend([text, ""])
    return "\n".join(lines).encode("utf-8")


def export_bundle(session: Session) -> bytes:
    session.meta  # noqa: B018 - fails early on a damaged header
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        manifest = {
            "format": BUNDLE_FORMAT,
            "version": BUNDLE_VERSION,
            "session_id": session.id,
            "workspace": session.workspace,
            "encrypted": session.encrypted,
        }
        zf.writestr("bundle.json", orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
        transcript = session.transcript.read_bytes()
        if session.header_rebuilt:
            # Why: the other machine must be able to read the header; ship the rebuilt
            # one (still marked "rebuilt") in place of the damaged line.
            transcript = encode_line(session.meta) + transcript.partition(b"\n")[2]
        zf.writestr(TRANSCRIPT, transcript)
        outputs = session.folder / TOOL_OUTPUTS
        if outputs.is_dir():
            for path in sorted(outputs.iterdir()):
                if path.is_file():
                    zf.writestr(f"{TOOL_OUTPUTS}/{path.name}", path.read_bytes())
    return buf.getvalue()


def export_session(session: Session, fmt: str) -> bytes:
    if fmt == "jsonl":
        return export_jsonl(session)
    if fmt == "markdown":
        return export_markdown(session)
    if fmt == "bundle":
        return export_bundle(session)
    raise UsageError(f"unknown export format {fmt!r}; use {', '.join(EXPORT_FORMATS)}")


# ---------------------------------------------------------------- import
def is_bundle(path: Path) -> bool:
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as zf:
        return "bundle.json" in zf.namelist()


def import_bundle(store: SessionStore, path: Path, workspace: str | None = None) -> dict[str, Any]:
    """Unpack a bundle as a session of ``workspace`` (default: the bundle's own)."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportFormatError(f"{path}: not a session bundle ({exc})") from None
    with zf:
        try:
            manifest = orjson.loads(zf.read("bundle.json"))
            transcript = zf.read(TRANSCRIPT)
        except (KeyError, orjson.JSONDecodeError):
            raise ImportFormatError(f"{path}: not a session bundle (no bundle.json)") from None
        if manifest.get("format") != BUNDLE_FORMAT or manifest.get("version") != BUNDLE_VERSION:
            raise ImportFormatError(f"{path}: unsupported bundle format or version")
        sid = str(manifest.get("session_id", ""))
        first, _, rest = transcript.partition(b"\n")
        meta = decode_line(first) if line_ok(first) else None
        if not meta or meta.get("type") != "meta" or meta.get("sid") != sid:
            raise ImportFormatError(f"{path}: the bundled transcript has no valid meta line")
        if store.find_folder(sid) is not None:
            raise UsageError(f"session {sid} already exists here; delete it first to re-import")
        ws = str(Path(workspace).absolute()) if workspace else str(meta.get("workspace"))
        if ws != meta.get("workspace"):
            meta["imported_from_workspace"] = meta.get("workspace")
            meta["workspace"] = ws
        outputs = [
            n for n in zf.namelist() if n.startswith(f"{TOOL_OUTPUTS}/") and not n.endswith("/")
        ]
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
    session = Session(folder, store.config)
    count = None if session.encrypted else len(session.load().messages)
    return {
        "session_id": sid,
        "workspace": ws,
        "path": str(folder),
        "messages": count,
        "sidechains": [],
    }


def _write_imported(
    store: SessionStore,
    imported: Any,
    workspace: str,
    fmt: str,
    source: Path,
    parent: str | None = None,
) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "imported_from": {
            "format": fmt,
            "source_id": imported.source_id,
            "path": str(source),
            "original_workspace": imported.workspace,
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
    sidechains = [
        _write_imported(store, side, workspace, fmt, source, parent=session.id)
        for side in imported.sidechains
    ]
    return {
        "session_id": session.id,
        "workspace": workspace,
        "path": str(session.folder),
        "messages": len(messages),
        "sidechains": sidechains,
    }


def import_path(
    store: SessionStore, path: Path, fmt: str | None = None, workspace: str | None = None
) -> dict[str, Any]:
    """Import a bundle or another tool's transcript as new session(s)."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder; name one transcript or bundle file")
    if not path.is_file():
        raise UsageError(f"{path}: no such file")
    if fmt not in (None, "bundle", "claude-code", "qwen-code"):
        raise UsageError(f"unknown import format {fmt!r}; use claude-code, qwen-code or bundle")
    if fmt == "bundle" or (fmt is None and is_bundle(path)):
        return import_bundle(store, path, workspace)
    from workhearth.sessions import importers

    imported = importers.load(path, fmt)
    fmt = fmt or importers.detect_format(path)
    ws = str(Path(workspace).absolute()) if workspace else (imported.workspace or store.workspace)
    return _write_imported(store, imported, ws, fmt, path)
