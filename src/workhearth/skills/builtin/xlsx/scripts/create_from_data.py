"""Create an .xlsx workbook from a CSV or JSON table, with real formulas.

Computed columns are formula templates (``--formula "Amount=[Price]*[Qty]"``), and a totals
row holds ``=SUM(...)`` under the columns whose sum means something (amounts, quantities, costs;
not prices, rates, ids or years), so the workbook stays live when edited. The sheet prints one
page wide with the header row on every page.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import itertools
import json
import re
import sys
from dataclasses import dataclass
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
FONT = "Calibri"  # the workbook's default font: the body already uses it
# Print width: A4 portrait less openpyxl's default 0.75" side margins; a column of N characters
# is about (N + 0.7) × 0.19 cm (as `hearth check` measures it).
PORTRAIT_PRINT_CM = 21.0 - 2 * 0.75 * 2.54
CM_PER_CHAR = 0.19
WIDE_COLUMNS = 6
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|%")
# Header words that decide whether a column's sum means something (see is_additive).
NEVER_TOTAL = frozenset(
    "% rate rates ratio percent percentage pct share growth id ids no year years date dates "
    "age ages avg average mean median".split()
)
NEVER_TOTAL_ZH = ("率", "比例", "占比", "百分比", "编号", "序号", "工号", "学号", "代码", "年份",
                  "年度", "日期", "年龄", "平均", "均值")  # fmt: skip
TOTAL = frozenset(
    "amount amounts amt qty quantity quantities total totals subtotal sum sales cost costs "
    "revenue revenues income expense expenses spend tax taxes fee fees profit units".split()
)
TOTAL_ZH = ("金额", "数量", "合计", "总计", "小计", "总额", "销售额", "销量", "成本", "收入",
            "费用", "支出", "利润", "税额")  # fmt: skip
NOT_TOTAL = frozenset("price prices score scores".split())
NOT_TOTAL_ZH = ("单价", "价格", "分数", "得分", "评分")


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
        "--total",
        action="append",
        default=[],
        metavar="COLUMN",
        help="add up this column in the totals row, whatever its header says (repeatable)",
    )
    parser.add_argument(
        "--no-total",
        action="append",
        default=[],
        metavar="COLUMN",
        help="leave this column out of the totals row (repeatable); by default amounts, "
        "quantities, costs and other additive columns are added up, prices, rates, %%, ids, "
        "years, dates, ages and scores are not",
    )
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

    table = plan_table(args, headers, rows)
    wb = Workbook()
    ws = wb.active
    try:
        ws.title = args.sheet
    except ValueError as exc:
        raise UserError(f"--sheet {args.sheet!r}: {exc}") from exc
    totals_row = write_cells(ws, table, args.totals_label)
    style_sheet(ws, table, totals_row)
    setup_print(ws, table)
    atomic_write(args.output, wb.save)
    return {
        "output": str(args.output),
        "sheet": ws.title,
        "rows": len(rows),
        "columns": table.all_headers,
        "formulas": len(table.formulas) * len(rows) + (len(table.totalled) if totals_row else 0),
        "totals_row": totals_row,
        "totalled": table.totalled if totals_row else [],
    }


@dataclass
class Table:
    """What goes into the sheet, decided before anything is written."""

    headers: list[str]
    columns: list[list[Any]]
    kinds: list[str]
    letters: dict[str, str]
    formulas: list[tuple[str, str]]
    formats: dict[str, str]
    totalled: list[str]

    @property
    def all_headers(self) -> list[str]:
        return self.headers + [name for name, _ in self.formulas]

    @property
    def last_row(self) -> int:
        return len(self.columns[0]) + 1


def plan_table(args: argparse.Namespace, headers: list[str], rows: list[list[Any]]) -> Table:
    from openpyxl.utils import get_column_letter

    columns = [[typed(v) for v in col] for col in zip(*rows, strict=True)]
    kinds = [column_kind(col) for col in columns]
    letters = {h: get_column_letter(i) for i, h in enumerate(headers, start=1)}
    formulas = plan_formulas(args.formula, letters)
    formats = {h: FORMATS[k] for h, k in zip(headers, kinds, strict=True) if k != "text"}
    formats.update({name: FORMATS["float"] for name, _ in formulas})
    for spec in args.number_format:
        name, sep, fmt = spec.partition("=")
        if not sep or name.strip() not in letters or not fmt:
            raise UserError(f"--number-format {spec!r}: expected an existing COLUMN=FORMAT")
        formats[name.strip()] = fmt
    table = Table(headers, columns, kinds, letters, formulas, formats, [])
    totalled = columns_to_total(table, args.total, args.no_total)  # checks the names either way
    table.totalled = [] if args.no_totals else totalled
    return table


def plan_formulas(specs: list[str], letters: dict[str, str]) -> list[tuple[str, str]]:
    """The --formula columns, compiled; ``letters`` gains each new column's letter."""
    from openpyxl.utils import get_column_letter

    formulas: list[tuple[str, str]] = []
    for spec in specs:
        name, sep, template = spec.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UserError(f"--formula {spec!r}: expected NAME=TEMPLATE")
        if name in letters:
            raise UserError(f"--formula {spec!r}: column {name!r} already exists")
        compiled = compile_template(name, template, letters)
        letters[name] = get_column_letter(len(letters) + 1)
        formulas.append((name, compiled))
    return formulas


def columns_to_total(table: Table, force: list[str], refuse: list[str]) -> list[str]:
    """The columns whose sum means something: the rule below, then --total/--no-total."""
    numeric = {h for h, k in zip(table.headers, table.kinds, strict=True) if k in ("int", "float")}
    numeric |= {name for name, _ in table.formulas}
    for option, names in (("--total", force), ("--no-total", refuse)):
        for name in names:
            if name not in table.letters:
                raise UserError(
                    f"{option} {name!r}: no such column (columns: {', '.join(table.all_headers)})"
                )
            if option == "--total" and name not in numeric:
                raise UserError(f"--total {name!r}: the column holds no numbers to add up")
    if both := set(force) & set(refuse):
        raise UserError(f"--total and --no-total both name {', '.join(sorted(both))}")
    values = dict(zip(table.headers, table.columns, strict=True))
    chosen = []
    for header in table.all_headers:
        if header in force or (
            header in numeric
            and header not in refuse
            and is_additive(header, values.get(header), table.formats.get(header, ""))
        ):
            chosen.append(header)
    return chosen


def is_additive(header: str, values: list[Any] | None, number_format: str) -> bool:
    """Whether adding up a numeric column means something, by its header, then its values.

    A share, a rate, an id, a year, a date or an age never adds up; an amount, a quantity or
    a cost does, even when its header also says "price" ("Total price"); a price or a score
    does not. Headerless clues come from the values: a column of years or of consecutive
    numbers (1, 2, 3 …) is a key, not a measure.
    """
    words = header_words(header)
    if "%" in number_format or words & NEVER_TOTAL or _matches(header, NEVER_TOTAL_ZH):
        return False
    if words & TOTAL or _matches(header, TOTAL_ZH):
        return True
    if words & NOT_TOTAL or _matches(header, NOT_TOTAL_ZH) or header.strip().endswith("年"):
        return False
    return values is None or not _looks_like_key(values)


def header_words(header: str) -> set[str]:
    """'UnitPrice (USD)' → {'unit', 'price', 'usd'}; a '%' counts as a word."""
    return {w.lower() for w in _WORD.findall(header)}


def _matches(header: str, words: tuple[str, ...]) -> bool:
    return any(word in header for word in words)


def _looks_like_key(values: list[Any]) -> bool:
    present = [v for v in values if v is not None]
    if not present or not all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return False
    if all(1900 <= v <= 2100 for v in present):
        return True  # Why: a column of years is a label, and its sum a meaningless number
    steps = {b - a for a, b in itertools.pairwise(present)}
    return len(present) >= 3 and steps == {1}


def write_cells(ws: Any, table: Table, totals_label: str) -> int | None:
    """Header, rows (formula columns filled per row) and the totals row; its number or None."""
    ws.append(table.all_headers)
    for index, row_values in enumerate(zip(*table.columns, strict=True)):
        row = 2 + index
        ws.append(list(row_values) + [template.format(row=row) for _, template in table.formulas])
    if not table.totalled:
        return None
    totals_row, last = table.last_row + 1, table.last_row
    label = next((h for h, k in zip(table.headers, table.kinds, strict=True) if k == "text"), None)
    if label is None:
        label = next((h for h in table.all_headers if h not in table.totalled), None)
    if label is not None:
        ws[f"{table.letters[label]}{totals_row}"] = totals_label
    for header in table.totalled:
        col = table.letters[header]
        ws[f"{col}{totals_row}"] = f"=SUM({col}2:{col}{last})"
    return totals_row


def style_sheet(ws: Any, table: Table, totals_row: int | None) -> None:
    """A header a reader can find, numbers that read as numbers, room for the text, and one
    font family throughout (named on every cell: a style without a font name prints in
    LibreOffice's default serif)."""
    from openpyxl.styles import Alignment, Border, Font, PatternFill, Side

    last = totals_row or table.last_row
    body_font, bold_font = Font(name=FONT, size=11), Font(name=FONT, size=11, bold=True)
    for row in ws.iter_rows(min_row=2, max_row=last, max_col=len(table.all_headers)):
        for cell in row:
            cell.font = bold_font if cell.row == totals_row else body_font
    header_fill = PatternFill("solid", fgColor="1F4E78")
    for cell in ws[1]:
        cell.font = Font(name=FONT, size=11, bold=True, color="FFFFFF")
        cell.fill = header_fill
        cell.alignment = Alignment(horizontal="center", vertical="center", wrap_text=True)
    for header, fmt in table.formats.items():
        for (cell,) in ws[f"{table.letters[header]}2:{table.letters[header]}{last}"]:
            cell.number_format = fmt
    if totals_row is not None:
        thin, double = Side(style="thin", color="808080"), Side(style="double", color="808080")
        for cell in ws[totals_row]:
            cell.border = Border(top=thin, bottom=double)
    for header, col in table.letters.items():
        ws.column_dimensions[col].width = column_width(table, header)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{table.letters[table.all_headers[-1]]}{table.last_row}"


def column_width(table: Table, header: str) -> float:
    data = table.columns[table.headers.index(header)] if header in table.headers else []
    width = max(_display_width(str(v)) for v in [header, *data] if v is not None)
    if header in table.formats:
        width = max(width, 12)
    return min(max(width + 2, 8), 60)


def setup_print(ws: Any, table: Table) -> None:
    """Print one page wide, as many pages down as needed, the header on every page; landscape
    when the table is wide."""
    from openpyxl.worksheet.properties import PageSetupProperties

    if ws.sheet_properties.pageSetUpPr is None:
        ws.sheet_properties.pageSetUpPr = PageSetupProperties()
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    ws.print_title_rows = "1:1"
    width_cm = sum(
        (ws.column_dimensions[col].width + 0.7) * CM_PER_CHAR for col in table.letters.values()
    )
    if len(table.all_headers) > WIDE_COLUMNS or width_cm > PORTRAIT_PRINT_CM:
        ws.page_setup.orientation = "landscape"


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
        totals = ", ".join(summary["totalled"]) or "none"
        print(
            f"wrote {summary['output']} ({summary['rows']} rows, {len(summary['columns'])} "
            f"columns, {summary['formulas']} formulas; totals: {totals})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
