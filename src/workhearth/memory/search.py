"""Search a layer's index (DESIGN §4 Search).

Candidates come from bound-parameter FTS5 queries over the same chunks, at most
``limit × 4`` from each source:

* **word** — BM25 over ``fts_word`` (stemmed words, Latin scripts): an OR of the
  query's words, without stopwords and without words so common that their IDF
  is near zero (``fts_word_vocab`` doc counts); when nothing else is left they
  are searched, newest chunks first (BM25 cannot rank by them, and would walk
  most of the index to say so);
* **phrase** — the whole query as a substring (``fts_tri``, verified with
  ``instr``), ranked first when it hits; a one-word query only when the word
  itself matches nothing (then it finds the word inside longer ones);
* **cjk** — each CJK run of 3+ characters as a substring (trigram); a run of
  two characters, or one that matches nothing whole, through its bigrams
  (``fts_cjk``), so 崩溃恢复 also finds 崩溃后可以恢复; one character through the
  bigrams it starts;
* **like** — anything else under three characters (symbols), a ``LIKE`` scan.

Each source's scores are divided by its best, weighted and summed per chunk;
the sum is divided by the best again, hits under 0.1 are dropped (the best
always stays) and the top ``limit`` chunks become hits.

A hit is a window of whole source lines (≤ ``HIT_CHARS``) around its chunk: the
chunk, grown line by line into the neighbouring chunks of the same section while
it fits, never into lines another hit holds: the side whose next line holds more
of the query's informative words (by IDF) first, otherwise after and before in
turn, so a hit leans toward where its match continues.
Chunks are smaller than hits (``index.CHUNK_CHARS``) so that BM25 ranks a focused
piece of text while the hit still carries the lines around it. An entry hearth
wrote is a hit on its own; one longer than a hit keeps the lines around its best
match.
"""

from __future__ import annotations

import contextlib
import math
import re
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, fields

from workhearth.errors import UsageError
from workhearth.memory.plain_text import require_plain_text
from workhearth.memory.text import (
    LATIN_WORD,
    STOPWORDS,
    bigrams,
    cjk_runs,
    fts_quote,
    latin_words,
    like_escape,
    line_terms,
    word_terms,
)

QUERY_MAX = 512
LIMIT_MAX = 50
DEFAULT_LIMIT = 6
MIN_RELATIVE = 0.1
HIT_CHARS = 700
WEIGHTS = {"phrase": 3.0, "cjk": 2.0, "word": 1.0, "bigram": 1.0, "like": 0.5}
# Why: FTS5's IDF, log((N - n + 0.5) / (n + 0.5)), is below this for a word in
# more than ~45 % of chunks: it barely moves the ranking, yet BM25 would walk its
# whole posting list. Such words are searched only when nothing else is asked.
NEAR_ZERO_IDF = 0.2
PHRASE_GRAMS = 4  # trigrams a substring query asks FTS5 for (see _trigram_match)
GROW_CHUNKS = 8  # neighbouring chunks read on each side of a hit to grow it
_HEADING = re.compile(r"#{1,6}\s")  # as the chunker sees them


def check_search(query: str, limit: int) -> None:
    """Refuse an over-long query, one that is not plain text, or a limit out of range
    (local and team searches alike)."""
    if len(query) > QUERY_MAX:
        raise UsageError(f"query is too long ({len(query)} characters; the limit is {QUERY_MAX})")
    require_plain_text(query, "query")
    if not 1 <= limit <= LIMIT_MAX:
        raise UsageError(f"search limit must be between 1 and {LIMIT_MAX}")


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
    tags: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        # Why not dataclasses.asdict: its deep copy cost more than the search (six hits).
        out: dict[str, object] = {name: getattr(self, name) for name in _HIT_FIELDS}
        out["tags"] = list(self.tags)
        return out


_HIT_FIELDS = tuple(f.name for f in fields(Hit))


def _best(scores: dict[int, float], limit: int) -> list[tuple[float, int]]:
    """(score ÷ the best, chunk id) of the top ``limit``, best first, the higher id first
    on a tie; those under ``MIN_RELATIVE`` are dropped (the best always stays)."""
    best = max(scores.values())
    # Why negated: sorting plain tuples ascending needs no key function per item.
    order = sorted(
        (-(s / best), -cid) for cid, s in scores.items() if s / best >= MIN_RELATIVE or s == best
    )
    return [(-neg, -cid) for neg, cid in order[:limit]]


def _weighted(parts: dict[str, float]) -> float:
    """A chunk's sources' scores, weighted and summed (in the order they found it)."""
    if len(parts) == 1:
        # Why: most chunks come from one source; the sum of one term, without a generator.
        for source, value in parts.items():
            return WEIGHTS[source] * value
    return sum(WEIGHTS[s] * v for s, v in parts.items())


def _trigram_match(term: str) -> str:
    """An AND of some of the term's trigrams (``instr`` confirms the whole term).

    Why not all: each is a posting list read from every segment, and the ones
    around a word boundary (``"y p"``) already narrow it the most; the rest
    (evenly spread over the term) fill up to :data:`PHRASE_GRAMS`. A two-word
    phrase took 74 µs with all 13, 33 µs so (500 entries).
    """
    grams = list(dict.fromkeys(term[i : i + 3] for i in range(len(term) - 2)))
    if len(grams) > PHRASE_GRAMS:
        edges = [g for g in grams if g.split() != [g]]  # those holding a space
        inner = [g for g in grams if g not in edges]
        picked = _spread(edges, PHRASE_GRAMS)
        grams = picked + _spread(inner, PHRASE_GRAMS - len(picked))
    return " AND ".join(fts_quote(g) for g in grams)


def _spread(items: list[str], k: int) -> list[str]:
    """``k`` of ``items`` evenly spread from first to last (all of them when fewer)."""
    if len(items) <= k:
        return items
    if k <= 1:
        return items[:k]
    return [items[round(i * (len(items) - 1) / (k - 1))] for i in range(k)]


def _idf(docs: int, total: int) -> float:
    return math.log((total - docs + 0.5) / (docs + 0.5))


def _is_heading(line: str) -> bool:
    return _HEADING.match(line) is not None


class TermStats:
    """How many chunks hold each word term, kept while the index generation stays.

    Why: every word search asks ``fts_word_vocab`` for its terms' document counts
    (a quarter of a two-word search's own SQL); they change only with the index,
    whose generation changes with every update. Owned by the index object, so
    searches on one connection share it.
    """

    MAX_TERMS = 20_000

    def __init__(self) -> None:
        self.generation: str | None = None
        self.docs: dict[str, int] = {}


class Searcher:
    def __init__(self, db: sqlite3.Connection, stats: TermStats | None = None) -> None:
        self.db = db
        self.stats = stats or TermStats()
        # Why: the IDF of the informative terms of the last word search, so that a
        # hit grows toward the lines holding its query's words.
        self._term_idf: dict[str, float] = {}
        self._word_terms: dict[str, tuple[str, ...]] = {}
        self._line_values: dict[str, float] = {}
        # Why: (generation, chunks) read once per search, in its read transaction.
        self._index_state: tuple[str | None, int] | None = None

    # ------------------------------------------------------------ sources
    def _ranked(
        self, sql: str, args: tuple[object, ...], source: str, into: dict[int, dict[str, float]]
    ) -> int:
        rows = self.db.execute(sql, args).fetchall()
        if not rows:
            return 0
        best = max(-r[1] for r in rows) or 1.0
        for cid, rank in rows:
            slot = into[cid]
            value = (-rank) / best if best > 0 else 1.0
            old = slot.get(source, 0.0)
            slot[source] = value if value > old else old
        return len(rows)

    def _substring(self, term: str, n: int, source: str, into: dict[int, dict[str, float]]) -> int:
        # Why: newest first, so FTS5 stops after ``n`` confirmed rows; ranking every
        # chunk that holds a common term's trigrams by BM25 cost 150 ms at 100k chunks.
        # BM25 (which only sees trigram presence here) then orders those ``n``.
        sql = (
            "SELECT c.id, bm25(fts_tri) FROM fts_tri JOIN chunks c ON c.id = fts_tri.rowid "
            "WHERE fts_tri MATCH ? AND instr(lower(c.text), lower(?)) > 0 "
            "ORDER BY fts_tri.rowid DESC LIMIT ?"
        )
        return self._ranked(sql, (_trigram_match(term), term, n), source, into)

    def _bigrams(self, grams: list[str], n: int, into: dict[int, dict[str, float]]) -> int:
        match = " OR ".join(fts_quote(g) for g in dict.fromkeys(grams))
        if len(grams) == 1 and len(grams[0]) == 1:
            # Why: one character is indexed only inside the bigrams it starts (and
            # alone when it is a whole run): a prefix query finds both.
            match = f"{match} OR {match}*"
        sql = "SELECT rowid, bm25(fts_cjk) FROM fts_cjk WHERE fts_cjk MATCH ? ORDER BY bm25(fts_cjk) LIMIT ?"
        return self._ranked(sql, (match, n), "bigram", into)

    def _state(self) -> tuple[str | None, int]:
        """(generation, chunks) of the index."""
        try:
            row = self.db.execute("SELECT generation, chunks FROM state").fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is None:
            return None, int(self.db.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return row[0], int(row[1])

    def _doc_counts(self, terms: list[str], generation: str | None) -> dict[str, int]:
        """Term → chunks holding it, for the terms the index has (in term order)."""
        stats = self.stats
        if generation is None or stats.generation != generation:
            stats.generation, stats.docs = generation, {}
        missing = [t for t in terms if t not in stats.docs]
        if missing:
            marks = ",".join("?" * len(missing))
            found = dict(
                self.db.execute(
                    f"SELECT term, doc FROM fts_word_vocab WHERE term IN ({marks})", missing
                )
            )
            if len(stats.docs) + len(missing) > stats.MAX_TERMS:
                stats.docs = {}
            for t in missing:
                stats.docs[t] = found.get(t, 0)
        return {t: n for t in sorted(terms) if (n := stats.docs.get(t, 0))}

    def _informative(self, words: list[str]) -> tuple[list[str], bool]:
        """One query word per index term, without near-zero-IDF terms when others remain.

        Returns the words to search and whether any of them carries information.
        """
        by_term: dict[str, str] = {}
        for word, terms in zip(words, word_terms(words), strict=True):
            for term in terms:
                by_term.setdefault(term, word)
        if not by_term:
            return [], False
        generation, chunks = self._index_state or self._state()
        docs = self._doc_counts(list(by_term), generation)
        if not docs:
            return [], False  # no word of the query is in the index
        total = max(chunks, max(docs.values()))
        useful = [t for t in docs if _idf(docs[t], total) >= NEAR_ZERO_IDF]
        self._term_idf = {t: _idf(docs[t], total) for t in useful}
        return list(dict.fromkeys(by_term[t] for t in (useful or docs))), bool(useful)

    def _words(
        self, words: list[str], n: int, into: dict[int, dict[str, float]], weak: bool = False
    ) -> int:
        """BM25 over the words (``weak``: only stopwords were asked, nothing ranks them)."""
        words, useful = self._informative(list(dict.fromkeys(words)))
        useful = useful and not weak
        if not useful:
            self._term_idf = {}
        if not words:
            return 0
        match = " OR ".join(fts_quote(w) for w in words)
        if useful:
            sql = "SELECT rowid, bm25(fts_word) FROM fts_word WHERE fts_word MATCH ? ORDER BY bm25(fts_word) LIMIT ?"
        else:
            # Why: words in most chunks cannot rank them (BM25 gives each ~0) and would
            # make BM25 walk most of the index: the newest chunks holding them come first.
            sql = "SELECT rowid, -1.0 FROM fts_word WHERE fts_word MATCH ? ORDER BY rowid DESC LIMIT ?"
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
        """Chunk id → combined score (higher is better) for up to ``limit × 4`` per source."""
        with self._snapshot():
            return self._candidates(query, limit)

    def _candidates(self, query: str, limit: int) -> dict[int, float]:
        n = limit * 4
        found: dict[int, dict[str, float]] = defaultdict(dict)
        self._term_idf, self._word_terms, self._line_values = {}, {}, {}
        q = query.strip()
        words = latin_words(q)
        runs = cjk_runs(q)
        # Why: a query of one word is the word search's job (stemmed, BM25 over word
        # counts); as a substring it only adds the word inside longer words, wanted
        # when the word itself is nowhere.
        one_word = len(words) == 1 and words[0] == q.lower()
        if len(q) >= 3 and not one_word:
            self._substring(q, n, "phrase", found)
        self._cjk(q, runs, n, found)
        if words:
            self._latin(q, words, one_word, n, found)
        elif not runs and len(q) < 3:
            self._like(q, n, found)
        return {cid: _weighted(parts) for cid, parts in found.items()}

    def _cjk(self, q: str, runs: list[str], n: int, into: dict[int, dict[str, float]]) -> None:
        """Each CJK run as a substring, or through its bigrams when that finds nothing."""
        for run in runs:
            if run == q:
                hit = bool(into)  # Why: the phrase search already looked for it whole
            elif len(run) >= 3:
                hit = self._substring(run, n, "cjk", into) > 0
            else:
                hit = False
            if not hit:
                self._bigrams(bigrams(run), n, into)

    def _latin(
        self, q: str, words: list[str], one_word: bool, n: int, into: dict[int, dict[str, float]]
    ) -> None:
        """The word search; a one-word query the words index lacks, as a substring."""
        # Why: "s" of "Caroline's", "t" of "don't": pieces of words, not words.
        ranked = [w for w in words if w not in STOPWORDS and len(w) > 1]
        if not self._words(ranked or words, n, into, weak=not ranked) and one_word and len(q) >= 3:
            self._substring(q, n, "phrase", into)

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction around a search's queries.

        Why: they see one state of the index, and SQLite (and FTS5) set up a read
        once instead of once per query: a tenth of a two-word search's SQL time.
        """
        db = self.db
        if db.in_transaction:
            yield
            return
        db.execute("BEGIN")
        try:
            yield
        finally:
            if db.in_transaction:
                db.execute("COMMIT")

    # ---------------------------------------------------------------- hits
    def search(self, query: str, limit: int = DEFAULT_LIMIT, layer: str = "") -> list[Hit]:
        check_search(query, limit)
        if not query.strip():
            return []
        with self._snapshot():
            self._index_state = self._state()
            try:
                if not self._index_state[1]:
                    return []  # Why: an empty index (a layer with no notes) has nothing to find
                scores = self._candidates(query, limit)
                if not scores:
                    return []
                return self._hits(_best(scores, limit), layer, query)
            finally:
                self._index_state = None

    def _hits(self, kept: list[tuple[float, int]], layer: str, query: str) -> list[Hit]:
        if not kept:
            return []
        ids = [cid for _, cid in kept]
        marks = ",".join("?" * len(ids))
        rows = {
            r[0]: r[1:]
            for r in self.db.execute(
                f"SELECT id, path, line_start, line_end, text, entry_id FROM chunks WHERE id IN ({marks})",
                ids,
            )
        }
        # Why: every chosen chunk is claimed before any hit grows, so a hit's
        # context never swallows a better-ranked (or lower-ranked) hit.
        taken: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for path, start, end, _text, _eid in rows.values():
            taken[path].append((start, end))
        hits = []
        for score, cid in kept:
            row = rows.get(cid)
            if row is None:
                continue
            path, start, end, text, entry_id = row
            if len(text) > HIT_CHARS:
                text, start, end = _around_best(text, start, query)
            elif entry_id is None:
                text, start, end = self._grow(cid, path, start, end, text, taken[path])
            taken[path].append((start, end))
            hits.append(Hit(path, start, end, text, round(score, 4), "normal", entry_id, layer))
        return hits

    def _grow(
        self, cid: int, path: str, start: int, end: int, text: str, taken: list[tuple[int, int]]
    ) -> tuple[str, int, int]:
        """The chunk widened by whole lines of its neighbours in the same section."""
        rows = self.db.execute(
            "SELECT line_start, line_end, text, entry_id FROM chunks"
            " WHERE id BETWEEN ? AND ? AND path = ? ORDER BY line_start, id",
            (cid - GROW_CHUNKS, cid + GROW_CHUNKS, path),
        ).fetchall()
        spans = [(r[0], r[1]) for r in rows]
        # Why: the pieces of a line too long for a hit share its line number; a hit
        # never joins them to other lines (nor grows from one).
        pieces = {s for s in spans if spans.count(s) > 1}
        if (start, end) in pieces:
            return text, start, end
        after = _side_lines([r for r in rows if r[0] > end], pieces, start, end, text, True)
        before = _side_lines([r for r in rows if r[1] < start], pieces, start, end, text, False)
        lines, start, end = self._widen(text, start, end, after, before, taken)
        return _trim_blank_edges(lines, start, end)

    def _widen(
        self,
        text: str,
        start: int,
        end: int,
        after: list[tuple[int, str]],
        before: list[tuple[int, str]],
        taken: list[tuple[int, int]],
    ) -> tuple[list[str], int, int]:
        """``text``'s lines with lines of ``after`` and ``before`` added one at a time,
        while they fit in a hit and no other hit holds them."""
        lines = text.split("\n")
        size = len(text)
        take_after = True
        while True:
            # Why: a line holding more of the query's words is taken first, so a hit
            # leans toward the side its match continues on; otherwise in turn.
            gain_after = self._value(after[0][1]) if after else -1.0
            gain_before = self._value(before[0][1]) if before else -1.0
            if gain_after != gain_before:
                take_after = gain_after > gain_before
            sides = (after, before) if take_after else (before, after)
            side = next((side for side in sides if _next_fits(side, size, taken)), None)
            if side is None:
                return lines, start, end
            line_no, line = side.pop(0)
            if side is after:
                lines.append(line)
                end = line_no
            else:
                lines.insert(0, line)
                start = line_no
            size += 1 + len(line)
            take_after = not take_after

    def _value(self, line: str) -> float:
        """The IDF of the informative query terms a line holds (0 when there are none)."""
        idf = self._term_idf
        if not idf or not line:
            return 0.0
        value = self._line_values.get(line)
        if value is None:
            words = LATIN_WORD.findall(line.lower())
            known = self._word_terms
            new = list(dict.fromkeys(w for w in words if w not in known))
            for word, terms in zip(new, word_terms(new), strict=True):
                known[word] = tuple(t for t in terms if t in idf)
            value = sum(idf[t] for t in {t for w in words for t in known[w]})
            self._line_values[line] = value
        return value


def _next_fits(side: list[tuple[int, str]], size: int, taken: list[tuple[int, int]]) -> bool:
    """Whether the next line of ``side`` can join a hit of ``size`` characters.

    When it cannot (another hit holds it, or it does not fit), the side is done:
    lines must stay contiguous, so it is emptied.
    """
    if not side:
        return False
    line_no, line = side[0]
    if any(a <= line_no <= b for a, b in taken) or size + 1 + len(line) > HIT_CHARS:
        side.clear()
        return False
    return True


def _trim_blank_edges(lines: list[str], start: int, end: int) -> tuple[str, int, int]:
    """The lines joined, without the blank lines a growth left at either edge."""
    while len(lines) > 1 and not lines[-1]:
        lines.pop()
        end -= 1
    while len(lines) > 1 and not lines[0]:
        lines.pop(0)
        start += 1
    return "\n".join(lines), start, end


def _side_lines(
    rows: list[tuple[int, int, str, str | None]],
    pieces: set[tuple[int, int]],
    start: int,
    end: int,
    text: str,
    forward: bool,
) -> list[tuple[int, str]]:
    """(line number, line) outward from a chunk, up to the end of its section.

    Growth stops at an entry hearth wrote, at a heading (a new section), at a
    piece of an over-long line and at anything out of order. The lines it
    crosses between two chunks belong to no chunk and are empty: the chunker
    leaves out only empty lines at chunk edges, and whatever else it leaves out
    (a heading alone, blank lines before a heading, an entry or an over-long
    line) sits where growth stops anyway.
    """
    out: list[tuple[int, str]] = []
    if forward:
        edge = end
        for line_start, line_end, chunk_text, entry_id in rows:
            chunk_lines = chunk_text.split("\n")
            if (
                entry_id is not None
                or line_start <= edge
                or (line_start, line_end) in pieces
                or _is_heading(chunk_lines[0])
                or len(chunk_lines) != line_end - line_start + 1
            ):
                break
            out += [(n, "") for n in range(edge + 1, line_start)]
            out += list(enumerate(chunk_lines, line_start))
            edge = line_end
        return out
    edge = start
    first = text.split("\n", 1)[0]
    if _is_heading(first):
        return out
    for line_start, line_end, chunk_text, entry_id in reversed(rows):
        chunk_lines = chunk_text.split("\n")
        if (
            entry_id is not None
            or line_end >= edge
            or (line_start, line_end) in pieces
            or len(chunk_lines) != line_end - line_start + 1
        ):
            break
        out += [(n, "") for n in range(edge - 1, line_end, -1)]
        out += list(reversed(list(enumerate(chunk_lines, line_start))))
        edge = line_start
        if _is_heading(chunk_lines[0]):
            break
    return out


def _around_best(text: str, start: int, query: str) -> tuple[str, int, int]:
    """Whole lines of a long chunk around its best-matching line, at most HIT_CHARS.

    A single line longer than a hit is cut (it cannot be shown whole).
    """
    lines = text.split("\n")
    wanted = set().union(*(t for t in word_terms(latin_words(query)))) if query else set()
    runs = cjk_runs(query)

    def match(line: str) -> int:
        got = len(wanted & line_terms(line)) if wanted else 0
        return got + sum(2 for r in runs if r in line)

    best = max(range(len(lines)), key=lambda k: (match(lines[k]), -k))
    if len(lines[best]) > HIT_CHARS:
        return lines[best][:HIT_CHARS], start + best, start + best
    lo = hi = best
    size = len(lines[best])
    take_after = True
    while True:
        options = [hi + 1, lo - 1] if take_after else [lo - 1, hi + 1]
        for k in options:
            if 0 <= k < len(lines) and size + 1 + len(lines[k]) <= HIT_CHARS:
                size += 1 + len(lines[k])
                lo, hi = min(lo, k), max(hi, k)
                break
        else:
            break
        take_after = not take_after
    return "\n".join(lines[lo : hi + 1]), start + lo, start + hi
