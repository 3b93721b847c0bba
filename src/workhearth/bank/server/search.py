"""Search terms and ranking for the team bank (the same rules as DESIGN §4 Search).

Candidates come from the database — the ``simple`` word index, trigram substring
search and the CJK bigram side table on a plain bank, the blind index on an
encrypted one — and are ranked here, on their text, by one function for both, so
an encrypted bank ranks exactly like a plain one and differs only in which
candidates it finds:

* phrase — the whole query inside the text (weight 3);
* cjk — the share of the query's CJK bigrams (a lone character: itself) found (2);
* word — the share of the query's words found, a word inside a longer one half (1).

Scores are divided by the best, hits under 0.1 are dropped (the best always stays).
"""

from __future__ import annotations

import unicodedata

from workhearth.memory.search import HIT_CHARS, MIN_RELATIVE
from workhearth.memory.text import CJK_RUN, LATIN_WORD, STOPWORDS, bigrams

WEIGHTS = {"phrase": 3.0, "cjk": 2.0, "word": 1.0}


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def words(text: str) -> list[str]:
    return LATIN_WORD.findall(normalise(text))


def query_words(query: str) -> list[str]:
    """The query's words without stopwords (all of them when nothing else is left)."""
    found = list(dict.fromkeys(words(query)))
    kept = [w for w in found if w not in STOPWORDS]
    return kept or found


def trigrams(word: str) -> list[str]:
    return [word[i : i + 3] for i in range(len(word) - 2)]


def cjk_terms(text: str) -> list[str]:
    """CJK bigrams (``b:``) and single characters (``c:``) of a text, for indexing."""
    out: list[str] = []
    for run in CJK_RUN.findall(normalise(text)):
        out.extend("b:" + gram for gram in bigrams(run) if len(gram) == 2)
        out.extend("c:" + ch for ch in run)
    return list(dict.fromkeys(out))


def query_cjk_terms(query: str) -> list[str]:
    """What a query asks of the CJK index: each run's bigrams, a lone character itself."""
    out: list[str] = []
    for run in CJK_RUN.findall(normalise(query)):
        out.extend(["c:" + run] if len(run) == 1 else ["b:" + g for g in bigrams(run)])
    return list(dict.fromkeys(out))


def blind_terms(text: str) -> list[str]:
    """Every term of a text the blind index holds: words, their trigrams, CJK grams."""
    out: list[str] = []
    for word in dict.fromkeys(words(text)):
        out.append("w:" + word)
        out.extend("t:" + tri for tri in trigrams(word))
    out.extend(cjk_terms(text))
    return list(dict.fromkeys(out))


def query_blind_terms(query: str) -> list[str]:
    """The blind terms a query looks up: short words whole, longer ones by trigram too."""
    out: list[str] = []
    for word in query_words(query):
        out.append("w:" + word)
        out.extend("t:" + tri for tri in trigrams(word))
    out.extend(query_cjk_terms(query))
    return list(dict.fromkeys(out))


def score(query: str, text: str) -> float:
    """How well ``text`` answers ``query`` (0 when it does not at all)."""
    q = normalise(query).strip()
    t = normalise(text)
    total = WEIGHTS["phrase"] if q and q in t else 0.0
    cjk = query_cjk_terms(query)
    if cjk:
        found = sum(1 for term in cjk if term[2:] in t)
        total += WEIGHTS["cjk"] * found / len(cjk)
    asked = query_words(query)
    if asked:
        have = set(words(text))
        found_words = sum(1.0 if w in have else 0.5 if w in t else 0.0 for w in asked)
        total += WEIGHTS["word"] * found_words / len(asked)
    return total


def rank(query: str, texts: dict[str, str], limit: int) -> list[tuple[str, float]]:
    """The best ``limit`` of ``texts`` (id → text), scores relative to the best."""
    scored = [(entry_id, score(query, text)) for entry_id, text in texts.items()]
    scored = [item for item in scored if item[1] > 0]
    if not scored:
        return []
    best = max(s for _, s in scored)
    scored.sort(key=lambda item: (-item[1], item[0]))
    out = [(entry_id, round(s / best, 4)) for entry_id, s in scored]
    return [item for item in out if item[1] >= MIN_RELATIVE][:limit]


def hit_text(text: str) -> tuple[str, int]:
    """Whole lines of ``text`` up to ``HIT_CHARS`` (a longer first line is cut), and their count."""
    lines = text.splitlines() or [""]
    kept: list[str] = []
    size = 0
    for line in lines:
        if kept and size + 1 + len(line) > HIT_CHARS:
            break
        kept.append(line[:HIT_CHARS])
        size += len(line) + (1 if size else 0)
    return "\n".join(kept), len(kept)
