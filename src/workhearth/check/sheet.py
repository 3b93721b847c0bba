"""A .xlsx's own facts: formula cells without cached values, error cells, and sheets
that do not fit the print width (and are not set to fit it)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workhearth.check.receipt import FormulaError, Problem

ERRORS = ("#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#SPILL!", "#CALC!")
# Paper widths in cm (portrait), by openpyxl's paperSize codes; A4 when unset.
PAPER_CM = {1: 21.59, 9: 21.0, 5: 21.59, 8: 29.7, 11: 14.8}
DEFAULT_COLUMN_CHARS = 8.43
CM_PER_CHAR = 0.19  # one character of Calibri 11 at 96 dpi is about 7 px ≈ 0.19 cm
TEXT_CELLS = 20_000


@dataclass
class SheetFacts:
    text: str = ""
    sheets: int = 0
    formula_errors: list[FormulaError] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _print_width_cm(ws: Any) -> float:
    setup = ws.page_setup
    paper = PAPER_CM.get(int(setup.paperSize or 9), 21.0)
    if setup.orientation == "landscape":
        paper = {21.0: 29.7, 21.59: 27.94, 29.7: 42.0, 14.8: 21.0}.get(paper, paper)
    margins = ws.page_margins
    return paper - 2.54 * ((margins.left or 0.7) + (margins.right or 0.7))


def _sheet_width_cm(ws: Any) -> float:
    from openpyxl.utils import get_column_letter

    total = 0.0
    for col in range(1, (ws.max_column or 0) + 1):
        dim = ws.column_dimensions.get(get_column_letter(col))
        if dim is not None and dim.hidden:
            continue
        chars = dim.width if dim is not None and dim.width else DEFAULT_COLUMN_CHARS
        total += (chars + 0.7) * CM_PER_CHAR
    return total


def _fits(ws: Any) -> Problem | None:
    props = ws.sheet_properties.pageSetUpPr
    # Why != 0: fitToWidth absent means 1 page wide; 0 means as many pages across as needed.
    if props is not None and props.fitToPage and ws.page_setup.fitToWidth != 0:
        return None
    width, printable = _sheet_width_cm(ws), _print_width_cm(ws)
    if width <= printable:
        return None
    across = int(width // printable) + 1
    return Problem(
        "layout",
        ws.title,
        f"is {width:.1f} cm wide, the printable width is {printable:.1f} cm: it prints "
        f"{across} pages across (set it to fit the page width, or landscape)",
        "sheet_wide",
        {"width": f"{width:.1f}", "printable": f"{printable:.1f}", "n": across},
    )


def sheet_facts(path: Path) -> SheetFacts:
    from openpyxl import load_workbook

    facts = SheetFacts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns about extensions it drops
        formulas = load_workbook(path, read_only=False, data_only=False)
        values = load_workbook(path, read_only=False, data_only=True)
    facts.sheets = len(formulas.worksheets)
    uncached: dict[str, int] = {}
    texts: list[str] = []
    for ws in formulas.worksheets:
        cached = values[ws.title]
        for row in ws.iter_rows():
            for cell in row:
                value = cell.value
                if value is None:
                    continue
                shown = cached[cell.coordinate].value
                is_formula = isinstance(value, str) and value.startswith("=")
                if is_formula and shown is None:
                    uncached[ws.title] = uncached.get(ws.title, 0) + 1
                if isinstance(shown, str) and shown in ERRORS:
                    facts.formula_errors.append(FormulaError(ws.title, cell.coordinate, shown))
                elif len(texts) < TEXT_CELLS:
                    texts.append(str(shown if is_formula else value))
        if (problem := _fits(ws)) is not None:
            facts.problems.append(problem)
    for error in facts.formula_errors:
        facts.problems.append(
            Problem(
                "formula",
                f"{error.sheet}!{error.cell}",
                f"shows {error.value}",
                "formula_error",
                {"value": error.value},
            )
        )
    for title, n in uncached.items():
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
    facts.text = "\t".join(texts)
    return facts
