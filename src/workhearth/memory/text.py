"""Text analysis shared by the index and the search: scripts, words, CJK bigrams."""

from __future__ import annotations

import re

CJK_CLASS = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
LATIN_WORD = re.compile(rf"[^\W_{CJK_CLASS}]+", re.UNICODE)

# Why: words this common carry almost no signal in BM25 but make every query
# touch most of the index; they are searched only when nothing else is asked.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has have he her
    hers him his how i if in into is it its me my no not of on or our ours she so than that
    the their them then there these they this those to too us was we were what when where
    which who whom why will with would you your yours""".split()
)


def cjk_runs(text: str) -> list[str]:
    return CJK_RUN.findall(text)


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run; a lone character stands for itself."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_grams(text: str) -> str:
    """The space-separated bigrams indexed for ``text`` (empty when it has no CJK)."""
    out: list[str] = []
    for run in CJK_RUN.findall(text):
        out.extend(bigrams(run))
    return " ".join(out)


def latin_words(text: str) -> list[str]:
    return [w.lower() for w in LATIN_WORD.findall(text)]


def fts_quote(term: str) -> str:
    """One FTS5 string token: everything inside is text, never query syntax."""
    return '"' + term.replace('"', '""') + '"'


def like_escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
