"""The web-to-sheet skill's script (issue 25 item 6): rows from browser_extract, page after
page, written once each with the header once and numbers as numbers — and no skill
script that could drive a browser or reach the network."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Sequence
from pathlib import Path

import openpyxl
import pytest

from tests.skills.builtin.helpers import BUILTIN, run_script

SKILL = BUILTIN / "web-to-sheet"
ROWS_TO_FILE = SKILL / "scripts" / "rows_to_file.py"
CREATE = BUILTIN / "xlsx" / "scripts" / "create_from_data.py"


def page(*rows: Sequence[object]) -> str:
    """One page as browser_extract gives it."""
    return json.dumps({"table": 1, "rows": [list(r) for r in rows]}, ensure_ascii=False)


def rows_to_file(tmp_path: Path, *args: object, stdin: str = "") -> tuple[int, str, str]:
    done = run_script(ROWS_TO_FILE, *args, cwd=tmp_path, input=stdin, timeout=60)
    return done.returncode, done.stdout, done.stderr


def read_json(path: Path) -> tuple[list[str], list[list[object]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return data["columns"], data["rows"]


def test_pages_on_stdin_keep_one_header_and_type_the_numbers(tmp_path: Path) -> None:
    pages = "\n".join(
        [
            page(["Name", "Amount", "Code"], ["alpha", "1,250", "007"], ["beta", "3.50", "12%"]),
            page(["Name", "Amount", "Code"], ["gamma", "-4", "+86 10"], ["", "", ""]),
        ]
    )
    code, out, err = rows_to_file(tmp_path, "-o", "rows.json", stdin=pages)
    assert code == 0, err
    assert "from 2 page(s)" in out and "1 repeated header row(s) dropped" in out
    assert read_json(tmp_path / "rows.json") == (
        ["Name", "Amount", "Code"],
        [["alpha", 1250, "007"], ["beta", 3.5, "12%"], ["gamma", -4, "+86 10"]],
    )


def test_appending_page_by_page_then_the_xlsx_skill_makes_numbers_cells(tmp_path: Path) -> None:
    for number in (1, 2, 3):
        data = [["Item", "Qty"], *[[f"item {number}{k}", str(number * 10 + k)] for k in (1, 2)]]
        code, _, err = rows_to_file(tmp_path, "--append", "-o", "rows.csv", stdin=page(*data))
        assert code == 0, err
    with (tmp_path / "rows.csv").open(newline="", encoding="utf-8") as f:
        written = list(csv.reader(f))
    assert written[0] == ["Item", "Qty"] and len(written) == 7
    done = run_script(CREATE, "rows.csv", "-o", "rows.xlsx", "--no-totals", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    sheet = openpyxl.load_workbook(tmp_path / "rows.xlsx").active
    assert list(sheet.iter_rows(values_only=True)) == [
        ("Item", "Qty"),
        *[(f"item {n}{k}", n * 10 + k) for n in (1, 2, 3) for k in (1, 2)],
    ]


def test_files_objects_and_ragged_rows(tmp_path: Path) -> None:
    (tmp_path / "p1.json").write_text(
        json.dumps([{"城市": "北京", "人口": "2,189"}, {"城市": "上海"}], ensure_ascii=False),
        encoding="utf-8",
    )
    (tmp_path / "p2.json").write_text(json.dumps([["城市", "人口"], ["广州", 1868]]))
    code, _, err = rows_to_file(tmp_path, "p1.json", "p2.json", "-o", "out.json")
    assert code == 0, err
    assert read_json(tmp_path / "out.json") == (
        ["城市", "人口"],
        [["北京", 2189], ["上海", None], ["广州", 1868]],
    )


def test_blank_and_repeated_header_cells_get_names(tmp_path: Path) -> None:
    code, _, err = rows_to_file(
        tmp_path, "-o", "out.json", stdin=page(["Name", "", "Name"], ["a", "1", "2"])
    )
    assert code == 0, err
    assert read_json(tmp_path / "out.json")[0] == ["Name", "Column 2", "Name 2"]


def test_text_columns_stay_text(tmp_path: Path) -> None:
    data = page(["Phone", "Count"], ["13800138000", "5"])
    code, _, err = rows_to_file(tmp_path, "--text", "Phone", "-o", "out.json", stdin=data)
    assert code == 0, err
    assert read_json(tmp_path / "out.json")[1] == [["13800138000", 5]]
    code, _, err = rows_to_file(tmp_path, "--text", "Tel", "-o", "b.json", stdin=data)
    assert code == 2 and "--text 'Tel': no such column" in err


def test_appending_another_tables_rows_is_refused(tmp_path: Path) -> None:
    assert (
        rows_to_file(tmp_path, "--append", "-o", "r.csv", stdin=page(["A", "B"], ["x", 1]))[0] == 0
    )
    before = (tmp_path / "r.csv").read_bytes()
    code, _, err = rows_to_file(
        tmp_path, "--append", "-o", "r.csv", stdin=page(["City", "Pop"], ["y", 2])
    )
    assert code == 2
    assert err.strip() == "rows_to_file: r.csv: its columns are A, B; these rows have City, Pop"
    assert (tmp_path / "r.csv").read_bytes() == before
    # A page without a header row is data, not another table.
    assert rows_to_file(tmp_path, "--append", "-o", "r.csv", stdin=page(["z", "3"]))[0] == 0
    assert (tmp_path / "r.csv").read_text().splitlines() == ["A,B", "x,1", "z,3"]


@pytest.mark.parametrize(
    ("args", "stdin", "words"),
    [
        (["-o", "r.csv"], "", "no rows: give .json files or pipe JSON rows on stdin"),
        (["-o", "r.csv"], "{not json", "stdin: invalid JSON"),
        (["-o", "r.csv"], '{"table": 1}', 'stdin: expected {"rows": [[...], ...]}'),
        (["-o", "r.csv"], '[["A"], ["x", "y"]]', "row 2 has 2 cells for 1 columns"),
        (["-o", "r.csv"], '[["A"], [["nested"]]]', "row 2 has a cell that is not text"),
        (["-o", "r.xlsx"], '[["A"]]', "the output must end in .csv or .json"),
        (["missing.json", "-o", "r.csv"], "", "no such file: missing.json"),
        (["-o", "r.csv"], "[]", "no rows: the pages hold no table"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, args: list[str], stdin: str, words: str
) -> None:
    code, out, err = rows_to_file(tmp_path, *args, stdin=stdin)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("rows_to_file: "), err
    assert words in err
    assert not (tmp_path / "r.csv").exists()


def test_an_existing_output_is_kept_without_force_or_append(tmp_path: Path) -> None:
    (tmp_path / "r.csv").write_text("old\n")
    code, _, err = rows_to_file(tmp_path, "-o", "r.csv", stdin=page(["A"], ["x"]))
    assert code == 2 and "r.csv exists (use --force to overwrite)" in err
    assert (tmp_path / "r.csv").read_text() == "old\n"
    assert rows_to_file(tmp_path, "--force", "-o", "r.csv", stdin=page(["A"], ["x"]))[0] == 0
    assert (tmp_path / "r.csv").read_text() == "A\nx\n"


# Why: the rule — the browser is driven only by the agent's tools, under the
# approvals, the allow list and the audit; a script that browsed would escape all three.
NETWORK = re.compile(
    r"^\s*(?:import|from)\s+(playwright|selenium|pyppeteer|requests|httpx|urllib\.request|"
    r"http\.client|socket|webbrowser)\b",
    re.M,
)


def test_no_skill_script_can_drive_a_browser_or_reach_the_network() -> None:
    scripts = sorted(SKILL.glob("scripts/*.py"))
    assert scripts
    for script in scripts:
        assert not NETWORK.search(script.read_text(encoding="utf-8")), script
