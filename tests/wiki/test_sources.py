"""Which files are sources (git's view, or a walk), office files read through the skills'
extractors, unreadable ones named and never a crash, page names, and the stat cache
that keeps a no-change update on 2,000 files well under a second."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.wiki.conftest import WikiSetup, git_init
from tests.wiki.documents import make_mixed_folder
from workhearth.wiki import grouping
from workhearth.wiki.pages import PAGE_NAME, parse
from workhearth.wiki.sources import StatCache, list_files, scan


def test_a_walk_skips_hidden_folders_dependencies_and_binaries(setup: WikiSetup) -> None:
    setup.write("app/main.py", "print('hi')\n")
    setup.write(".cache/x.txt", "hidden\n")
    setup.write("node_modules/lib/index.js", "module.exports = 1\n")
    setup.write("app/__pycache__/main.cpython-312.pyc", b"\x00\x01bytecode")
    setup.write("venv/pyvenv.cfg", "home = /usr/bin\n")
    setup.write("venv/lib/site.py", "x = 1\n")
    setup.write("app/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    setup.write("app/.env", "SECRET=1\n")
    cache = StatCache()
    paths = list_files(setup.workspace, ".")
    found = scan(setup.workspace, paths, cache)
    assert [s.path for s in found] == ["app/main.py"]


def test_in_git_untracked_files_count_and_ignored_ones_do_not(setup: WikiSetup) -> None:
    git_init(setup.workspace)
    setup.write(".gitignore", "secret/\n")
    setup.write("kept.md", "# kept\n")
    setup.write("secret/key.txt", "nope\n")
    assert list_files(setup.workspace, ".") == [".gitignore", "kept.md"]


def test_hearths_home_inside_the_folder_is_never_a_source(setup: WikiSetup) -> None:
    setup.write("notes.md", "# n\n")
    setup.write("hh/projects/x/wiki/overview.md", "# o\n")
    assert list_files(setup.workspace, ".", [setup.workspace / "hh"]) == ["notes.md"]


def test_office_files_reach_the_model_through_the_skills_extractors(setup: WikiSetup) -> None:
    words = make_mixed_folder(setup.workspace)
    report = setup.hearth().wiki.build()
    assert report.unreadable == []
    assert sorted(setup.fake.pages) == ["reports", "top level"]
    asked = str(setup.fake.bodies)
    for word in words.values():
        assert word in asked
    # Labelled as the model must cite them: a PDF page, a slide, a Word block, a row.
    assert "reports/memo.pdf p.2| Second page: pangolin." in asked
    assert "reports/pitch.pptx p.2| Roadmap" in asked
    assert "reports/plan.docx ¶1| # Quarterly plan" in asked
    assert "reports/budget.xlsx Budget!3| zanzibar | 7" in asked
    page = parse("reports", (setup.hearth().wiki.folder / "reports.md").read_text())
    assert [s["path"] for s in page.meta["sources"]] == [
        "reports/budget.xlsx",
        "reports/memo.pdf",
        "reports/pitch.pptx",
        "reports/plan.docx",
    ]


def test_an_unreadable_source_is_named_not_a_crash(setup: WikiSetup) -> None:
    setup.write("data/broken.pdf", b"this is not a pdf at all")
    setup.write("data/broken.docx", b"PK\x03\x04 a torn zip")
    setup.write("data/ok.md", "# fine\n")
    setup.write("data/big.txt", "x" * 2_000_001)
    report = setup.hearth().wiki.build()
    why = dict(report.unreadable)
    assert why["data/broken.pdf"] == "not a PDF (no %PDF header)"
    assert why.get("data/broken.docx")
    assert why["data/big.txt"].startswith("larger than 2 MB")
    page = parse("data", (setup.hearth().wiki.folder / "data.md").read_text())
    assert {u["path"] for u in page.meta["unreadable"]} == set(why)
    # An unreadable file still has a content hash: fixing it rewrites the page.
    assert {s["path"] for s in page.meta["sources"]} >= {"data/broken.pdf", "data/broken.docx"}
    assert "unreadable: not a PDF" in page.body
    assert report.written == ["data", "overview"]


@pytest.mark.parametrize(
    ("folders", "expected"),
    [
        (["src/workhearth/memory", "."], {"src/workhearth/memory": "src-workhearth-memory"}),
        (["Docs/Q3 Reports"], {"Docs/Q3 Reports": "docs-q3-reports"}),
        (["."], {".": "top-level"}),
    ],
)
def test_page_names_follow_the_folder(folders: list[str], expected: dict[str, str]) -> None:
    names = grouping.page_names(folders)
    for folder, name in expected.items():
        assert names[folder] == name


def test_page_names_never_collide_and_never_take_overview() -> None:
    names = grouping.page_names(["a-b", "a/b", "overview", "search", "报告", "x" * 100])
    assert len(set(names.values())) == 6
    for name in names.values():
        assert PAGE_NAME.fullmatch(name), name
        assert name not in ("overview", "search")  # search: GET /v1/wiki/search is the search
    # Stable: a folder's name does not depend on the order it was seen in.
    assert grouping.page_names(["a/b", "a-b"]) == {k: names[k] for k in ("a/b", "a-b")}


def test_a_no_change_update_on_2000_files_is_fast_and_calls_nothing(setup: WikiSetup) -> None:
    git_init(setup.workspace)
    for n in range(2000):
        setup.write(f"pkg{n % 20:02d}/mod{n}.py", f"VALUE = {n}\n")
    wh = setup.hearth()
    wh.wiki.build()
    assert len(setup.fake.received) == 21
    # Why aged: files written this second are "racy" and re-read once; a real project's are old.
    old = time.time() - 3600
    for path in setup.workspace.glob("pkg*/*.py"):
        os.utime(path, (old, old))
    setup.hearth().wiki.update()  # learns the aged stats (hashes unchanged: no call)
    assert len(setup.fake.received) == 21

    started = time.perf_counter()
    report = setup.hearth().wiki.update()
    took = time.perf_counter() - started

    assert report.calls == 0 and len(setup.fake.received) == 21
    assert took < 1.0, f"a no-change update took {took:.2f} s"
    plan = setup.hearth().wiki.plan()
    assert plan.cache.hashed == 0


def test_state_lost_costs_a_rehash_and_one_overview_call(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    folder = code_repo.hearth().wiki.folder
    (folder / ".state.json").unlink()
    code_repo.fake.asked.clear()
    report = code_repo.hearth().wiki.update()
    assert code_repo.fake.asked == ["overview"] and report.calls == 1


def test_the_skill_scripts_the_wiki_loads_read_no_environment(setup: WikiSetup) -> None:
    """The wiki imports the office skills' extractors into hearth's own process, so they
    are library code there: none may read the environment (config is passed down)."""
    import sys

    from workhearth.skills.library import BUILTIN_DIR

    make_mixed_folder(setup.workspace)
    setup.hearth().wiki.build()
    loaded = [
        Path(m.__file__)
        for m in list(sys.modules.values())
        if getattr(m, "__file__", None) and str(m.__file__).startswith(str(BUILTIN_DIR))
    ]
    assert {p.parent.parent.name for p in loaded} == {"docx", "xlsx", "pptx", "pdf"}
    for path in loaded:
        text = path.read_text(encoding="utf-8")
        assert "os.environ" not in text and "os.getenv" not in text, path
