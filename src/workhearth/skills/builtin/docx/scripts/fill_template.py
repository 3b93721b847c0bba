"""Fill ``{{token}}`` placeholders in a .docx template: body, tables, headers, footers.

Usage: PYTHON SKILL_DIR/scripts/fill_template.py TEMPLATE.docx -o OUT.docx --set name=张三 [--values v.json]

Word often splits what you typed as ``{{name}}`` over several runs (spell check,
an edit in the middle, a change of formatting). Tokens are found in the joined text
of each paragraph, so a split token is still replaced; the value takes the
formatting of the run where the token starts. A newline in a value becomes a line
break. Missing values are an error (nothing is written) unless --allow-missing.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from typing import Any

from _docx_common import input_file, output_file

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_path, run, warn

NAME = "fill_template.py"
TOKEN = re.compile(r"\{\{\s*([^{}\s][^{}]*?)\s*\}\}")
PART_NAME = re.compile(r"^/word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$")


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=NAME, description="Replace {{token}} placeholders in a Word template.")
    p.add_argument("template", help="the .docx template")
    p.add_argument("-o", "--output", required=True, help="the filled .docx to write")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a value for {{KEY}} (repeatable; wins over --values)",
    )
    p.add_argument("--values", help='JSON file with an object of values, e.g. {"name": "张三"}')
    p.add_argument(
        "--allow-missing",
        action="store_true",
        help="leave tokens without a value in place (warning)",
    )
    p.add_argument("--strict", action="store_true", help="values that match no token are an error")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    args = p.parse_args(argv)

    src = input_file(args.template, (".docx", ".docm", ".dotx"), "template")
    values = _values(args)
    out = output_file(args.output, (".docx",), force=args.force, inputs=(src,))

    from _docx_common import open_docx

    document = open_docx(src)
    roots = _roots(document)
    found: Counter[str] = Counter()
    for root in roots:
        for para in _paragraphs(root):
            found.update(m.group(1) for m in TOKEN.finditer(_text(para)))
    missing = sorted(k for k in found if k not in values)
    unknown = sorted(k for k in values if k not in found)
    if missing and not args.allow_missing:
        raise UserError(
            f"no value for {', '.join(missing)} (use --set KEY=VALUE, or --allow-missing)"
        )
    if unknown and args.strict:
        raise UserError(f"no {{{{token}}}} in the template for {', '.join(unknown)}")

    replaced: Counter[str] = Counter()
    for root in roots:
        for para in _paragraphs(root):
            replaced.update(_fill_paragraph(para, values))
    _write_back()
    with atomic_path(out) as tmp:
        document.save(str(tmp))

    report = {
        "output": str(out),
        "replaced": dict(sorted(replaced.items())),
        "missing": missing,
        "unknown": unknown,
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        for key in missing:
            warn(NAME, f"no value for {{{{{key}}}}}; left in place")
        for key in unknown:
            warn(NAME, f"no {{{{{key}}}}} in the template; value unused")
        print(f"wrote {out} ({sum(replaced.values())} replacements of {len(replaced)} tokens)")
    return 0


def _values(args: Any) -> dict[str, str]:
    values: dict[str, str] = {}
    if args.values:
        path = input_file(args.values, (".json",), "values file")
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UserError(f"values file is not valid JSON: {path} ({exc})") from None
        if not isinstance(data, dict):
            raise UserError(f"values file must hold a JSON object of key: value: {path}")
        for key, value in data.items():
            if isinstance(value, (dict, list)):
                raise UserError(f"value of {key!r} in {path} must be text or a number")
            values[str(key).strip()] = "" if value is None else str(value)
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--set wants KEY=VALUE, got {item!r}")
        values[key.strip()] = value
    return values


def _roots(document: Any) -> list[Any]:
    """XML roots of the main document, every header and footer, footnotes and endnotes."""
    from docx.oxml import parse_xml

    roots = [document.element]
    for part in document.part.package.iter_parts():
        if part is document.part or not PART_NAME.match(str(part.partname)):
            continue
        element = getattr(part, "element", None)
        if element is None:
            # Why: python-docx keeps some parts (footnotes) as bytes; edit a parsed copy
            # and write it back in _write_back before saving.
            element = parse_xml(part.blob)
            _BLOB_PARTS.append((part, element))
        roots.append(element)
    return roots


_BLOB_PARTS: list[tuple[Any, Any]] = []


def _write_back() -> None:
    from lxml import etree

    for part, element in _BLOB_PARTS:
        part._blob = etree.tostring(
            element, xml_declaration=True, encoding="UTF-8", standalone=True
        )


def _paragraphs(root: Any) -> list[Any]:
    from docx.oxml.ns import qn

    return list(root.iter(qn("w:p")))


def _texts(p: Any) -> list[Any]:
    """w:t elements of the paragraph's own runs (not those of nested text boxes)."""
    from docx.oxml.ns import qn

    out = []
    for t in p.iter(qn("w:t")):
        # Why: a text box inside this paragraph has paragraphs of its own, visited separately.
        owner = t.getparent()
        while owner is not None and owner.tag != qn("w:p"):
            owner = owner.getparent()
        if owner is p:
            out.append(t)
    return out


def _text(p: Any) -> str:
    return "".join(t.text or "" for t in _texts(p))


def _fill_paragraph(p: Any, values: dict[str, str]) -> Counter[str]:
    texts = _texts(p)
    pieces = [t.text or "" for t in texts]
    full = "".join(pieces)
    done: Counter[str] = Counter()
    matches = [m for m in TOKEN.finditer(full) if m.group(1) in values]
    if not matches:
        return done
    starts = []  # offset in `full` where each w:t begins
    pos = 0
    for piece in pieces:
        starts.append(pos)
        pos += len(piece)
    lengths = [len(piece) for piece in pieces]

    def piece_at(offset: int) -> int:
        """Index of the w:t holding character ``offset`` of the joined text."""
        for i, begin in enumerate(starts):
            if begin <= offset < begin + lengths[i]:
                return i
        raise AssertionError(offset)

    # Why: right to left, so earlier offsets stay valid while later text changes.
    for m in reversed(matches):
        first = piece_at(m.start())
        last = piece_at(m.end() - 1)
        head = pieces[first][: m.start() - starts[first]]
        tail = pieces[last][m.end() - starts[last] :]
        value = values[m.group(1)]
        if first == last:
            pieces[first] = head + value + tail
        else:
            pieces[first] = head + value
            for i in range(first + 1, last):
                pieces[i] = ""
            pieces[last] = tail
        done[m.group(1)] += 1
    for t, piece, length in zip(texts, pieces, lengths, strict=True):
        _set_text(t, piece)
        if length and not piece:
            _drop_if_empty(t)
    return done


def _drop_if_empty(t: Any) -> None:
    """Remove a run a split token emptied, when it holds nothing else."""
    from docx.oxml.ns import qn

    r = t.getparent()
    if r.tag == qn("w:r") and all(child.tag in (qn("w:rPr"), qn("w:t")) for child in r):
        if not "".join(x.text or "" for x in r.iter(qn("w:t"))):
            r.getparent().remove(r)


def _set_text(t: Any, text: str) -> None:
    """Set a w:t, turning newlines into w:br siblings inside the same run."""
    from docx.oxml import OxmlElement

    lines = text.split("\n")
    t.text = lines[0]
    _preserve(t)
    anchor = t
    for line in lines[1:]:
        br = OxmlElement("w:br")
        anchor.addnext(br)
        new_t = OxmlElement("w:t")
        new_t.text = line
        _preserve(new_t)
        br.addnext(new_t)
        anchor = new_t


def _preserve(t: Any) -> None:
    if t.text and (t.text != t.text.strip() or "  " in t.text):
        t.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")


if __name__ == "__main__":
    sys.exit(run(NAME, main))
