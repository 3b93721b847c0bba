"""Create an .xlsx workbook from a CSV or JSON table, with real formulas.

Computed columns are formula templates (``--formula "Amount=[Price]*[Qty]"``), and a totals
row holds ``=SUM(...)`` over every numeric column, so the workbook stays live when edited.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

from workhearth.skills.scriptkit import (
    OneLineParser,
    UserError,
    atomic_write,
    check_output,
    existing_input,
    run,
)

NAME = "create_from_data"
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HEADER_REF = re.compile(r"\[([^\[\]]+)\]")
_CELL_REF = re.compile(r"\$?[A-Z]{1,3}\$?\d+")
FORMATS = {"int": "#,##0", "float": "#,##0.00", "date": "yyyy-mm-dd"}


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="create_from_data.py",
        description="Create an .xlsx workbook from CSV or JSON, with formula columns and a totals row.",
    )
    parser.add_argument(
        "input", type=Path, help="a .csv file (first row = headers) or a .json file"
    )
    parser.add_argument("-o", "--output", type=Path, required=True, help="the .xlsx file to write")
    parser.add_argument("--sheet", default="Data", help="name of the sheet (default: Data)")
    parser.add_argument(
        "--formula",
        action="append",
        default=[],
        metavar="NAME=TEMPLATE",
        help="add a computed column; TEMPLATE is a formula for one row where [Header] is that "
        "row's cell of a column and {row} the row number, e.g. 'Amount=[Price]*[Qty]' or "
        "'Tax=D{row}*0.1' (repeatable; later templates may use earlier ones)",
    )
    parser.add_argument(
        "--no-totals", action="store_true", help="do not add the SUM totals row under the data"
    )
    parser.add_argument("--totals-label", default="Total", help="label of the totals row")
    parser.add_argument(
        "--number-format",
        action="append",
        default=[],
        metavar="COLUMN=FORMAT",
        help="number format for a column, e.g. 'Price=#,##0.00' or 'Share=0.0%%' (repeatable)",
    )
    parser.add_argument("--encoding", default="utf-8-sig", help="CSV encoding (default utf-8-sig)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def read_table(path: Path, encoding: str) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows of raw values (CSV strings are typed later)."""
    try:
        text = path.read_text(encoding=encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UserError(f"{path}: cannot decode as {encoding} ({exc})") from exc
    if path.suffix.lower() == ".csv":
        rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
        if not rows:
            raise UserError(f"{path}: the CSV is empty")
        headers, body = [h.strip() for h in rows[0]], rows[1:]
    else:
        headers, body = _json_table(path, text)
    if not headers or any(not h for h in headers):
        raise UserError(f"{path}: every column needs a header")
    if len(set(headers)) != len(headers):
        raise UserError(f"{path}: duplicate column headers")
    if not body:
        raise UserError(f"{path}: no data rows")
    width = len(headers)
    for number, row in enumerate(body, start=2):
        if len(row) > width:
            raise UserError(f"{path}: row {number} has {len(row)} values for {width} columns")
    return headers, [list(row) + [None] * (width - len(row)) for row in body]


def _json_table(path: Path, text: str) -> tuple[list[str], list[list[Any]]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: invalid JSON ({exc})") from exc
    if isinstance(data, dict) and isinstance(data.get("columns"), list):
        rows = data.get("rows")
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise UserError(f'{path}: "rows" must be a list of lists')
        return [str(h).strip() for h in data["columns"]], rows
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        headers: list[str] = []
        for item in data:
            headers += [str(k) for k in item if str(k) not in headers]
        return headers, [[item.get(h) for h in headers] for item in data]
    raise UserError(
        f'{path}: expected a list of objects or {{"columns": [...], "rows": [[...], ...]}}'
    )


def typed(value: Any) -> Any:
    """A CSV/JSON value as the cell value it should be: numbers and ISO dates are not text."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | dict):
        return json.dumps(value, ensure_ascii=False)
    text = str(value).strip()
    if text == "":
        return None
    if _INT.match(text) and not (len(text.lstrip("+-")) > 1 and text.lstrip("+-")[0] == "0"):
        return int(text)  # Why: "007" stays text — leading zeros are an identifier, not a number
    if _FLOAT.match(text):
        return float(text)
    if _DATE.match(text):
        try:
            return dt.date.fromisoformat(text)
        except ValueError:
            return text
    return text


def column_kind(values: list[Any]) -> str:
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, int | float) and not isinstance(v, bool) for v in present):
        return "float"
    if present and all(isinstance(v, dt.date) for v in present):
        return "date"
    return "text"


def compile_template(name: str, template: str, letters: dict[str, str]) -> str:
    """'[Price]*[Qty]' → '=C{row}*D{row}', checking every referenced header exists."""
    body = template.strip().removeprefix("=")
    if not body:
        raise UserError(f"formula column {name!r} has an empty template")

    def column(match: re.Match[str]) -> str:
        header = match.group(1).strip()
        if header not in letters:
            raise UserError(
                f"formula column {name!r} refers to unknown column [{header}] "
                f"(columns: {', '.join(letters)})"
            )
        return f"{letters[header]}{{row}}"

    body = _HEADER_REF.sub(column, body)
    if "{row}" not in body and not _CELL_REF.search(body):
        raise UserError(
            f"formula column {name!r}: the template must name a column like [Price] or use {{row}}"
        )
    try:
        body.format(row=2)
    except (KeyError, IndexError, ValueError) as exc:
        raise UserError(f"formula column {name!r}: bad template ({exc})") from exc
    return "=" + body


def build(args: argparse.Namespace, headers: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
    from openpyxl.utils import get_column_letter

    columns = [[typed(v) for v in col] for col in zip(*rows, strict=True)]
    kinds = [column_kind(col) for col in columns]
    letters = {h: get_column_letter(i) for i, h in enumerate(headers, start=1)}

    formulas: list[tuple[str, str]] = []
    for spec in args.formula:
        name, sep, template = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(f"--formula {spec!r}: expected NAME=TEMPLATE")
        if name in letters:
            raise UserError(f"--formula {spec!r}: column {name!r} already exists")
        compiled = compile_template(name, template, letters)
        letters[name] = get_column_letter(len(letters) + 1)
        formulas.append((name, compiled))

    all_headers = headers + [name for name, _ in formulas]
    formats = {h: FORMATS[k] for h, k in zip(headers, kinds, strict=True) if k != "text"}
    formats.update({name: FORMATS["float"] for name, _ in formulas})
    for spec in args.number_format:
        name, sep, fmt = spec.partition("=")
        if not sep or name.strip() not in letters or not fmt:
            raise UserError(f"--number-format {spec!r}: expected an existing COLUMN=FORMAT")
        formats[name.strip()] = fmt

    wb = Workbook()
    ws = wb.active
    try:
        ws.title = args.sheet
    except ValueError as exc:
        raise UserError(f"--sheet {args.sheet!r}: {exc}") from exc

    ws.append(all_headers)
    first, last = 2, len(rows) + 1
    for index, row_values in enumerate(zip(*columns, strict=True)):
        row = first + index
        ws.append(list(row_values) + [template.format(row=row) for _, template in formulas])

    numeric = [h for h, k in zip(headers, kinds, strict=True) if k in ("int", "float")]
    numeric += [name for name, _ in formulas]
    formula_count = len(formulas) * len(rows)
    totals_row = None
    if not args.no_totals and numeric:
        totals_row = last + 1
        label_column = next((h for h, k in zip(headers, kinds, strict=True) if k == "text"), None)
        if label_column is not None and label_column not in numeric:
            ws[f"{letters[label_column]}{totals_row}"] = args.totals_label
        for header in numeric:
            col = letters[header]
            ws[f"{col}{totals_row}"] = f"=SUM({col}{first}:{col}{last})"
            formula_count += 1

    # Styling: a header a reader can find, numbers that read as numbers, room for the text.
    header_font = Font(bold=True, color="FFFFFF")
    header_fill = PatternFill("solid", fgColor="1F4E78")
    thin = Side(style="thin", color="808080")
    for cell in ws[1]:
        cell.font, cell.fill = header_font, header_fill
        cell.alignment = Alignment(horizontal="center", vertical="center", wrap_text=True)
    for header, fmt in formats.items():
        for (cell,) in ws[f"{letters[header]}{first}:{letters[header]}{last + 1}"]:
            cell.number_format = fmt
    if totals_row is not None:
        for cell in ws[totals_row]:
            cell.font = Font(bold=True)
            cell.border = Border(top=thin, bottom=Side(style="double", color="808080"))
    for header, col in letters.items():
        data = columns[headers.index(header)] if header in headers else []
        width = max(_display_width(str(v)) for v in [header, *data] if v is not None)
        if header in formats:
            width = max(width, 12)
        ws.column_dimensions[col].width = min(max(width + 2, 8), 60)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{letters[all_headers[-1]]}{last}"

    atomic_write(args.output, wb.save)
    return {
        "output": str(args.output),
        "sheet": ws.title,
        "rows": len(rows),
        "columns": all_headers,
        "formulas": formula_count,
        "totals_row": totals_row,
    }


def _display_width(text: str) -> int:
    # Why: CJK characters take two columns of width in a spreadsheet, Latin ones one.
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in str(text))


def main() -> int:
    args = parse_args()
    source = existing_input(args.input, (".csv", ".json"))
    check_output(args.output, inputs=(source,), force=args.force, suffixes=(".xlsx",))
    headers, rows = read_table(source, args.encoding)
    summary = build(args, headers, rows)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(
            f"wrote {summary['output']} ({summary['rows']} rows, {len(summary['columns'])} "
            f"columns, {summary['formulas']} formulas)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
