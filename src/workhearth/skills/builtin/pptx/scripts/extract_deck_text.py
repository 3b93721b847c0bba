"""Extract the text and speaker notes of every slide of a .pptx deck, as JSON or Markdown.

The Markdown is the outline format outline_to_deck.py reads ('# ' title slide, '## ' slides,
'- ' bullets indented by level, '> ' notes), so a deck made from an outline reads back as it.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from workhearth.skills.scriptkit import (
    OneLineParser,
    UserError,
    atomic_write,
    check_output,
    existing_input,
    run,
)

NAME = "extract_deck_text"


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="extract_deck_text.py",
        description="Text, bullets (with levels), tables, picture captions and speaker notes "
        "of every slide, as JSON or Markdown.",
    )
    parser.add_argument("input", type=Path, help="the .pptx deck")
    parser.add_argument(
        "--format", choices=("json", "markdown"), default="markdown", help="output format"
    )
    parser.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def extract(path: Path) -> dict[str, Any]:
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
    from pptx.exc import PackageNotFoundError

    try:
        prs = Presentation(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UserError(f"{path}: not a readable .pptx deck ({exc})") from exc
    slides = []
    for number, slide in enumerate(prs.slides, start=1):
        title, kind, subtitle = "", "content", ""
        paragraphs: list[dict[str, Any]] = []
        pictures: list[str] = []
        tables: list[list[list[str]]] = []
        for shape in _shapes(slide.shapes, MSO_SHAPE_TYPE):
            placeholder = shape.placeholder_format.type if shape.is_placeholder else None
            if placeholder in (PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE):
                title = shape.text_frame.text.strip()
                if placeholder == PP_PLACEHOLDER.CENTER_TITLE:
                    kind = "title"
                continue
            if placeholder == PP_PLACEHOLDER.SUBTITLE:
                subtitle = shape.text_frame.text.strip()
                continue
            if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
                pictures.append(shape._element.nvPicPr.cNvPr.get("descr") or shape.name)
                continue
            if getattr(shape, "has_table", False) and shape.has_table:
                tables.append([[cell.text for cell in row.cells] for row in shape.table.rows])
                continue
            if not shape.has_text_frame:
                continue
            text_paragraphs = [p for p in shape.text_frame.paragraphs if p.text.strip()]
            # Why: a picture's caption is already its alt text; do not report it twice.
            if pictures and len(text_paragraphs) == 1 and text_paragraphs[0].text in pictures:
                continue
            paragraphs += [{"text": p.text.strip(), "level": p.level} for p in text_paragraphs]
        notes = ""
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text.strip()
        entry: dict[str, Any] = {"index": number, "kind": kind, "title": title}
        if kind == "title":
            entry["subtitle"] = subtitle
        entry.update(paragraphs=paragraphs, pictures=pictures, tables=tables, notes=notes)
        slides.append(entry)
    return {"file": str(path), "slides": slides}


def _shapes(shapes: Any, shape_types: Any) -> list[Any]:
    """Shapes in reading order (top to bottom, then left to right), groups opened."""
    found = []
    for shape in shapes:
        if shape.shape_type == shape_types.GROUP:
            found += _shapes(shape.shapes, shape_types)
        else:
            found.append(shape)
    return sorted(found, key=lambda s: (s.top or 0, s.left or 0))


def markdown(deck: dict[str, Any]) -> str:
    lines: list[str] = []
    for slide in deck["slides"]:
        if lines:
            lines.append("")
        if slide["kind"] == "title":
            lines.append(f"# {slide['title']}")
            lines += slide["subtitle"].splitlines()
        else:
            lines.append(f"## {slide['title']}")
        lines += [f"{'  ' * p['level']}- {p['text']}" for p in slide["paragraphs"]]
        for table in slide["tables"]:
            lines += ["", *("| " + " | ".join(row) + " |" for row in table), ""]
        lines += [f"<!-- picture: {caption} -->" for caption in slide["pictures"]]
        lines += [f"> {note}" for note in slide["notes"].splitlines()]
    return "\n".join(lines) + "\n"


def main() -> int:
    args = parse_args()
    source = existing_input(args.input, (".pptx",))
    if args.output is not None:
        suffix = ".json" if args.format == "json" else ".md"
        check_output(args.output, inputs=(source,), force=args.force, suffixes=(suffix,))
    deck = extract(source)
    text = (
        json.dumps(deck, ensure_ascii=False, indent=2) + "\n"
        if args.format == "json"
        else markdown(deck)
    )
    if args.output is None:
        print(text, end="")
    else:
        atomic_write(args.output, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        print(f"wrote {args.output} ({len(deck['slides'])} slides)")
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
