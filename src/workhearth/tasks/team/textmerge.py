"""Three-way merge of one text file, and which files are not text (issue 23).

``git merge-file`` does the merge where git is installed; without it, a difflib merge
applies both sides' hunks when none overlaps or touches another, and refuses otherwise.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import tempfile
from pathlib import Path, PurePosixPath

from workhearth.errors import HearthError

# Why by name as well as by bytes: office files are zip archives whose bytes a line
# merge would corrupt even where they happen to decode.
BINARY_SUFFIXES = frozenset(
    ".docx .xlsx .pptx .doc .xls .ppt .odt .ods .odp .pdf .png .jpg .jpeg .gif .webp "
    ".bmp .tif .tiff .ico .heic .svgz .zip .gz .tgz .bz2 .xz .7z .rar .jar .whl .epub "
    ".mp3 .mp4 .mov .wav .ogg .sqlite .db .pkl .parquet .xlsm .docm .pptm".split()
)


def is_binary(path: str, data: bytes | None) -> bool:
    """Whether a line merge must not touch this file: office/image/archive names, NUL, not UTF-8."""
    if PurePosixPath(path).suffix.lower() in BINARY_SUFFIXES:
        return True
    if data is None:
        return False
    if b"\0" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def merge_text(base: bytes, ours: bytes, theirs: bytes, *, use_git: bool = True) -> bytes | None:
    """Merge two edits of one UTF-8 text; ``None`` when their hunks overlap (a conflict)."""
    if use_git and shutil.which("git"):
        with tempfile.TemporaryDirectory(prefix="hearth-merge-") as tmp:
            paths = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                p = Path(tmp) / name
                p.write_bytes(data)
                paths.append(str(p))
            done = subprocess.run(
                ["git", "merge-file", "-p", *paths], capture_output=True, check=False, timeout=60
            )
        if done.returncode == 0:
            return done.stdout
        if 0 < done.returncode < 128:
            return None
        raise HearthError(f"git merge-file failed: {done.stderr.decode(errors='replace')}")
    return _merge_with_difflib(base, ours, theirs)


def _hunks(base: list[str], other: list[str]) -> list[tuple[int, int, list[str]]]:
    """The changes from ``base`` to ``other`` as (start, end, replacement lines)."""
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    return [(i1, i2, other[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal"]


def _merge_with_difflib(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The merge without git: both sides' hunks applied when none overlaps or touches another.

    Why touching counts: git refuses edits on adjacent lines too, and a merge that
    guesses the order of two insertions at one place guesses wrong half the time.
    """
    b = base.decode("utf-8").splitlines(keepends=True)
    mine = _hunks(b, ours.decode("utf-8").splitlines(keepends=True))
    other = _hunks(b, theirs.decode("utf-8").splitlines(keepends=True))
    for h in mine:
        for o in other:
            if h == o:
                continue
            if h[0] <= o[1] and o[0] <= h[1]:
                return None
    hunks = sorted({(s, e, tuple(lines)) for s, e, lines in mine + other})
    out: list[str] = []
    pos = 0
    for start, end, lines in hunks:
        out += b[pos:start]
        out += lines
        pos = end
    out += b[pos:]
    return "".join(out).encode("utf-8")
