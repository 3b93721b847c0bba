"""The transcript line format: one JSON object per line, checksum last.

A line is the event's compact JSON with ``,"crc":"xxxxxxxx"}`` appended, where
the CRC-32 covers every byte before that suffix. Putting the checksum last and
fixed-width lets the reader verify a line without re-serialising it, and a torn,
glued or zero-filled line can never pass as a good one.

Every event carries ``seq`` (1, 2, 3…) and ``sid`` (its session id) so duplicated
lines and lines from another session are recognised. An encrypted event keeps
only ``seq``, ``sid`` and the sealed envelope in clear (see :mod:`.crypto`).
"""

from __future__ import annotations

import re
import zlib
from typing import Any

import orjson

from workhearth.errors import HearthError

SCHEMA_VERSION = 1
EVENT_TYPES = frozenset({"meta", "message", "checkpoint", "compact", "rewind", "title"})

_SUFFIX_HEAD = b',"crc":"'
SUFFIX_LEN = len(_SUFFIX_HEAD) + 8 + 2  # ,"crc":"xxxxxxxx"}
_GLUE = re.compile(rb'(?<=\"\})(?=\{"seq":)|\x00+')


class NewerFormatError(HearthError):
    """A transcript written by a newer hearth (its meta ``schema`` is above ours)."""

    code = "session_format_newer"


def check_schema(meta: dict[str, Any], session_id: str) -> None:
    """Refuse a session whose format is newer than this hearth reads (never append to it)."""
    schema = meta.get("schema")
    if isinstance(schema, int) and not isinstance(schema, bool) and schema > SCHEMA_VERSION:
        raise NewerFormatError(
            f"session {session_id} was written by a newer hearth (format {schema}; "
            f"this one reads up to {SCHEMA_VERSION}): upgrade hearth to open it",
            params={"format": schema, "supported": SCHEMA_VERSION},
        )


def encode_line(event: dict[str, Any]) -> bytes:
    """Serialise one event to a checksummed line ending in ``\\n``."""
    head = orjson.dumps(event)[:-1]
    return b'%s,"crc":"%08x"}\n' % (head, zlib.crc32(head))


def line_ok(line: bytes) -> bool:
    """True when ``line`` (without its newline) carries a matching checksum."""
    if len(line) <= SUFFIX_LEN or line[-SUFFIX_LEN:-10] != _SUFFIX_HEAD or line[-2:] != b'"}':
        return False
    try:
        want = int(line[-10:-2], 16)
    except ValueError:
        return False
    return zlib.crc32(line[:-SUFFIX_LEN]) == want


def line_crc(line: bytes) -> str:
    """The checksum text a good line carries (used to pin snapshots to a line)."""
    return line[-10:-2].decode("ascii")


def decode_line(line: bytes) -> dict[str, Any] | None:
    """Parse a line that passed :func:`line_ok`; ``None`` if it is not an event."""
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("seq"), int):
        return None
    event.pop("crc", None)
    return event


def split_damaged(segment: bytes) -> list[bytes]:
    """Split a segment that failed the checksum at glue points and NUL runs.

    A crash or a disk can glue two lines (``…"}{"seq":…``) or zero-fill a block;
    the good lines inside such a segment are still recoverable.
    """
    return [part for part in _GLUE.split(segment) if part]
