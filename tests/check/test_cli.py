"""Whole program: ``hearth check`` as a user runs it, in a temporary HEARTH_HOME.

One home per module, so LibreOffice builds its kept profile once and later launches
reuse it (as on a user's machine).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.check import files as F
from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth

DESIGN_KEYS = {"path", "format", "ok", "problems", "pages", "thumbnails", "formula_errors"}


@pytest.fixture(scope="module")
def hearth(tmp_path_factory: pytest.TempPathFactory) -> Hearth:
    return make_hearth(tmp_path_factory.mktemp("check-cli"))


@pytest.fixture(scope="module")
def needs_office() -> None:
    if not (shutil.which("soffice") and shutil.which("pdftoppm")):
        pytest.skip("LibreOffice or poppler is not installed; .ci/run installs them")


def put(hearth: Hearth, made: Callable[[str], Path], *names: str) -> list[str]:
    """Copy made files into the workspace; their names, relative to it."""
    for name in names:
        F.copy(made(name), hearth.workspace / name)
    return list(names)


def no_office_env(tmp_path: Path) -> dict[str, str]:
    """A PATH with poppler and fontconfig but no LibreOffice."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("pdftoppm", "fc-list"):
        if (found := shutil.which(tool)) and not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    return {"PATH": str(bin_dir)}


def test_good_files_of_every_format_pass_with_pages_and_thumbnails(
    hearth: Hearth, made: Callable[[str], Path], needs_office: None
) -> None:
    names = put(hearth, made, "good.docx", "good.xlsx", "good.pptx", "good.pdf")
    result = hearth.run("check", *names, "--json")
    assert result.code == 0, result.err
    receipts = orjson.loads(result.out)
    assert [r["format"] for r in receipts] == ["docx", "xlsx", "pptx", "pdf"]
    for receipt, name in zip(receipts, names, strict=True):
        assert set(receipt) >= DESIGN_KEYS
        assert receipt["path"] == str(hearth.workspace / name)
        assert receipt["ok"] is True and receipt["problems"] == [], receipt
        assert receipt["pages"] >= 1 and receipt["formula_errors"] == []
        assert receipt["thumbnails"]
        for thumb in receipt["thumbnails"]:
            assert Path(thumb).is_relative_to(hearth.home)
            assert Path(thumb).read_bytes().startswith(F.PNG_MAGIC)


def test_one_bad_file_fails_the_run_and_each_file_gets_its_receipt(
    hearth: Hearth, made: Callable[[str], Path]
) -> None:
    names = put(hearth, made, "good.pdf", "helvetica.pdf")
    result = hearth.run("check", *names, "--json")
    assert result.code == 1 and "Traceback" not in result.err
    good, bad = orjson.loads(result.out)
    assert good["ok"] is True
    assert bad["ok"] is False
    assert bad["problems"] == [
        {
            "kind": "fonts",
            "where": "page 1",
            "message": "font Helvetica is not embedded",
            "code": "font_not_embedded",
            "params": {"font": "Helvetica"},
        }
    ]


def test_the_terminal_shows_a_verdict_and_the_problems(
    hearth: Hearth, made: Callable[[str], Path], tmp_path: Path
) -> None:
    names = put(hearth, made, "div0.xlsx")
    # Why COLUMNS empty: into a pipe nothing is wrapped (xdist's workers set COLUMNS=80).
    result = hearth.run("check", *names, env={**no_office_env(tmp_path), "COLUMNS": ""})
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == f"{hearth.workspace / 'div0.xlsx'}: FAILS: 1 problem; 1 check not run here"
    assert "  formula: Sales!B2: shows #DIV/0!" in lines
    assert any(
        line.startswith("  skipped: round trip: LibreOffice is not installed") for line in lines
    )


def test_at_80_columns_whole_words_each_problem_once_and_page_counts(
    hearth: Hearth, made: Callable[[str], Path], needs_office: None
) -> None:
    """A terminal 80 columns wide: lines break at spaces (continuations indented), the head
    line counts the problems instead of repeating the first, "1 page" but "2 pages"."""
    from rich.cells import cell_len

    F.docx_pages(hearth.workspace / "two.docx", 2)
    names = [*put(hearth, made, "wide.xlsx", "good.docx"), "two.docx"]
    result = hearth.run("check", *names, env={"COLUMNS": "80"})
    assert result.code == 1 and "Traceback" not in result.err
    lines = result.out.splitlines()
    for line in lines:
        # Why the exception: a path longer than the line has no space to break at.
        assert cell_len(line) <= 80 or " " not in line.strip(), line
    assert all(line.startswith("    ") for line in lines if not line.startswith(("/", "  ")))
    said = " ".join(line.strip() for line in lines)
    message = (
        "layout: Wide: is 116.7 cm wide, the printable width is 17.2 cm: it prints 7 pages"
        " across (set it to fit the page width, or landscape)"
    )
    assert message in said and said.count("116.7 cm wide") == 1
    ws = hearth.workspace
    assert f"{ws / 'wide.xlsx'}: FAILS: 1 problem · 10 pages" in said
    assert f"{ws / 'good.docx'}: ok · 1 page " in said
    assert f"{ws / 'two.docx'}: ok · 2 pages " in said
    assert "1 pages" not in said


def test_formula_errors_in_json(
    hearth: Hearth, made: Callable[[str], Path], tmp_path: Path
) -> None:
    names = put(hearth, made, "div0.xlsx")
    result = hearth.run("check", *names, "--json", env=no_office_env(tmp_path))
    assert result.code == 1
    (receipt,) = orjson.loads(result.out)
    assert receipt["formula_errors"] == [{"sheet": "Sales", "cell": "B2", "value": "#DIV/0!"}]


def test_without_libreoffice_the_round_trip_is_skipped_not_failed(
    hearth: Hearth, made: Callable[[str], Path], tmp_path: Path
) -> None:
    names = put(hearth, made, "good.docx", "good.pptx")
    result = hearth.run("check", *names, "--json", env=no_office_env(tmp_path))
    assert result.code == 0, result.err
    for receipt in orjson.loads(result.out):
        assert receipt["ok"] is True
        (problem,) = receipt["problems"]
        assert (problem["kind"], problem["where"]) == ("skipped", "round trip")
        assert "apt-get install" in problem["message"]
    # ... and a file that is broken still fails
    names = put(hearth, made, "dangling.docx")
    result = hearth.run("check", *names, "--json", env=no_office_env(tmp_path))
    assert result.code == 1
    (receipt,) = orjson.loads(result.out)
    assert [(p["kind"], p["where"]) for p in receipt["problems"]] == [
        ("opens", "word/_rels/document.xml.rels")
    ]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["notes.txt"], "notes.txt: hearth check reads .docx, .xlsx, .pptx and .pdf files"),
        (["gone.docx"], "gone.docx: no such file"),
        (["folder.docx"], "folder.docx: is a folder, not a file"),
        (["good.pdf", "gone.xlsx"], "gone.xlsx: no such file"),
        ([], "Missing argument"),
    ],
)
def test_bad_input_is_one_line_on_stderr(
    hearth: Hearth, made: Callable[[str], Path], args: list[str], said: str
) -> None:
    put(hearth, made, "good.pdf")
    (hearth.workspace / "notes.txt").write_text("hi")
    (hearth.workspace / "folder.docx").mkdir(exist_ok=True)
    result = hearth.run("check", *args)
    assert result.code != 0
    (line,) = result.err_lines
    assert line.startswith("hearth: ") and said in line
    assert "Traceback" not in result.err and result.out == ""


def _soffice_on(profile: Path) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if profile.as_uri().encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def test_a_killed_check_leaves_no_libreoffice_that_blocks_the_next(
    hearth: Hearth, needs_office: None, tmp_path: Path
) -> None:
    """SIGKILL while LibreOffice converts: the next check succeeds, and no LibreOffice
    keeps running on the profile afterwards."""
    F.docx_pages(hearth.workspace / "five.docx", 5)
    profile = hearth.home / "cache" / "libreoffice-profile"
    proc = subprocess.Popen(
        [*HEARTH_CMD, "check", "five.docx"],
        cwd=hearth.workspace,
        env=hearth.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not _soffice_on(profile) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _soffice_on(profile), "LibreOffice never started"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    result = hearth.run("check", "five.docx", "--json")
    assert result.code == 0, result.err
    (receipt,) = orjson.loads(result.out)
    assert receipt["ok"] and receipt["pages"] == 5
    deadline = time.monotonic() + 30
    while _soffice_on(profile) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _soffice_on(profile) == []
    # The killed check's copy of the user's file is gone too (removed by the next check),
    # and nothing of it went to /tmp.
    hearth.run("check", "five.docx")
    work = hearth.home / "cache" / "check-work"
    assert work.is_dir()
    assert [p for p in work.rglob("*") if p.suffix == ".docx"] == []


def test_relative_paths_are_from_the_working_folder(
    hearth: Hearth, made: Callable[[str], Path], tmp_path: Path
) -> None:
    sub = hearth.workspace / "out"
    sub.mkdir(exist_ok=True)
    F.copy(made("good.pdf"), sub / "r.pdf")
    result = hearth.run("check", "r.pdf", "--json", cwd=sub)
    assert result.code == 0, result.err
    assert orjson.loads(result.out)[0]["path"] == str(sub / "r.pdf")
