"""Review a .docx: add comments and tracked changes (insertions, deletions) by text match.

Usage:
  PYTHON SKILL_DIR/scripts/ooxml_patch.py IN.docx -o OUT.docx --author 审阅人 \\
      --comment "text to anchor on" "the comment" \\
      --replace "old words" "new words" --delete "words to strike" \\
      --insert-after "anchor text" " added words"

Each MATCH is looked for in the visible text of the body's paragraphs (tables
included), across run boundaries; the first occurrence is used. The edits are
real Word revisions (w:ins / w:del with author and date) and real comments
(comments part), so Word and LibreOffice show them and can accept or reject them.
Operations run in this order: replace, delete, insert-after, comment. A match that
is not found is an error and nothing is written.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import sys
from typing import Any

from _docx_common import input_file, open_docx, output_file

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_path, run

NAME = "ooxml_patch.py"


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog=NAME, description="Add comments and tracked changes to a .docx by text match."
    )
    p.add_argument("input", help="the .docx to review")
    p.add_argument("-o", "--output", required=True, help="the reviewed .docx to write")
    p.add_argument(
        "--comment",
        nargs=2,
        action="append",
        default=[],
        metavar=("MATCH", "TEXT"),
        help="add comment TEXT anchored on the first MATCH (repeatable)",
    )
    p.add_argument(
        "--replace",
        nargs=2,
        action="append",
        default=[],
        metavar=("MATCH", "NEW"),
        help="tracked replacement: MATCH deleted, NEW inserted after it (repeatable)",
    )
    p.add_argument(
        "--delete",
        action="append",
        default=[],
        metavar="MATCH",
        help="tracked deletion (repeatable)",
    )
    p.add_argument(
        "--insert-after",
        nargs=2,
        action="append",
        default=[],
        metavar=("MATCH", "TEXT"),
        help="tracked insertion of TEXT right after MATCH (repeatable)",
    )
    p.add_argument(
        "--author", default="hearth", help="reviewer name shown in Word (default hearth)"
    )
    p.add_argument("--initials", help="reviewer initials for comments (default: from --author)")
    p.add_argument(
        "--date",
        help="revision time, ISO 8601 such as 2024-06-01T09:30:00Z (default: now, UTC)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON report")
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    args = p.parse_args(argv)

    src = input_file(args.input, (".docx", ".docm"), "input")
    out = output_file(args.output, (".docx",), force=args.force, inputs=(src,))
    if not (args.comment or args.replace or args.delete or args.insert_after):
        raise UserError("nothing to do: give --comment, --replace, --delete or --insert-after")
    for match in [c[0] for c in args.comment + args.replace + args.insert_after] + args.delete:
        if not match:
            raise UserError("a MATCH text must not be empty")
        if "\n" in match:
            raise UserError(f"a MATCH stays within one paragraph (no newlines): {match!r}")
    if not args.author.strip():
        raise UserError("--author must not be empty")
    date = _date(args.date)

    from docx.text.paragraph import Paragraph
    from docx.text.run import Run

    document = open_docx(src)
    reviser = Reviser(document, args.author, date)
    for match, new in args.replace:
        runs = reviser.find(match)
        reviser.delete(runs)
        reviser.insert_after(runs[-1], new)
    for match in args.delete:
        reviser.delete(reviser.find(match))
    for match, text in args.insert_after:
        runs = reviser.find(match)
        reviser.insert_after(runs[-1], text)
    initials = args.initials if args.initials is not None else _initials(args.author)
    for match, text in args.comment:
        runs = reviser.find(match)
        paragraph = Paragraph(_ancestor(runs[0], "w:p"), document._body)
        comment = document.add_comment(
            [Run(runs[0], paragraph), Run(runs[-1], paragraph)],
            text=text,
            author=args.author,
            initials=initials,
        )
        comment._comment_elm.set(_qn("w:date"), date)
        reviser.counts["comments"] += 1

    with atomic_path(out) as tmp:
        document.save(str(tmp))
    c = reviser.counts
    if args.json:
        print(
            json.dumps(
                {"output": str(out), **c, "author": args.author, "date": date}, ensure_ascii=False
            )
        )
    else:
        print(
            f"wrote {out} ({c['comments']} comments, {c['insertions']} insertions, {c['deletions']} deletions)"
        )
    return 0


def _date(value: str | None) -> str:
    if value is None:
        return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise UserError(f"--date is not an ISO 8601 date-time: {value}") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ")


def _initials(author: str) -> str:
    words = author.split()
    if len(words) > 1:
        return "".join(w[0] for w in words).upper()[:4]
    return author[:2].upper()


def _ancestor(el: Any, tag: str) -> Any:
    while el is not None and el.tag != _qn(tag):
        el = el.getparent()
    return el


def _qn(tag: str) -> str:
    from docx.oxml.ns import qn

    return qn(tag)


def _content_length(child: Any) -> str:
    """The visible text one run child stands for."""
    tag = child.tag
    if tag == _qn("w:t"):
        return child.text or ""
    if tag == _qn("w:tab"):
        return "\t"
    if tag in (_qn("w:br"), _qn("w:cr")):
        return "\n"
    if tag == _qn("w:noBreakHyphen"):
        return "-"
    return ""


class Reviser:
    """Finds text in the body and wraps whole runs in revisions."""

    def __init__(self, document: Any, author: str, date: str) -> None:
        self.body = document.element.body
        self.author = author
        self.date = date
        ids = [int(v) for e in document.element.iter() if (v := e.get(_qn("w:id"))) and v.isdigit()]
        self.next_id = max(ids, default=0) + 1
        self.counts = {"comments": 0, "insertions": 0, "deletions": 0}

    def _revision(self, tag: str) -> Any:
        from docx.oxml import OxmlElement

        el = OxmlElement(tag)
        el.set(_qn("w:id"), str(self.next_id))
        el.set(_qn("w:author"), self.author)
        el.set(_qn("w:date"), self.date)
        self.next_id += 1
        return el

    def find(self, match: str) -> list[Any]:
        """The runs that hold exactly the first occurrence of ``match`` (runs split as needed)."""
        for p in self.body.iter(_qn("w:p")):
            runs = _live_runs(p)
            text = "".join(_run_text(r) for r in runs)
            at = text.find(match)
            if at < 0:
                continue
            _explode(runs)
            _split_at(_live_runs(p), at)
            runs = _live_runs(p)
            _split_at(runs, at + len(match))
            runs = _live_runs(p)
            picked, pos = [], 0
            for r in runs:
                length = len(_run_text(r))
                if at <= pos and pos + length <= at + len(match) and length:
                    picked.append(r)
                pos += length
            return picked
        raise UserError(f"text not found in the document body: {match!r}")

    def delete(self, runs: list[Any]) -> None:
        for r in runs:
            if r.getparent().tag == _qn("w:ins"):
                # Why: deleting text that is itself a pending insertion just removes it.
                r.getparent().remove(r)
                continue
            for t in r.findall(_qn("w:t")):
                t.tag = _qn("w:delText")
            wrapper = self._revision("w:del")
            r.addprevious(wrapper)
            wrapper.append(r)
        self.counts["deletions"] += 1

    def insert_after(self, anchor: Any, text: str) -> None:
        from docx.oxml import OxmlElement

        r = OxmlElement("w:r")
        rpr = anchor.find(_qn("w:rPr"))
        if rpr is not None:
            r.append(copy.deepcopy(rpr))
        t = OxmlElement("w:t")
        t.text = text
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        r.append(t)
        wrapper = self._revision("w:ins")
        wrapper.append(r)
        # Why: after a deletion the anchor sits inside its w:del; the insertion follows that.
        parent = anchor.getparent()
        (parent if parent.tag == _qn("w:del") else anchor).addnext(wrapper)
        self.counts["insertions"] += 1


def _live_runs(p: Any) -> list[Any]:
    """Runs whose text is visible now: in the paragraph, its hyperlinks or its insertions."""
    out = []
    for child in p:
        if child.tag == _qn("w:r"):
            out.append(child)
        elif child.tag in (_qn("w:hyperlink"), _qn("w:ins"), _qn("w:smartTag")):
            # Why: text inside a pending insertion is visible, so it can be matched too.
            out.extend(c for c in child if c.tag == _qn("w:r"))
    return out


def _run_text(r: Any) -> str:
    return "".join(_content_length(c) for c in r if c.tag != _qn("w:rPr"))


def _explode(runs: list[Any]) -> None:
    """One content child per run (same formatting), so a match can start or end anywhere."""
    from docx.oxml import OxmlElement

    for r in runs:
        rpr = r.find(_qn("w:rPr"))
        content = [c for c in r if c.tag != _qn("w:rPr")]
        for child in reversed(content[1:]):
            new = OxmlElement("w:r")
            if rpr is not None:
                new.append(copy.deepcopy(rpr))
            new.append(child)  # Why: lxml moves the element out of the old run
            r.addnext(new)


def _split_at(runs: list[Any], offset: int) -> None:
    """Split the w:t run that spans ``offset`` into two runs meeting exactly there."""
    pos = 0
    for r in runs:
        text = _run_text(r)
        if pos < offset < pos + len(text):
            t = r.find(_qn("w:t"))
            cut = offset - pos
            second = copy.deepcopy(r)
            t.text = text[:cut]
            second.find(_qn("w:t")).text = text[cut:]
            for node in (t, second.find(_qn("w:t"))):
                node.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
            r.addnext(second)
            return
        pos += len(text)


if __name__ == "__main__":
    sys.exit(run(NAME, main))
