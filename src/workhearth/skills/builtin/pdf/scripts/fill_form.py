"""List the form fields of a PDF, or fill its AcroForm fields from --set k=v and a JSON file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _appearance import attach_appearances, flatten, render_boxes, text_boxes  # type: ignore[import-not-found]
from _fonts import find_cjk_font  # type: ignore[import-not-found]
from _pdfio import check_output, open_pdf, run, write_atomic  # type: ignore[import-not-found]

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "fill_form.py"
TRUE_WORDS = {"1", "true", "yes", "on", "y", "x", "是", "选中", "checked"}
FALSE_WORDS = {"0", "false", "no", "off", "n", "", "否", "unchecked"}


def describe(reader) -> list[dict]:
    """Every terminal field: name, type, current value, choices (radio/checkbox states, list options)."""
    fields = reader.get_fields() or {}
    kinds = {"/Tx": "text", "/Btn": "button", "/Ch": "choice", "/Sig": "signature"}
    out = []
    for name, field in fields.items():
        if "/Kids" in field and "/FT" not in field:
            continue
        kind = kinds.get(str(field.get("/FT")), "unknown")
        flags = int(field.get("/Ff", 0))
        if kind == "button":
            kind = (
                "radio" if flags & (1 << 15) else "pushbutton" if flags & (1 << 16) else "checkbox"
            )
        states = [str(s) for s in field.get("/_States_", []) if str(s) != "/Off"]
        options = field.get("/Opt")
        value = field.get("/V")
        out.append(
            {
                "name": name,
                "type": kind,
                "value": None if value is None else str(value),
                "choices": [s.lstrip("/") for s in states]
                or ([str(o[-1] if isinstance(o, list) else o) for o in options] if options else []),
            }
        )
    return out


def coerce(field: dict, raw: object) -> str:
    text = "" if raw is None else str(raw).strip()
    if field["type"] in ("checkbox", "radio"):
        on = field["choices"]
        if field["type"] == "checkbox" and len(on) == 1:
            if text.lower() in TRUE_WORDS or text == on[0]:
                return "/" + on[0]
            if text.lower() in FALSE_WORDS or text == "Off":
                return "/Off"
        elif text in on:
            return "/" + text
        elif text in ("Off", ""):
            return "/Off"
        raise UserError(
            f"field {field['name']!r} takes one of {', '.join([*on, 'Off'])}, not {text!r}"
        )
    if field["type"] == "choice" and field["choices"] and text not in field["choices"]:
        raise UserError(
            f"field {field['name']!r} takes one of {', '.join(field['choices'])}, not {text!r}"
        )
    return "" if raw is None else str(raw)


def collect_values(args: argparse.Namespace) -> dict[str, object]:
    values: dict[str, object] = {}
    if args.data:
        path = Path(args.data)
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except FileNotFoundError:
            raise UserError(f"no such JSON file: {path}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UserError(f"{path} is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise UserError(f"{path} must hold one JSON object of field: value")
        values.update(data)
    for item in args.set or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UserError(f"--set takes NAME=VALUE, not {item!r}")
        values[key] = value
    return values


def fill(args: argparse.Namespace) -> str:
    from pypdf import PdfWriter

    source = Path(args.input)
    reader = open_pdf(source)
    fields = {f["name"]: f for f in describe(reader)}
    if args.list:
        if args.json:
            return json.dumps(list(fields.values()), ensure_ascii=False, indent=2)
        if not fields:
            return f"{source} has no form fields"
        return "\n".join(
            f"{f['name']}\t{f['type']}\t{f['value'] or ''}"
            + (f"\t[{' | '.join(f['choices'])}]" if f["choices"] else "")
            for f in fields.values()
        )
    if not args.output:
        raise UserError("give -o OUTPUT.pdf to fill, or --list to see the fields")
    if not fields:
        raise UserError(f"{source} has no form fields to fill")
    values = collect_values(args)
    if not values:
        raise UserError("nothing to fill: give --set NAME=VALUE or --data values.json")
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise UserError(f"no such field: {', '.join(unknown)} (see --list)")
    coerced = {name: coerce(fields[name], value) for name, value in values.items()}
    output = Path(args.output)
    check_output(output, [source], args.force)

    writer = PdfWriter(clone_from=reader)
    for page in writer.pages:
        if "/Annots" not in page:
            continue
        # Why: pypdf fills only the widgets on the given page; passing all values per page
        # sets each field wherever its widgets are (its own text appearances are redrawn below).
        writer.update_page_form_field_values(page, coerced, auto_regenerate=False)
    note = draw_appearances(writer, set(coerced))
    if args.flatten:
        flatten(writer)
    write_atomic(output, writer.write)
    return f"wrote {output} ({len(coerced)} fields filled{', flattened' if args.flatten else ''}{note})"


def draw_appearances(writer, names: set[str]) -> str:
    """Draw the filled text fields with an embedded font that has their glyphs.

    Returns a note for the summary line when no such font was found.
    """
    from pypdf.generic import BooleanObject, NameObject

    form = writer._root_object["/AcroForm"]
    boxes = text_boxes(writer, names, str(form.get("/DA", "/Helv 0 Tf 0 g")))
    if not boxes:
        return ""
    # Why always the CJK font when there is one: it is embedded, so every viewer agrees.
    font = find_cjk_font()
    if font is None and any(ord(ch) > 0xFF for b in boxes for ch in b.text):
        # Why: without a font that has the glyphs, the viewer's own fonts are the best bet.
        writer.set_need_appearances_writer(True)
        return ", no CJK font found: the viewer draws the fields"
    attach_appearances(writer, boxes, render_boxes(boxes, font))
    # Why: NeedAppearances true makes poppler and LibreOffice redraw the fields in /Helv,
    # which has no Chinese glyphs: the drawn appearances must be the ones shown.
    form[NameObject("/NeedAppearances")] = BooleanObject(False)
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description=__doc__)
    parser.add_argument("input", help="the PDF form")
    parser.add_argument("--list", action="store_true", help="list the fields and exit")
    parser.add_argument("--json", action="store_true", help="with --list: print JSON")
    parser.add_argument("-o", "--output", help="the filled PDF to write")
    parser.add_argument(
        "--set", action="append", metavar="NAME=VALUE", help="a field value (repeatable)"
    )
    parser.add_argument("--data", help="a JSON file with {field: value}; --set wins over it")
    parser.add_argument(
        "--flatten", action="store_true", help="burn the values into the page (no longer editable)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    args = parser.parse_args(argv)
    return run(PROG, lambda: fill(args))


if __name__ == "__main__":
    sys.exit(main())
