"""Where a sheet's table and charts fall on the printed pages.

An estimate, as a spreadsheet has no layout of its own until a program prints it: a
column of N characters is about (N + 0.7) × 0.19 cm, a row as tall as set (15 pt when
unset), the page the sheet's paper less its margins, scaled when the sheet is set to
fit; pages break where the next column (row) no longer fits, or at a manual break.
LibreOffice's export of the issue's workbooks agrees on which page a chart starts.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workhearth.check.receipt import Problem

EMU_PER_CM = 360_000
CM_PER_CHAR = 0.19  # one character of Calibri 11 at 96 dpi is about 7 px ≈ 0.19 cm
DEFAULT_COLUMN_CHARS = 8.43
DEFAULT_ROW_POINTS = 15.0
CM_PER_POINT = 2.54 / 72
# Paper (width, height) in cm, portrait, by the paperSize code; A4 when unknown.
PAPER_CM = {
    1: (21.59, 27.94),
    5: (21.59, 35.56),
    8: (29.7, 42.0),
    9: (21.0, 29.7),
    11: (14.8, 21.0),
}
MAX_ROWS = 1_048_576
MAX_COLUMNS = 16_384
REACH_ROWS = 5_000
REACH_COLUMNS = 500


@dataclass(frozen=True)
class PageSetup:
    """A sheet's print setup; margins in inches, as the file keeps them."""

    paper: int = 9
    landscape: bool = False
    fit: bool = False
    fit_width: int = 1  # pages across when fitting; 0: as many as needed
    fit_height: int = 1
    scale: float = 100.0
    down_then_over: bool = True
    left: float = 0.75
    right: float = 0.75
    top: float = 1.0
    bottom: float = 1.0
    row_breaks: frozenset[int] = frozenset()  # first row of a new page (1-based)
    col_breaks: frozenset[int] = frozenset()


def paper_cm(setup: PageSetup) -> tuple[float, float]:
    width, height = PAPER_CM.get(setup.paper, PAPER_CM[9])
    return (height, width) if setup.landscape else (width, height)


def print_width_cm(setup: PageSetup) -> float:
    return paper_cm(setup)[0] - 2.54 * (setup.left + setup.right)


def print_height_cm(setup: PageSetup) -> float:
    return paper_cm(setup)[1] - 2.54 * (setup.top + setup.bottom)


@dataclass
class SheetLayout:
    """A sheet's geometry: column widths (characters; 0 hidden; None unset), row heights
    (points; 0 hidden), where its data lies, its print setup, print area and titles."""

    title: str
    setup: PageSetup = field(default_factory=PageSetup)
    col_widths: dict[int, float | None] = field(default_factory=dict)
    row_heights: dict[int, float] = field(default_factory=dict)
    max_column: int = 0
    last_row: int = 0
    data_rows: tuple[int, int] | None = None  # first and last row holding something
    data_cols: tuple[int, int] | None = None
    print_area: str | None = None  # "'Sales'!$A$1:$F$20"
    title_rows: str | None = None  # "'Sales'!$1:$1"

    def data(self, row: int, col: int) -> None:
        rows, cols = self.data_rows or (row, row), self.data_cols or (col, col)
        self.data_rows = (min(rows[0], row), max(rows[1], row))
        self.data_cols = (min(cols[0], col), max(cols[1], col))

    def col_cm(self, col: int) -> float:
        chars = self.col_widths.get(col)
        if chars == 0:
            return 0.0
        return ((chars or DEFAULT_COLUMN_CHARS) + 0.7) * CM_PER_CHAR

    def row_cm(self, row: int) -> float:
        return self.row_heights.get(row, DEFAULT_ROW_POINTS) * CM_PER_POINT

    def width_cm(self) -> float:
        return sum(self.col_cm(col) for col in range(1, self.max_column + 1))


@dataclass(frozen=True)
class _Area:
    c1: int
    r1: int
    c2: int
    r2: int
    shown: str

    def holds(self, col: int, row: int) -> bool:
        return self.c1 <= col <= self.c2 and self.r1 <= row <= self.r2


@dataclass(frozen=True)
class _Placed:
    name: str
    col: int
    row: int
    last_col: int
    last_row: int


_RANGE = re.compile(r"^([A-Z]{0,3})([0-9]*)(?::([A-Z]{0,3})([0-9]*))?$")


def _letters_to_number(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def _area(text: str | None) -> _Area | None:
    """The first range of a print area (``'Sales'!$A$1:$F$20``; whole columns or rows too)."""
    if not text:
        return None
    first = text.split(",")[0].rpartition("!")[2].replace("$", "").strip()
    match = _RANGE.match(first)
    if match is None or not (match.group(1) or match.group(2)):
        return None
    ca, ra, cb, rb = match.groups()
    cb, rb = (cb, rb) if match.group(3) is not None or match.group(4) else (ca, ra)
    c1, c2 = (_letters_to_number(ca), _letters_to_number(cb)) if ca else (1, MAX_COLUMNS)
    r1, r2 = (int(ra), int(rb or ra)) if ra else (1, MAX_ROWS)
    return _Area(c1, r1, c2 or c1, r2, first)


def _title_rows(text: str | None) -> list[int]:
    rows: list[int] = []
    for part in (text or "").split(","):
        match = re.search(r"\$?([0-9]+):\$?([0-9]+)$", part.strip())
        if match:
            rows += range(int(match.group(1)), int(match.group(2)) + 1)
    return rows


def _walk(start: int, offset_cm: float, size: Callable[[int], float], limit: int) -> int:
    """The column (row) where a length of ``offset_cm`` from ``start``'s edge ends."""
    index, left = start, offset_cm
    while index < limit and left > size(index):
        left -= size(index)
        index += 1
    return index


def _place(layout: SheetLayout, chart: dict[str, Any]) -> _Placed:
    if "from" in chart:
        col, col_off, row, row_off = chart["from"]
    else:
        x, y = chart["pos"]
        col = _walk(1, x / EMU_PER_CM, layout.col_cm, MAX_COLUMNS)
        row = _walk(1, y / EMU_PER_CM, layout.row_cm, MAX_ROWS)
        col_off = row_off = 0.0
    if "to" in chart:
        last_col, _, last_row, _ = chart["to"]
    else:
        cx, cy = chart.get("ext", (0.0, 0.0))
        last_col = _walk(col, (col_off + cx) / EMU_PER_CM, layout.col_cm, MAX_COLUMNS)
        last_row = _walk(row, (row_off + cy) / EMU_PER_CM, layout.row_cm, MAX_ROWS)
    return _Placed(str(chart["name"]), col, row, max(col, last_col), max(row, last_row))


def _pages(
    first: int,
    last: int,
    size: Callable[[int], float],
    usable: float,
    breaks: frozenset[int],
    repeat: float = 0.0,
) -> dict[int, int]:
    """Each column (row) from ``first`` to ``last`` -> its page along that direction (0-based).
    ``repeat``: what print titles take on every page after the first."""
    page, used, out = 0, 0.0, {}
    for index in range(first, last + 1):
        length = size(index)
        if index > first and (index in breaks or (used + length > usable and used > repeat)):
            page, used = page + 1, repeat
        used += length
        out[index] = page
    return out


def _scale(layout: SheetLayout, width: float, height: float) -> float:
    setup = layout.setup
    if not setup.fit:
        return max(setup.scale, 10.0) / 100
    scale = 1.0
    if setup.fit_width > 0 and width > 0:
        scale = min(scale, setup.fit_width * print_width_cm(setup) / width)
    if setup.fit_height > 0 and height > 0:
        scale = min(scale, setup.fit_height * print_height_cm(setup) / height)
    return scale


def chart_problems(layout: SheetLayout, charts: list[dict[str, Any]]) -> list[Problem]:
    """Charts that do not print with their sheet's table: outside the print area (not
    printed at all), or starting on a page that holds none of the table."""
    if not charts or layout.data_rows is None or layout.data_cols is None:
        return []
    area = _area(layout.print_area)
    problems, placed = [], []
    for chart in charts:
        where = _place(layout, chart)
        if area is not None and not area.holds(where.col, where.row):
            problems.append(
                Problem(
                    "layout",
                    layout.title,
                    f"chart '{where.name}' lies outside the print area {area.shown}:"
                    " it does not print",
                    "chart_unprinted",
                    {"chart": where.name, "area": area.shown},
                )
            )
        else:
            placed.append(where)
    if placed:
        problems += _apart(layout, area, placed)
    return problems


@dataclass(frozen=True)
class _Printed:
    """The pages of a sheet: each column's (row's) page along its direction, and the
    table's first and last columns (rows)."""

    col_page: dict[int, int]
    row_page: dict[int, int]
    t_cols: tuple[int, int]
    t_rows: tuple[int, int]

    def table_holds(self, col: int, row: int) -> bool:
        cp, rp = self.col_page[col], self.row_page[row]
        t_cols, t_rows = self.t_cols, self.t_rows
        return (
            self.col_page[t_cols[0]] <= cp <= self.col_page[t_cols[1]]
            and self.row_page[t_rows[0]] <= rp <= self.row_page[t_rows[1]]
        )

    def number(self, col: int, row: int, down_then_over: bool) -> int:
        """The printed page number of a cell's page (pages go down, then over, by default)."""
        cp, rp = self.col_page[col], self.row_page[row]
        downs, overs = max(self.row_page.values()) + 1, max(self.col_page.values()) + 1
        return cp * downs + rp + 1 if down_then_over else rp * overs + cp + 1


def _printed(layout: SheetLayout, area: _Area | None, placed: list[_Placed]) -> _Printed | None:
    """Where the table and the charts print; None when the table does not print at all."""
    assert layout.data_rows is not None and layout.data_cols is not None
    c1, r1 = (area.c1, area.r1) if area else (1, 1)
    c_end, r_end = (area.c2, area.r2) if area else (MAX_COLUMNS, MAX_ROWS)
    t_cols = (max(layout.data_cols[0], c1), min(layout.data_cols[1], c_end))
    t_rows = (max(layout.data_rows[0], r1), min(layout.data_rows[1], r_end))
    if t_cols[0] > t_cols[1] or t_rows[0] > t_rows[1]:
        return None  # the print area leaves the table out: the user's choice
    # Why a reach: a chart anchored a million rows down is on another page all the same;
    # counting pages that far would only cost time.
    c2 = min(max(t_cols[1], *(p.last_col for p in placed)), c_end, t_cols[1] + REACH_COLUMNS)
    r2 = min(max(t_rows[1], *(p.last_row for p in placed)), r_end, t_rows[1] + REACH_ROWS)
    width = sum(layout.col_cm(c) for c in range(c1, c2 + 1))
    height = sum(layout.row_cm(r) for r in range(r1, r2 + 1))
    scale, setup = _scale(layout, width, height), layout.setup
    titles = sum(layout.row_cm(r) for r in _title_rows(layout.title_rows)) * scale
    return _Printed(
        _pages(c1, c2, lambda c: layout.col_cm(c) * scale, print_width_cm(setup), setup.col_breaks),
        _pages(
            r1,
            r2,
            lambda r: layout.row_cm(r) * scale,
            print_height_cm(setup),
            setup.row_breaks,
            titles,
        ),
        t_cols,
        t_rows,
    )


def _apart(layout: SheetLayout, area: _Area | None, placed: list[_Placed]) -> list[Problem]:
    printed = _printed(layout, area, placed)
    if printed is None:
        return []
    setup, problems = layout.setup, []
    for chart in placed:
        col, row = min(chart.col, max(printed.col_page)), min(chart.row, max(printed.row_page))
        if printed.table_holds(col, row) or _chosen(setup, printed, chart):
            continue
        page = printed.number(col, row, setup.down_then_over)
        problems.append(
            Problem(
                "layout",
                layout.title,
                f"chart '{chart.name}' prints on page {page}, a page without its table"
                " (move it beside or under the table, or set the sheet to fit the page)",
                "chart_apart",
                {"chart": chart.name, "page": page},
            )
        )
    return problems


def _chosen(setup: PageSetup, printed: _Printed, chart: _Placed) -> bool:
    """A manual break between the table and the chart: the author's choice (the xlsx skill
    starts a page rather than let a chart straddle two)."""
    t_cols, t_rows = printed.t_cols, printed.t_rows
    col_page, row_page = printed.col_page, printed.row_page
    same_column = (
        col_page[t_cols[0]] <= col_page[min(chart.col, max(col_page))] <= col_page[t_cols[1]]
    )
    same_row = row_page[t_rows[0]] <= row_page[min(chart.row, max(row_page))] <= row_page[t_rows[1]]
    below = any(t_rows[1] < b <= chart.row for b in setup.row_breaks)
    beside = any(t_cols[1] < b <= chart.col for b in setup.col_breaks)
    return (same_column and below) or (same_row and beside)
