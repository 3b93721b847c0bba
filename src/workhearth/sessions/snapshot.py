"""``snapshot.zst``: the folded session state up to a known line, for fast loading.

Layout: ``MAGIC``, a 4-byte length and a small JSON header (format version, session
id, the byte offset just after the pinned line, that line's checksum, a short
summary for listings), then one zstd frame (with its content checksum) holding
length-prefixed MessagePack records: first the state without its messages, then
the messages in batches, then a zero length. For an encrypted session the header
and the compressed body are each sealed with the session key, the body under a
label naming the pinned line.

The snapshot is a cache: any mismatch with the transcript (shorter file, other
checksum at the pinned offset, other session, other version) or any damage makes
it stale, and the caller rebuilds it from the log.

Why this layout: loading 100 MB of state is bound by decompression and object
building. MessagePack decodes about three times faster than JSON here, and
streaming the body a record at a time never holds the whole decompressed body
(nor a copy of the file) next to the objects built from it. A sealed body is
read whole: AES-GCM verifies it before releasing any of it.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from workhearth.fsutil import atomic_write
from workhearth.sessions.state import SessionState

MAGIC = b"WHSNAP\x01\n"
VERSION = 2
Seal = Callable[[str, bytes], bytes]

_LEN = struct.Struct(">I")
_HEADER_AT = len(MAGIC) + _LEN.size
_BATCH = 64  # messages per record: ~200 KB for agent transcripts
_ZSTD_LEVEL = 1
_READ_SIZE = 1 << 20  # compressed bytes per file read


@dataclass
class Snapshot:
    state: SessionState
    end_offset: int
    damage: dict[str, int]


@dataclass(frozen=True)
class SessionSummary:
    """What a listing shows of a session without folding its transcript."""

    title: str | None
    messages: int
    updated: float  # time of the last event (0.0 when no event had one)


class _Reader(Protocol):
    """What the body is read from: a zstd stream reader (no file of its own)."""

    def read(self, size: int = -1, /) -> bytes: ...


class _Damaged(Exception):
    """The body does not hold what the header promised."""


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


# ------------------------------------------------------------------ write
def _body_label(header: dict[str, Any]) -> str:
    """The sealed body is bound to the line its header pins, so bodies cannot be swapped."""
    return f"snapshot:{header['offset']}:{header['crc']}"


def write_snapshot(
    path: Path,
    state: SessionState,
    end_offset: int,
    last_crc: str,
    damage: dict[str, int],
    seal: Seal | None = None,
) -> None:
    """Cache ``state`` as folded up to ``end_offset`` (the line ending there has ``last_crc``)."""
    import msgspec
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
    encode = msgspec.msgpack.Encoder().encode
    rest = state.to_dict()
    messages = rest.pop("messages")
    rest["damage"] = damage
    zobj = zstandard.ZstdCompressor(level=_ZSTD_LEVEL, write_checksum=True).compressobj()
    parts: list[bytes] = []
    raw = 0

    def record(data: bytes) -> None:
        nonlocal raw
        raw += _LEN.size + len(data)
        parts.append(zobj.compress(_LEN.pack(len(data))))
        parts.append(zobj.compress(data))

    record(encode(rest))
    for i in range(0, len(messages), _BATCH):
        record(encode(messages[i : i + _BATCH]))
    parts.append(zobj.compress(_LEN.pack(0)))
    parts.append(zobj.flush())
    if seal is not None:
        parts = [seal(_body_label(header), b"".join(parts))]
    # Why: zstd reports a frame cut inside its checksum as a clean end; the length does not.
    header["bytes"] = sum(map(len, parts))
    header["raw"] = raw + _LEN.size
    head = orjson.dumps(header)
    if seal is not None:
        head = seal("snapshot-header", head)
    atomic_write(path, b"".join([MAGIC, _LEN.pack(len(head)), head, *parts]))


# ------------------------------------------------------------------- read
def _read_header(fh: IO[bytes], open_blob: Seal | None) -> dict[str, Any] | None:
    """The header of an open snapshot, leaving ``fh`` at the body; ``None`` if unusable."""
    lead = fh.read(_HEADER_AT)
    if len(lead) != _HEADER_AT or not lead.startswith(MAGIC):
        return None
    (n,) = _LEN.unpack_from(lead, len(MAGIC))
    head = fh.read(n)
    if len(head) != n:
        return None
    try:
        if open_blob is not None:
            head = open_blob("snapshot-header", head)
        header = orjson.loads(head)
    except Exception:
        return None
    if not isinstance(header, dict) or header.get("v") != VERSION:
        return None
    return header


def _fresh(header: dict[str, Any], transcript: Path, session_id: str) -> bool:
    offset = header.get("offset")
    if header.get("sid") != session_id or not isinstance(offset, int) or offset <= 0:
        return False
    return _crc_at(transcript, offset) == header.get("crc")


def read_summary(
    path: Path, transcript: Path, session_id: str, open_blob: Seal | None = None
) -> SessionSummary | None:
    """The listing summary, only when the snapshot covers the whole transcript."""
    try:
        with path.open("rb") as fh:
            header = _read_header(fh, open_blob)
        size = os.stat(transcript).st_size
    except OSError:
        return None
    if header is None:
        return None
    if header.get("offset") not in (size, size - 1) or not _fresh(header, transcript, session_id):
        return None
    title, messages, updated = header.get("title"), header.get("messages"), header.get("updated")
    if not (
        (title is None or isinstance(title, str))
        and type(messages) is int
        and isinstance(updated, int | float)
    ):
        return None  # Why: a header this version did not write; the caller folds the log
    return SessionSummary(title, messages, updated)


def load_snapshot(
    path: Path,
    transcript: Path,
    session_id: str,
    open_blob: Seal | None = None,
) -> Snapshot | None:
    """The cached state, or ``None`` when absent, corrupt or stale."""
    try:
        fh = path.open("rb")
    except OSError:
        return None
    with fh:
        try:
            header = _read_header(fh, open_blob)
            if header is None or not _fresh(header, transcript, session_id):
                return None
            if os.fstat(fh.fileno()).st_size != fh.tell() + header.get("bytes", -1):
                return None
            source: IO[bytes] | bytes = fh
            if open_blob is not None:
                source = open_blob(_body_label(header), fh.read())
            return _decode_body(source, header)
        except Exception:
            # Why: a snapshot is only a cache; any damage means "rebuild from the log".
            return None


def _decode_body(source: IO[bytes] | bytes, header: dict[str, Any]) -> Snapshot:
    import msgspec
    import zstandard

    decode = msgspec.msgpack.Decoder().decode
    reader = zstandard.ZstdDecompressor().stream_reader(source, read_size=_READ_SIZE)
    records = _records(reader, header["raw"])
    rest = decode(next(records))
    messages: list[Any] = []
    for batch in records:
        messages.extend(decode(batch))
    if (
        not isinstance(rest, dict)
        or len(messages) != header.get("messages")
        or len(rest.get("seqs", ())) != len(messages)
    ):
        raise _Damaged("message count")
    rest["messages"] = messages
    damage = rest.pop("damage", None) or {}
    return Snapshot(SessionState.from_dict(rest), header["offset"], damage)


def _read_exact(reader: _Reader, n: int) -> bytes:
    data = reader.read(n)
    while len(data) < n:
        more = reader.read(n - len(data))
        if not more:
            raise _Damaged("truncated")
        data += more
    return data


def _records(reader: _Reader, raw: int) -> Iterator[bytes]:
    """The records of the body up to the end mark, then the frame's checksum is verified.

    ``raw`` is the decompressed size the header promises: a damaged length can
    then never ask for gigabytes.
    """
    left = raw - _LEN.size  # the end mark
    while True:
        (n,) = _LEN.unpack(_read_exact(reader, _LEN.size))
        if n == 0:
            break
        left -= _LEN.size + n
        if left < 0:
            raise _Damaged("record longer than the body")
        yield _read_exact(reader, n)
    if reader.read(1):  # also makes zstd read the frame end and check its checksum
        raise _Damaged("data after the end mark")
