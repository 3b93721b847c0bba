"""Issue 24 through the real ``hearth wiki`` in a temporary HEARTH_HOME, against a scripted
OpenAI-compatible server that counts the calls (tests/wiki/model.py): a code repository
and a folder of mixed documents built, one change updated with exactly the calls it
needs, a hand edit kept, a build killed midway resumed without asking again for finished
pages, no model, an unreadable source, the call cap, and bad input in one line."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, Result
from tests.e2e.test_agent_run import write_config
from tests.wiki.conftest import git_init
from tests.wiki.documents import make_mixed_folder
from tests.wiki.model import WikiModel, model_env
from workhearth.wiki.pages import parse, sha256_text


@pytest.fixture
def fake(hearth: Hearth) -> Iterator[WikiModel]:
    write_config(hearth)
    with WikiModel() as server:
        yield server


def wiki(hearth: Hearth, fake: WikiModel | None, *args: str) -> Result:
    return hearth.run("wiki", *args, env=model_env(fake) if fake else None)


def wiki_folder(hearth: Hearth) -> Path:
    (folder,) = hearth.home.glob("projects/*/wiki")
    return folder


def code_repo(root: Path) -> None:
    git_init(root)
    files = {
        "README.md": "# Shop\n\nSells kettles.\n",
        "shop/cart.py": "class Cart:\n    def total(self):\n        return 0\n",
        "shop/pay.py": "def pay(cart):\n    return cart.total()\n",
        "tests/test_cart.py": "def test_total():\n    assert True\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_build_on_a_repository_then_show(hearth: Hearth, fake: WikiModel) -> None:
    code_repo(hearth.workspace)
    result = wiki(hearth, fake, "build")
    assert result.code == 0, result.err
    assert result.err_lines[0] == "4 model calls (cap 200)"
    assert any(line.endswith("wrote shop") for line in result.err_lines)
    assert "4 pages written, 0 up to date, 4 model calls" in result.out
    assert len(fake.received) == 4

    listing = hearth.json("wiki", "show")
    assert [p["name"] for p in listing] == ["overview", "shop", "tests", "top-level"]
    shop = next(p for p in listing if p["name"] == "shop")
    assert [s["path"] for s in shop["sources"]] == ["shop/cart.py", "shop/pay.py"]
    assert not (shop["edited"] or shop["stale"] or shop["update_waiting"])
    page = hearth.json("wiki", "show", "shop")
    assert page["text"].startswith("# shop\n") and "## Sources" in page["text"]
    shown = hearth.run("wiki", "show", "shop")
    assert shown.code == 0 and "written " in shown.out and "# shop" in shown.out
    table = hearth.run("wiki", "show")
    assert table.code == 0 and table.out.splitlines()[1].startswith("overview")


def test_build_on_a_folder_of_mixed_documents(hearth: Hearth, fake: WikiModel) -> None:
    words = make_mixed_folder(hearth.workspace)
    report = hearth.json("wiki", "build", env=model_env(fake))
    assert report["unreadable"] == [] and report["calls"] == 3
    assert sorted(report["written"]) == ["overview", "reports", "top-level"]
    asked = str(fake.bodies)
    assert all(word in asked for word in words.values())
    page = parse("reports", (wiki_folder(hearth) / "reports.md").read_text())
    assert len(page.meta["sources"]) == 4
    assert all(len(s["sha256"]) == 64 for s in page.meta["sources"])


def test_one_change_updates_exactly_its_page_and_the_overview(
    hearth: Hearth, fake: WikiModel
) -> None:
    code_repo(hearth.workspace)
    assert wiki(hearth, fake, "build").code == 0
    fake.asked.clear()
    (hearth.workspace / "shop/pay.py").write_text("def pay(cart):\n    return 1\n")

    report = hearth.json("wiki", "update", env=model_env(fake))

    assert fake.asked == ["shop", "overview"]
    assert report["written"] == ["shop", "overview"] and report["calls"] == 2
    assert sorted(report["up_to_date"]) == ["tests", "top-level"]
    again = wiki(hearth, fake, "update")
    assert again.code == 0 and again.err_lines[0] == "0 model calls (cap 200)"
    assert fake.asked == ["shop", "overview"]


def test_a_hand_edit_is_kept_and_the_update_waits_beside_it(
    hearth: Hearth, fake: WikiModel
) -> None:
    code_repo(hearth.workspace)
    assert wiki(hearth, fake, "build").code == 0
    page = wiki_folder(hearth) / "shop.md"
    mine = page.read_text() + "\nMy own note: cart totals are in cents.\n"
    page.write_text(mine)
    (hearth.workspace / "shop/cart.py").write_text("class Cart:\n    pass\n")

    result = wiki(hearth, fake, "update")

    assert result.code == 0, result.err
    kept = "kept your edit of shop; the update is in shop.update.md"
    assert kept in result.out and any(kept in line for line in result.err_lines)
    assert page.read_text() == mine
    update = parse("shop", (wiki_folder(hearth) / "shop.update.md").read_text())
    assert "shop/cart.py" in update.sources
    (shop,) = [p for p in hearth.json("wiki", "show") if p["name"] == "shop"]
    assert shop["edited"] and shop["update_waiting"]
    assert "edited, update waiting" in hearth.run("wiki", "show").out


def test_a_killed_build_loses_no_page_and_is_not_asked_again(hearth: Hearth) -> None:
    write_config(hearth)
    for n in range(6):
        folder = hearth.workspace / f"part{n}"
        folder.mkdir()
        (folder / "notes.md").write_text(f"# Part {n}\n\nDetails of part {n}.\n")
    with WikiModel(delay=0.5) as slow:
        proc = subprocess.Popen(
            [*HEARTH_CMD, "wiki", "build"],
            cwd=hearth.workspace,
            env={**hearth.env, **model_env(slow)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                done = list(hearth.home.glob("projects/*/wiki/part*.md"))
                if len(done) >= 2:
                    break
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(10)
    folder = wiki_folder(hearth)
    finished = sorted(p.stem for p in folder.glob("*.md"))
    assert 2 <= len(finished) < 6, finished
    for name in finished:
        page = parse(name, (folder / f"{name}.md").read_text())
        assert page.meta["body_sha256"] == sha256_text(page.body), f"{name} is half written"

    with WikiModel() as fake:
        result = wiki(hearth, fake, "build")
        assert result.code == 0, result.err
        asked = [f"part{n}" for n in range(6) if f"part{n}" not in finished]
        assert sorted(fake.pages) == asked  # no call for a finished page
        assert fake.overviews == 1
    assert sorted(p.stem for p in folder.glob("part*.md")) == [f"part{n}" for n in range(6)]
    assert not list(folder.glob(".*.tmp"))


def test_without_a_model_it_says_so_and_writes_nothing(hearth: Hearth) -> None:
    write_config(hearth)
    code_repo(hearth.workspace)
    result = hearth.run("wiki", "build")
    assert result.code != 0
    assert len(result.err_lines) == 1 and "no model configured" in result.err
    assert "Traceback" not in result.err
    assert not list(hearth.home.glob("projects/*/wiki"))


def test_an_unreadable_source_is_named(hearth: Hearth, fake: WikiModel) -> None:
    (hearth.workspace / "papers").mkdir()
    (hearth.workspace / "papers/draft.pdf").write_bytes(b"not a pdf, just bytes")
    (hearth.workspace / "papers/abstract.md").write_text("# Abstract\n")
    result = wiki(hearth, fake, "build")
    assert result.code == 0, result.err
    assert "unreadable: papers/draft.pdf: not a PDF (no %PDF header)" in result.out
    (papers,) = [p for p in hearth.json("wiki", "show") if p["name"] == "papers"]
    assert papers["unreadable"] == [
        {"path": "papers/draft.pdf", "reason": "not a PDF (no %PDF header)"}
    ]


def test_the_call_cap_is_honoured(hearth: Hearth, fake: WikiModel) -> None:
    code_repo(hearth.workspace)
    result = wiki(hearth, fake, "build", "--max-calls", "2")
    assert result.code == 0, result.err
    assert result.err_lines[0] == (
        "4 model calls needed, 2 allowed (cap): the rest are left for the next run"
    )
    assert len(fake.received) == 2
    assert "left for the next run (call cap reached): " in result.out
    report = hearth.json("wiki", "build", "--max-calls", "5", env=model_env(fake))
    assert report["calls"] == 2 and report["left"] == []
    assert len(fake.received) == 4


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("wiki", "show", "nope"), "no wiki page 'nope'"),
        (("wiki", "show", "../secrets"), "no wiki page by that name"),
        (("wiki", "build", "/"), "outside the folders hearth may read"),
        (("wiki", "build", "missing-folder"), "is not an existing folder"),
        (("wiki", "build", "--max-calls", "0"), "--max-calls must be at least 1"),
        (("wiki", "update"), "no wiki"),
        (("wiki", "search", " "), "the search query is empty"),
    ],
)
def test_bad_input_is_one_clear_line(
    hearth: Hearth, fake: WikiModel, args: tuple[str, ...], words: str
) -> None:
    result = hearth.run(*args, env=model_env(fake))
    assert result.code != 0
    assert len(result.err_lines) == 1, result.err
    assert words in result.err and "Traceback" not in result.err
    assert fake.received == []


def test_search_finds_a_page(hearth: Hearth, fake: WikiModel) -> None:
    code_repo(hearth.workspace)
    assert wiki(hearth, fake, "build").code == 0
    hits = hearth.json("wiki", "search", "summarized")
    assert hits, "the wiki's pages were not found by search"
    assert {h["layer"] for h in hits} == {"wiki"}
    assert all(h["path"].startswith("wiki/") for h in hits)
    shown = hearth.run("wiki", "search", "summarized")
    assert shown.code == 0 and "wiki/" in shown.out
