"""Reading a memory file's bytes as text: which encodings, and what is not text at all.

Files in a memory folder come from anywhere: an editor on Windows (UTF-16 with a
BOM, UTF-8 with a BOM, Windows-1252), a tool that saved binary data under a
``.md`` name. Only text becomes memory; control characters never reach the index
or the context. Decoding never changes the file: hearth does not rewrite files
the user wrote.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

# Why: bumped whenever what a file decodes to changes, so indexes built by an
# older decoder (which indexed binary garbage) are rebuilt once.
DECODER_VERSION = 2
# Why: tabs and form feeds are ordinary in text; every other C0/C1 control
# character (and DEL) is either binary residue or a terminal escape.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
# Why: real text in a legacy 8-bit encoding has almost no control bytes; random
# or compressed bytes have about 11 % of them.
_BINARY_CONTROL_SHARE = 0.01


@dataclass
class Decoded:
    """A file as text (``None``: not text), the encoding used and, if any, a note for the user."""

    text: str | None
    encoding: str
    note: str | None = None


def decode_file(data: bytes) -> Decoded:
    """The text of a memory file, or ``text=None`` with a reason when it is binary."""
    if data.startswith(codecs.BOM_UTF8):
        return _strict(data[3:], "utf-8", "UTF-8 with BOM")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _strict(data, "utf-16", "UTF-16")
    if b"\x00" in data:
        return Decoded(None, "binary", "binary file (NUL bytes; UTF-16 without a BOM is not read)")
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    # Why: not UTF-8 and no NUL bytes: most likely a note saved by an older Windows
    # editor (Windows-1252, a superset of Latin-1's printable characters). A user
    # expects those notes found, so they are read as such and named in
    # ``memory status``, rather than skipped (lost) or shown with U+FFFD marks.
    # Bytes that Windows-1252 leaves undefined are read as Latin-1.
    text = data.decode("cp1252", errors="ignore") if _cp1252_clean(data) else data.decode("latin-1")
    controls = len(CONTROL.findall(text))
    if controls > max(1, len(text) * _BINARY_CONTROL_SHARE):
        return Decoded(None, "binary", "binary file (not UTF-8 text)")
    return Decoded(text, "cp1252", "not UTF-8: read as Windows-1252 (Latin-1)")


def _strict(data: bytes, codec: str, name: str) -> Decoded:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        return Decoded(None, "binary", f"starts like {name} text but does not decode as it")
    note = None if codec == "utf-8" else f"read as {name}"
    return Decoded(text, codec, note)


def _cp1252_clean(data: bytes) -> bool:
    return not any(b in data for b in (b"\x81", b"\x8d", b"\x8f", b"\x90", b"\x9d"))


def text_lines(data: bytes) -> list[str]:
    """The lines indexed for a file: empty for binary, control characters removed."""
    text = decode_file(data).text
    if text is None:
        return []
    return [CONTROL.sub("", line) for line in text.splitlines()]
