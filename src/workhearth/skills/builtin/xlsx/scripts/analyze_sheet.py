"""Profile one sheet of an .xlsx workbook: per column its type, counts, statistics and outliers.

Outliers follow the IQR rule (below Q1 - 1.5·IQR or above Q3 + 1.5·IQR). Cells whose formula
aggregates a range (a totals row: =SUM(B2:B9)) make their row a totals row: its formulas are
counted, but the row is left out of the statistics, so a total is never an outlier of its column.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlsx_common import is_error_value, load_workbook, pick_sheet

from workhearth.skills.scriptkit import (
    OneLineParser,
    UserError,
    atomic_write,
    check_output,
    existing_input,
    run,
)

NAME = "analyze_sheet"
_AGGREGATE = re.compile(
    r"^=\s*(SUM|SUBTOTAL|AVERAGE|COUNT|COUNTA|MIN|MAX|MEDIAN|PRODUCT)\s*\(.*:", re.IGNORECASE
)


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="analyze_sheet.py",
        description="Per column of a sheet: type, count, blanks, sum/mean/min/max, IQR outliers, "
        "formula count and error values.",
    )
    parser.add_argument("input", type=Path, help="the .xlsx workbook")
    parser.add_argument("--sheet", help="sheet name (default: the active sheet)")
    parser.add_argument(
        "--header-row", type=int, default=1, help="row holding the column names (default 1)"
    )
    parser.add_argument(
        "--format", choices=("json", "markdown"), default="markdown", help="output format"
    )
    parser.add_argument("-o", "--output", type=Path, help="write the report here, not to stdout")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def quartiles(values: list[float]) -> tuple[float, float]:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q3


def analyze(path: Path, sheet: str | None, header_row: int) -> dict[str, Any]:
    formulas_wb = load_workbook(path)
    values_wb = load_workbook(path, data_only=True)
    ws = pick_sheet(formulas_wb, sheet)
    cached = values_wb[ws.title]
    if header_row < 1 or header_row > max(ws.max_row, 1):
        raise UserError(f"--header-row {header_row} is outside the sheet (1..{ws.max_row})")
    totals_rows = {
        cell.row
        for row in ws.iter_rows(min_row=header_row + 1)
        for cell in row
        if cell.data_type == "f" and _AGGREGATE.match(str(cell.value))
    }
    columns, errors, uncalculated = [], [], 0
    for col in range(1, ws.max_column + 1):
        scan = ColumnScan(ws.cell(header_row, col).value)
        for row in range(header_row + 1, ws.max_row + 1):
            scan.add(ws.cell(row, col), cached.cell(row, col).value, row in totals_rows)
        errors += scan.errors
        uncalculated += scan.uncalculated
        if scan.header is not None or scan.count or scan.formulas:
            columns.append(scan.report(ws.cell(header_row, col).column_letter))
    return {
        "file": str(path),
        "sheet": ws.title,
        "rows": _data_rows(ws, header_row, totals_rows),
        "formulas": sum(c["formulas"] for c in columns),
        "totals_rows": sorted(totals_rows),
        "uncalculated_formulas": uncalculated,
        "errors": errors,
        "columns": columns,
    }


@dataclass
class ColumnScan:
    """One column's cells, taken in one at a time; totals rows count only their formulas."""

    header: Any
    numbers: list[tuple[str, float]] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)
    errors: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    blanks: int = 0
    formulas: int = 0
    uncalculated: int = 0

    def add(self, raw: Any, value: Any, in_totals_row: bool) -> None:
        is_formula = raw.data_type == "f"
        if is_formula:
            self.formulas += 1
            self.uncalculated += value is None
        error = value if is_error_value(value) else raw.value
        if is_error_value(error):
            self.errors.append({"cell": raw.coordinate, "error": error})
        if in_totals_row:
            return
        if is_error_value(error):
            self.kinds.add("error")
            self.count += 1
        elif value is None or (isinstance(value, str) and not value.strip()):
            self.blanks += not is_formula
        else:
            self.count += 1
            self.kinds.add(_kind(value))
            if _kind(value) == "number":
                self.numbers.append((raw.coordinate, float(value)))

    def report(self, letter: str) -> dict[str, Any]:
        kinds = set(self.kinds)
        info: dict[str, Any] = {
            "column": letter,
            "header": self.header,
            "type": kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "empty"),
            "count": self.count,
            "blanks": self.blanks,
            "formulas": self.formulas,
        }
        if self.numbers:
            info.update(_statistics(self.numbers))
        return info


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return "date"
    return "text"


def _statistics(numbers: list[tuple[str, float]]) -> dict[str, Any]:
    """Sum, mean, min, max and the IQR outliers (with 4 values or more)."""
    nums = [v for _, v in numbers]
    stats: dict[str, Any] = {
        "sum": _round(sum(nums)),
        "mean": _round(statistics.fmean(nums)),
        "min": _round(min(nums)),
        "max": _round(max(nums)),
        "outliers": [],
    }
    if len(nums) >= 4:
        q1, q3 = quartiles(nums)
        low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
        stats["outliers"] = [
            {"cell": ref, "value": _round(v)} for ref, v in numbers if v < low or v > high
        ]
    return stats


def _data_rows(ws: Any, header_row: int, totals_rows: set[int]) -> int:
    """Rows under the header that hold something and are not totals rows: what each
    column's count counts, so the report's numbers agree."""
    return sum(
        1
        for row in ws.iter_rows(min_row=header_row + 1)
        if row
        and row[0].row not in totals_rows
        and any(cell.value is not None and str(cell.value).strip() for cell in row)
    )


def _round(value: float) -> float | int:
    rounded = round(value, 6)
    return int(rounded) if rounded.is_integer() else rounded


def _totals_note(rows: list[int]) -> str:
    if not rows:
        return ""
    where = ", ".join(str(r) for r in rows)
    return f" (and {len(rows)} totals row{'s' if len(rows) > 1 else ''}: {where})"


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# {Path(report['file']).name} — sheet {report['sheet']}",
        "",
        f"{report['rows']} data rows{_totals_note(report['totals_rows'])}, "
        f"{report['formulas']} formulas, "
        f"{len(report['errors'])} error cells.",
    ]
    if report["uncalculated_formulas"]:
        lines.append(
            f"{report['uncalculated_formulas']} formulas have no stored value: run "
            "scripts/recalculate.py first for their numbers."
        )
    lines += [
        "",
        "| Column | Header | Type | Count | Blanks | Sum | Mean | Min | Max | Formulas | Outliers |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in report["columns"]:
        outliers = ", ".join(f"{o['cell']}={o['value']}" for o in c.get("outliers", []))
        cells = [
            c["column"],
            str(c["header"] if c["header"] is not None else "").replace("|", "\\|"),
            c["type"],
            c["count"],
            c["blanks"],
            *(c.get(k, "") for k in ("sum", "mean", "min", "max")),
            c["formulas"],
            outliers,
        ]
        lines.append("| " + " | ".join(str(x) for x in cells) + " |")
    if report["errors"]:
        lines += ["", "Errors: " + ", ".join(f"{e['cell']} {e['error']}" for e in report["errors"])]
    return "\n".join(lines) + "\n"


def main() -> int:
    args = parse_args()
    source = existing_input(args.input, (".xlsx", ".xlsm"))
    if args.output is not None:
        suffix = ".json" if args.format == "json" else ".md"
        check_output(args.output, inputs=(source,), force=args.force, suffixes=(suffix,))
    result = analyze(source, args.sheet, args.header_row)
    text = (
        json.dumps(result, ensure_ascii=False, indent=2) + "\n"
        if args.format == "json"
        else markdown(result)
    )
    if args.output is None:
        print(text, end="")
    else:
        atomic_write(args.output, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        print(f"wrote {args.output} ({len(result['columns'])} columns analysed)")
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
