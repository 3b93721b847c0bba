"""``snapshot.zst``: the folded session state up to a known line, for fast loading.

Layout: ``MAGIC``, a 4-byte length and a small header (session id, the byte offset
just after the pinned line, that line's checksum, a short summary for listings),
then the zstd-compressed state. For an encrypted session header and body are
sealed with the session key. The snapshot is a cache: any mismatch with the
transcript (shorter file, other checksum at the pinned offset, other session)
makes it stale, and the caller rebuilds it from the log.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from workhearth.fsutil import atomic_write
from workhearth.sessions.state import SessionState

MAGIC = b"WHSNAP\x01\n"
VERSION = 1
Seal = Callable[[str, bytes], bytes]


@dataclass
class Snapshot:
    state: SessionState
    end_offset: int
    damage: dict[str, int]


def _crc_at(transcript: Path, end_offset: int) -> str | None:
    """The checksum text of the line that ends at ``end_offset`` (newline or EOF)."""
    try:
        with transcript.open("rb") as fh:
            start = max(0, end_offset - 12)
            fh.seek(start)
            tail = fh.read(end_offset - start)
    except OSError:
        return None
    if len(tail) != end_offset - start:
        return None
    if tail.endswith(b"\n"):
        tail = tail[:-1]
    if not tail.endswith(b'"}') or len(tail) < 10:
        return None
    return tail[-10:-2].decode("ascii", errors="replace")


def write_snapshot(
    path: Path,
    state: SessionState,
    end_offset: int,
    last_crc: str,
    damage: dict[str, int],
    seal: Seal | None = None,
) -> None:
    import zstandard

    header = {
        "v": VERSION,
        "sid": state.meta.get("sid"),
        "offset": end_offset,
        "crc": last_crc,
        "title": state.title,
        "messages": len(state.messages),
        "updated": state.updated,
    }
    body = zstandard.ZstdCompressor(level=1).compress(
        orjson.dumps({"state": state.to_dict(), "damage": damage})
    )
    head = orjson.dumps(header)
    if seal is not None:
        head = seal("snapshot-header", head)
        body = seal("snapshot", body)
    atomic_write(path, MAGIC + struct.pack(">I", len(head)) + head + body)


def _read_header(data: bytes, open_blob: Seal | None) -> tuple[dict[str, Any], int] | None:
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 4:
        return None
    (n,) = struct.unpack(">I", data[len(MAGIC) : len(MAGIC) + 4])
    start = len(MAGIC) + 4
    head = data[start : start + n]
    try:
        if open_blob is not None:
            head = open_blob("snapshot-header", head)
        header = orjson.loads(head)
    except Exception:
        return None
    if not isinstance(header, dict) or header.get("v") != VERSION:
        return None
    return header, start + n


def _fresh(header: dict[str, Any], transcript: Path, session_id: str) -> bool:
    offset = header.get("offset")
    if header.get("sid") != session_id or not isinstance(offset, int) or offset <= 0:
        return False
    return _crc_at(transcript, offset) == header.get("crc")


def read_summary(
    path: Path, transcript: Path, session_id: str, open_blob: Seal | None = None
) -> dict[str, Any] | None:
    """The listing summary, only when the snapshot covers the whole transcript."""
    try:
        with path.open("rb") as fh:
            data = fh.read(1 << 16)
    except OSError:
        return None
    parsed = _read_header(data, open_blob)
    if parsed is None:
        return None
    header = parsed[0]
    try:
        size = os.stat(transcript).st_size
    except OSError:
        return None
    if header.get("offset") not in (size, size - 1) or not _fresh(header, transcript, session_id):
        return None
    return header


def load_snapshot(
    path: Path, transcript: Path, session_id: str, open_blob: Seal | None = None
) -> Snapshot | None:
    """The cached state, or ``None`` when absent, corrupt or stale."""
    import zstandard

    try:
        data = path.read_bytes()
    except OSError:
        return None
    parsed = _read_header(data, open_blob)
    if parsed is None:
        return None
    header, body_at = parsed
    if not _fresh(header, transcript, session_id):
        return None
    try:
        body = data[body_at:]
        del data
        if open_blob is not None:
            body = open_blob("snapshot", body)
        raw = zstandard.ZstdDecompressor().decompress(body)
        del body
        payload = orjson.loads(raw)
        del raw
        state = SessionState.from_dict(payload["state"])
    except Exception:
        # Why: a snapshot is only a cache; any damage means "rebuild from the log".
        return None
    return Snapshot(state=state, end_offset=header["offset"], damage=payload.get("damage", {}))
