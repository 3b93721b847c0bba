"""What the xlsx scripts share beyond workhearth.skills.scriptkit: error values, ranges, sheets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from workhearth.skills.scriptkit import UserError

# The error values a spreadsheet cell can hold (Excel and LibreOffice spell them alike).
ERROR_VALUES = frozenset(
    {"#DIV/0!", "#REF!", "#NAME?", "#VALUE!", "#N/A", "#NUM!", "#NULL!", "#SPILL!", "#CALC!"}
)
# LibreOffice also writes its own codes into cached values on export (Err:502 …).
_LO_ERROR = re.compile(r"^Err:\d{3}$")
_RANGE = re.compile(r"^\$?([A-Za-z]{1,3})\$?(\d+)(?::\$?([A-Za-z]{1,3})\$?(\d+))?$")


def is_error_value(value: Any) -> bool:
    return isinstance(value, str) and (value in ERROR_VALUES or bool(_LO_ERROR.match(value)))


def parse_range(text: str) -> tuple[int, int, int, int]:
    """'B2:D9' → (min_col, min_row, max_col, max_row), 1-based; a single cell is a 1×1 range."""
    from openpyxl.utils import column_index_from_string

    match = _RANGE.match(text.strip())
    if not match:
        raise UserError(f"{text!r} is not a cell range like B2:D9")
    c1, r1, c2, r2 = match.groups()
    c2, r2 = c2 or c1, r2 or r1
    cols = sorted((column_index_from_string(c1.upper()), column_index_from_string(c2.upper())))
    rows = sorted((int(r1), int(r2)))
    if rows[0] < 1:
        raise UserError(f"{text!r}: rows start at 1")
    return cols[0], rows[0], cols[1], rows[1]


def pick_sheet(workbook: Any, name: str | None) -> Any:
    if name is None:
        return workbook.active
    if name not in workbook.sheetnames:
        raise UserError(f"no sheet {name!r} (sheets: {', '.join(workbook.sheetnames)})")
    return workbook[name]


def load_workbook(path: Path, *, data_only: bool = False) -> Any:
    import zipfile

    from openpyxl import load_workbook as _load

    try:
        return _load(path, data_only=data_only)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise UserError(f"{path}: not a readable .xlsx workbook ({exc})") from exc
