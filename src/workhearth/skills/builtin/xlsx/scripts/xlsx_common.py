"""What every xlsx script shares: one-line errors, output checks, atomic saves, ranges."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The error values a spreadsheet cell can hold (Excel and LibreOffice spell them alike).
ERROR_VALUES = frozenset(
    {"#DIV/0!", "#REF!", "#NAME?", "#VALUE!", "#N/A", "#NUM!", "#NULL!", "#SPILL!", "#CALC!"}
)
# LibreOffice also writes its own codes into cached values on export (Err:502 …).
_LO_ERROR = re.compile(r"^Err:\d{3}$")
_RANGE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?$")


class ScriptError(Exception):
    """A user mistake: reported as one stderr line and exit code 2."""


def is_error_value(value: Any) -> bool:
    return isinstance(value, str) and (value in ERROR_VALUES or bool(_LO_ERROR.match(value)))


def run(name: str, main: Callable[[], int]) -> None:
    """Run ``main`` and turn expected errors into one line on stderr, exit 2."""
    try:
        code = main()
    except ScriptError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code)


def existing_input(path: Path, suffixes: tuple[str, ...]) -> Path:
    if not path.is_file():
        raise ScriptError(f"no such file: {path}")
    if path.suffix.lower() not in suffixes:
        raise ScriptError(f"{path}: expected a {' or '.join(suffixes)} file")
    return path


def checked_output(path: Path, *, inputs: tuple[Path, ...], force: bool, suffix: str) -> Path:
    """Refuse an output that is an input, has the wrong suffix, or exists without --force."""
    if path.suffix.lower() != suffix:
        raise ScriptError(f"{path}: the output must end in {suffix}")
    for source in inputs:
        if path.resolve() == source.resolve():
            raise ScriptError(f"{path}: the output would overwrite the input")
    if path.exists() and not force:
        raise ScriptError(f"{path} exists (use --force to overwrite)")
    if not path.parent.is_dir():
        raise ScriptError(f"{path.parent}: no such folder")
    return path


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Write through a temp file in the same folder, then rename, so a failure leaves nothing."""
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        # Why: mkstemp makes the file private (0600); a written document should follow the umask.
        mask = os.umask(0)
        os.umask(mask)
        tmp.chmod(0o666 & ~mask)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def parse_range(text: str) -> tuple[int, int, int, int]:
    """'B2:D9' → (min_col, min_row, max_col, max_row), 1-based; a single cell is a 1×1 range."""
    from openpyxl.utils import column_index_from_string

    match = _RANGE.match(text.strip())
    if not match:
        raise ScriptError(f"{text!r} is not a cell range like B2:D9")
    c1, r1, c2, r2 = match.groups()
    c2, r2 = c2 or c1, r2 or r1
    cols = sorted((column_index_from_string(c1.upper()), column_index_from_string(c2.upper())))
    rows = sorted((int(r1), int(r2)))
    if rows[0] < 1:
        raise ScriptError(f"{text!r}: rows start at 1")
    return cols[0], rows[0], cols[1], rows[1]


def pick_sheet(workbook: Any, name: str | None) -> Any:
    if name is None:
        return workbook.active
    if name not in workbook.sheetnames:
        raise ScriptError(f"no sheet {name!r} (sheets: {', '.join(workbook.sheetnames)})")
    return workbook[name]


def load_workbook(path: Path, *, data_only: bool = False) -> Any:
    import zipfile

    from openpyxl import load_workbook as _load

    try:
        return _load(path, data_only=data_only)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise ScriptError(f"{path}: not a readable .xlsx workbook ({exc})") from exc
