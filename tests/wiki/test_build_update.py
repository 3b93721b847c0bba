"""Build and update through the library against a scripted model server that counts calls:
pages with their sources and hashes, exactly the dependent pages rewritten, hand edits
kept, the call cap honoured, nothing touched without a model."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.wiki.conftest import WikiSetup
from workhearth.errors import ConfigError, NotFoundError, UsageError
from workhearth.wiki.pages import parse, sha256_text

CODE_PAGES = {"top-level", "docs", "src-demo", "tests"}


def page_file(setup: WikiSetup, name: str) -> Path:
    return setup.hearth(model=False).wiki.folder / f"{name}.md"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_build_writes_a_page_per_folder_with_sources_and_hashes(code_repo: WikiSetup) -> None:
    wh = code_repo.hearth()
    plan = wh.wiki.plan()
    assert plan.calls == len(CODE_PAGES) + 1
    assert {p.name: p.reason for p in plan.pages} == {
        **dict.fromkeys(CODE_PAGES, "new"),
        "overview": "overview",
    }

    report = wh.wiki.build()

    assert report.calls == 5 == len(code_repo.fake.received)
    assert sorted(code_repo.fake.pages) == ["docs", "src/demo", "tests", "top level"]
    assert code_repo.fake.overviews == 1
    assert set(report.written) == CODE_PAGES | {"overview"}
    page = parse("src-demo", page_file(code_repo, "src-demo").read_text())
    assert page.meta["title"] == "src/demo"
    assert page.meta["model"] == "openai:qwen-plus"
    ws = code_repo.workspace
    assert page.meta["sources"] == [
        {"path": p, "sha256": sha(ws / p)}
        for p in ("src/demo/__init__.py", "src/demo/cli.py", "src/demo/core.py")
    ]
    assert page.meta["body_sha256"] == sha256_text(page.body)
    assert page.body.startswith("# src/demo\n")
    assert f"- [src/demo/core.py]({(ws / 'src/demo/core.py').as_uri()})" in page.body
    # git decides what the project is: ignored files are no source, .gitignore is.
    top = parse("top-level", page_file(code_repo, "top-level").read_text())
    assert [s["path"] for s in top.meta["sources"]] == [".gitignore", "README.md"]
    overview = parse("overview", page_file(code_repo, "overview").read_text())
    assert overview.meta["links"] == sorted(CODE_PAGES)
    for name in CODE_PAGES:
        assert f"({name}.md)" in overview.body
    # The model saw numbered lines to cite.
    asked = str(code_repo.fake.bodies)
    assert "src/demo/core.py:2| " in asked and "return a + b" in asked


def test_a_second_build_makes_no_call(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    before = len(code_repo.fake.received)
    report = code_repo.hearth().wiki.build()
    assert report.calls == 0 and len(code_repo.fake.received) == before
    assert set(report.up_to_date) == CODE_PAGES | {"overview"}


def test_update_rewrites_exactly_the_pages_whose_sources_changed(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    untouched = page_file(code_repo, "docs").read_bytes()
    code_repo.fake.asked.clear()

    code_repo.write("src/demo/core.py", "def add(a, b):\n    return b + a\n")
    wh = code_repo.hearth()
    assert [(p.name, p.reason) for p in wh.wiki.plan().pages if p.reason != "up to date"] == [
        ("src-demo", "changed"),
        ("overview", "overview"),
    ]
    report = wh.wiki.update()

    assert code_repo.fake.asked == ["src/demo", "overview"]
    assert report.written == ["src-demo", "overview"] and report.calls == 2
    assert page_file(code_repo, "docs").read_bytes() == untouched
    recorded = parse("src-demo", page_file(code_repo, "src-demo").read_text()).sources
    assert recorded["src/demo/core.py"] == sha(code_repo.workspace / "src/demo/core.py")


def test_a_touched_but_unchanged_file_costs_no_call(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    code_repo.fake.asked.clear()
    core = code_repo.workspace / "src/demo/core.py"
    os.utime(core, (1, 1))
    report = code_repo.hearth().wiki.update()
    assert report.calls == 0 and code_repo.fake.asked == []


def test_sources_appearing_and_vanishing(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    code_repo.fake.asked.clear()
    code_repo.write("docs/faq.md", "# FAQ\n")
    (code_repo.workspace / "tests/test_core.py").unlink()
    code_repo.write("tools/gen.py", "print('gen')\n")
    plan = code_repo.hearth().wiki.plan()
    reasons = {p.name: p.reason for p in plan.pages if p.reason != "up to date"}
    assert reasons == {
        "docs": "source added",
        "tests": "source removed",
        "tools": "new",
        "overview": "overview",
    }
    assert plan.calls == 3  # docs, tools, overview: a page with no source left goes, no call

    report = code_repo.hearth().wiki.update()

    assert sorted(code_repo.fake.asked) == ["docs", "overview", "tools"]
    assert report.removed == ["tests"] and not page_file(code_repo, "tests").exists()
    overview = parse("overview", page_file(code_repo, "overview").read_text())
    assert overview.meta["links"] == ["docs", "src-demo", "tools", "top-level"]


def test_a_hand_edited_page_is_kept_and_the_update_goes_beside_it(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    path = page_file(code_repo, "docs")
    edited = path.read_text().replace("## Purpose", "## Purpose (my words)")
    path.write_text(edited)
    code_repo.fake.asked.clear()

    code_repo.write("docs/guide.md", "# Guide\n\nRun it twice.\n")
    wh = code_repo.hearth()
    report = wh.wiki.update()

    assert path.read_text() == edited
    assert report.kept_edits == ["docs"] and "docs" not in report.written
    update = parse("docs", (path.parent / "docs.update.md").read_text())
    assert update.sources["docs/guide.md"] == sha(code_repo.workspace / "docs/guide.md")
    info = {p.name: p for p in wh.wiki.pages()}["docs"]
    assert info.edited and info.update_waiting and not info.stale
    # The same update is not asked for again, and the page stays the user's.
    code_repo.fake.asked.clear()
    again = code_repo.hearth().wiki.update()
    assert code_repo.fake.asked == [] and again.calls == 0
    assert path.read_text() == edited


def test_without_a_model_it_says_so_and_changes_nothing(code_repo: WikiSetup) -> None:
    wh = code_repo.hearth(model=False)
    with pytest.raises(ConfigError, match="no model configured"):
        wh.wiki.build()
    assert not wh.wiki.folder.exists()
    assert code_repo.fake.received == []


def test_a_missing_key_is_refused_before_anything_changes(code_repo: WikiSetup) -> None:
    from workhearth.config import load_config

    env = {
        "HEARTH_HOME": str(code_repo.home),
        "HEARTH_MODEL": "openai:qwen-plus",
        "OPENAI_BASE_URL": "https://models.example.com/v1",
    }
    from workhearth.app import Workhearth

    wh = Workhearth(config=load_config(env), workspace=code_repo.workspace)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        wh.wiki.build()
    assert not wh.wiki.folder.exists()


def test_the_call_cap_leaves_pages_for_the_next_run(code_repo: WikiSetup) -> None:
    report = code_repo.hearth().wiki.build(max_calls=2)
    assert report.calls == 2 == len(code_repo.fake.received)
    assert len(report.written) == 2 and len(report.left) == 3 and "overview" in report.left
    rest = code_repo.hearth().wiki.build(max_calls=10)
    assert rest.calls == 3
    assert set(rest.written) == set(report.left)
    assert set(code_repo.fake.pages) == {"docs", "src/demo", "tests", "top level"}
    assert len(code_repo.fake.pages) == 4  # no page asked twice


def test_the_config_cap_is_the_default(code_repo: WikiSetup) -> None:
    (code_repo.home / "config.toml").write_text(
        "[models]\nmax_retries = 0\n[wiki]\nmax_calls = 1\n"
    )
    report = code_repo.hearth().wiki.build()
    assert report.calls == 1 and len(report.left) == 4


def test_update_before_any_build_is_refused(code_repo: WikiSetup) -> None:
    with pytest.raises(UsageError, match="no wiki"):
        code_repo.hearth().wiki.update()
    assert code_repo.fake.received == []


def test_a_folder_outside_the_authorized_ones_is_refused(setup: WikiSetup, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    setup.write("a.md", "# A\n")
    with pytest.raises(UsageError, match="outside the folders hearth may read"):
        setup.hearth().wiki.build(outside)
    # Through a link from inside the workspace, too: paths are resolved before the check.
    (setup.workspace / "link").symlink_to(outside)
    with pytest.raises(UsageError, match="outside the folders hearth may read"):
        setup.hearth().wiki.build("link")
    assert setup.fake.received == []


def test_a_subfolder_limits_the_run_to_its_pages(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    code_repo.write("docs/guide.md", "# Guide v2\n")
    code_repo.write("src/demo/core.py", "def add(a, b):\n    return 0\n")
    code_repo.fake.asked.clear()
    report = code_repo.hearth().wiki.update("docs")
    assert code_repo.fake.asked == ["docs", "overview"]
    assert report.written == ["docs", "overview"]
    # The rest stays as it was: its page is now stale, and the next full update takes it.
    info = {p.name: p for p in code_repo.hearth().wiki.pages()}
    assert info["src-demo"].stale and not info["docs"].stale


def test_read_a_page_and_an_unknown_one(code_repo: WikiSetup) -> None:
    wh = code_repo.hearth()
    wh.wiki.build()
    page = wh.wiki.read("src-demo")
    assert page.title == "src/demo" and page.text.startswith("# src/demo")
    assert next(p.name for p in wh.wiki.pages()) == "overview"
    with pytest.raises(NotFoundError):
        wh.wiki.read("nope")
    with pytest.raises(NotFoundError):
        wh.wiki.read("../../config")


def test_a_big_folder_fits_one_call_and_every_source_is_listed(setup: WikiSetup) -> None:
    for n in range(150):
        setup.write(f"data/file{n:03d}.txt", f"line of file {n}\n" * 200)
    setup.hearth().wiki.build()
    (page_call,) = [b for b in setup.fake.bodies if "Folder: data" in str(b)]
    asked = str(page_call)
    assert len(asked) < 60_000  # ~24,000 characters of excerpts, plus the list
    assert all(f"data/file{n:03d}.txt (sha256 " in asked for n in range(150))
    assert "data/file000.txt:1| line of file 0" in asked
    assert "line of file 149" not in asked  # listed, not excerpted
    page = parse("data", page_file(setup, "data").read_text())
    assert len(page.meta["sources"]) == 150


def test_an_edited_page_whose_folder_vanished_stays(code_repo: WikiSetup) -> None:
    code_repo.hearth().wiki.build()
    tests_page = page_file(code_repo, "tests")
    tests_page.write_text(tests_page.read_text() + "\nkeep this\n")
    (code_repo.workspace / "tests/test_core.py").unlink()
    report = code_repo.hearth().wiki.update()
    assert report.removed == [] and tests_page.read_text().endswith("keep this\n")
    info = {p.name: p for p in code_repo.hearth().wiki.pages()}
    assert info["tests"].edited and info["tests"].stale
    code_repo.fake.asked.clear()
    assert code_repo.hearth().wiki.update().calls == 0


def test_another_authorized_folder_gets_its_own_wiki(setup: WikiSetup, tmp_path: Path) -> None:
    from workhearth.agent.workspace import Workspaces

    other = tmp_path / "papers"
    (other / "drafts").mkdir(parents=True)
    (other / "drafts" / "intro.md").write_text("# Intro\n")
    wh = setup.hearth()
    Workspaces(wh.paths).add(other)
    report = wh.wiki.build(other)
    theirs = wh.paths.project_wiki(other)
    assert Path(report.folder) == theirs and (theirs / "drafts.md").is_file()
    assert not wh.wiki.folder.exists()  # the workspace's own wiki is untouched
    assert setup.fake.pages == ["drafts"]


def test_a_model_failure_keeps_the_pages_already_written(code_repo: WikiSetup) -> None:
    from tests.fake_providers import FakeProvider, Reply, json_reply, openai_sse, openai_text
    from tests.wiki.model import model_env
    from workhearth.app import Workhearth
    from workhearth.config import load_config
    from workhearth.errors import ModelError

    page = Reply(pieces=openai_sse(openai_text(["A page."])))
    failing = FakeProvider([page, json_reply(400, {"error": {"message": "bad request"}})])
    with failing:
        env = {"HEARTH_HOME": str(code_repo.home), **model_env(failing)}
        wh = Workhearth(config=load_config(env), workspace=code_repo.workspace)
        with pytest.raises(ModelError):
            wh.wiki.build()
    pages = sorted(p.stem for p in wh.wiki.folder.glob("*.md"))
    assert pages == ["top-level"]  # the first page, whole; nothing half written
    code_repo.fake.asked.clear()
    code_repo.hearth().wiki.build()
    assert sorted(code_repo.fake.asked) == ["docs", "overview", "src/demo", "tests"]
