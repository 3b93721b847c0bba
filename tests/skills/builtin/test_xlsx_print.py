"""Issue #21 defect 3: a workbook from the xlsx skill prints like a finished report.

Opened the way a user would: ``hearth check`` (pages, layout problems), LibreOffice's PDF
export (the fonts it drew with) rendered to PNG, and openpyxl (the print setup itself).
The PNGs are kept under the temp folder as test artifacts, for a person to look at.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from openpyxl import load_workbook

from tests.e2e.conftest import Hearth, make_hearth
from tests.skills.builtin.helpers import BUILTIN, run_script

SCRIPTS = BUILTIN / "xlsx" / "scripts"
SALES = (
    "Region,Product,Price,Qty\nEast,Widget,12.5,30\nEast,Gadget,20,12\nSouth,Widget,12.5,44\n"
    "South,Gadget,20,9\nWest,Widget,12.5,21\nWest,Gadget,20,17\nNorth,Widget,12.5,25\n"
)
needs_office = pytest.mark.skipif(
    not (shutil.which("soffice") and shutil.which("pdftoppm") and shutil.which("pdffonts")),
    reason="needs LibreOffice and poppler",
)


def script(name: str, *args: object) -> None:
    done = run_script(SCRIPTS / f"{name}.py", *args)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def hearth(tmp_path_factory: pytest.TempPathFactory) -> Hearth:
    return make_hearth(tmp_path_factory.mktemp("xlsx-print"))


@pytest.fixture(scope="module")
def report(hearth: Hearth) -> Path:
    """The issue's example: 4 columns + Amount and Tax formulas, a bar chart, recalculated."""
    work = hearth.workspace
    (work / "sales.csv").write_text(SALES, "utf-8")
    script("create_from_data", work / "sales.csv", "-o", work / "a.xlsx",
           "--formula", "Amount=[Price]*[Qty]", "--formula", "Tax=[Amount]*0.1")  # fmt: skip
    script("add_chart", work / "a.xlsx", "-o", work / "b.xlsx", "--data", "E1:F8",
           "--title", "Amount")  # fmt: skip
    if shutil.which("soffice"):
        script("recalculate", work / "b.xlsx", "-o", work / "report.xlsx")
    else:
        shutil.copyfile(work / "b.xlsx", work / "report.xlsx")
    return work / "report.xlsx"


def _pdf(book: Path, work: Path) -> Path:
    subprocess.run(
        ["soffice", f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
         "--convert-to", "pdf", "--outdir", str(work), str(book)],
        capture_output=True, timeout=300, check=True,
    )  # fmt: skip
    return work / f"{book.stem}.pdf"


def test_every_styled_cell_names_one_font_family(report: Path) -> None:
    ws = load_workbook(report).active
    names = {cell.font.name for row in ws.iter_rows(max_row=9) for cell in row}
    assert names == {"Calibri"}
    assert ws["A1"].font.bold and ws["D9"].font.bold and not ws["D2"].font.bold


def test_print_setup_fits_the_width_and_repeats_the_header(report: Path) -> None:
    ws = load_workbook(report).active
    assert ws.sheet_properties.pageSetUpPr.fitToPage is True
    assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 0)
    assert ws.print_title_rows == "$1:$1"
    assert ws.page_setup.orientation != "landscape"  # six narrow columns fit portrait
    (chart,) = ws._charts
    assert chart.anchor._from.col == 0 and chart.anchor._from.row >= 9  # under the table


@pytest.mark.parametrize(("columns", "landscape"), [(3, False), (7, True)])
def test_a_wide_table_prints_landscape(tmp_path: Path, columns: int, landscape: bool) -> None:
    header = ",".join(f"Col{i}" for i in range(columns))
    (tmp_path / "w.csv").write_text(f"{header}\n" + ",".join("x" * columns) + "\n", "utf-8")
    script("create_from_data", tmp_path / "w.csv", "-o", tmp_path / "w.xlsx")
    ws = load_workbook(tmp_path / "w.xlsx").active
    assert (ws.page_setup.orientation == "landscape") is landscape


@needs_office
def test_hearth_check_finds_one_page_and_no_layout_problem(hearth: Hearth, report: Path) -> None:
    """Before: three pages (the Tax column and the chart each on a page of their own)."""
    result = hearth.run("check", report.name, "--json")
    assert result.code == 0, result.err
    (receipt,) = json.loads(result.out)
    assert receipt["ok"] is True and receipt["problems"] == []
    assert receipt["pages"] == 1


@needs_office
def test_libreoffice_draws_header_body_and_totals_in_one_sans_family(report: Path) -> None:
    """Before: the header and totals came out in LibreOffice's default serif."""
    artifacts = Path(tempfile.gettempdir()) / "workhearth-test-artifacts"
    artifacts.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        pdf = _pdf(report, Path(tmp))
        fonts = subprocess.run(
            ["pdffonts", str(pdf)], capture_output=True, text=True, timeout=60, check=True
        ).stdout
        subprocess.run(
            ["pdftoppm", "-png", "-r", "70", "-singlefile", str(pdf),
             str(artifacts / "xlsx-report")],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
    names = {line.split()[0].split("+")[-1] for line in fonts.splitlines()[2:] if line.strip()}
    families = {name.split("-")[0] for name in names}
    assert not any("Serif" in name for name in names), names
    assert len(families) == 1, names
    assert (artifacts / "xlsx-report.png").stat().st_size > 10_000


@needs_office
def test_a_chart_under_a_long_table_starts_a_page_rather_than_straddle_two(
    tmp_path: Path,
) -> None:
    """38 rows, then the chart: it would begin at the foot of page 1 and end on page 2."""
    from PIL import Image

    rows = "".join(f"R{i},P{i},{5 + i % 7}.5,{1 + (i * 7) % 50}\n" for i in range(38))
    (tmp_path / "long.csv").write_text("Region,Product,Price,Qty\n" + rows, "utf-8")
    script("create_from_data", tmp_path / "long.csv", "-o", tmp_path / "a.xlsx",
           "--formula", "Amount=[Price]*[Qty]")  # fmt: skip
    done = run_script(SCRIPTS / "add_chart.py", tmp_path / "a.xlsx", "-o", tmp_path / "b.xlsx",
                      "--data", "E1:E39", "--anchor", "A43", "--json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    pdf = _pdf(tmp_path / "b.xlsx", tmp_path)
    bbox = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", "-bbox", str(pdf), "-"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    (table_end,) = re.findall(r'yMax="([\d.]+)">Total<', bbox)  # the totals row's label
    subprocess.run(
        ["pdftoppm", "-png", "-r", "72", "-f", "1", "-l", "1", "-singlefile", str(pdf),
         str(tmp_path / "page1")],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    page = Image.open(tmp_path / "page1.png").convert("L")
    below = page.crop((0, int(float(table_end)) + 6, page.width, page.height))
    assert below.getextrema()[0] > 240, "part of the chart prints under the table on page 1"
    assert json.loads(done.stdout)["page_break_before_row"] == 43
