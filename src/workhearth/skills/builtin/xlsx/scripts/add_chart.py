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
        help="the category labels, e.g. A2:A9 (default: column A beside the data rows)",
    )
    parser.add_argument("--sheet", help="sheet holding the data (default: the active sheet)")
    parser.add_argument("--title", help="chart title")
    parser.add_argument("--x-title", help="category axis title (bar and line)")
    parser.add_argument("--y-title", help="value axis title (bar and line)")
    parser.add_argument(
        "--anchor", help="top-left cell of the chart (default: two columns right of the data)"
    )
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def add_chart(args: argparse.Namespace, source: Path) -> dict[str, Any]:
    from openpyxl.chart import BarChart, LineChart, PieChart, Reference
    from openpyxl.utils import get_column_letter
    from openpyxl.utils.cell import coordinate_from_string

    wb = load_workbook(source)
    ws = pick_sheet(wb, args.sheet)
    min_col, min_row, max_col, max_row = parse_range(args.data)
    if max_row > ws.max_row or max_col > ws.max_column:
        raise UserError(f"--data {args.data} reaches outside the sheet's data ({ws.dimensions})")
    if max_row - min_row < 1:
        raise UserError(f"--data {args.data}: needs a header row and at least one value row")
    for col in range(min_col, max_col + 1):
        for row in range(min_row + 1, max_row + 1):
            cell = ws.cell(row, col)
            if cell.value is not None and cell.data_type not in ("n", "f"):
                raise UserError(f"--data {args.data}: {cell.coordinate} is not a number")
    if args.type == "pie":
        max_col = min_col
    if args.categories:
        cmin_col, cmin_row, cmax_col, cmax_row = parse_range(args.categories)
        if cmax_row > ws.max_row or cmax_col > ws.max_column:
            raise UserError(f"--categories {args.categories} reaches outside the sheet's data")
    elif min_col > 1:
        cmin_col = cmax_col = 1
        cmin_row, cmax_row = min_row + 1, max_row
    else:
        cmin_col = None
    anchor = args.anchor or f"{get_column_letter(max(ws.max_column, max_col) + 2)}2"
    try:
        coordinate_from_string(anchor)
    except ValueError as exc:
        raise UserError(f"--anchor {anchor!r} is not a cell like H2") from exc

    chart: Any = {"bar": BarChart, "line": LineChart, "pie": PieChart}[args.type]()
    data = Reference(ws, min_col=min_col, min_row=min_row, max_col=max_col, max_row=max_row)
    chart.add_data(data, titles_from_data=True)
    if cmin_col is not None:
        chart.set_categories(
            Reference(ws, min_col=cmin_col, min_row=cmin_row, max_col=cmax_col, max_row=cmax_row)
        )
    if args.title:
        chart.title = args.title
    if args.type != "pie":
        if args.x_title:
            chart.x_axis.title = args.x_title
        if args.y_title:
            chart.y_axis.title = args.y_title
        # Why: openpyxl's default hides both axes' labels in recent Excel versions.
        chart.x_axis.delete = False
        chart.y_axis.delete = False
    chart.width, chart.height = 16, 8
    ws.add_chart(chart, anchor)
    atomic_write(args.output, wb.save)
    return {
        "output": str(args.output),
        "sheet": ws.title,
        "type": args.type,
        "series": max_col - min_col + 1,
        "anchor": anchor,
    }


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
