"""Search ranking and hit windows (DESIGN §4 Search), and what bench/memory_quality.py relies on.

The contract: FTS5 MATCH + BM25, ``limit × 4`` candidates per source; words under
three characters (two-character Chinese words) found through ``fts_cjk``; a
Chinese run that matches nothing whole searched as its words, whole matches
first; scores merged, divided by the best, none under 0.1 (the best stays), top
6 by default; a hit is whole source lines (≤ 700 characters) read from the
chunks table; query text is always data, never FTS5 syntax.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import random
import sqlite3
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from workhearth import Workhearth
from workhearth.memory.chunking import CHUNK_CHARS, PIECE_CHARS, chunk_lines
from workhearth.memory.index import MemoryIndex
from workhearth.memory.search import HIT_CHARS, Hit, Searcher
from workhearth.memory.text import WORD_TOKENIZER, line_terms, word_terms

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def layer(tmp_path: Path) -> Iterator[tuple[Path, MemoryIndex]]:
    folder = tmp_path / "layer"
    folder.mkdir()
    index = MemoryIndex(folder)
    yield folder, index
    index.close()


def write(folder: Path, rel: str, lines: list[str]) -> list[str]:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return lines


def search(index: MemoryIndex, query: str, limit: int = 6) -> list[Hit]:
    index.update()
    return Searcher(index.db).search(query, limit)


def assert_whole_lines(hits: list[Hit], files: dict[str, list[str]]) -> None:
    for h in hits:
        assert len(h.text) <= HIT_CHARS
        assert h.text == "\n".join(files[h.path][h.line_start - 1 : h.line_end]), h


def conversation(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    words = "garden river window coffee market lantern harbor violin pottery camping".split()
    lines = ["## Session 1 — 8 May 2023", ""]
    for t in range(1, n + 1):
        who = "Ana" if t % 2 else "Ben"
        body = " ".join(rng.choice(words) for _ in range(rng.randint(8, 20)))
        lines.append(f"- [D1:{t}] {who}: {body}")
    return lines


# ------------------------------------------------------------------ chunking
def test_chunks_are_exactly_their_lines() -> None:
    lines = ["# Title", "", "", "first para line", "", "  ", "second", "", "# Next", "x" * 30, ""]
    lines += ["y" * (CHUNK_CHARS + 10), "z" * (PIECE_CHARS * 2 + 5), "after", ""]
    for c in chunk_lines(lines):
        if c.line_start == c.line_end and len(lines[c.line_start - 1]) > PIECE_CHARS:
            assert c.text in lines[c.line_start - 1] and len(c.text) <= PIECE_CHARS
            continue
        assert c.text == "\n".join(lines[c.line_start - 1 : c.line_end])
        assert c.text.split("\n")[0] and c.text.split("\n")[-1]  # no empty edge lines


def test_a_line_longer_than_a_chunk_but_not_a_hit_stays_whole() -> None:
    long = "w" * (CHUNK_CHARS + 50)
    chunks = chunk_lines(["short", long, "tail"])
    assert [c.text for c in chunks] == ["short", long, "tail"]


# ------------------------------------------------------------------ windows
def test_a_hit_is_its_chunk_with_the_lines_around_it(layer) -> None:
    folder, index = layer
    lines = write(folder, "talk.md", conversation(60))
    lines[40] = "- [D1:39] Ana: the heron nested by the quay"
    write(folder, "talk.md", lines)
    (hit, *_) = search(index, "heron quay")
    assert "heron" in hit.text
    assert hit.line_start < 41 < hit.line_end  # context on both sides
    assert len(hit.text) > CHUNK_CHARS  # grown beyond its chunk, up to a hit
    assert_whole_lines([hit], {"talk.md": lines})


def test_hits_never_share_a_line(layer) -> None:
    folder, index = layer
    lines = write(folder, "talk.md", conversation(200))
    hits = search(index, "violin pottery lantern", limit=20)
    assert len(hits) >= 10
    spans = sorted((h.line_start, h.line_end) for h in hits)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))
    assert_whole_lines(hits, {"talk.md": lines})


def test_windows_stay_in_their_section_and_out_of_entries(layer) -> None:
    folder, index = layer
    filler = [f"plain filler line number {i} about nothing much at all" for i in range(12)]
    lines = ["# Alpha", *filler, "the okapi line", "# Beta", *filler]
    lines += ["- a saved okapi fact ^m-23456789", "- another saved fact ^m-3456789a", *filler]
    write(folder, "MEMORY.md", lines)
    hits = search(index, "okapi")
    assert_whole_lines(hits, {"MEMORY.md": lines})
    entry = next(h for h in hits if h.entry_id)
    assert entry.text == "- a saved okapi fact ^m-23456789"
    hand = next(h for h in hits if not h.entry_id)
    assert "# Beta" not in hand.text and hand.line_end <= lines.index("# Beta")


def test_random_files_give_exact_source_lines(layer) -> None:
    folder, index = layer
    rng = random.Random(11)
    files = {}
    for f in range(6):
        lines = []
        for _ in range(rng.randint(20, 120)):
            kind = rng.random()
            if kind < 0.08:
                lines.append(f"## Part {rng.randint(1, 9)}")
            elif kind < 0.25:
                lines.append(rng.choice(["", "", "   "]))
            elif kind < 0.28:
                lines.append("kiwi " * rng.randint(100, 300))
            else:
                lines.append(
                    " ".join(
                        rng.choice(["kiwi", "fig", "plum", "okra"])
                        for _ in range(rng.randint(1, 40))
                    )
                )
        files[f"f{f}.md"] = write(folder, f"f{f}.md", lines)
    for q in ("kiwi", "fig plum", "okra kiwi fig", "plum"):
        hits = search(index, q, limit=50)
        assert hits
        assert_whole_lines(
            [h for h in hits if len(files[h.path][h.line_start - 1]) <= PIECE_CHARS], files
        )


def test_a_long_entry_shows_the_lines_around_its_match(tmp_path: Path) -> None:
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    body = "\n".join(f"step {i}: nothing special happens here at all" for i in range(40))
    entry = wh.memory.save(body + "\nfinally the capybara step")
    (hit,) = wh.memory.search("capybara")
    assert hit.entry_id == entry.id and "capybara" in hit.text and len(hit.text) <= HIT_CHARS
    path = wh.memory.folder("project") / "MEMORY.md"
    lines = path.read_text().splitlines()
    assert hit.text == "\n".join(lines[hit.line_start - 1 : hit.line_end])
    wh.memory.close()


def test_hit_text_comes_from_the_index_not_the_file(layer) -> None:
    folder, index = layer
    write(folder, "talk.md", conversation(30))
    index.update()
    (folder / "talk.md").write_text("rewritten\n")  # not re-indexed
    hits = Searcher(index.db).search("violin")
    assert hits and all("rewritten" not in h.text for h in hits)


# ------------------------------------------------------------------ ranking
def test_scores_merge_dedupe_and_stay_relative(layer) -> None:
    folder, index = layer
    write(folder, "a.md", [f"note {i}: " + "badger " * (i % 4 + 1) for i in range(400)])
    hits = search(index, "badger note meadow", limit=50)
    scores = [h.score for h in hits]
    assert scores[0] == 1.0 and scores == sorted(scores, reverse=True)
    assert all(s >= 0.1 for s in scores)
    assert len({(h.path, h.line_start) for h in hits}) == len(hits)
    assert len(search(index, "badger")) == 6


def test_candidates_are_limit_times_four_per_source(layer) -> None:
    folder, index = layer
    write(folder, "a.md", [f"heron {i}" for i in range(0, 3000, 1)])
    index.update()
    cands = Searcher(index.db).candidates("heron", 6)
    assert 0 < len(cands) <= 24


def test_near_zero_idf_words_are_dropped_when_others_remain(layer) -> None:
    folder, index = layer
    lines = [f"## Day {i}\n\nthe project went fine on day {i}" for i in range(30)]
    lines.append("## Day 99\n\nthe project met a walrus")
    write(folder, "log.md", lines)
    index.update()
    searcher = Searcher(index.db)
    assert searcher._informative(["project", "walrus"]) == (["walrus"], True)
    assert searcher._informative(["project"]) == (["project"], False)
    (hit,) = search(index, "project walrus")
    assert "walrus" in hit.text
    alone = search(index, "project")  # alone, a word in every chunk is still searched:
    assert len(alone) == 6 and "day 99" in alone[0].text.lower()  # newest chunks first


def test_question_words_find_a_stemmed_answer(layer) -> None:
    folder, index = layer
    lines = write(folder, "talk.md", conversation(80))
    lines[50] = "- [D1:49] Ben: I have been researching adoption agencies lately"
    write(folder, "talk.md", lines)
    hits = search(index, "What did Ben research?")
    assert "[D1:49]" in hits[0].text


def test_stems_are_the_word_index_terms() -> None:
    text = "Caroline's café running naïve RÉSUMÉ agencies don't 2024 x̃ ﬁne"
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{WORD_TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
    db.execute("INSERT INTO t VALUES (?)", (text,))
    assert line_terms(text) == {r[0] for r in db.execute("SELECT term FROM v")}
    assert word_terms(["Caroline", "agencies"]) == [("carolin",), ("agenc",)]


# ------------------------------------------------------------------ CJK and syntax
@pytest.mark.parametrize(
    "query,text",
    [
        ("记忆", "会话记忆保存在文件里"),
        ("会话", "会话记忆保存在文件里"),
        ("崩溃恢复", "进程崩溃后可以恢复"),
        ("カタカナ", "かな文字と漢字とカタカナのメモ"),
        ("漢字", "かな文字と漢字とカタカナのメモ"),
        ("部署 staging", "部署到 staging 服务器"),
        ("猫", "我的猫叫小白"),
    ],
)
def test_cjk_queries_find_their_text(layer, query: str, text: str) -> None:
    folder, index = layer
    write(folder, "a.md", ["an unrelated english fact about gardens", "", "记录回忆 and 话会"])
    write(folder, "b.md", [text])
    assert search(index, query)[0].path == "b.md"


def test_whole_chinese_phrase_ranks_before_its_words(layer) -> None:
    folder, index = layer
    write(folder, "words.md", ["进程崩溃后可以恢复"])
    write(folder, "phrase.md", ["崩溃恢复很重要"])
    assert search(index, "崩溃恢复")[0].path == "phrase.md"
    (folder / "phrase.md").unlink()
    assert [h.path for h in search(index, "崩溃恢复")] == ["words.md"]


@pytest.mark.parametrize(
    "query", ['"', "*", "NEAR(a b)", "AND", "(", ")", "-x", "a:b", "a/b", "^", "{x}", "'"]
)
def test_fts5_syntax_is_text(layer, query: str) -> None:
    folder, index = layer
    write(folder, "a.md", [f"the manual says {query} works here", "", "gardens"])
    for q in (query, f"{query} works", f'"{query}', f"({query} OR", f"{query}*"):
        search(index, q)  # never an error
    assert search(index, f"says {query} works")[0].path == "a.md"


# ------------------------------------------------------------------ the bench
def load_bench() -> ModuleType:
    """``bench/memory_quality.py`` as a module (it imports ``_runs`` from its folder)."""
    if str(ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(
        "memory_quality", ROOT / "bench" / "memory_quality.py"
    )
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_locomo_score_stays_at_or_above_the_floor() -> None:
    """The search was tuned on these five LoCoMo conversations; it must not score lower.

    Needs ``../shared/eval/locomo-dev.json`` (kept outside the repository): a developer
    without it gets a skip, CI (``CI`` set) a failure, so the floor is always checked there.
    """
    bench = load_bench()
    data = bench.DEFAULT_DATA
    if not data.is_file():
        reason = f"LoCoMo data not found at {data} (see ../shared/eval/README.md)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}: CI runs with shared/ beside the clone")
        pytest.skip(reason)
    started = time.perf_counter()
    result = bench.evaluate(json.loads(data.read_text(encoding="utf-8")), peers=())
    ours = result["methods"]["workhearth"]
    assert (ours["questions"], ours["evidence_ids"]) == (760, 1107)  # the data is the data
    assert ours["score"] >= bench.FLOOR, (ours["score"], ours["by_category"])
    assert time.perf_counter() - started < 120  # a slow search is a bug too


def test_bench_skips_without_the_data(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bench = load_bench()
    out = tmp_path / "out.json"
    assert bench.main(["--data", str(tmp_path / "absent.json"), "--out", str(out)]) == 0
    assert "skipped" in capsys.readouterr().out and not out.exists()
    md = bench.session_markdown(
        3, "8 May 2023", [{"dia_id": "D3:1", "speaker": "Ana", "text": "hi\nthere"}]
    )
    assert md.splitlines() == ["## Session 3 — 8 May 2023", "", "- [D3:1] Ana: hi there"]
    assert bench.evidence_ids({"evidence": ["D8:6; D9:17", "D:11:26", "D"]}) == [
        "D8:6",
        "D9:17",
        "D11:26",
    ]


def test_the_peers_ask_what_the_library_asks() -> None:
    """Issue #20: the peers drop the library's stop words and stem as its word index does."""
    bench = load_bench()
    question = "What did Caroline's sister research in the agencies?"
    assert bench.library_words(question) == ["caroline", "sister", "research", "agencies"]
    assert bench.library_words("Who is it?") == ["who", "is", "it"]  # nothing else left
    assert [bench.stem_prefix(w) for w in ("researching", "happy", "agencies", "used")] == [
        "research",
        "happ",
        "agenc",
        "used",
    ]
    md = "## Session 1 — 1 May\n\n- [D1:1] Ana: I was researching agencies.\n"
    md += "".join(
        f"- [D1:{i}] Ben: what did the day bring, is it what it was\n" for i in range(2, 40)
    )
    for name, (_, tokenizer, words) in bench.PEERS.items():
        hits = bench.NaivePeer(tokenizer, [md], words).search(question)
        assert hits and "[D1:1]" in hits[0], name
