"""Search a layer's index (DESIGN §4 Search).

Sources, each a bound-parameter FTS5 query over the same chunks:

* **word** — BM25 over ``fts_word`` (stemmed words, Latin scripts), with the
  question's near-zero-IDF words (stopwords) left out of ranking;
* **phrase** — the whole query as a substring (``fts_tri``, verified with
  ``instr``), ranked first when it hits;
* **cjk** — each CJK run of 3+ characters as a substring (trigram); a run of
  two characters, or one that matches nothing whole, through its bigrams
  (``fts_cjk``), so 崩溃恢复 also finds 崩溃后可以恢复;
* **like** — anything else under three characters (symbols), a ``LIKE`` scan.

Each source's scores are divided by its best, weighted and summed per chunk;
the sum is divided by the best again, hits under 0.1 are dropped (the best
always stays) and the top ``limit`` are returned.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import asdict, dataclass

from workhearth.errors import UsageError
from workhearth.memory.text import (
    STOPWORDS,
    bigrams,
    cjk_runs,
    fts_quote,
    latin_words,
    like_escape,
)

QUERY_MAX = 512
LIMIT_MAX = 50
DEFAULT_LIMIT = 6
MIN_RELATIVE = 0.1
HIT_CHARS = 700
WEIGHTS = {"phrase": 3.0, "cjk": 2.0, "word": 1.0, "bigram": 1.0, "like": 0.5}


@dataclass
class Hit:
    path: str
    line_start: int
    line_end: int
    text: str
    score: float
    level: str
    entry_id: str | None
    layer: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _trigram_match(term: str) -> str:
    """An AND of the term's trigrams (the table keeps no positions; ``instr`` confirms)."""
    grams = {term[i : i + 3] for i in range(len(term) - 2)}
    return " AND ".join(fts_quote(g) for g in sorted(grams))


class Searcher:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def _ranked(self, sql: str, args: tuple, source: str, into: dict[int, dict[str, float]]) -> int:
        rows = self.db.execute(sql, args).fetchall()
        if not rows:
            return 0
        best = max(-r[1] for r in rows) or 1.0
        for cid, rank in rows:
            into[cid][source] = max(into[cid].get(source, 0.0), (-rank) / best if best > 0 else 1.0)
        return len(rows)

    def _substring(self, term: str, n: int, source: str, into: dict[int, dict[str, float]]) -> int:
        sql = (
            "SELECT c.id, bm25(fts_tri) FROM fts_tri JOIN chunks c ON c.id = fts_tri.rowid "
            "WHERE fts_tri MATCH ? AND instr(lower(c.text), lower(?)) > 0 "
            "ORDER BY bm25(fts_tri) LIMIT ?"
        )
        return self._ranked(sql, (_trigram_match(term), term, n), source, into)

    def _bigrams(self, grams: list[str], n: int, into: dict[int, dict[str, float]]) -> int:
        match = " OR ".join(fts_quote(g) for g in dict.fromkeys(grams))
        sql = "SELECT rowid, bm25(fts_cjk) FROM fts_cjk WHERE fts_cjk MATCH ? ORDER BY bm25(fts_cjk) LIMIT ?"
        return self._ranked(sql, (match, n), "bigram", into)

    def _words(self, words: list[str], n: int, into: dict[int, dict[str, float]]) -> int:
        match = " OR ".join(fts_quote(w) for w in dict.fromkeys(words))
        sql = "SELECT rowid, bm25(fts_word) FROM fts_word WHERE fts_word MATCH ? ORDER BY bm25(fts_word) LIMIT ?"
        return self._ranked(sql, (match, n), "word", into)

    def _like(self, term: str, n: int, into: dict[int, dict[str, float]]) -> int:
        rows = self.db.execute(
            "SELECT id FROM chunks WHERE text LIKE ? ESCAPE '\\' ORDER BY id DESC LIMIT ?",
            (f"%{like_escape(term)}%", n),
        ).fetchall()
        for (cid,) in rows:
            into[cid]["like"] = 1.0
        return len(rows)

    def candidates(self, query: str, limit: int) -> dict[int, float]:
        n = limit * 4
        found: dict[int, dict[str, float]] = defaultdict(dict)
        q = query.strip()
        if len(q) >= 3:
            self._substring(q, n, "phrase", found)
        for run in cjk_runs(q):
            if run == q:
                hit = bool(found)
            elif len(run) >= 3:
                hit = self._substring(run, n, "cjk", found) > 0
            else:
                hit = False
            if not hit:
                self._bigrams(bigrams(run), n, found)
        words = latin_words(q)
        ranked = [w for w in words if w not in STOPWORDS] or words
        if ranked:
            self._words(ranked, n, found)
        if not words and not cjk_runs(q) and len(q) < 3:
            self._like(q, n, found)
        return {cid: sum(WEIGHTS[s] * v for s, v in parts.items()) for cid, parts in found.items()}

    def search(self, query: str, limit: int = DEFAULT_LIMIT, layer: str = "") -> list[Hit]:
        if len(query) > QUERY_MAX:
            raise UsageError(
                f"query is too long ({len(query)} characters; the limit is {QUERY_MAX})"
            )
        if not 1 <= limit <= LIMIT_MAX:
            raise UsageError(f"search limit must be between 1 and {LIMIT_MAX}")
        if not query.strip():
            return []
        scores = self.candidates(query, limit)
        if not scores:
            return []
        best = max(scores.values())
        kept = sorted(
            ((s / best, cid) for cid, s in scores.items() if s / best >= MIN_RELATIVE or s == best),
            key=lambda x: (-x[0], -x[1]),
        )[:limit]
        return self._hits(kept, layer)

    def _hits(self, kept: list[tuple[float, int]], layer: str) -> list[Hit]:
        if not kept:
            return []
        ids = [cid for _, cid in kept]
        marks = ",".join("?" * len(ids))
        rows = {
            r[0]: r
            for r in self.db.execute(
                f"SELECT id, path, line_start, line_end, text, entry_id FROM chunks WHERE id IN ({marks})",
                ids,
            )
        }
        hits = []
        for score, cid in kept:
            row = rows.get(cid)
            if row is None:
                continue
            _, path, start, end, text, entry_id = row
            text, end = _clip(text, start)
            hits.append(Hit(path, start, end, text, round(score, 4), "normal", entry_id, layer))
        return hits


def _clip(text: str, start: int) -> tuple[str, int]:
    """Whole lines, at most HIT_CHARS characters (a single longer line is cut)."""
    if len(text) <= HIT_CHARS:
        return text, start + text.count("\n")
    out: list[str] = []
    size = 0
    for line in text.split("\n"):
        if size + len(line) + (1 if out else 0) > HIT_CHARS:
            break
        out.append(line)
        size += len(line) + (1 if len(out) > 1 else 0)
    if not out:
        return text[:HIT_CHARS], start
    return "\n".join(out), start + len(out) - 1
