"""Text analysis shared by the index and the search: scripts, words, stems, CJK bigrams."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable

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


# Why: the word index stems with SQLite's own Porter tokenizer; asking that very
# tokenizer (in a private in-memory table) gives exactly the terms it indexed, so
# ``fts_word_vocab`` can be looked up and lines can be matched the way FTS5 does.
WORD_TOKENIZER = "porter unicode61 remove_diacritics 2"  # the tokenizer of fts_word
_STEM_CACHE_MAX = 50_000


class _Stemmer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._cache: dict[str, tuple[str, ...]] = {}

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{WORD_TOKENIZER}')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        return db

    def terms(self, words: Iterable[str]) -> list[tuple[str, ...]]:
        """The index terms of each word (usually one; none for a word it skips)."""
        words = list(words)
        with self._lock:
            todo = list(dict.fromkeys(w for w in words if w not in self._cache))
            if todo:
                if self._db is None:
                    self._db = self._connect()
                db = self._db
                db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", enumerate(todo, 1))
                found: dict[int, list[str]] = {}
                for doc, term in db.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
                    found.setdefault(doc, []).append(term)
                db.execute("DELETE FROM t")
                if len(self._cache) + len(todo) > _STEM_CACHE_MAX:
                    self._cache.clear()
                for i, word in enumerate(todo, 1):
                    self._cache[word] = tuple(found.get(i, ()))
            return [self._cache.get(w, ()) for w in words]


_STEMMER = _Stemmer()


def word_terms(words: Iterable[str]) -> list[tuple[str, ...]]:
    """How ``fts_word`` indexes each word: its stemmed, case- and accent-folded terms."""
    return _STEMMER.terms(words)


def line_terms(line: str) -> set[str]:
    """Every ``fts_word`` term of a line of text."""
    return {t for terms in word_terms(LATIN_WORD.findall(line)) for t in terms}


def fts_quote(term: str) -> str:
    """One FTS5 string token: everything inside is text, never query syntax."""
    return '"' + term.replace('"', '""') + '"'


def like_escape(term: str) -> str:
    return term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
