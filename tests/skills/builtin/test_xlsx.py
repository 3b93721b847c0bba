"""The xlsx skill's scripts, run as the agent runs them: ``python scripts/X.py ...``."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script, run_script_without

SCRIPTS = BUILTIN / "xlsx" / "scripts"
HAS_SOFFICE = shutil.which("soffice") is not None
HAS_PYCEL = importlib.util.find_spec("pycel") is not None
SALES = "地区,产品,Price,Qty\n华东,苹果,1.5,10\n华南,香蕉,0.8,25\nNorth,Cherry,12,3\nWest,Durian,2.25,8\n"


def script(name: str, *args: object, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_script(SCRIPTS / f"{name}.py", *args, timeout=timeout)


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """created → charted → recalculated (LibreOffice when installed: its one run in this file)."""
    folder = tmp_path_factory.mktemp("xlsx")
    source = folder / "销售.csv"
    source.write_text(SALES, encoding="utf-8")
    created, charted = folder / "销售.xlsx", folder / "chart.xlsx"
    done = script(
        "create_from_data", source, "-o", created,
        "--formula", "Amount=[Price]*[Qty]", "--formula", "Tax=[Amount]*0.1", "--totals-label", "合计",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {created}")
    done = script("add_chart", created, "-o", charted, "--data", "E1:E5", "--title", "金额")
    assert done.returncode == 0, done.stderr
    paths = {"csv": source, "created": created, "charted": charted}
    if HAS_SOFFICE or HAS_PYCEL:
        final = folder / "final.xlsx"
        done = script("recalculate", charted, "-o", final, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        paths["final"], paths["report"] = final, folder / "report.json"
        paths["report"].write_text(done.stdout, encoding="utf-8")
    return paths


def test_created_workbook_holds_formulas_not_results(books: dict[str, Path]) -> None:
    ws = load_workbook(books["created"]).active
    assert [c.value for c in ws[1]] == ["地区", "产品", "Price", "Qty", "Amount", "Tax"]
    assert ws["E2"].data_type == "f" and ws["E2"].value == "=C2*D2"
    assert ws["F5"].value == "=E5*0.1"
    assert ws["A6"].value == "合计"
    assert ws["E6"].value == "=SUM(E2:E5)" and ws["D6"].value == "=SUM(D2:D5)"
    assert ws["C6"].value is None  # a sum of unit prices means nothing
    assert ws["C2"].value == 1.5 and ws["D2"].value == 10  # numbers, not text
    assert ws.freeze_panes == "A2"
    assert ws["A1"].font.bold and ws["E2"].number_format == "#,##0.00"
    assert ws.column_dimensions["B"].width >= 8


MIXED = (
    "Region,Product,单价,数量,金额,Year,ID,Growth %,Score,Weight,Seq,Season,Tax Rate\n"
    "East,Widget,12.5,3,37.5,2024,A1,0.1,88,2.5,1,2023,0.13\n"
    "East,Gadget,20,2,40,2024,A2,0.2,91,1.5,2,2024,0.13\n"
    "South,Widget,12.5,5,62.5,2025,A3,0.3,77,4,3,2025,0.13\n"
)


def test_totals_only_columns_whose_sum_means_something(tmp_path: Path) -> None:
    """Issue #21 defect 3a: by header words (English and Chinese), then by the values."""
    source = tmp_path / "mixed.csv"
    source.write_text(MIXED, "utf-8")
    done = script("create_from_data", source, "-o", tmp_path / "m.xlsx")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("totals: 数量, 金额, Weight)")
    ws = load_workbook(tmp_path / "m.xlsx").active
    totals = {ws.cell(1, c).value: ws.cell(5, c).value for c in range(1, ws.max_column + 1)}
    assert totals == {
        "Region": "Total", "Product": None, "单价": None, "数量": "=SUM(D2:D4)",
        "金额": "=SUM(E2:E4)", "Year": None, "ID": None, "Growth %": None, "Score": None,
        "Weight": "=SUM(J2:J4)", "Seq": None, "Season": None, "Tax Rate": None,
    }  # fmt: skip


def test_total_and_no_total_override_the_rule(tmp_path: Path) -> None:
    source = tmp_path / "mixed.csv"
    source.write_text(MIXED, "utf-8")
    done = script(
        "create_from_data", source, "-o", tmp_path / "m.xlsx", "--json",
        "--total", "Score", "--total", "单价", "--no-total", "金额", "--no-total", "Weight",
        "--formula", "Net=[金额]*0.9",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["totalled"] == ["单价", "数量", "Score", "Net"]
    ws = load_workbook(tmp_path / "m.xlsx").active
    assert ws["C5"].value == "=SUM(C2:C4)" and ws["E5"].value is None
    assert ws["N5"].value == "=SUM(N2:N4)"


def test_json_input_of_objects(tmp_path: Path) -> None:
    source = tmp_path / "rows.json"
    source.write_text(json.dumps([{"item": "笔", "n": 2}, {"item": "纸", "n": 5}]), "utf-8")
    done = script("create_from_data", source, "-o", tmp_path / "out.xlsx", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["formulas"] == 1
    ws = load_workbook(tmp_path / "out.xlsx").active
    assert ws["B4"].value == "=SUM(B2:B3)"


def test_chart_exists_and_input_is_untouched(books: dict[str, Path]) -> None:
    (chart,) = load_workbook(books["charted"]).active._charts
    assert chart.tagname == "barChart"
    assert load_workbook(books["created"]).active._charts == []


def _chart_xml(book: Path) -> str:
    with zipfile.ZipFile(book) as zf:
        return zf.read("xl/charts/chart1.xml").decode()


def test_chart_categories_are_the_row_labels_as_text(books: dict[str, Path]) -> None:
    """Issue #21 defect 3d: labels as text (strRef, cached), not numRef over column A."""
    xml = _chart_xml(books["charted"])
    assert "<numRef><f>'Data'!$A$2" not in xml
    assert "<cat><strRef><f>'Data'!$A$2:$A$5</f>" in xml
    assert re.findall(r"<v>([^<]*)</v>", xml) == ["华东", "华南", "North", "West"]


def test_repeated_labels_take_the_next_label_column_too(tmp_path: Path) -> None:
    """East, East, South, South: one category per row, told apart by the product."""
    source = tmp_path / "s.csv"
    source.write_text(
        "Region,Product,Qty,Amount\nEast,Widget,3,30\nEast,Gadget,2,40\n"
        "South,Widget,5,50\nSouth,Gadget,1,20\n",
        "utf-8",
    )
    assert script("create_from_data", source, "-o", tmp_path / "a.xlsx").returncode == 0
    done = script("add_chart", tmp_path / "a.xlsx", "-o", tmp_path / "b.xlsx",
                  "--data", "C1:D5", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["categories"] == "'Data'!$A$2:$B$5"
    assert json.loads(done.stdout)["anchor"] == "A9"  # under the table and its totals row
    xml = _chart_xml(tmp_path / "b.xlsx")
    assert xml.count("<cat><multiLvlStrRef><f>'Data'!$A$2:$B$5</f>") == 2  # both series


@pytest.mark.skipif(not (HAS_SOFFICE or HAS_PYCEL), reason="no formula engine installed")
def test_recalculated_workbook_has_correct_results_and_no_errors(books: dict[str, Path]) -> None:
    report = json.loads(books["report"].read_text("utf-8"))
    assert report["engine"] == ("libreoffice" if HAS_SOFFICE else "python")
    assert report["formulas"] == 4 * 2 + 3 and report["errors"] == [] == report["uncalculated"]
    values = load_workbook(books["final"], data_only=True).active
    amounts = [values[f"E{row}"].value for row in range(2, 6)]
    assert amounts == pytest.approx([15, 20, 36, 18])
    assert values["E6"].value == pytest.approx(sum(amounts))
    assert values["F6"].value == pytest.approx(8.9)
    formulas = load_workbook(books["final"]).active
    assert formulas["E6"].value == "=SUM(E2:E5)"  # still live
    assert formulas.freeze_panes == "A2" and len(formulas._charts) == 1


@pytest.mark.skipif(not HAS_PYCEL, reason="pycel (the [office] extra) is not installed")
def test_python_engine_computes_values_and_reports_error_cells(tmp_path: Path) -> None:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.append([4, 0, "=A1*2", "=A1/B1"])
    ws["A2"] = "=SUM(A1:C1)"
    wb.save(tmp_path / "in.xlsx")
    done = script("recalculate", tmp_path / "in.xlsx", "-o", tmp_path / "out.xlsx",
                  "--engine", "python", "--json")  # fmt: skip
    assert done.returncode == 1, done.stderr  # 1: recalculated, but errors found
    report = json.loads(done.stdout)
    assert [(e["cell"], e["error"]) for e in report["errors"]] == [("D1", "#DIV/0!")]
    values = load_workbook(tmp_path / "out.xlsx", data_only=True).active
    assert values["C1"].value == 8 and values["A2"].value == 12


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_recalculate_without_any_engine_names_what_to_install(tmp_path: Path, engine: str) -> None:
    """Issue #20: the pycel-absent path runs in CI too, where pycel is installed: the
    script runs in an interpreter that cannot import pycel, and (for ``auto``) with a
    PATH that holds no LibreOffice."""
    from openpyxl import Workbook

    Workbook().save(tmp_path / "in.xlsx")
    bare = tmp_path / "bin"
    bare.mkdir()
    done = run_script_without(
        ("pycel",),
        SCRIPTS / "recalculate.py",
        *(tmp_path / "in.xlsx", "-o", tmp_path / "o.xlsx", "--engine", engine),
        env={**os.environ, "PATH": str(bare)},
    )
    line = one_error_line(done, "recalculate")
    assert "pip install 'workhearth[office]'" in line
    assert not (tmp_path / "o.xlsx").exists()


def test_analyze_finds_the_planted_outlier_and_skips_the_totals_row(tmp_path: Path) -> None:
    rows = [("a", 10), ("b", 11), ("c", 12), ("d", 9), ("e", 10), ("f", 500), ("g", 11), ("h", 10)]
    source = tmp_path / "scores.csv"
    source.write_text("名字,Score\n" + "".join(f"{n},{v}\n" for n, v in rows), "utf-8")
    made = script("create_from_data", source, "-o", tmp_path / "s.xlsx", "--total", "Score")
    assert made.returncode == 0, made.stderr
    done = script("analyze_sheet", tmp_path / "s.xlsx", "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    name, score = report["columns"]
    assert name["header"] == "名字" and name["type"] == "text" and name["count"] == 8
    assert score["type"] == "number" and score["count"] == 8 and score["blanks"] == 0
    assert score["outliers"] == [{"cell": "B7", "value": 500}]
    assert (score["sum"], score["min"], score["max"]) == (573, 9, 500)
    assert report["totals_rows"] == [10] and report["formulas"] == 1
    assert report["rows"] == 8  # the totals row is not a data row
    assert report["uncalculated_formulas"] == 1 and report["errors"] == []
    table = script("analyze_sheet", tmp_path / "s.xlsx").stdout
    assert "| B | Score | number | 8 | 0 | 573 |" in table and "B7=500" in table
    assert "8 data rows (and 1 totals row: 10)" in table


def test_analyze_reports_error_values(tmp_path: Path) -> None:
    from openpyxl import Workbook

    wb = Workbook()
    wb.active.append(["x", "y"])
    wb.active.append([1, "#REF!"])
    wb.save(tmp_path / "e.xlsx")
    report = json.loads(script("analyze_sheet", tmp_path / "e.xlsx", "--format", "json").stdout)
    assert report["errors"] == [{"cell": "B2", "error": "#REF!"}]


@pytest.mark.parametrize(
    ("name", "args", "says"),
    [
        ("create_from_data", ["missing.csv", "-o", "{out}"], "no such file"),
        ("create_from_data", ["{csv}", "-o", "{out}", "--formula", "X=[Nope]*2"], "[Nope]"),
        ("create_from_data", ["{bad_json}", "-o", "{out}"], "invalid JSON"),
        ("create_from_data", ["{csv}", "-o", "{out}", "--total", "Nope"], "--total 'Nope'"),
        ("create_from_data", ["{csv}", "-o", "{out}", "--no-total", "Nope"], "no such column"),
        ("create_from_data", ["{csv}", "-o", "{out}", "--total", "产品"], "no numbers"),
        ("create_from_data", ["{csv}", "-o", "{csv}"], "must end in .xlsx"),
        ("analyze_sheet", ["{csv}"], "expected a .xlsx"),
        ("analyze_sheet", ["{not_xlsx}"], "not a readable .xlsx"),
        ("add_chart", ["{book}", "-o", "{out}", "--data", "A1:A5"], "not a number"),
        ("add_chart", ["{book}", "-o", "{out}", "--data", "Z1:Z99"], "outside"),
        ("add_chart", ["{book}", "-o", "{out}", "--data", "1:2"], "not a cell range"),
        ("recalculate", ["{book}", "-o", "{book}"], "overwrite the input"),
        ("recalculate", ["{not_xlsx}", "-o", "{out}"], "not a readable .xlsx"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, name: str, args: list[str], says: str
) -> None:
    paths = {
        "csv": tmp_path / "d.csv",
        "bad_json": tmp_path / "d.json",
        "not_xlsx": tmp_path / "fake.xlsx",
        "book": tmp_path / "book.xlsx",
        "out": tmp_path / "out.xlsx",
    }
    paths["csv"].write_text(SALES, "utf-8")
    paths["bad_json"].write_text("{nope", "utf-8")
    paths["not_xlsx"].write_text("not a zip", "utf-8")
    assert script("create_from_data", paths["csv"], "-o", paths["book"]).returncode == 0
    before = sorted(p.name for p in tmp_path.iterdir())
    done = script(name, *(a.format(**paths) for a in args))
    assert says in one_error_line(done, name)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_an_existing_output_needs_force(tmp_path: Path) -> None:
    source = tmp_path / "d.csv"
    source.write_text(SALES, "utf-8")
    out = tmp_path / "o.xlsx"
    out.write_text("keep me", "utf-8")
    assert "--force" in one_error_line(
        script("create_from_data", source, "-o", out), "create_from_data"
    )
    assert out.read_text("utf-8") == "keep me"
    assert script("create_from_data", source, "-o", out, "--force").returncode == 0


def test_help_describes_every_script() -> None:
    for path in SCRIPTS.glob("*.py"):
        if path.stem.endswith("_common"):
            continue
        done = script(path.stem, "--help")
        assert done.returncode == 0 and "usage:" in done.stdout, path
