"""A .docx's facts: text with changes accepted, changes and comments counted, wide tables."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.check import files as F
from workhearth.check.package import Package
from workhearth.check.word import word_facts


def facts_of(path: Path):  # type: ignore[no-untyped-def]
    package = Package(path)
    try:
        return word_facts(package)
    finally:
        package.close()


def test_text_of_a_plain_document(made: Callable[[str], Path]) -> None:
    facts = facts_of(made("good.docx"))
    assert facts.text.splitlines()[0] == "Quarterly report"
    assert "A short report paragraph. (3)" in facts.text
    assert (facts.tracked_changes, facts.comments, facts.problems) == (0, 0, [])


def test_a_table_wider_than_the_page_is_a_layout_problem(made: Callable[[str], Path]) -> None:
    ((problem),) = facts_of(made("wide-table.docx")).problems
    assert (problem.kind, problem.where) == ("layout", "table 1")
    assert "32.0 cm wide" in problem.message


def test_a_table_within_the_page_is_not(tmp_path: Path) -> None:
    from docx import Document
    from docx.shared import Cm

    doc = Document()
    table = doc.add_table(rows=1, cols=3)
    for col in table.columns:
        col.width = Cm(4)
    doc.save(str(tmp_path / "t.docx"))
    assert facts_of(tmp_path / "t.docx").problems == []


def test_tracked_changes_are_counted_and_the_text_is_as_accepted(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    change = (
        b'<w:p><w:del w:id="1" w:author="a"><w:r><w:delText>12,000</w:delText></w:r></w:del>'
        b'<w:ins w:id="2" w:author="a"><w:r><w:t>13,000</w:t></w:r></w:ins></w:p>'
    )
    path = F.rewrite_zip(
        F.copy(made("good.docx"), tmp_path / "x.docx"),
        lambda name, data: (
            data.replace(b"<w:sectPr", change + b"<w:sectPr", 1)
            if name == "word/document.xml"
            else data
        ),
    )
    facts = facts_of(path)
    assert facts.tracked_changes == 2
    assert "13,000" in facts.text and "12,000" not in facts.text


def test_comments_are_counted(tmp_path: Path) -> None:
    from docx import Document

    doc = Document()
    para = doc.add_paragraph("Reviewed text")
    if not hasattr(doc, "add_comment"):
        import pytest

        pytest.skip("this python-docx cannot write comments")
    doc.add_comment(para.runs, text="check this", author="r")
    doc.add_comment(para.runs, text="and this", author="r")
    doc.save(str(tmp_path / "c.docx"))
    assert facts_of(tmp_path / "c.docx").comments == 2
