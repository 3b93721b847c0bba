"""Add a bar, line or pie chart over a range of an .xlsx sheet (a native chart, not a picture).

Run it before recalculate.py: openpyxl keeps formulas but drops stored results when it saves.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from xlsx_common import load_workbook, parse_range, pick_sheet

from workhearth.skills.scriptkit import (
    OneLineParser,
    UserError,
    atomic_write,
    check_output,
    existing_input,
    run,
)

NAME = "add_chart"


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="add_chart.py",
        description="Add a bar, line or pie chart over a range of a sheet; writes a new workbook.",
    )
    parser.add_argument("input", type=Path, help="the .xlsx workbook (not modified)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the .xlsx to write")
    parser.add_argument("--type", choices=("bar", "line", "pie"), default="bar", help="chart type")
    parser.add_argument(
        "--data",
        required=True,
        help="the series: a range whose first row holds the series names, e.g. C1:D9 "
        "(a pie uses the first column only)",
    )
    parser.add_argument(
        "--categories",
        help="the category labels, e.g. A2:A9, or A2:B9 for two levels (default: the text "
        "columns left of the data, as many as tell the rows apart)",
    )
    parser.add_argument("--sheet", help="sheet holding the data (default: the active sheet)")
    parser.add_argument("--title", help="chart title")
    parser.add_argument("--x-title", help="category axis title (bar and line)")
    parser.add_argument("--y-title", help="value axis title (bar and line)")
    parser.add_argument(
        "--anchor",
        help="top-left cell of the chart (default: column A, two rows under the table, so it "
        "prints with the table)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def add_chart(args: argparse.Namespace, source: Path) -> dict[str, Any]:
    from openpyxl.chart import BarChart, LineChart, PieChart, Reference
    from openpyxl.utils.cell import coordinate_from_string

    wb = load_workbook(source)
    ws = pick_sheet(wb, args.sheet)
    min_col, min_row, max_col, max_row = check_data(ws, args.data)
    if args.type == "pie":
        max_col = min_col
    categories = pick_categories(ws, args.categories, min_col, min_row + 1, max_row)
    anchor = args.anchor or f"A{ws.max_row + 3}"
    try:
        coordinate_from_string(anchor)
    except ValueError as exc:
        raise UserError(f"--anchor {anchor!r} is not a cell like H2") from exc

    chart: Any = {"bar": BarChart, "line": LineChart, "pie": PieChart}[args.type]()
    data = Reference(ws, min_col=min_col, min_row=min_row, max_col=max_col, max_row=max_row)
    chart.add_data(data, titles_from_data=True)
    if categories is not None:
        for series in chart.series:
            series.cat = categories
    label_axes(chart, args)
    chart.width, chart.height = 16, 8
    ws.add_chart(chart, anchor)
    page_break = keep_on_one_page(ws, anchor, chart.width, chart.height)
    atomic_write(args.output, wb.save)
    return {
        "output": str(args.output),
        "sheet": ws.title,
        "type": args.type,
        "series": max_col - min_col + 1,
        "anchor": anchor,
        "categories": None if categories is None else _formula(categories),
        "page_break_before_row": page_break,
    }


def check_data(ws: Any, text: str) -> tuple[int, int, int, int]:
    """The --data range, once it is known to hold a header row and numbers under it."""
    min_col, min_row, max_col, max_row = parse_range(text)
    if max_row > ws.max_row or max_col > ws.max_column:
        raise UserError(f"--data {text} reaches outside the sheet's data ({ws.dimensions})")
    if max_row - min_row < 1:
        raise UserError(f"--data {text}: needs a header row and at least one value row")
    for col in range(min_col, max_col + 1):
        for row in range(min_row + 1, max_row + 1):
            cell = ws.cell(row, col)
            if cell.value is not None and cell.data_type not in ("n", "f"):
                raise UserError(f"--data {text}: {cell.coordinate} is not a number")
    return min_col, min_row, max_col, max_row


def pick_categories(ws: Any, given: str | None, data_col: int, first: int, last: int) -> Any | None:
    """The category labels: --categories, or the label columns left of the data.

    Why labels and not just column A: when column A repeats (East, East, South …) the
    rows are told apart by the next text column too (Widget, Gadget), so both become one
    two-level axis — East once over its rows, one category per row — instead of a row of
    look-alike "East" labels.
    """
    from openpyxl.chart.data_source import (
        AxDataSource,
        MultiLevelStrRef,
        StrData,
        StrRef,
        StrVal,
    )
    from openpyxl.utils import get_column_letter, quote_sheetname

    if given:
        cmin_col, first, cmax_col, last = parse_range(given)
        if last > ws.max_row or cmax_col > ws.max_column:
            raise UserError(f"--categories {given} reaches outside the sheet's data")
    else:
        labels = _label_columns(ws, data_col, first, last)
        if not labels:
            return None
        cmin_col, cmax_col = labels[0], labels[-1]
    ref = (
        f"{quote_sheetname(ws.title)}!${get_column_letter(cmin_col)}${first}"
        f":${get_column_letter(cmax_col)}${last}"
    )
    if cmax_col > cmin_col:
        return AxDataSource(multiLvlStrRef=MultiLevelStrRef(f=ref))
    texts = [ws.cell(row, cmin_col).value for row in range(first, last + 1)]
    cache = StrData(
        ptCount=len(texts),
        pt=[StrVal(idx=i, v=str(v)) for i, v in enumerate(texts) if v is not None],
    )
    # Why strRef with a cache: openpyxl writes labels as numRef, which readers that do not
    # recompute (and Excel, for text cells) show as 1, 2, 3.
    return AxDataSource(strRef=StrRef(f=ref, strCache=cache))


def _label_columns(ws: Any, data_col: int, first: int, last: int) -> list[int]:
    """The text columns left of the data, from the first, as many as tell the rows apart."""
    text_cols = [
        col
        for col in range(1, data_col)
        if all(isinstance(ws.cell(row, col).value, str) for row in range(first, last + 1))
    ]
    if not text_cols:
        return []
    chosen = [text_cols[0]]
    for col in text_cols[1:]:
        if _unique(ws, chosen, first, last) or col != chosen[-1] + 1:
            break
        chosen.append(col)
    return chosen


def _unique(ws: Any, cols: list[int], first: int, last: int) -> bool:
    keys = [tuple(ws.cell(row, col).value for col in cols) for row in range(first, last + 1)]
    return len(set(keys)) == len(keys)


def label_axes(chart: Any, args: argparse.Namespace) -> None:
    if args.title:
        chart.title = args.title
    if args.type == "pie":
        return
    if args.x_title:
        chart.x_axis.title = args.x_title
    if args.y_title:
        chart.y_axis.title = args.y_title
    # Why: openpyxl's default hides both axes' labels in recent Excel versions.
    chart.x_axis.delete = False
    chart.y_axis.delete = False


def keep_on_one_page(ws: Any, anchor: str, width_cm: float, height_cm: float) -> int | None:
    """Start a new printed page at the chart's row when the chart would straddle a page end.

    An estimate, as a spreadsheet has no layout of its own: rows are as tall as set (Excel's
    15 pt when unset), the page is the sheet's paper less its margins, and a sheet set to fit
    one page wide prints scaled down by its width (columns, or the chart when wider).
    Returns the row that now starts a page, or None.
    """
    from openpyxl.utils.cell import coordinate_from_string
    from openpyxl.worksheet.pagebreak import Break

    row = coordinate_from_string(anchor)[1]
    page_cm, scale = _page_height_cm(ws), _print_scale(ws, width_cm)
    titles_cm = sum(_row_cm(ws, t) * scale for t in _title_rows(ws))
    used = 0.0
    for r in range(1, row):
        height = _row_cm(ws, r) * scale
        if used + height > page_cm:
            used = titles_cm
        used += height
    chart_cm = height_cm * scale
    if row == 1 or used + chart_cm <= page_cm or chart_cm > page_cm - titles_cm:
        return None  # Why: it fits, or it is too tall for any page: a break would not help
    ws.row_breaks.append(Break(id=row - 1))
    return row


def _row_cm(ws: Any, row: int) -> float:
    dim = ws.row_dimensions.get(row)
    points = dim.height if dim is not None and dim.height else 15.0
    return points * 2.54 / 72


def _title_rows(ws: Any) -> range:
    titles = ws.print_title_rows
    if not titles:
        return range(0)
    first, _, last = titles.replace("$", "").partition(":")
    return range(int(first), int(last or first) + 1)


def _paper_cm(ws: Any) -> tuple[float, float]:
    paper = {1: (21.59, 27.94), 9: (21.0, 29.7), 8: (29.7, 42.0), 11: (14.8, 21.0)}
    width, height = paper.get(int(ws.page_setup.paperSize or 9), (21.0, 29.7))
    return (height, width) if ws.page_setup.orientation == "landscape" else (width, height)


def _page_height_cm(ws: Any) -> float:
    margins = ws.page_margins
    return _paper_cm(ws)[1] - 2.54 * ((margins.top or 0.75) + (margins.bottom or 0.75))


def _print_scale(ws: Any, chart_width_cm: float) -> float:
    from openpyxl.utils import get_column_letter

    props = ws.sheet_properties.pageSetUpPr
    if not (props is not None and props.fitToPage and ws.page_setup.fitToWidth != 0):
        return (ws.page_setup.scale or 100) / 100
    margins = ws.page_margins
    printable = _paper_cm(ws)[0] - 2.54 * ((margins.left or 0.7) + (margins.right or 0.7))
    columns = 0.0
    for col in range(1, ws.max_column + 1):
        dim = ws.column_dimensions.get(get_column_letter(col))
        columns += ((dim.width if dim is not None and dim.width else 8.43) + 0.7) * 0.19
    return min(1.0, printable / max(columns, chart_width_cm))


def _formula(source: Any) -> str:
    return str((source.strRef or source.multiLvlStrRef).f)


def main() -> int:
    args = parse_args()
    source = existing_input(args.input, (".xlsx", ".xlsm"))
    check_output(args.output, inputs=(source,), force=args.force, suffixes=(source.suffix.lower(),))
    result = add_chart(args, source)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(
            f"wrote {result['output']} ({result['type']} chart, {result['series']} series, "
            f"at {result['sheet']}!{result['anchor']})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
