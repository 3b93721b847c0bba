"""A .pptx's own facts: its text, and text that overflows its box or shapes that leave
the slide. The overflow test is an estimate (renderers wrap differently): it flags
text needing clearly more height than its box has, not a line at the edge."""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workhearth.check.receipt import Problem

EMU_PER_PT = 12700
EMU_PER_CM = 360000
DEFAULT_PT = 18.0
LINE_SPACING = 1.2
# Why 1.25: an estimate must not cry wolf; a quarter more than the box is visible.
OVERFLOW_FACTOR = 1.25


@dataclass
class SlideFacts:
    text: str = ""
    slides: int = 0
    problems: list[Problem] = field(default_factory=list)


def _char_em(ch: str) -> float:
    """A character's width in ems: East Asian wide characters a full em, others about half."""
    return 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.55


def _paragraph_pt(paragraph: Any) -> float:
    sizes = [r.font.size.pt for r in paragraph.runs if r.font.size is not None]
    if paragraph.font.size is not None:
        sizes.append(paragraph.font.size.pt)
    return max(sizes) if sizes else DEFAULT_PT


def _needed_height_pt(frame: Any, width_pt: float) -> float:
    height = 0.0
    for paragraph in frame.paragraphs:
        size = _paragraph_pt(paragraph)
        text = "".join(r.text for r in paragraph.runs)
        ems = sum(_char_em(c) for c in text)
        lines = max(1, math.ceil(ems * size / width_pt)) if width_pt > 0 else 1
        height += lines * size * LINE_SPACING
    return height


Said = tuple[str, str, dict[str, str | int]]  # message, code, params


def _overflow(shape: Any, slide_height: int = 0) -> Said | None:
    from pptx.enum.text import MSO_AUTO_SIZE

    frame = shape.text_frame
    if not frame.text.strip() or shape.width is None or shape.height is None:
        return None
    if frame.auto_size == MSO_AUTO_SIZE.TEXT_TO_FIT_SHAPE:
        return None  # the renderer shrinks the text to fit
    inset = (frame.margin_left or 0) + (frame.margin_right or 0)
    width_pt = (shape.width - inset) / EMU_PER_PT
    box_pt = (shape.height - (frame.margin_top or 0) - (frame.margin_bottom or 0)) / EMU_PER_PT
    if frame.auto_size == MSO_AUTO_SIZE.SHAPE_TO_FIT_TEXT:
        if not slide_height or shape.top is None:
            return None
        # Why: the box grows to fit its text (python-pptx's text boxes all do), but the
        # slide does not: the room is what lies between the box's top and the slide's foot.
        box_pt = max(box_pt, (slide_height - shape.top) / EMU_PER_PT)
    needed = _needed_height_pt(frame, width_pt)
    if box_pt > 0 and needed > box_pt * OVERFLOW_FACTOR:
        needs = f"{needed * EMU_PER_PT / EMU_PER_CM:.1f}"
        has = f"{box_pt * EMU_PER_PT / EMU_PER_CM:.1f}"
        return (
            f"text in '{shape.name}' overflows its box (needs about {needs} cm, has {has} cm)",
            "overflow",
            {"shape": shape.name, "needs": needs, "has": has},
        )
    return None


def _off_slide(shape: Any, width: int, height: int) -> Said | None:
    if None in (shape.left, shape.top, shape.width, shape.height):
        return None
    if (
        shape.left < 0
        or shape.top < 0
        or shape.left + shape.width > width
        or shape.top + shape.height > height
    ):
        return (
            f"'{shape.name}' reaches past the edge of the slide",
            "off_slide",
            {"shape": shape.name},
        )
    return None


def slide_facts(path: Path) -> SlideFacts:
    from pptx import Presentation

    deck = Presentation(str(path))
    facts = SlideFacts(slides=len(deck.slides))
    width, height = deck.slide_width or 0, deck.slide_height or 0
    texts = []
    for number, slide in enumerate(deck.slides, 1):
        for shape in slide.shapes:
            said = _off_slide(shape, width, height) if width and height else None
            if shape.has_text_frame:
                texts.append(shape.text_frame.text)
                said = _overflow(shape, height) or said
            if said:
                facts.problems.append(Problem("layout", f"slide {number}", *said))
    facts.text = "\n".join(texts)
    return facts
