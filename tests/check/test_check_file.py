"""``check_file``: each broken file fails with the exact problem kind and where; good
files pass. Without LibreOffice (``no_office``) unless the round trip is the point."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.check import files as F
from tests.check.files import failing
from workhearth.check import Tools, check_file
from workhearth.errors import NotFoundError, UsageError

SKIPPED_ROUND_TRIP = ("skipped", "round trip")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("dangling.docx", [("opens", "word/_rels/document.xml.rels")]),
        ("malformed.docx", [("opens", "word/document.xml")]),
        ("untyped.docx", [("opens", "word/extra.bin")]),
        ("not-a-zip.docx", [("opens", "")]),
        ("glyph.docx", [("text", "")]),
        ("wide-table.docx", [("layout", "table 1")]),
        ("div0.xlsx", [("formula", "Sales!B2")]),
        ("uncached.xlsx", [("formula", "Sales")]),
        ("wide.xlsx", [("layout", "Wide")]),
        ("overflow.pptx", [("layout", "slide 1")]),
        ("helvetica.pdf", [("fonts", "page 1")]),
        ("question-marks.pdf", [("text", "page 1")]),
        ("encrypted.pdf", [("opens", "")]),
    ],
)
def test_a_broken_file_fails_with_its_problem(
    made: Callable[[str], Path],
    no_office: Tools,
    tmp_path: Path,
    name: str,
    expected: list[tuple[str, str]],
) -> None:
    receipt = check_file(made(name), no_office, tmp_path / "thumbs")
    assert not receipt.ok
    assert failing(receipt) == expected
    assert receipt.verdict().startswith("FAILS: ")


@pytest.mark.parametrize("name", ["good.docx", "good.xlsx", "good.pptx", "fit.xlsx"])
def test_a_good_office_file_without_libreoffice_is_ok_with_the_round_trip_skipped(
    made: Callable[[str], Path], no_office: Tools, tmp_path: Path, name: str
) -> None:
    receipt = check_file(made(name), no_office, tmp_path / "thumbs")
    assert receipt.ok, receipt.problems
    assert [(p.kind, p.where) for p in receipt.problems] == [SKIPPED_ROUND_TRIP]
    assert "apt-get install" in receipt.problems[0].message
    assert receipt.verdict() == "ok; not checked here: round trip"
    assert "round trip" not in receipt.checked and "package" in receipt.checked
    assert receipt.thumbnails == [] and receipt.pages is None


def test_the_missing_glyph_names_the_character(
    made: Callable[[str], Path], no_office: Tools
) -> None:
    (problem,) = [p for p in check_file(made("glyph.docx"), no_office).problems if p.fails]
    assert "U+E000" in problem.message


def test_a_broken_package_is_not_read_further(
    made: Callable[[str], Path], no_office: Tools
) -> None:
    """A malformed document part is one problem, not also a reader's crash; and the
    round trip is not tried (it is not even listed as skipped)."""
    receipt = check_file(made("malformed.docx"), no_office)
    assert len(receipt.problems) == 1 and receipt.checked == ["package"]
    assert receipt.text == ""


def test_a_good_pdf_needs_no_libreoffice(
    made: Callable[[str], Path], no_office: Tools, tmp_path: Path
) -> None:
    if no_office.pdftoppm is None:
        pytest.skip("poppler is not installed")
    receipt = check_file(made("good.pdf"), no_office, tmp_path / "thumbs")
    assert receipt.ok and receipt.problems == []
    assert receipt.pages == 1
    (thumb,) = receipt.thumbnails
    assert Path(thumb).parent == tmp_path / "thumbs"
    assert Path(thumb).read_bytes().startswith(F.PNG_MAGIC)


def test_without_poppler_thumbnails_are_skipped(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    bare = Tools(soffice=None, pdftoppm=None, profile=tmp_path / "p")
    receipt = check_file(made("good.pdf"), bare, tmp_path / "thumbs")
    assert receipt.ok and [(p.kind, p.where) for p in receipt.problems] == [
        ("skipped", "thumbnails")
    ]


def test_receipt_facts(made: Callable[[str], Path], no_office: Tools) -> None:
    import hashlib

    path = made("good.docx")
    receipt = check_file(path, no_office)
    assert receipt.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert receipt.format == "docx" and receipt.path == str(path)
    assert receipt.text.startswith("Quarterly report")
    assert receipt.seconds > 0


def test_an_upper_case_extension_is_checked(
    made: Callable[[str], Path], no_office: Tools, tmp_path: Path
) -> None:
    receipt = check_file(F.copy(made("div0.xlsx"), tmp_path / "BOOK.XLSX"), no_office)
    assert receipt.format == "xlsx" and failing(receipt) == [("formula", "Sales!B2")]


def test_an_unknown_format_and_a_missing_file_are_errors(tmp_path: Path, no_office: Tools) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(UsageError, match=r"notes\.txt: hearth check reads"):
        check_file(tmp_path / "notes.txt", no_office)
    with pytest.raises(NotFoundError, match="no such file"):
        check_file(tmp_path / "gone.docx", no_office)


def test_a_file_renamed_to_another_office_format_fails(
    made: Callable[[str], Path], no_office: Tools, tmp_path: Path
) -> None:
    """A .xlsx that is really a .docx: the package is whole, the reader refuses it."""
    receipt = check_file(F.copy(made("good.docx"), tmp_path / "fake.xlsx"), no_office)
    assert not receipt.ok
    assert [k for k, _ in failing(receipt)] == ["opens"]


@pytest.mark.parametrize("office_tools", [False, True])
def test_question_marks_standing_in_for_text_in_an_office_file(
    no_office: Tools, tmp_path: Path, office_tools: bool, request: pytest.FixtureRequest
) -> None:
    """Read from the file's own text (with or without LibreOffice), once: the round trip's
    export draws that same text and is not read for it again."""
    tools = request.getfixturevalue("office") if office_tools else no_office
    path = F.docx(tmp_path / "q.docx", paragraphs=1, text="Name: ?? (was 张三)")
    receipt = check_file(path, tools)
    assert [(p.code, p.params) for p in receipt.problems if p.fails] == [
        ("question_marks", {"text": "??"})
    ]


def test_a_folder_is_not_a_file(tmp_path: Path, no_office: Tools) -> None:
    (tmp_path / "x.docx").mkdir()
    with pytest.raises(UsageError, match=r"x\.docx: is a folder"):
        check_file(tmp_path / "x.docx", no_office)


# --- with LibreOffice: the round trip ---------------------------------------------


@pytest.mark.parametrize("name", ["good.docx", "good.xlsx", "good.pptx"])
def test_a_good_office_file_round_trips_with_pages_and_thumbnails(
    made: Callable[[str], Path], office: Tools, tmp_path: Path, name: str
) -> None:
    receipt = check_file(made(name), office, tmp_path / "thumbs")
    assert receipt.ok and receipt.problems == [], receipt.problems
    assert "round trip" in receipt.checked and "thumbnails" in receipt.checked
    assert receipt.pages is not None and receipt.pages >= 1
    assert receipt.thumbnails
    assert all(Path(t).read_bytes().startswith(F.PNG_MAGIC) for t in receipt.thumbnails)


def test_a_broken_package_stops_the_conversion_started_beside_it(
    made: Callable[[str], Path], office: Tools, tmp_path: Path
) -> None:
    """LibreOffice starts before the package is checked; a broken package stops it: no
    round trip reported, none left running, and the next file converts as before."""
    broken = check_file(made("dangling.docx"), office, tmp_path / "thumbs")
    assert failing(broken) == [("opens", "word/_rels/document.xml.rels")]
    assert "round trip" not in broken.checked and broken.thumbnails == []
    good = check_file(made("good.docx"), office, tmp_path / "thumbs")
    assert good.ok and "round trip" in good.checked


def test_the_wide_sheet_renders_to_many_pages_as_the_check_said(
    made: Callable[[str], Path], office: Tools
) -> None:
    """The layout estimate agrees with LibreOffice: the wide sheet prints pages across,
    the same sheet set to fit the width prints fewer (LibreOffice 7 adds a blank page
    after a sheet scaled this far down, so not exactly one)."""
    wide, fit = check_file(made("wide.xlsx"), office), check_file(made("fit.xlsx"), office)
    assert failing(wide) == [("layout", "Wide")] and wide.pages is not None and wide.pages > 1
    assert fit.ok and fit.pages is not None and fit.pages < wide.pages


@pytest.mark.parametrize(("rows", "anchor"), [(10, "N2"), (44, "A48")])
def test_a_chart_the_check_says_prints_apart_does_so_in_libreoffice(
    office: Tools, tmp_path: Path, rows: int, anchor: str
) -> None:
    """LibreOffice's export agrees: the page the receipt names holds the chart's axis
    labels and none of the table's rows."""
    from pypdf import PdfReader

    from workhearth.check.render import to_pdf, work_dir

    path = F.xlsx_chart(tmp_path / "c.xlsx", rows, anchor)
    receipt = check_file(path, office)
    (problem,) = [p for p in receipt.problems if p.fails]
    assert (problem.code, problem.params["page"]) == ("chart_apart", 2)
    with work_dir(office, "test-") as tmp:
        pages = [p.extract_text() for p in PdfReader(to_pdf(office, path, tmp)).pages]
    assert "Q1" in pages[0] and "Q1" not in pages[1] and "Region 1" in pages[1]


def test_the_library_call_reads_paths_from_the_workspace(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    """``Workhearth.check`` (DESIGN §8's library face): relative paths from the workspace,
    thumbnails under the home's cache, or none when asked for none. A PDF: no LibreOffice."""
    from workhearth import Workhearth

    if shutil.which("pdftoppm") is None:
        pytest.skip("poppler is not installed")
    (tmp_path / "ws").mkdir()
    F.copy(made("good.pdf"), tmp_path / "ws" / "r.pdf")
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    (receipt,) = wh.check("r.pdf")
    assert receipt.path == str(tmp_path / "ws" / "r.pdf") and receipt.ok
    (thumb,) = receipt.thumbnails
    assert Path(thumb).is_relative_to(tmp_path / "home") and Path(thumb).is_file()
    (bare,) = wh.check(tmp_path / "ws" / "r.pdf", thumbnails=False)
    assert bare.ok and bare.thumbnails == []
