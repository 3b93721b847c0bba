"""A .xlsx's own facts: formula cells without cached values, error cells, sheets that do
not fit the print width (and are not set to fit it), and charts that print apart from
their table (:mod:`.sheet_pages`).

Read straight from the package's XML (lxml), not through openpyxl: loading a workbook
twice (formulas, then values) and importing openpyxl (and numpy with it) cost a
quarter of a second of CPU while LibreOffice converts beside it on the same cores.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from workhearth.check.package import Package, open_package
from workhearth.check.receipt import FormulaError, Problem
from workhearth.check.sheet_pages import PageSetup, SheetLayout, chart_problems, print_width_cm

M = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#SPILL!", "#CALC!")
TEXT_CELLS = 20_000
_REF = re.compile(r"^([A-Z]{1,3})([0-9]+)$")


@dataclass
class SheetFacts:
    text: str = ""
    sheets: int = 0
    formula_errors: list[FormulaError] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


@dataclass
class _Scan:
    """What one pass over the cells of all sheets found."""

    texts: list[str] = field(default_factory=list)
    errors: list[FormulaError] = field(default_factory=list)
    uncached: dict[str, int] = field(default_factory=dict)


def column_number(letters: str) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ord(ch) - 64
    return n


def column_letters(n: int) -> str:
    out = ""
    while n:
        n, rest = divmod(n - 1, 26)
        out = chr(65 + rest) + out
    return out


def sheet_facts(source: Path | Package) -> SheetFacts:
    """The facts of the workbook at ``source`` (a path, or an opened package)."""
    if isinstance(source, Package):
        return _facts(source)
    package, problems = open_package(source)
    if package is None:
        raise ValueError(problems[0].message)
    try:
        return _facts(package)
    finally:
        package.close()


def _facts(package: Package) -> SheetFacts:
    main = next(
        (t for kind, t in package.relations("").values() if kind.endswith("/officeDocument")),
        "xl/workbook.xml",
    )
    book = package.xml(main)
    if book is None or book.tag != f"{M}workbook":
        raise ValueError(f"{main} is not a workbook")
    rels = package.relations(main)
    shared = _shared_strings(package, rels)
    names = _defined_names(book)
    facts, scan = SheetFacts(), _Scan()
    for index, sheet in enumerate(book.iter(f"{M}sheet")):
        title = sheet.get("name") or f"Sheet{index + 1}"
        part = rels.get(sheet.get(f"{R}id") or "", ("", ""))[1]
        root = package.xml(part)
        if root is None:
            continue  # a chartsheet, or a part the package check already reported
        facts.sheets += 1
        layout = _scan_cells(root, title, shared, scan)
        layout.setup = _page_setup(root)
        layout.print_area = names.get(("_xlnm.Print_Area", index))
        layout.title_rows = names.get(("_xlnm.Print_Titles", index))
        if (problem := _fits(layout)) is not None:
            facts.problems.append(problem)
        facts.problems += chart_problems(layout, _charts(package, part, root))
    facts.formula_errors = scan.errors
    for error in scan.errors:
        facts.problems.append(
            Problem(
                "formula",
                f"{error.sheet}!{error.cell}",
                f"shows {error.value}",
                "formula_error",
                {"value": error.value},
            )
        )
    for title, n in scan.uncached.items():
        facts.problems.append(
            Problem(
                "formula",
                title,
                f"{n} formula {'cell has' if n == 1 else 'cells have'} no computed value"
                " (the file was never recalculated:"
                " open and save it in LibreOffice, or run the xlsx skill's recalculate.py)",
                "uncached",
                {"n": n},
            )
        )
    facts.text = "\t".join(scan.texts)
    return facts


def _shared_strings(package: Package, rels: dict[str, tuple[str, str]]) -> list[str]:
    part = next((t for kind, t in rels.values() if kind.endswith("/sharedStrings")), None)
    root = package.xml(part) if part else None
    if root is None:
        return []
    return ["".join(t.text or "" for t in si.iter(f"{M}t")) for si in root.iter(f"{M}si")]


def _defined_names(book: etree._Element) -> dict[tuple[str, int], str]:
    out = {}
    for name in book.iter(f"{M}definedName"):
        sheet = name.get("localSheetId")
        if sheet is not None and sheet.isdigit() and name.text:
            out[(name.get("name") or "", int(sheet))] = name.text
    return out


def _scan_cells(root: etree._Element, title: str, shared: list[str], scan: _Scan) -> SheetLayout:
    """Each cell once: its text, error values, formulas without values; and where the
    sheet's data lies (for the print checks)."""
    layout = SheetLayout(title)
    for row_el in root.iter(f"{M}row"):
        row = int(row_el.get("r") or layout.last_row + 1)
        layout.last_row = row
        if height := row_el.get("ht"):
            layout.row_heights[row] = _number(height, 15.0)
        if _true(row_el.get("hidden")):
            layout.row_heights[row] = 0.0
        col = 0
        for cell in row_el.iter(f"{M}c"):
            match = _REF.match(cell.get("r") or "")
            col = column_number(match.group(1)) if match else col + 1
            layout.max_column = max(layout.max_column, col)
            if _cell(cell, title, shared, scan, f"{column_letters(col)}{row}"):
                layout.data(row, col)
    for col_el in root.iter(f"{M}col"):
        first, last = int(col_el.get("min") or 1), int(col_el.get("max") or 1)
        width = 0.0 if _true(col_el.get("hidden")) else float(col_el.get("width") or 0) or None
        for col in range(first, min(last, 16384) + 1):
            layout.col_widths[col] = width
    return layout


def _cell(cell: etree._Element, title: str, shared: list[str], scan: _Scan, ref: str) -> bool:
    """Record one cell; True when it holds something (a value or a formula)."""
    kind = cell.get("t", "n")
    formula = cell.find(f"{M}f")
    v = cell.find(f"{M}v")
    value: str | None = v.text if v is not None else None
    if kind == "s" and value is not None:
        index = int(value) if value.strip().isdigit() else -1
        value = shared[index] if 0 <= index < len(shared) else None
    elif kind == "inlineStr":
        value = "".join(t.text or "" for t in cell.iter(f"{M}t"))
    if formula is not None and not value and kind != "str":
        # Why not for "str": a formula whose result is the empty string keeps an empty <v>.
        scan.uncached[title] = scan.uncached.get(title, 0) + 1
    elif value is not None and (kind == "e" or (formula is not None and value in ERRORS)):
        scan.errors.append(FormulaError(title, ref, value))
        return True
    elif value and len(scan.texts) < TEXT_CELLS:
        scan.texts.append(value)
    return formula is not None or bool(value)


def _true(value: str | None, default: bool = False) -> bool:
    return default if value is None else value in ("1", "true")


def _number(value: str | None, default: float) -> float:
    try:
        return float(value) if value is not None else default
    except ValueError:
        return default


def _page_setup(root: etree._Element) -> PageSetup:
    setup = root.find(f"{M}pageSetup")
    margins = root.find(f"{M}pageMargins")
    props = root.find(f"{M}sheetPr/{M}pageSetUpPr")
    given = dict(setup.attrib) if setup is not None else {}
    edges = dict(margins.attrib) if margins is not None else {}
    return PageSetup(
        paper=int(_number(given.get("paperSize"), 9)),
        landscape=given.get("orientation") == "landscape",
        fit=props is not None and _true(props.get("fitToPage")),
        fit_width=int(_number(given.get("fitToWidth"), 1)),
        fit_height=int(_number(given.get("fitToHeight"), 1)),
        scale=_number(given.get("scale"), 100.0),
        down_then_over=given.get("pageOrder") != "overThenDown",
        left=_number(edges.get("left"), 0.75),
        right=_number(edges.get("right"), 0.75),
        top=_number(edges.get("top"), 1.0),
        bottom=_number(edges.get("bottom"), 1.0),
        row_breaks=_breaks(root, "rowBreaks"),
        col_breaks=_breaks(root, "colBreaks"),
    )


def _breaks(root: etree._Element, tag: str) -> frozenset[int]:
    """Manual page breaks, as the first row (column) of the new page (1-based)."""
    found = root.find(f"{M}{tag}")
    if found is None:
        return frozenset()
    return frozenset(int(_number(b.get("id"), 0)) + 1 for b in found.iter(f"{M}brk"))


def _fits(layout: SheetLayout) -> Problem | None:
    setup = layout.setup
    # Why != 0: fitToWidth absent means 1 page wide; 0 means as many pages across as needed.
    if setup.fit and setup.fit_width != 0:
        return None
    width, printable = layout.width_cm(), print_width_cm(setup)
    if width <= printable:
        return None
    across = int(width // printable) + 1
    return Problem(
        "layout",
        layout.title,
        f"is {width:.1f} cm wide, the printable width is {printable:.1f} cm: it prints "
        f"{across} pages across (set it to fit the page width, or landscape)",
        "sheet_wide",
        {"width": f"{width:.1f}", "printable": f"{printable:.1f}", "n": across},
    )


XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"
CHART_URI = "http://schemas.openxmlformats.org/drawingml/2006/chart"


def _charts(package: Package, part: str, root: etree._Element) -> list[dict[str, object]]:
    """The charts drawn on a sheet: name and anchor (cells 1-based, offsets and sizes in EMU)."""
    drawing = root.find(f"{M}drawing")
    if drawing is None:
        return []
    target = package.relations(part).get(drawing.get(f"{R}id") or "", ("", ""))[1]
    tree = package.xml(target) if target else None
    if tree is None or posixpath.splitext(target)[1] != ".xml":
        return []
    charts: list[dict[str, object]] = []
    for anchor in tree:
        if not any(g.get("uri") == CHART_URI for g in anchor.iter()):
            continue
        name = next((c.get("name") for c in anchor.iter(f"{XDR}cNvPr")), None)
        start, end = anchor.find(f"{XDR}from"), anchor.find(f"{XDR}to")
        ext, pos = anchor.find(f"{XDR}ext"), anchor.find(f"{XDR}pos")
        chart: dict[str, object] = {"name": name or f"Chart {len(charts) + 1}"}
        if start is not None:
            chart["from"] = _cell_anchor(start)
        elif pos is not None:
            chart["pos"] = (_number(pos.get("x"), 0), _number(pos.get("y"), 0))
        else:
            continue
        if end is not None:
            chart["to"] = _cell_anchor(end)
        elif ext is not None:
            chart["ext"] = (_number(ext.get("cx"), 0), _number(ext.get("cy"), 0))
        charts.append(chart)
    return charts


def _cell_anchor(el: etree._Element) -> tuple[int, float, int, float]:
    """(column, column offset, row, row offset): cells 1-based, offsets in EMU."""

    def part(tag: str) -> float:
        found = el.find(f"{XDR}{tag}")
        return _number(found.text if found is not None else None, 0)

    return int(part("col")) + 1, part("colOff"), int(part("row")) + 1, part("rowOff")
