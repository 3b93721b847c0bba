"""Issue #18 items 7 and 10 through the real ``hearth memory``: ``--budget N`` is a
ceiling on the whole injected text (headings and markers included, the layers share
it, counted offline), and an empty search query is refused."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Hearth
from tests.e2e.test_cli_memory import library, one_line_error
from tests.memory.test_context_evict import blocks
from workhearth.models.tokens import count_tokens

BUDGETS = [1, 10, 30, 100, 400, 2000]
LEVELS = ("critical", "normal", "low")
HAND_NOTES = """# 部署笔记

## Staging
部署之前先跑全部测试，再通知值班的同事。
The staging database is refreshed from production every Monday night.

## 发布
发布窗口是周五下午三点到五点。
Release notes go to the #releases channel, written in plain English.
"""


def _seed(hearth: Hearth) -> None:
    """User and project layers, every level, Chinese and English, hand notes with headings."""
    wh = library(hearth)
    for i in range(8):
        level = LEVELS[i % 3]
        wh.memory.save(
            f"the user prefers answer style {i}: short and direct", layer="user", level=level
        )
        wh.memory.save(
            f"用户偏好 {i}：回答要简短，先给结论", layer="user", level=LEVELS[(i + 1) % 3]
        )
    for i in range(30):
        wh.memory.save(
            f"deploy rule {i}: run the smoke tests on staging before release {i}",
            level=LEVELS[i % 3],
        )
        wh.memory.save(
            f"项目事实 {i}：部署到预发布环境之前，先备份数据库 {i}", level=LEVELS[(i + 2) % 3]
        )
    (wh.memory.folder("project") / "notes.md").write_text(HAND_NOTES, encoding="utf-8")
    (wh.memory.folder("user") / "about-me.md").write_text(
        "# About me\n\nI write Go and Python.\n我在上海工作。\n", encoding="utf-8"
    )
    wh.memory.index()
    wh.memory.close()


@pytest.fixture
def seeded(hearth: Hearth) -> Hearth:
    _seed(hearth)
    return hearth


def test_the_whole_memory_is_well_over_the_largest_budget(seeded: Hearth) -> None:
    full = seeded.run("memory", "context")
    assert full.code == 0, full.err
    assert count_tokens(full.out) > 1.5 * max(BUDGETS)
    assert "## About the user" in full.out and "## This project" in full.out


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("topic", [None, "部署 staging"])
def test_budget_caps_the_printed_context(seeded: Hearth, budget: int, topic: str | None) -> None:
    args = ["memory", "context", "--budget", str(budget)]
    args += ["--topic", topic] if topic else []
    printed = seeded.run(*args)
    assert printed.code == 0 and "Traceback" not in printed.err, printed.err
    used = count_tokens(printed.out)
    assert used <= budget, f"--budget {budget} printed {used} tokens"
    if budget >= 100:
        assert used >= 0.6 * budget, f"--budget {budget} printed only {used} tokens"
    as_json = seeded.json(*args)
    assert as_json["context"] == printed.out.rstrip("\n")
    assert as_json["tokens"] == used


@pytest.mark.parametrize("budget", BUDGETS)
def test_the_library_context_keeps_the_same_ceiling(seeded: Hearth, budget: int) -> None:
    text = library(seeded).memory.context(budget=budget)
    assert count_tokens(text) <= budget
    assert budget < 100 or count_tokens(text) >= 0.6 * budget


def test_a_shared_budget_goes_to_critical_entries_first(seeded: Hearth) -> None:
    full = blocks(seeded.json("memory", "context")["context"])
    largest_critical = max(c for b in full.values() for lv, c in b.costs if lv == "critical")
    text = seeded.json("memory", "context", "--budget", "400")["context"]
    parts = blocks(text)
    assert set(parts) == {"user", "project"}  # the layers share the budget
    for block in parts.values():
        ranks = [LEVELS.index(level) for level, _ in block.costs]
        assert ranks == sorted(ranks)
    critical = sum(
        count_tokens(b.title) + sum(c for lv, c in b.costs if lv == "critical")
        for b in parts.values()
    )
    # Critical entries took the budget until the next one no longer fitted; only
    # then may a smaller, less important entry fill what is left.
    assert critical > 400 - largest_critical


@pytest.mark.parametrize("query", ["", "   ", "\t \t"])
def test_an_empty_search_query_is_an_error(hearth: Hearth, query: str) -> None:
    library(hearth).memory.save("a fact about otters")
    for extra in ([], ["--json"]):
        line = one_line_error(hearth.run("memory", "search", query, *extra))
        assert line.startswith("hearth: ") and "empty" in line, line
