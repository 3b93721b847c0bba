"""Build a .pptx deck from a Markdown or JSON outline: a title slide, bullet slides with nested
levels, speaker notes and image slides. Chinese text gets an East-Asian font.

Markdown outline::

    # Deck title
    An optional subtitle line

    ## Slide title
    - a bullet
      - a nested bullet (two spaces or a tab per level)
    > Speaker notes for this slide (any number of "> " lines)
    ![Caption](images/chart.png)

JSON outline: {"title": "...", "subtitle": "...", "slides": [{"title": "...", "bullets":
["text", {"text": "...", "children": [...]}], "notes": "...", "image": "path",
"caption": "..."}]}. Image paths are relative to the outline's folder.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
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

NAME = "outline_to_deck"
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)\s*$")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff")
# Slide geometry (16:9) in EMU: 914400 per inch.
EMU = 914400
WIDTH, HEIGHT = int(13.333 * EMU), int(7.5 * EMU)
MARGIN = int(0.6 * EMU)
ACCENT = "1F4E78"


@dataclass
class SlideSpec:
    title: str
    bullets: list[tuple[int, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    image: Path | None = None
    caption: str = ""


@dataclass
class Outline:
    title: str
    subtitle: str = ""
    notes: list[str] = field(default_factory=list)
    slides: list[SlideSpec] = field(default_factory=list)


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="outline_to_deck.py",
        description="Build a 16:9 .pptx deck from a Markdown (.md) or JSON (.json) outline: "
        "'# ' title slide, '## ' slides, '- ' bullets (indent to nest), '> ' speaker notes, "
        "'![caption](image.png)' image.",
    )
    parser.add_argument("input", type=Path, help="the outline, .md or .json")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the .pptx to write")
    parser.add_argument(
        "--ea-font",
        default="Microsoft YaHei",
        help="East-Asian font for Chinese/Japanese/Korean text (default: Microsoft YaHei; "
        "viewers without it fall back to an installed CJK font)",
    )
    parser.add_argument("--font", default="Calibri", help="Latin font (default: Calibri)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def parse_markdown(text: str, base: Path) -> Outline:
    outline: Outline | None = None
    current: SlideSpec | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("<!--"):
            continue
        if line.startswith("# "):
            if outline is not None:
                raise UserError(f"line {number}: only one '# ' title line is allowed")
            outline = Outline(title=stripped[2:].strip())
            continue
        if outline is None:
            outline = Outline(title="")
        if line.startswith("## "):
            current = SlideSpec(title=stripped[3:].strip())
            outline.slides.append(current)
            continue
        if stripped.startswith(">"):
            note = stripped[1:].strip()
            note = note[len("Notes:") :].strip() if note.lower().startswith("notes:") else note
            (current.notes if current else outline.notes).append(note)
            continue
        image = _IMAGE.match(stripped)
        if image:
            if current is None:
                raise UserError(f"line {number}: an image needs a '## ' slide above it")
            if current.image is not None:
                raise UserError(f"line {number}: one image per slide")
            current.caption, current.image = image.group(1).strip(), base / image.group(2).strip()
            continue
        bullet = _BULLET.match(line)
        if current is None:
            if bullet:
                raise UserError(f"line {number}: a bullet needs a '## ' slide above it")
            outline.subtitle = f"{outline.subtitle}\n{stripped}".strip()
            continue
        if bullet:
            indent = bullet.group(1).replace("\t", "  ")
            current.bullets.append((min(len(indent) // 2, 4), bullet.group(2).strip()))
        else:
            current.bullets.append((0, stripped))
    if outline is None or (not outline.title and not outline.slides):
        raise UserError("the outline has no '# ' title and no '## ' slides")
    return outline


def parse_json(text: str, base: Path) -> Outline:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("slides", []), list):
        raise UserError('expected {"title": ..., "slides": [...]}')
    outline = Outline(title=str(data.get("title", "")), subtitle=str(data.get("subtitle", "")))
    outline.notes = _lines(data.get("notes"))
    for index, item in enumerate(data.get("slides", []), start=1):
        if not isinstance(item, dict):
            raise UserError(f"slide {index}: expected an object")
        slide = SlideSpec(title=str(item.get("title", "")), notes=_lines(item.get("notes")))
        slide.bullets = _flatten(item.get("bullets", []), 0, index)
        if item.get("image"):
            slide.image = base / str(item["image"])
            slide.caption = str(item.get("caption", ""))
        outline.slides.append(slide)
    if not outline.title and not outline.slides:
        raise UserError("the outline has no title and no slides")
    return outline


def _lines(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else str(value).splitlines()


def _flatten(items: Any, level: int, slide: int) -> list[tuple[int, str]]:
    if not isinstance(items, list):
        raise UserError(f"slide {slide}: bullets must be a list")
    flat: list[tuple[int, str]] = []
    for item in items:
        if isinstance(item, str):
            flat.append((level, item))
        elif isinstance(item, dict) and "text" in item:
            flat.append((level, str(item["text"])))
            flat += _flatten(item.get("children", []), min(level + 1, 4), slide)
        else:
            raise UserError(f'slide {slide}: a bullet is a string or {{"text", "children"}}')
    return flat


def check_images(outline: Outline) -> None:
    from PIL import Image, UnidentifiedImageError

    for number, slide in enumerate(outline.slides, start=2 if outline.title else 1):
        if slide.image is None:
            continue
        if not slide.image.is_file():
            raise UserError(f"slide {number}: no such image: {slide.image}")
        if slide.image.suffix.lower() not in IMAGE_SUFFIXES:
            raise UserError(f"slide {number}: {slide.image.name} is not a PNG/JPEG/GIF/BMP/TIFF")
        try:
            with Image.open(slide.image) as img:
                img.verify()
        except (UnidentifiedImageError, OSError) as exc:
            raise UserError(f"slide {number}: unreadable image {slide.image} ({exc})") from exc


def set_fonts(text_frame: Any, latin: str, east_asian: str) -> None:
    """Give every run a Latin and an East-Asian typeface, so CJK text never falls back to boxes."""
    from pptx.oxml.ns import qn

    for paragraph in text_frame.paragraphs:
        for run_ in paragraph.runs:
            run_.font.name = latin
            rpr = run_._r.get_or_add_rPr()
            ea = rpr.find(qn("a:ea"))
            if ea is None:
                ea = rpr.makeelement(qn("a:ea"), {})
                # Why: the schema orders a:latin, a:ea, a:cs — a:ea goes right after a:latin.
                rpr.find(qn("a:latin")).addnext(ea)
            ea.set("typeface", east_asian)


def set_theme_fonts(prs: Any, latin: str, east_asian: str) -> None:
    """Make the deck's theme fonts the same pair as the runs'.

    Why: text without fonts of its own (typed later into the deck, footers, a table someone
    adds) takes the theme's: python-pptx's default theme names Calibri, no East-Asian font
    and 宋体 (a serif) for Simplified Chinese, so new Chinese text would not match the rest.
    """
    from lxml import etree
    from pptx.opc.constants import RELATIONSHIP_TYPE as RT
    from pptx.oxml.ns import qn

    masters = [prs.slide_master.part]
    try:  # Why: a notes master exists only when a slide has notes; do not add one
        masters.append(prs.part.part_related_by(RT.NOTES_MASTER))
    except KeyError:
        pass
    for master in masters:
        theme = master.part_related_by(RT.THEME)
        # Why: a theme read from the template is raw bytes; one python-pptx made is XML.
        root = getattr(theme, "_element", None)
        if root is None:
            root = etree.fromstring(theme.blob)
        for scheme in root.iter(qn("a:majorFont"), qn("a:minorFont")):
            scheme.find(qn("a:latin")).set("typeface", latin)
            scheme.find(qn("a:ea")).set("typeface", east_asian)
            for font in scheme.iter(qn("a:font")):
                if font.get("script") == "Hans":
                    font.set("typeface", east_asian)
        if not hasattr(theme, "_element"):
            theme._blob = etree.tostring(
                root, xml_declaration=True, encoding="UTF-8", standalone=True
            )


def build(outline: Outline, args: argparse.Namespace) -> dict[str, Any]:
    from pptx import Presentation
    from pptx.dml.color import RGBColor
    from pptx.enum.shapes import MSO_SHAPE
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Emu, Pt

    prs = Presentation()
    prs.slide_width, prs.slide_height = Emu(WIDTH), Emu(HEIGHT)
    accent = RGBColor.from_string(ACCENT)
    content_width = WIDTH - 2 * MARGIN
    fonts = (args.font, args.ea_font)
    counts = {"slides": 0, "bullets": 0, "notes": 0, "images": 0}

    def notes(slide: Any, lines: list[str]) -> None:
        if lines:
            frame = slide.notes_slide.notes_text_frame
            frame.text = "\n".join(lines)
            set_fonts(frame, *fonts)
            counts["notes"] += 1

    def title_bar(slide: Any, text: str) -> None:
        title = slide.shapes.title
        title.left, title.top = Emu(MARGIN), Emu(int(0.35 * EMU))
        title.width, title.height = Emu(content_width), Emu(int(1.0 * EMU))
        title.text = text
        frame = title.text_frame
        for paragraph in frame.paragraphs:
            paragraph.alignment = PP_ALIGN.LEFT
            for run_ in paragraph.runs:
                run_.font.size, run_.font.bold = Pt(32), True
                run_.font.color.rgb = accent
        set_fonts(frame, *fonts)
        line = slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, Emu(MARGIN), Emu(int(1.38 * EMU)), Emu(content_width), Emu(28000)
        )
        line.fill.solid()
        line.fill.fore_color.rgb = accent
        line.line.fill.background()

    if outline.title or outline.subtitle:
        slide = prs.slides.add_slide(prs.slide_layouts[0])
        band = slide.shapes.add_shape(
            MSO_SHAPE.RECTANGLE, 0, Emu(int(2.3 * EMU)), Emu(WIDTH), Emu(int(2.2 * EMU))
        )
        band.fill.solid()
        band.fill.fore_color.rgb = accent
        band.line.fill.background()
        # Why: the band was added last, so it would cover the placeholders; move it to the back.
        slide.shapes._spTree.remove(band._element)
        slide.shapes._spTree.insert(2, band._element)
        title, subtitle = slide.shapes.title, slide.placeholders[1]
        title.left, title.top = Emu(MARGIN), Emu(int(2.45 * EMU))
        title.width, title.height = Emu(content_width), Emu(int(1.9 * EMU))
        title.text = outline.title
        for paragraph in title.text_frame.paragraphs:
            for run_ in paragraph.runs:
                run_.font.size, run_.font.bold = Pt(40), True
                run_.font.color.rgb = RGBColor(0xFF, 0xFF, 0xFF)
        subtitle.left, subtitle.top = Emu(MARGIN), Emu(int(4.8 * EMU))
        subtitle.width, subtitle.height = Emu(content_width), Emu(int(1.4 * EMU))
        if outline.subtitle:
            subtitle.text = outline.subtitle
            for paragraph in subtitle.text_frame.paragraphs:
                for run_ in paragraph.runs:
                    run_.font.size = Pt(22)
                    run_.font.color.rgb = RGBColor(0x40, 0x40, 0x40)
        else:
            subtitle._element.getparent().remove(subtitle._element)
        set_fonts(title.text_frame, *fonts)
        if outline.subtitle:
            set_fonts(subtitle.text_frame, *fonts)
        notes(slide, outline.notes)
        counts["slides"] += 1

    for spec in outline.slides:
        layout = prs.slide_layouts[1] if spec.bullets else prs.slide_layouts[5]
        slide = prs.slides.add_slide(layout)
        title_bar(slide, spec.title)
        top, bottom = int(1.65 * EMU), HEIGHT - int(0.5 * EMU)
        text_width = content_width
        if spec.image is not None:
            text_width = int(content_width * 0.45) if spec.bullets else 0
            box = (MARGIN + text_width, top, content_width - text_width, bottom)
            _place_image(slide, spec, box, fonts)
            counts["images"] += 1
        if spec.bullets:
            body = slide.placeholders[1]
            body.left, body.top = Emu(MARGIN), Emu(top)
            body.width, body.height = Emu(text_width), Emu(bottom - top)
            frame = body.text_frame
            frame.word_wrap = True
            for index, (level, text) in enumerate(spec.bullets):
                paragraph = frame.paragraphs[0] if index == 0 else frame.add_paragraph()
                paragraph.text, paragraph.level = text, level
                paragraph.space_after = Pt(6)
                for run_ in paragraph.runs:
                    run_.font.size = Pt(max(26 - 3 * level, 14))
            set_fonts(frame, *fonts)
            counts["bullets"] += len(spec.bullets)
        notes(slide, spec.notes)
        counts["slides"] += 1

    if counts["slides"] == 0:
        raise UserError("the outline makes no slides")
    set_theme_fonts(prs, *fonts)
    atomic_write(args.output, prs.save)
    return {"output": str(args.output), **counts}


def _place_image(
    slide: Any,
    spec: SlideSpec,
    box: tuple[int, int, int, int],
    fonts: tuple[str, str],
) -> None:
    """Fit the picture into the box keeping its aspect ratio, centred, caption underneath."""
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Emu, Pt

    assert spec.image is not None
    left, top, width, bottom = box
    caption_height = int(0.5 * EMU) if spec.caption else 0
    box_height = bottom - top - caption_height
    picture = slide.shapes.add_picture(str(spec.image), Emu(left), Emu(top))
    scale = min(width / picture.width, box_height / picture.height)
    picture.width, picture.height = int(picture.width * scale), int(picture.height * scale)
    picture.left = Emu(left + (width - picture.width) // 2)
    picture.top = Emu(top + (box_height - picture.height) // 2)
    # Why: the caption doubles as alt text, which screen readers and extract_deck_text read.
    picture._element.nvPicPr.cNvPr.set("descr", spec.caption or spec.image.name)
    if spec.caption:
        caption = slide.shapes.add_textbox(
            Emu(left), Emu(picture.top + picture.height + 60000), Emu(width), Emu(caption_height)
        )
        caption.text_frame.text = spec.caption
        paragraph = caption.text_frame.paragraphs[0]
        paragraph.alignment = PP_ALIGN.CENTER
        paragraph.runs[0].font.size = Pt(14)
        paragraph.runs[0].font.italic = True
        set_fonts(caption.text_frame, *fonts)


def main() -> int:
    args = parse_args()
    source = existing_input(args.input, (".md", ".markdown", ".json"))
    check_output(args.output, inputs=(source,), force=args.force, suffixes=(".pptx",))
    try:
        text = source.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{source}: not UTF-8 text ({exc})") from exc
    parse = parse_json if source.suffix.lower() == ".json" else parse_markdown
    try:
        outline = parse(text, source.parent)
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from exc
    check_images(outline)
    result = build(outline, args)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(
            f"wrote {result['output']} ({result['slides']} slides, {result['bullets']} bullets, "
            f"{result['notes']} with notes, {result['images']} images)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
