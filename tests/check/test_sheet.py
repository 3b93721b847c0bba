"""A .xlsx's facts: error cells by address, uncached formulas, sheets wider than the page."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.check import files as F
from workhearth.check.receipt import FormulaError
from workhearth.check.sheet import sheet_facts


def test_a_plain_sheet_has_no_problems_and_gives_its_text(made: Callable[[str], Path]) -> None:
    facts = sheet_facts(made("good.xlsx"))
    assert facts.problems == [] and facts.formula_errors == []
    assert facts.sheets == 1
    assert "Region 5" in facts.text and "104" in facts.text


@pytest.mark.parametrize("error", ["#DIV/0!", "#REF!", "#NAME?", "#VALUE!"])
def test_an_error_cell_is_listed_with_its_address(tmp_path: Path, error: str) -> None:
    facts = sheet_facts(F.xlsx_formula(tmp_path / "e.xlsx", error))
    assert facts.formula_errors == [FormulaError("Sales", "B2", error)]
    ((problem),) = facts.problems
    assert (problem.kind, problem.where) == ("formula", "Sales!B2")
    assert error in problem.message


def test_formulas_without_cached_values_are_a_formula_problem(
    made: Callable[[str], Path],
) -> None:
    facts = sheet_facts(made("uncached.xlsx"))
    assert facts.formula_errors == []
    ((problem),) = facts.problems
    assert (problem.kind, problem.where) == ("formula", "Sales")
    assert problem.message.startswith("1 formula cell has no computed value")


def test_a_cached_good_value_is_fine_and_its_value_is_the_text(tmp_path: Path) -> None:
    path = F.xlsx_formula(tmp_path / "ok.xlsx", "42", formula="6*7")
    F.rewrite_zip(
        path,
        lambda name, data: data.replace(b't="e"', b"") if name.endswith("sheet1.xml") else data,
    )
    facts = sheet_facts(path)
    assert facts.problems == [] and "42" in facts.text.split("\t")


def test_a_sheet_wider_than_the_page_is_a_layout_problem(made: Callable[[str], Path]) -> None:
    ((problem),) = sheet_facts(made("wide.xlsx")).problems
    assert (problem.kind, problem.where) == ("layout", "Wide")
    assert "pages across" in problem.message


def test_the_same_sheet_set_to_fit_the_width_is_fine(made: Callable[[str], Path]) -> None:
    assert sheet_facts(made("fit.xlsx")).problems == []


def test_landscape_widens_the_printable_width(tmp_path: Path) -> None:
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter

    def sheet(landscape: bool) -> Path:
        wb = Workbook()
        ws = wb.active
        for col in range(1, 10):  # 9 columns of 12 chars: ~23.8 cm, portrait A4 prints 17.2
            ws.column_dimensions[get_column_letter(col)].width = 12
            ws.cell(1, col, col)
        if landscape:
            ws.page_setup.orientation = "landscape"
        path = tmp_path / f"{landscape}.xlsx"
        wb.save(path)
        return path

    assert [p.kind for p in sheet_facts(sheet(False)).problems] == ["layout"]
    assert sheet_facts(sheet(True)).problems == []


def test_fit_to_one_page_tall_but_any_width_still_prints_pages_across(tmp_path: Path) -> None:
    """fitToWidth=0 is Excel's "automatic": as many pages across as the columns need."""
    from openpyxl import load_workbook

    path = F.xlsx_wide(tmp_path / "tall.xlsx", fit=True)
    wb = load_workbook(path)
    wb.active.page_setup.fitToWidth, wb.active.page_setup.fitToHeight = 0, 1
    wb.save(path)
    assert [(p.kind, p.where) for p in sheet_facts(path).problems] == [("layout", "Wide")]


def test_fit_to_page_with_the_width_unset_means_one_page_wide(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    path = F.xlsx_wide(tmp_path / "unset.xlsx", fit=True)
    wb = load_workbook(path)
    wb.active.page_setup.fitToWidth = None
    wb.save(path)
    assert sheet_facts(path).problems == []


# --- charts that print apart from their table (verified against LibreOffice's export) ---


def _codes(path: Path) -> list[tuple[str, str, dict[str, str | int]]]:
    return [(p.code, p.where, p.params) for p in sheet_facts(path).problems]


@pytest.mark.parametrize(
    ("rows", "anchor", "page"),
    [
        (10, "N2", 2),  # to the right, past the page's width: page 2 holds only the chart
        (44, "A48", 2),  # under a table that fills page 1: the chart starts page 2
    ],
)
def test_a_chart_on_a_page_without_its_table_is_a_layout_problem(
    tmp_path: Path, rows: int, anchor: str, page: int
) -> None:
    path = F.xlsx_chart(tmp_path / "c.xlsx", rows, anchor)
    assert _codes(path) == [("chart_apart", "Sales", {"chart": "Chart 1", "page": page})]
    (problem,) = sheet_facts(path).problems
    assert problem.kind == "layout" and f"prints on page {page}" in problem.message


@pytest.mark.parametrize("anchor", ["A14", "H2"])
def test_a_chart_under_or_beside_a_short_table_starts_on_its_page(
    tmp_path: Path, anchor: str
) -> None:
    assert _codes(F.xlsx_chart(tmp_path / "c.xlsx", 10, anchor)) == []


def test_fit_to_width_brings_the_chart_back_to_the_table(tmp_path: Path) -> None:
    assert _codes(F.xlsx_chart(tmp_path / "c.xlsx", 10, "N2", fit_width=True)) == []


def test_a_manual_break_before_the_chart_is_the_authors_choice(tmp_path: Path) -> None:
    """What the xlsx skill does for a chart that would straddle two pages."""
    path = F.xlsx_chart(tmp_path / "c.xlsx", 40, "A43", break_before=43)
    assert _codes(path) == []


def test_a_chart_outside_the_print_area_does_not_print(tmp_path: Path) -> None:
    path = F.xlsx_chart(tmp_path / "c.xlsx", 10, "H2", print_area="A1:F11")
    assert _codes(path) == [("chart_unprinted", "Sales", {"chart": "Chart 1", "area": "A1:F11"})]


def test_a_chart_inside_the_print_area_prints(tmp_path: Path) -> None:
    assert _codes(F.xlsx_chart(tmp_path / "c.xlsx", 10, "A14", print_area="A1:J30")) == []


def test_a_chart_far_down_the_sheet_is_apart_and_found_quickly(tmp_path: Path) -> None:
    import time

    path = F.xlsx_chart(tmp_path / "c.xlsx", 10, "A900000")
    started = time.perf_counter()
    ((code, _, params),) = _codes(path)
    assert code == "chart_apart" and int(params["page"]) > 1
    assert time.perf_counter() - started < 2
