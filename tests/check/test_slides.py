"""A .pptx's facts: its text, text overflowing its box, shapes past the slide's edge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workhearth.check.slides import slide_facts


def test_a_plain_deck_has_its_text_and_no_problems(made: Callable[[str], Path]) -> None:
    facts = slide_facts(made("good.pptx"))
    assert facts.slides == 1 and facts.problems == []
    assert facts.text == "Slide 1: results"


def test_far_too_much_text_in_a_box_overflows(made: Callable[[str], Path]) -> None:
    """python-pptx's text boxes grow with their text (spAutoFit): what overflows then is
    the slide, and that is still an overflow."""
    ((problem),) = slide_facts(made("overflow.pptx")).problems
    assert (problem.kind, problem.where) == ("layout", "slide 1")
    assert "'Crowded' overflows" in problem.message


def _deck(tmp_path: Path, *, text: str, auto: str | None, top_cm: float = 2) -> Path:
    from pptx import Presentation
    from pptx.enum.text import MSO_AUTO_SIZE
    from pptx.util import Cm

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    box = slide.shapes.add_textbox(Cm(2), Cm(top_cm), Cm(10), Cm(2))
    box.text_frame.word_wrap = True
    box.text_frame.text = text
    box.text_frame.auto_size = {
        None: MSO_AUTO_SIZE.NONE,
        "shrink": MSO_AUTO_SIZE.TEXT_TO_FIT_SHAPE,
        "grow": MSO_AUTO_SIZE.SHAPE_TO_FIT_TEXT,
    }[auto]
    path = tmp_path / f"{auto}-{top_cm}-{len(text)}.pptx"
    deck.save(str(path))
    return path


def test_a_fixed_box_overflows_with_a_few_lines_too_many(tmp_path: Path) -> None:
    crowded = _deck(tmp_path, text="Words words words. " * 20, auto=None)
    assert [p.kind for p in slide_facts(crowded).problems] == ["layout"]
    fits = _deck(tmp_path, text="One short line.", auto=None)
    assert slide_facts(fits).problems == []


def test_text_the_renderer_shrinks_to_fit_does_not_overflow(tmp_path: Path) -> None:
    assert slide_facts(_deck(tmp_path, text="Words. " * 200, auto="shrink")).problems == []


def test_a_growing_box_overflows_only_when_it_would_pass_the_slide(tmp_path: Path) -> None:
    # ~6 cm of text below a box 2 cm from the top of a 19 cm slide: it grows and fits
    assert slide_facts(_deck(tmp_path, text="Words words words. " * 20, auto="grow")).problems == []
    # the same text starting 15 cm down runs off the slide's foot
    low = _deck(tmp_path, text="Words words words. " * 20, auto="grow", top_cm=15)
    assert [p.kind for p in slide_facts(low).problems] == ["layout"]


def test_a_shape_past_the_edge_of_the_slide(tmp_path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Cm

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    slide.shapes.add_shape(1, Cm(20), Cm(2), Cm(10), Cm(2)).name = "Wide box"
    deck.save(str(tmp_path / "edge.pptx"))
    ((problem),) = slide_facts(tmp_path / "edge.pptx").problems
    assert (problem.kind, problem.where) == ("layout", "slide 1")
    assert "'Wide box' reaches past the edge" in problem.message
