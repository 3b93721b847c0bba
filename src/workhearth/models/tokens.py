"""Offline token counting: no tokenizer files, no downloads (DESIGN §4).

An estimate calibrated on BPE tokenizers of the cl100k / o200k family: a CJK
character is about one token, a Latin word about one token per four letters
(at least one), each other symbol one token. It errs slightly high, which is
the safe side for a budget.
"""

from __future__ import annotations

import re

_PIECES = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"  # one CJK/kana/hangul char
    r"|[^\W\d_]+"  # a run of letters
    r"|\d{1,3}"  # digits group in threes
    r"|[^\s\w]",  # any other visible symbol
    re.UNICODE,
)


def count_tokens(text: str) -> int:
    """Approximate model tokens in ``text``."""
    if not text:
        return 0
    pieces = _PIECES.findall(text)
    # one token per piece, plus one per further four letters of a long word
    return len(pieces) + sum((len(p) + 3) // 4 - 1 for p in pieces if len(p) > 4)
