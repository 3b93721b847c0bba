"""Which characters some installed font can draw, as fontconfig (what LibreOffice and
poppler use here) sees the fonts of this machine."""

from __future__ import annotations

import bisect
import functools
import re
import shutil
import subprocess
import unicodedata

# Why two or more: a single '?' is punctuation; '??' runs are what a font without the
# glyphs leaves behind ("(??) Tj" in Helvetica for 张三).
QUESTION_RUN = re.compile(r"\?{2,}")

# Why: characters no font draws, and that no renderer needs a glyph for.
_INVISIBLE = {"Cc", "Cf", "Zl", "Zp", "Cs"}


def _selector(ch: str) -> bool:
    """A variation selector: it picks a glyph of the character before it, it has none."""
    cp = ord(ch)
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


@functools.cache
def _ranges() -> tuple[list[int], list[int]] | None:
    """Merged code point ranges covered by any installed font; None without fontconfig."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return None
    try:
        out = subprocess.run(
            [fc_list, "--format", "%{charset}\n"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    spans: list[tuple[int, int]] = []
    # Why a set: fonts share most of their ranges (83,000 tokens here, 3,300 distinct);
    # parsing each once keeps this off the CPU LibreOffice converts on.
    for token in set(out.split()):
        first, _, last = token.partition("-")
        try:
            spans.append((int(first, 16), int(last or first, 16)))
        except ValueError:
            continue
    spans.sort()
    starts: list[int] = []
    ends: list[int] = []
    for lo, hi in spans:
        if ends and lo <= ends[-1] + 1:
            ends[-1] = max(ends[-1], hi)
        else:
            starts.append(lo)
            ends.append(hi)
    return starts, ends


def available() -> bool:
    return _ranges() is not None


def missing(text: str) -> list[str]:
    """The distinct characters of ``text`` that no installed font has a glyph for, in
    order of first appearance (empty when fontconfig is absent: see :func:`available`)."""
    ranges = _ranges()
    if ranges is None:
        return []
    starts, ends = ranges
    seen: set[str] = set()
    out: list[str] = []
    for ch in text:
        if ch in seen or ch.isspace() or unicodedata.category(ch) in _INVISIBLE or _selector(ch):
            continue
        seen.add(ch)
        cp = ord(ch)
        i = bisect.bisect_right(starts, cp) - 1
        if i < 0 or cp > ends[i]:
            out.append(ch)
    return out


def describe(chars: list[str], limit: int = 5) -> str:
    shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in chars[:limit])
    return shown + (f" and {len(chars) - limit} more" if len(chars) > limit else "")
