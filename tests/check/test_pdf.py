"""A PDF's facts: it parses, its pages and text, fonts embedded, no '??' for text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.check import files as F
from workhearth.check.pdf import pdf_facts


def test_a_pdf_with_an_embedded_font_is_fine(made: Callable[[str], Path]) -> None:
    facts = pdf_facts(made("good.pdf"))
    assert facts.problems == []
    assert facts.pages == 1
    assert "A page of the report." in facts.text


def test_pages_are_counted(tmp_path: Path) -> None:
    assert pdf_facts(F.pdf(tmp_path / "five.pdf", pages=5)).pages == 5


def test_a_standard_font_not_embedded_is_a_fonts_problem(made: Callable[[str], Path]) -> None:
    ((problem),) = pdf_facts(made("helvetica.pdf")).problems
    assert (problem.kind, problem.where) == ("fonts", "page 1")
    assert problem.message == "font Helvetica is not embedded"


def test_question_marks_standing_in_for_text(made: Callable[[str], Path]) -> None:
    ((problem),) = pdf_facts(made("question-marks.pdf")).problems
    assert (problem.kind, problem.where) == ("text", "page 1")
    assert problem.message.startswith("'??' stands in for text")


def test_a_single_question_mark_is_punctuation(tmp_path: Path) -> None:
    assert pdf_facts(F.pdf(tmp_path / "q.pdf", text="Is it ready? Yes.")).problems == []


def test_the_where_of_a_rendered_file_says_so(made: Callable[[str], Path]) -> None:
    ((problem),) = pdf_facts(made("helvetica.pdf"), what="rendered ").problems
    assert problem.where == "rendered page 1"


def test_an_encrypted_pdf_does_not_open(made: Callable[[str], Path]) -> None:
    facts = pdf_facts(made("encrypted.pdf"))
    assert [(p.kind, p.where, p.message) for p in facts.problems] == [
        ("opens", "", "the PDF is encrypted with a password")
    ]
    assert facts.pages == 0


def test_a_pdf_encrypted_without_a_user_password_opens(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(F.pdf(tmp_path / "plain.pdf")))
    writer.encrypt(user_password="", owner_password="owner", algorithm="AES-256")
    with (tmp_path / "locked.pdf").open("wb") as fh:
        writer.write(fh)
    facts = pdf_facts(tmp_path / "locked.pdf")
    assert facts.problems == [] and facts.pages == 1


def test_garbage_is_not_a_readable_pdf(tmp_path: Path) -> None:
    path = tmp_path / "bad.pdf"
    path.write_bytes(b"%PDF-1.7\nnot really\n")
    ((problem),) = pdf_facts(path).problems
    assert (problem.kind, problem.where) == ("opens", "")
    assert problem.message.startswith("not a readable PDF")


def test_a_truncated_pdf_is_a_problem_not_an_exception(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    data = made("good.pdf").read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(data[: len(data) // 2])
    facts = pdf_facts(path)
    assert any(p.kind == "opens" for p in facts.problems) or facts.pages == 1
