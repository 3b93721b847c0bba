"""A .docx's own facts: its text (changes accepted), tracked changes, comments, and
tables wider than the text width of their page."""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from workhearth.check.package import Package
from workhearth.check.receipt import Problem

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
TWIPS_PER_CM = 566.93
# Why a margin of error: Word itself lets a table poke a little into the margin.
TOLERANCE_TWIPS = 57  # 1 mm


@dataclass
class WordFacts:
    text: str = ""
    tracked_changes: int = 0
    comments: int = 0
    problems: list[Problem] = field(default_factory=list)


def _text(body: etree._Element) -> str:
    """The document's text with every tracked change accepted (w:delText left out)."""
    lines = []
    for para in body.iter(f"{W}p"):
        parts = [
            "\t" if node.tag == f"{W}tab" else node.text or ""
            for node in para.iter(f"{W}t", f"{W}tab")
        ]
        lines.append("".join(parts))
    return "\n".join(lines)


def _text_width(sect: etree._Element | None) -> int | None:
    if sect is None:
        return None
    size, margins = sect.find(f"{W}pgSz"), sect.find(f"{W}pgMar")
    if size is None or margins is None:
        return None
    try:
        return (
            int(size.get(f"{W}w", "0"))
            - int(margins.get(f"{W}left", "0"))
            - int(margins.get(f"{W}right", "0"))
        )
    except ValueError:
        return None


def _wide_tables(body: etree._Element) -> list[Problem]:
    """Tables whose grid is wider than the text width of the section they are in."""
    width = _text_width(body.find(f"{W}sectPr"))
    if width is None or width <= 0:
        return []
    out = []
    for n, table in enumerate(body.iter(f"{W}tbl"), 1):
        try:
            grid = sum(int(c.get(f"{W}w", "0")) for c in table.iter(f"{W}gridCol"))
        except ValueError:
            continue
        if grid > width + TOLERANCE_TWIPS:
            out.append(
                Problem(
                    "layout",
                    f"table {n}",
                    f"is {grid / TWIPS_PER_CM:.1f} cm wide, the page's text width is "
                    f"{width / TWIPS_PER_CM:.1f} cm",
                    "table_wide",
                    {
                        "width": f"{grid / TWIPS_PER_CM:.1f}",
                        "printable": f"{width / TWIPS_PER_CM:.1f}",
                    },
                )
            )
    return out


def word_facts(package: Package) -> WordFacts:
    facts = WordFacts()
    document = package.xml("word/document.xml")
    if document is None:
        return facts  # the package check reports it missing or malformed
    body = document.find(f"{W}body")
    if body is None:
        facts.problems.append(Problem("opens", "word/document.xml", "has no body", "no_body"))
        return facts
    facts.text = _text(body)
    facts.tracked_changes = sum(
        1 for _ in document.iter(f"{W}ins", f"{W}del", f"{W}moveFrom", f"{W}moveTo")
    )
    comments = package.xml("word/comments.xml")
    facts.comments = 0 if comments is None else sum(1 for _ in comments.iter(f"{W}comment"))
    facts.problems += _wide_tables(body)
    return facts
