"""The wiki's pages as a read-only source of the project's memory (issue 24 item 3).

Pages are written here the way ``hearth wiki`` writes them (the shared spec's format:
a YAML front matter block, then the body, written atomically); memory must find their
bodies by words, never their front matter, at level ``low`` under ``wiki/<name>.md``
with the page file's own line numbers, inject them within a quarter of the context
budget, and see pages written, edited or removed at its next look.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth, make_hearth
from workhearth import Workhearth
from workhearth.config import MemoryConfig
from workhearth.errors import UsageError
from workhearth.fsutil import atomic_write
from workhearth.memory.api import Memory
from workhearth.models.tokens import count_tokens

HOUR_NS = 3600 * 10**9
WIKI_TITLE = "## This project's wiki (hearth wiki pages)"
MARKER = re.compile(r"^<!-- (?P<path>.+):(?P<line>\d+) \((?P<level>critical|normal|low)\) -->$")

MEMORY_BODY = """# src/workhearth/memory

The memory package keeps Markdown as the source of truth and a rebuildable index.
Search ranks chunks by BM25 over a word index and a trigram index (`src/workhearth/memory/search.py:1`).

## 记忆

记忆索引可以重建：崩溃后可以恢复，不会丢失任何条目。

## Sources
- [src/workhearth/memory/search.py](file:///work/ws/src/workhearth/memory/search.py)
"""


def front_matter(title: str, body: str, *, links: list[str] | None = None) -> str:
    """The spec's front matter for ``body``; its words (model, source paths, reasons)
    appear nowhere in any body here, so a hit on them can only come from it."""
    lines = [
        "---",
        f"title: {title}",
        "written: 2026-12-02T09:30:00Z",
        "model: openai:zebracorn-frontmodel",
        "sources:",
        f"  - {{path: src/quokkasource/api.py, sha256: {'3f2a' * 16}}}",
        "unreadable:",
        '  - {path: data/broken.pdf, reason: "not a PDF (no %PDF header) marmosetreason"}',
    ]
    if links is not None:
        lines.append(f"links: [{', '.join(links)}]")
    lines += [f"body_sha256: {hashlib.sha256(body.encode()).hexdigest()}", "---"]
    return "\n".join(lines) + "\n"


def write_page(folder: Path, name: str, body: str, title: str | None = None) -> Path:
    """A page as ``hearth wiki`` writes it: front matter then body, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    atomic_write(path, (front_matter(title or name, body) + body).encode())
    return path


def lines_of(path: Path, start: int, end: int) -> str:
    """Lines ``start..end`` (1-based, inclusive) of a file, as a hit holds them."""
    return "\n".join(path.read_text(encoding="utf-8").splitlines()[start - 1 : end])


def age(*paths: Path) -> None:
    """Set back mtimes by an hour: the next look trusts them (as tests/memory/test_sync.py)."""
    for path in paths:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - HOUR_NS))


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Workhearth]:
    (tmp_path / "ws").mkdir()
    w = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    yield w
    w.memory.close()


@pytest.fixture
def wiki(wh: Workhearth) -> Path:
    return wh.config.paths.project_wiki(wh.workspace)


# ------------------------------------------------------------------- search
def test_body_words_are_found_in_english_and_chinese(wh: Workhearth, wiki: Path) -> None:
    page = write_page(wiki, "src-workhearth-memory", MEMORY_BODY, "src/workhearth/memory")
    for query in ("rebuildable index", "BM25", "记忆", "崩溃恢复", "不会丢失"):
        hits = wh.memory.search(query, layer="wiki")
        assert hits, query
        hit = hits[0]
        assert (hit.layer, hit.level, hit.path, hit.entry_id) == (
            "wiki",
            "low",
            "wiki/src-workhearth-memory.md",
            None,
        )
        # Why: the hit names lines of the page file, so a reader can open it there.
        assert hit.text == lines_of(page, hit.line_start, hit.line_end), query
        assert query[:2] in hit.text or query.split()[0] in hit.text
    (chinese,) = wh.memory.search("崩溃后可以恢复", layer="wiki")
    body_line = 1 + page.read_text(encoding="utf-8").splitlines().index(
        "记忆索引可以重建：崩溃后可以恢复，不会丢失任何条目。"
    )
    assert chinese.line_start <= body_line <= chinese.line_end


def test_front_matter_words_are_not_indexed(wh: Workhearth, wiki: Path) -> None:
    write_page(wiki, "src-workhearth-memory", MEMORY_BODY)
    for query in ("zebracorn", "quokkasource", "marmosetreason", "body_sha256", "3f2a3f2a"):
        assert wh.memory.search(query) == [], query
        assert wh.memory.search(query, layer="wiki") == [], query
    # The same words in a body are found: the front matter is skipped, not the page.
    write_page(wiki, "notes", "# Notes\n\nThe zebracorn model wrote quokkasource pages.\n")
    # Why index(): a Memory re-reads the disk at most every 2 s by itself; whoever writes
    # pages in the same process (``hearth wiki build``) brings the wiki's index up to date.
    wh.memory.index("wiki")
    assert [h.path for h in wh.memory.search("zebracorn", layer="wiki")] == ["wiki/notes.md"]


def test_a_page_without_front_matter_is_all_body(wh: Workhearth, wiki: Path) -> None:
    wiki.mkdir(parents=True)
    page = wiki / "handmade.md"
    page.write_text("---\ntitle: unclosed\nThe narwhal page is written by hand.\n")
    (hit,) = wh.memory.search("narwhal", layer="wiki")
    assert (hit.path, hit.line_start, hit.line_end) == ("wiki/handmade.md", 1, 3)
    assert hit.text == page.read_text().rstrip("\n")


def test_update_files_and_hidden_files_are_not_indexed(wh: Workhearth, wiki: Path) -> None:
    write_page(wiki, "overview", "# Overview\n\nThe project is a lighthouse keeper's log.\n")
    write_page(wiki, "overview.update", "# Overview\n\nAn update about the pelican.\n")
    write_page(wiki, ".draft", "# Draft\n\nA hidden page about the pelican.\n")
    (wiki / ".state.json").write_text('{"pelican": true}')
    sub = wiki / "old"
    write_page(sub, "page", "# Old\n\nA page in a subfolder about the pelican.\n")
    assert wh.memory.search("pelican") == []
    assert wh.memory.search("pelican", layer="wiki") == []
    assert [h.path for h in wh.memory.search("lighthouse keeper")] == ["wiki/overview.md"]
    # The index is memory's, hidden inside wiki/: no visible file is added to the folder.
    visible = sorted(p.name for p in wiki.iterdir() if not p.name.startswith("."))
    assert visible == ["old", "overview.md", "overview.update.md"]


def test_layer_wiki_filters_and_no_layer_ranks_all_together(wh: Workhearth, wiki: Path) -> None:
    wh.memory.save("The lighthouse lamp is cleaned on Mondays")
    wh.memory.save("I like lighthouse photographs", layer="user")
    write_page(wiki, "overview", "# Overview\n\nThe lighthouse lamp schedule lives in docs.\n")
    assert {h.layer for h in wh.memory.search("lighthouse lamp", layer="wiki")} == {"wiki"}
    assert {h.layer for h in wh.memory.search("lighthouse lamp", layer="project")} == {"project"}
    everything = wh.memory.search("lighthouse", limit=10)
    assert {h.layer for h in everything} == {"user", "project", "wiki"}
    assert everything[0].score == 1.0
    assert [h.score for h in everything] == sorted((h.score for h in everything), reverse=True)


def test_status_counts_the_wiki_pages(wh: Workhearth, wiki: Path) -> None:
    assert wh.memory.status()["wiki"]["exists"] is False
    write_page(wiki, "overview", "# Overview\n\nThe project is a lighthouse keeper's log.\n")
    write_page(wiki, "docs", "# Docs\n\nHow the lamp is cleaned.\n")
    write_page(wiki, "docs.update", "# Docs\n\nAn update beside the page.\n")
    status = wh.memory.status()["wiki"]
    assert status["exists"] is True and status["files"] == 2 and status["chunks"] >= 2
    assert status["folder"] == str(wiki)


def test_without_a_wiki_folder_nothing_is_created(wh: Workhearth, wiki: Path) -> None:
    wh.memory.save("The heron nests by the pond")
    assert [h.layer for h in wh.memory.search("heron")] == ["project"]
    assert wh.memory.search("heron", layer="wiki") == []
    assert "heron" in wh.memory.context(topic="heron")
    wh.memory.index()
    wh.memory.sync()
    assert not wiki.exists()


# --------------------------------------------------------------------- sync
def test_sync_sees_pages_written_edited_and_removed(wh: Workhearth, wiki: Path) -> None:
    reader = Memory(wh.config.paths, wh.workspace, wh.config.memory, autorefresh=False)
    try:
        reader.sync()
        assert reader.search("otter") == []
        page = write_page(wiki, "animals", "# Animals\n\nThe otter pages describe rivers.\n")
        assert reader.sync() is True
        assert [h.path for h in reader.search("otter", layer="wiki")] == ["wiki/animals.md"]

        age(wiki, page)
        reader.sync()
        assert reader.sync() is False  # nothing changed: the cheap look, no re-index
        write_page(wiki, "animals", "# Animals\n\nThe beaver pages describe dams.\n")
        assert reader.sync() is True
        assert reader.search("otter") == []
        assert [h.path for h in reader.search("beaver dams")] == ["wiki/animals.md"]

        # An edit in place (the user's editor) that keeps the size is seen too.
        text = page.read_text(encoding="utf-8")
        page.write_text(text.replace("beaver", "badger"), encoding="utf-8")
        assert reader.sync() is True
        assert [h.path for h in reader.search("badger")] == ["wiki/animals.md"]

        page.unlink()
        assert reader.sync() is True
        assert reader.search("badger") == []
    finally:
        reader.close()


# ------------------------------------------------------------------ context
def wiki_block(context: str) -> str:
    """The wiki's part of a rendered context: its title to the next title (or the end)."""
    start = context.find(WIKI_TITLE)
    if start < 0:
        return ""
    end = context.find("\n## ", start + len(WIKI_TITLE))
    return context[start : end if end >= 0 else len(context)]


def big_wiki(wiki: Path, pages: int = 30) -> None:
    """A large wiki, every line of it about the topic the tests ask for."""
    for n in range(pages):
        body = "\n".join(
            [f"# Lighthouse page {n}", ""]
            + [
                f"The lighthouse maintenance schedule, part {n}.{k}: lamp, lens and keeper duties."
                for k in range(40)
            ]
        )
        write_page(wiki, f"lighthouse-{n}", body + "\n")


def check_markers(context: str, wiki: Path) -> int:
    """Every wiki marker names a page line whose text follows it; returns how many."""
    lines = wiki_block(context).splitlines()
    found = 0
    for i, line in enumerate(lines):
        m = MARKER.match(line)
        if m is None:
            continue
        found += 1
        assert m["level"] == "low"
        assert m["path"].startswith("wiki/")
        page = wiki / m["path"].removeprefix("wiki/")
        assert lines_of(page, int(m["line"]), int(m["line"])) == lines[i + 1]
    return found


@pytest.mark.parametrize("budget", [1_000, 4_000, 20_000])
def test_context_gives_the_wiki_at_most_a_quarter_of_the_budget(
    wh: Workhearth, wiki: Path, budget: int
) -> None:
    wh.memory.save("The lighthouse keeper must log every lamp check", level="critical")
    big_wiki(wiki)
    text = wh.memory.context(topic="lighthouse maintenance schedule", budget=budget)
    block = wiki_block(text)
    assert block, "a relevant wiki takes part in the context"
    assert count_tokens(block) <= budget // 4
    assert count_tokens(text) <= budget
    assert check_markers(text, wiki) >= 1
    # The wiki informs the context, it never crowds the project's memory out.
    assert "The lighthouse keeper must log every lamp check" in text


def test_context_without_a_budget_shares_the_configured_budgets(tmp_path: Path) -> None:
    config = MemoryConfig(user_budget=600, project_budget=1_400)
    memory_home = Workhearth(home=tmp_path / "home", workspace=tmp_path)
    memory = Memory(memory_home.config.paths, tmp_path, config)
    try:
        memory.save("The lighthouse lamp is cleaned on Mondays")
        wiki = memory_home.config.paths.project_wiki(tmp_path)
        big_wiki(wiki)
        text = memory.context(topic="lighthouse maintenance")
        block = wiki_block(text)
        assert block
        assert count_tokens(block) <= (600 + 1_400) // 4
        assert count_tokens(text) <= 600 + 1_400
        assert "The lighthouse lamp is cleaned on Mondays" in text
        assert check_markers(text, wiki) >= 1
    finally:
        memory.close()


def test_context_picks_wiki_text_by_topic(wh: Workhearth, wiki: Path) -> None:
    big_wiki(wiki, pages=5)
    write_page(wiki, "penguins", "# Penguins\n\nThe penguin colony counts are in data/birds.csv.\n")
    text = wh.memory.context(topic="penguin colony", budget=1_000)
    assert "The penguin colony counts are in data/birds.csv." in wiki_block(text)


# ------------------------------------------------------------------ writing
def test_saving_to_the_wiki_is_refused_in_words(wh: Workhearth, wiki: Path) -> None:
    with pytest.raises(UsageError, match="hearth wiki") as refused:
        wh.memory.save("A sentence for the wiki", layer="wiki")  # type: ignore[arg-type]
    assert "\n" not in str(refused.value)
    with pytest.raises(UsageError, match="hearth wiki"):
        wh.memory.list(layer="wiki")
    with pytest.raises(UsageError, match="hearth wiki"):
        wh.memory.folder("wiki")  # type: ignore[arg-type]
    assert not wiki.exists()
    assert wh.memory.search("sentence") == []


# ---------------------------------------------------------- whole program
@pytest.fixture
def hearth(tmp_path: Path) -> Hearth:
    return make_hearth(tmp_path / "one")


def test_hearth_memory_commands_see_the_wiki(hearth: Hearth) -> None:
    wh = Workhearth(home=hearth.home, workspace=hearth.workspace)
    wiki = wh.config.paths.project_wiki(hearth.workspace)
    page = write_page(wiki, "overview", "# Overview\n\nThe walrus module feeds the tides.\n")
    hits = hearth.json("memory", "search", "walrus tides", "--layer", "wiki")
    assert [(h["layer"], h["level"], h["path"]) for h in hits] == [
        ("wiki", "low", "wiki/overview.md")
    ]
    assert hits[0]["text"] == lines_of(page, hits[0]["line_start"], hits[0]["line_end"])
    assert [h["layer"] for h in hearth.json("memory", "search", "walrus")] == ["wiki"]
    shown = hearth.run("memory", "context", "--topic", "walrus", "--budget", "400")
    assert shown.code == 0, shown.err
    assert "The walrus module feeds the tides." in wiki_block(shown.out)
    refused = hearth.run("memory", "save", "A wiki sentence", "--layer", "wiki")
    assert refused.code != 0
    assert len(refused.err_lines) == 1 and "Traceback" not in refused.err
