"""Rebuild a session's meta line (the transcript header) when it is damaged.

The header is one line like any other: a flipped byte fails its checksum, and it
must not make hundreds of intact lines unreachable (DESIGN §3: a damaged line
never stops the rest of the file from loading). What it held is rebuilt from
sources that can be checked:

- the session id from the folder name (every line's ``sid`` must match it);
- the workspace from the project folder (its ``workspace.json``, or its name);
- whether the session is encrypted from the other lines; the key is accepted only
  when it decrypts one of them (:meth:`SessionCipher.recover`);
- model, mode and the rest from what can still be parsed of the damaged line.
  They are hints, not facts: business state comes from the last checkpoint when
  there is one, and a fresh snapshot's copy of the header replaces them (see
  :meth:`Session._load`).

The rebuilt meta carries ``"rebuilt": True`` so readers can report the damage.
The transcript itself is never rewritten: ``verify`` keeps reporting the damaged
line, and appends go on after the last good line as usual.
"""

from __future__ import annotations

import calendar
import json
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from workhearth.config import Config
from workhearth.errors import HearthError
from workhearth.paths import decode_workspace, is_hashed_name
from workhearth.sessions.codec import SCHEMA_VERSION, decode_line, line_ok, split_damaged

if TYPE_CHECKING:
    from workhearth.sessions.crypto import SessionCipher

# Fields a meta line may hold beyond the ones rebuilt from the folder.
_HINT_KEYS = (
    "schema",
    "created",
    "model",
    "mode",
    "encryption",
    "parent_session",
    "parent_call_id",
    "imported_from",
    "imported_from_workspace",
)
_PROBES = 3  # encrypted lines tried when proving a key
_SCAN_LINES = 200  # lines read to find them; the first few nearly always do
_SID_TIME = re.compile(r"^(\d{8}-\d{6})-")


def rebuild_meta(
    folder: Path, transcript: Path, config: Config
) -> tuple[dict[str, Any], SessionCipher | None]:
    """The meta a damaged header held, and the session's cipher when it is encrypted.

    Raises :class:`EncryptionKeyError` when the session is encrypted and no
    configured key opens its lines.
    """
    session_id = folder.name
    first, probes, first_ts = _read_lines(transcript, session_id)
    hints = _salvage(first)
    meta: dict[str, Any] = {
        "seq": 1,
        "sid": session_id,
        "type": "meta",
        "schema": SCHEMA_VERSION,
        "session_id": session_id,
        "workspace": _workspace_of(folder),
        "created": None,
        "model": None,
        "mode": None,
        "encryption": None,
    }
    for key in _HINT_KEYS:
        if key in hints:
            meta[key] = hints[key]
    if not isinstance(meta["created"], int | float):
        meta["created"] = _created(session_id, first_ts, transcript)
    if meta["mode"] not in ("ask", "agent", "quest"):
        meta["mode"] = None
    if not isinstance(meta["model"], str):
        meta["model"] = None
    meta["rebuilt"] = True
    cipher = None
    if probes:
        from workhearth.sessions.crypto import SessionCipher

        cipher, meta["encryption"] = SessionCipher.recover(
            config.encryption, session_id, hints.get("encryption"), probes
        )
    elif first_ts is not None:
        # Why: the other lines are in clear, so whatever the damaged line seemed to
        # say about encryption is wrong; a stale record would demand a key.
        meta["encryption"] = None
    return meta, cipher


def _read_lines(
    transcript: Path, session_id: str
) -> tuple[bytes, list[tuple[int, dict[str, Any]]], float | None]:
    """The damaged first line, up to a few good encrypted lines, and the first clear ``ts``."""
    probes: list[tuple[int, dict[str, Any]]] = []
    first_ts: float | None = None
    first = b""
    with transcript.open("rb") as fh:
        for number, raw in enumerate(fh):
            if number >= _SCAN_LINES or len(probes) >= _PROBES:
                break
            seg = raw.rstrip(b"\n")
            if number == 0:
                first = seg
            for piece in [seg] if line_ok(seg) else split_damaged(seg):
                if not line_ok(piece):
                    continue
                event = decode_line(piece)
                if event is None or event.get("sid") != session_id or event.get("type") == "meta":
                    continue
                if "enc" in event:
                    probes.append((event["seq"], event))
                elif first_ts is None and isinstance(event.get("ts"), int | float):
                    first_ts = float(event["ts"])
            if first_ts is not None and not probes:
                break  # a clear session: one plain event says so
    return first, probes, first_ts


def _salvage(line: bytes) -> dict[str, Any]:
    """What can still be parsed of a damaged meta line, field by field."""
    try:
        whole = orjson.loads(line)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return {k: v for k, v in whole.items() if k in _HINT_KEYS}
    text = line.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    found: dict[str, Any] = {}
    for key in _HINT_KEYS:
        at = text.find(f'"{key}":')
        if at < 0:
            continue
        try:
            found[key] = decoder.raw_decode(text, at + len(key) + 3)[0]
        except ValueError:
            continue
    return found


def _workspace_of(folder: Path) -> str:
    project = folder.parent.parent
    try:
        recorded = orjson.loads((project / "workspace.json").read_bytes()).get("path")
        if isinstance(recorded, str) and recorded:
            return recorded
    except (OSError, orjson.JSONDecodeError, AttributeError):
        pass
    if is_hashed_name(project.name):
        return ""
    try:
        return decode_workspace(project.name)
    except HearthError:
        return ""


def _created(session_id: str, first_ts: float | None, transcript: Path) -> float:
    """The creation time: from the id's time stamp, else the first event, else the file."""
    match = _SID_TIME.match(session_id)
    if match:
        try:
            return float(calendar.timegm(time.strptime(match.group(1), "%Y%m%d-%H%M%S")))
        except (ValueError, OverflowError):
            pass
    if first_ts is not None:
        return first_ts
    try:
        return transcript.stat().st_mtime
    except OSError:
        return 0.0
