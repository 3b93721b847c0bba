"""Tracked changes and comments of a .docx, read from its XML with python-docx's lxml tree.

A Word file under review keeps both versions of its text: insertions (``w:ins``,
``w:moveTo``) hold ``w:t`` runs, deletions (``w:del``, ``w:moveFrom``) hold ``w:delText``
runs. python-docx's ``Paragraph.text`` skips both, so a cell whose "12,000" was replaced
by "13,000" reads as "¥". Here a paragraph is read as it would be once every change is
accepted (insertions kept, deletions gone) or rejected (the other way round), and the
changes and comments are listed with their author, date and text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from docx.oxml.ns import qn

View = Literal["accept", "reject"]

INSERTED = frozenset({qn("w:ins"), qn("w:moveTo")})
DELETED = frozenset({qn("w:del"), qn("w:moveFrom")})
# Why: these wrap runs without changing what they say; their runs are read through them.
CONTAINERS = frozenset(
    {qn("w:hyperlink"), qn("w:smartTag"), qn("w:customXml"), qn("w:fldSimple"), qn("w:sdtContent")}
)
CHARACTERS = {
    qn("w:t"): None,
    qn("w:delText"): None,
    qn("w:tab"): "\t",
    qn("w:ptab"): "\t",
    qn("w:br"): "\n",
    qn("w:cr"): "\n",
    qn("w:noBreakHyphen"): "-",
}
KINDS = {qn("w:ins"): "insert", qn("w:moveTo"): "insert", qn("w:del"): "delete"}
KINDS[qn("w:moveFrom")] = "delete"
COMMENTS_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/comments"


def _hidden(tag: str, view: View) -> bool:
    """Whether a revision wrapper's content disappears in ``view``."""
    return tag in (DELETED if view == "accept" else INSERTED)


def _run_text(run: Any) -> str:
    parts = []
    for child in run:
        if child.tag in CHARACTERS:
            parts.append(CHARACTERS[child.tag] or child.text or "")
    return "".join(parts)


def _tokens(parent: Any, view: View) -> Iterator[tuple[str, str]]:
    """``("text", s)``, ``("start", id)`` and ``("end", id)`` of a paragraph, in order."""
    for child in parent:
        tag = child.tag
        if tag == qn("w:r"):
            yield "text", _run_text(child)
        elif tag in INSERTED or tag in DELETED:
            if not _hidden(tag, view):
                yield from _tokens(child, view)
        elif tag in CONTAINERS:
            yield from _tokens(child, view)
        elif tag == qn("w:sdt"):
            content = child.find(qn("w:sdtContent"))
            if content is not None:
                yield from _tokens(content, view)
        elif tag == qn("w:commentRangeStart"):
            yield "start", child.get(qn("w:id"), "")
        elif tag == qn("w:commentRangeEnd"):
            yield "end", child.get(qn("w:id"), "")


def paragraph_text(p: Any, view: View) -> str:
    """The text of a ``w:p`` element with every change accepted or rejected."""
    return "".join(value for kind, value in _tokens(p, view) if kind == "text")


def row_hidden(tr: Any, view: View) -> bool:
    """Whether a table row (``w:tr``) is gone in ``view`` (an inserted or deleted row)."""
    tr_pr = tr.find(qn("w:trPr"))
    if tr_pr is None:
        return False
    return any(_hidden(child.tag, view) for child in tr_pr)


def cell_text(tc: Any, view: View) -> str:
    """A table cell's paragraphs, one line each, as python-docx's ``cell.text`` joins them."""
    return "\n".join(paragraph_text(p, view) for p in tc.findall(qn("w:p")))


def changes(body: Any) -> list[dict[str, Any]]:
    """Every tracked insertion and deletion of text or table rows, in document order."""
    found = []
    for el in body.iter(*KINDS):
        parent = el.getparent()
        if parent.tag == qn("w:rPr"):
            continue  # Why: a paragraph mark's revision; the text around it is listed already
        if parent.tag == qn("w:trPr"):
            view: View = "reject" if el.tag in DELETED else "accept"
            text = "\t".join(cell_text(tc, view) for tc in parent.getparent().iter(qn("w:tc")))
            what = "row"
        else:
            text = "".join(_run_text(r) for r in el.iter(qn("w:r")))
            what = "text"
        if not text:
            continue
        found.append(
            {
                "kind": KINDS[el.tag],
                "of": what,
                "moved": el.tag not in (qn("w:ins"), qn("w:del")),
                "author": el.get(qn("w:author")) or "",
                "date": el.get(qn("w:date")),
                "text": text,
            }
        )
    return found


def anchors(body: Any, view: View) -> dict[str, str]:
    """Comment id → the text its range marks (paragraphs joined by newlines)."""
    open_ids: list[str] = []
    text: dict[str, list[str]] = {}
    for p in body.iter(qn("w:p")):
        for kind, value in _tokens(p, view):
            if kind == "start":
                open_ids.append(value)
                text.setdefault(value, [])
            elif kind == "end":
                if value in open_ids:
                    open_ids.remove(value)
            else:
                for key in open_ids:
                    text[key].append(value)
        for key in open_ids:
            text[key].append("\n")
    return {key: "".join(parts).strip("\n") for key, parts in text.items()}


def comments(document: Any, view: View) -> list[dict[str, Any]]:
    """Every comment: id, author, date, text, and the text it is anchored on."""
    part = next(
        (rel.target_part for rel in document.part.rels.values() if rel.reltype == COMMENTS_REL),
        None,
    )
    if part is None:
        return []
    root = getattr(part, "element", None)
    if root is None:
        from lxml import etree

        root = etree.fromstring(part.blob)
    marked = anchors(document.element.body, view)
    found = []
    for c in root.findall(qn("w:comment")):
        key = c.get(qn("w:id"), "")
        found.append(
            {
                "id": key,
                "author": c.get(qn("w:author")) or "",
                "date": c.get(qn("w:date")),
                "text": "\n".join(paragraph_text(p, view) for p in c.iter(qn("w:p"))),
                "anchor": marked.get(key, ""),
            }
        )
    return found
