"""Glyph coverage as fontconfig sees this machine's fonts."""

from __future__ import annotations

import pytest

from workhearth.check import glyphs

pytestmark = pytest.mark.skipif(not glyphs.available(), reason="fontconfig is not installed")


def test_a_private_use_character_has_no_glyph() -> None:
    assert glyphs.missing("Plain text \ue000 and more \ue000") == ["\ue000"]


def test_latin_and_spaces_are_covered() -> None:
    assert glyphs.missing("Hello, world!\t\n\u00a0 ¥ é") == []


def test_invisible_characters_and_variation_selectors_need_no_glyph() -> None:
    assert glyphs.missing("a\u200bb\ufe0fc\u2028d\x07") == []


def test_missing_characters_come_in_order_of_first_appearance() -> None:
    # (U+E001 is not a safe pick: some fonts put icons in the private use area)
    assert glyphs.missing("\u0378x\ue000\u0378") == ["\u0378", "\ue000"]


def test_describe_names_code_points_and_counts_the_rest() -> None:
    chars = [chr(0xE000 + n) for n in range(7)]
    said = glyphs.describe(chars)
    assert said.startswith("'\\ue000' (U+E000), '\\ue001' (U+E001)")
    assert said.endswith("and 2 more")
