"""Reading a memory file's bytes as text: which encodings, and what is not text at all.

Files in a memory folder come from anywhere: an editor on Windows (UTF-16 with a
BOM, UTF-8 with a BOM, Windows-1252), a tool that saved binary data under a
``.md`` name. Only text becomes memory; control characters never reach the index
or the context. Decoding never changes the file: hearth does not rewrite files
the user wrote.

A UTF-8 file with a few damaged lines (a NUL, bytes that are not UTF-8) stays a
UTF-8 file: those lines are left out, and the rest is read as usual. Why: one NUL
in MEMORY.md once hid a project's whole memory (issue #17).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field

from workhearth.memory.entries import find_entries

# Why: bumped whenever what a file decodes to changes, so indexes built by an
# older decoder (which indexed binary garbage) are rebuilt once.
DECODER_VERSION = 3
# Why: tabs and form feeds are ordinary in text; every other C0/C1 control
# character (and DEL) is either binary residue or a terminal escape.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
# Why: real text in a legacy 8-bit encoding has almost no control bytes; random
# or compressed bytes have about 11 % of them.
_BINARY_CONTROL_SHARE = 0.01
# Why: UTF-16 text without a BOM is about half NUL bytes; a text file with a stray NUL
# (pasted, or saved by a buggy program) has a handful. Above this share it is not text.
_BINARY_NUL_SHARE = 0.1
_C0_BYTES = bytes([*range(0x09), 0x0B, *range(0x0E, 0x20), 0x7F])  # CONTROL's one-byte part
# A NUL, or a byte that is not UTF-8 (decoded as a surrogate escape): a damaged line.
_DAMAGE = re.compile(r"[\x00\udc80-\udcff]")
DAMAGE_NOTE = "NUL characters or bytes that are not UTF-8"


@dataclass
class Decoded:
    """A file as text (``None``: not text), the encoding used and, if any, a note for the user.

    ``damaged`` maps the number (0-based, in ``text.splitlines()``) of each line left
    out of ``text`` (it reads as an empty line there) to that line with its damage
    removed, which only says where list items begin and end.
    """

    text: str | None
    encoding: str
    note: str | None = None
    damaged: dict[int, str] = field(default_factory=dict)


def decode_file(data: bytes) -> Decoded:
    """The text of a memory file, or ``text=None`` with a reason when it is binary."""
    if data.startswith(codecs.BOM_UTF8):
        return _strict(data[3:], "utf-8", "UTF-8 with BOM")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _strict(data, "utf-16", "UTF-16")
    nul = b"\x00" in data
    if nul and data.count(b"\x00") > len(data) * _BINARY_NUL_SHARE:
        return Decoded(None, "binary", "binary file (NUL bytes; UTF-16 without a BOM is not read)")
    try:
        return _without_damage(data.decode("utf-8"), escaped=False)
    except UnicodeDecodeError:
        pass
    if _mostly_utf8(data):
        return _without_damage(data.decode("utf-8", errors="surrogateescape"))
    if nul:
        return Decoded(None, "binary", "binary file (NUL bytes and not UTF-8)")
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


def _mostly_utf8(data: bytes) -> bool:
    """Whether a file that is not UTF-8 as a whole is UTF-8 text with a few damaged lines.

    Why this test: a legacy 8-bit file (Windows-1252) almost never holds a valid
    multi-byte UTF-8 sequence, while UTF-8 text with non-ASCII characters has many
    lines of them; damaged lines must be the fewer.
    """
    good = bad = 0
    for line in data.split(b"\n"):
        if line.isascii():
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            bad += 1
        else:
            good += 1
    return good > 0 and good >= bad


def _without_damage(text: str, escaped: bool = True) -> Decoded:
    """UTF-8 ``text`` with its damaged lines (NUL, undecodable bytes) left out.

    ``escaped``: undecodable bytes may be in it as surrogate escapes (not when it was
    decoded strictly: then a NUL is the only damage, and looking for one is cheaper).
    """
    if "\x00" not in text and (not escaped or _DAMAGE.search(text) is None):
        return Decoded(text, "utf-8")
    lines = text.splitlines()
    damaged = {i: _DAMAGE.sub("", line) for i, line in enumerate(lines) if _DAMAGE.search(line)}
    kept = "\n".join("" if i in damaged else line for i, line in enumerate(lines))
    count = f"{len(damaged)} line{'s' if len(damaged) != 1 else ''}"
    return Decoded(kept + "\n", "utf-8", f"{count} skipped ({DAMAGE_NOTE})", damaged)


def _strict(data: bytes, codec: str, name: str) -> Decoded:
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        return Decoded(None, "binary", f"starts like {name} text but does not decode as it")
    if codec == "utf-8":
        return _without_damage(text, escaped=False)
    return Decoded(text, codec, f"read as {name}")


def _cp1252_clean(data: bytes) -> bool:
    return not any(b in data for b in (b"\x81", b"\x8d", b"\x8f", b"\x90", b"\x9d"))


def _has_control(data: bytes, decoded: Decoded) -> bool:
    """Whether the text holds a control character :data:`CONTROL` removes.

    Why the bytes: for UTF-8 read as is, a C0 control or DEL is its own byte and a
    C1 control follows ``\\xc2``; two scans of the bytes in C cost a tenth of one
    regular-expression scan of the text, on every file indexed and every save.
    """
    if decoded.encoding == "utf-8" and not decoded.damaged and not data.startswith(codecs.BOM_UTF8):
        if len(data.translate(None, _C0_BYTES)) == len(data) and b"\xc2" not in data:
            return False
    return CONTROL.search(decoded.text or "") is not None


def text_lines(data: bytes) -> list[str]:
    """The lines indexed for a file: empty for binary, control characters removed.

    A damaged line (a NUL, bytes that are not UTF-8) is skipped, and with it the
    whole entry it belongs to (read as empty lines, so the others keep their
    numbers): the rest of the file is indexed as usual. Why the whole entry: half
    an entry would lend its id to, or take one from, its neighbour.
    """
    decoded = decode_file(data)
    if decoded.text is None:
        return []
    text = decoded.text
    if not _has_control(data, decoded):
        lines = text.splitlines()
    else:
        lines = [CONTROL.sub("", line) for line in text.splitlines()]
    if decoded.damaged:
        shape = list(lines)
        for i, line in decoded.damaged.items():
            shape[i] = CONTROL.sub("", line)
        spans = [(s.start, s.end) for s in find_entries(shape).values()]
        for i in decoded.damaged:
            start, end = next(((a, b) for a, b in spans if a <= i < b), (i, i + 1))
            lines[start:end] = [""] * (end - start)
    return lines
