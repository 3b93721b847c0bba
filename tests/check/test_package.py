"""OOXML package integrity: each broken package names the part that is broken."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.check import files as F
from workhearth.check.package import Package, _rels_source, integrity, open_package


def problems_of(path: Path) -> list[tuple[str, str, str]]:
    package, opened = open_package(path)
    if package is None:
        return [(p.kind, p.where, p.message) for p in opened]
    try:
        return [(p.kind, p.where, p.message) for p in integrity(package)]
    finally:
        package.close()


@pytest.mark.parametrize("name", ["good.docx", "good.xlsx", "good.pptx", "fit.xlsx"])
def test_packages_made_by_the_python_libraries_are_whole(
    made: Callable[[str], Path], name: str
) -> None:
    assert problems_of(made(name)) == []


def test_a_dangling_relationship_names_the_rels_part_and_the_missing_target(
    made: Callable[[str], Path],
) -> None:
    ((kind, where, message),) = problems_of(made("dangling.docx"))
    assert (kind, where) == ("opens", "word/_rels/document.xml.rels")
    assert "word/missing.xml" in message and "missing" in message


def test_a_malformed_part_is_named(made: Callable[[str], Path]) -> None:
    ((kind, where, message),) = problems_of(made("malformed.docx"))
    assert (kind, where) == ("opens", "word/document.xml")
    assert message.startswith("malformed XML")


def test_a_part_without_a_content_type_is_named(made: Callable[[str], Path]) -> None:
    assert problems_of(made("untyped.docx")) == [
        ("opens", "word/extra.bin", "part has no content type")
    ]


def test_a_content_type_for_a_missing_part_is_named(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    path = F.rewrite_zip(
        F.copy(made("good.docx"), tmp_path / "x.docx"),
        lambda name, data: None if name == "word/styles.xml" else data,
    )
    found = problems_of(path)
    assert ("opens", "word/styles.xml", "content type listed for a part that is missing") in found
    # ... and the document's relationship to it dangles too
    assert any(w == "word/_rels/document.xml.rels" and "styles.xml" in m for _, w, m in found)


def test_a_package_without_its_main_document_says_so(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    path = F.rewrite_zip(
        F.copy(made("good.docx"), tmp_path / "x.docx"),
        lambda name, data: (
            data.replace(b"officeDocument/2006/relationships/officeDocument", b"x/other")
            if name == "_rels/.rels"
            else data
        ),
    )
    assert ("opens", "_rels/.rels", "no main document part") in problems_of(path)


def test_relationships_of_a_missing_part_are_named(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    path = F.add_part(
        F.copy(made("good.docx"), tmp_path / "x.docx"),
        "word/_rels/ghost.xml.rels",
        b'<?xml version="1.0"?><Relationships xmlns='
        b'"http://schemas.openxmlformats.org/package/2006/relationships"/>',
    )
    ((kind, where, message),) = problems_of(path)
    assert (kind, where) == ("opens", "word/_rels/ghost.xml.rels")
    assert "word/ghost.xml" in message


def test_not_a_zip_is_a_problem_not_an_exception(made: Callable[[str], Path]) -> None:
    ((kind, where, message),) = problems_of(made("not-a-zip.docx"))
    assert (kind, where) == ("opens", "")
    assert "zip" in message


def test_external_relationships_are_not_followed(
    made: Callable[[str], Path], tmp_path: Path
) -> None:
    link = (
        b'<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/hyperlink" Target="https://example.com/" TargetMode="External"/>'
    )
    path = F.rewrite_zip(
        F.copy(made("good.docx"), tmp_path / "x.docx"),
        lambda name, data: (
            data.replace(b"</Relationships>", link + b"</Relationships>")
            if name == "word/_rels/document.xml.rels"
            else data
        ),
    )
    assert problems_of(path) == []


def test_an_entity_is_not_expanded(made: Callable[[str], Path], tmp_path: Path) -> None:
    """A part declaring an external entity does not make the parser read that file."""
    evil = b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>'
    path = F.add_part(F.copy(made("good.docx"), tmp_path / "x.docx"), "customXml/item9.xml", evil)
    package = Package(path)
    try:
        root = package.xml("customXml/item9.xml")
    finally:
        package.close()
    assert root is not None and "root:" not in "".join(root.itertext())


@pytest.mark.parametrize(
    ("rels", "source"),
    [
        ("_rels/.rels", ""),
        ("word/_rels/document.xml.rels", "word/document.xml"),
        ("ppt/slides/_rels/slide1.xml.rels", "ppt/slides/slide1.xml"),
    ],
)
def test_rels_source(rels: str, source: str) -> None:
    assert _rels_source(rels) == source
