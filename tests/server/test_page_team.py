"""In the browser (issue #23): a team task started from the page asks its question, shows
its plan, takes a nudge and an approval, fills its board as the specialists work (each
one's messages on click) and ends with the report; the Chinese page words it all.

``hearth serve`` runs for real; its model is ``tests/fake_providers.RoutedProvider``,
which answers the lead and each step's specialist by who asks.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.e2e.test_team import LEAD, plan_call, step, step_marker
from tests.fake_providers import Reply, RoutedProvider
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    Workbench,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
)

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")
API = "openai"
QUESTIONS = {
    "questions": [
        {"id": "audience", "text": "Who reads the deck?", "choices": ["board", "team"], "default": "board"},
        {"id": "slides", "text": "How many slides?", "default": "5"},
    ]
}  # fmt: skip


def slow(reply: Reply, seconds: float) -> Reply:
    return dataclasses.replace(reply, delay=seconds)


@pytest.fixture
def routed_bench(
    tmp_path: Path,
) -> Iterator[Callable[[list[Any]], tuple[Workbench, RoutedProvider]]]:
    """``routed_bench(routes)``: ``hearth serve`` whose model answers by who asks."""
    started: list[tuple[RoutedProvider, Workbench]] = []

    def make(routes: list[Any]) -> tuple[Workbench, RoutedProvider]:
        fake = RoutedProvider(routes)
        fake.__enter__()
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": "openai:qwen-plus"}  # fmt: skip
        served = start_serve(tmp_path, env)
        started.append((fake, served))
        return served, fake

    yield make
    for fake, served in reversed(started):
        stop_serve(served)
        fake.__exit__(None, None, None)


def start_team_task(page: Any, bench: Workbench, words: str, mode: str = "agent") -> str:
    page.goto(f"{bench.base}/#/tasks")
    page.locator(".btn-team-new").click()
    form = page.locator(".team-form")
    form.locator("textarea").fill(words)
    form.locator('select[name="mode"]').select_option(mode)
    form.locator("button[type=submit]").click()
    sync_api.expect(page).to_have_url(re.compile(r"#/tasks/.+"), timeout=15000)
    return page.url.rsplit("/", 1)[-1]


def test_a_team_task_from_question_to_report_in_the_page(
    routed_bench: Callable[[list[Any]], tuple[Workbench, RoutedProvider]],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    v1 = [
        step("outline", "Outline the deck", checks=["seven slides"]),
        step("figures", "Gather the figures", "analyst"),
    ]
    v2 = [*v1, step("budget", "Add a budget sheet", "analyst", depends_on=["figures"])]
    bench, fake = routed_bench(
        [
            (LEAD, [calls_reply(API, ("q1", "ask_questions", QUESTIONS)), plan_call("p1", v1), plan_call("p2", v2)]),
            ("Review the step 'Outline the deck'", [text_reply(API, "PASS\n\nSeven slides, each with a title.")]),
            (step_marker("Outline the deck"), [slow(text_reply(API, "Outline of **7 slides** in `deck.md`."), 5)]),
            (step_marker("Gather the figures"), [text_reply(API, "Figures gathered: sales grew 12 %.")]),
            (step_marker("Add a budget sheet"), [slow(text_reply(API, "Budget added to the deck."), 3)]),
        ]
    )  # fmt: skip
    page = open_page(bench, viewport={"width": 1280, "height": 900})
    sid = start_team_task(page, bench, "Make a deck for the quarter")
    panel = page.locator("section.team")

    # The lead's questions: the choice as radio buttons (the default chosen), the text as an input.
    expect(panel.locator(".team-question-form")).to_be_visible(timeout=30000)
    expect(panel.locator(".team-phase")).to_have_text("questions")
    board_radio = panel.get_by_role("radio", name=re.compile("^board"))
    expect(board_radio).to_be_checked()
    panel.get_by_role("radio", name="team").check()
    slides = panel.get_by_label("How many slides?")
    expect(slides).to_have_value("5")
    slides.fill("7")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "workbench-team-questions.png"))
    panel.get_by_role("button", name="Submit answers").click()

    # The plan, version 1, with the answers in it; a nudge in words, then version 2.
    expect(panel.locator(".team-version")).to_have_text("version 1", timeout=30000)
    plan = panel.locator(".team-plan")
    expect(plan).to_contain_text("Who reads the deck? — team")
    expect(plan).to_contain_text("How many slides? — 7")
    expect(plan.locator("h3").first).to_have_text("1. Outline the deck")  # the {#id} is not shown
    expect(panel.locator(".team-answers")).to_contain_text("team")
    panel.get_by_role("button", name="Change it").click()
    panel.get_by_label("What should change?").fill("add a budget sheet")
    panel.get_by_role("button", name="Send to the lead").click()
    expect(panel.locator(".team-version")).to_have_text("version 2", timeout=30000)
    expect(plan).to_contain_text("Add a budget sheet")
    expect(panel.locator(".team-say")).to_contain_text("waits for your approval")
    page.screenshot(path=str(ARTIFACTS / "workbench-team-plan.png"), full_page=True)
    lead_asked = [b for b in fake.bodies if LEAD in str(b)]
    assert "add a budget sheet" in str(lead_asked[-1]["messages"])
    assert "How many slides? — 7" in str(lead_asked[1]["messages"])

    # Approved: the board fills in as the specialists work, two of them at once.
    panel.get_by_role("button", name="Approve plan").click()
    board = panel.locator(".team-board")
    expect(board.locator("tbody tr")).to_have_count(3, timeout=30000)
    figures = board.locator('tr[data-step="figures"]')
    expect(figures.locator(".team-status")).to_have_text("done", timeout=30000)
    outline = board.locator('tr[data-step="outline"]')
    expect(outline.locator(".team-status")).to_have_text("running")
    expect(board.locator('tr[data-step="budget"] .team-status')).to_have_text(
        "running", timeout=10000
    )
    expect(outline.locator(".team-role")).to_have_text("writer")
    expect(board.locator('tr[data-step="budget"] .team-after')).to_have_text("after figures")
    expect(outline.locator(".team-elapsed")).to_have_text(re.compile(r"^\d+ s$"))
    expect(panel.locator(".team-plan-fold")).to_be_visible()  # the plan folds once approved

    # A running specialist's messages, polled: its step prompt is there already.
    outline.click()
    detail = panel.locator(".team-detail")
    expect(detail.locator("h3")).to_have_text("writer · Outline the deck")
    expect(detail.locator(".team-thread")).to_contain_text(
        "Your step of the team's plan: Outline the deck"
    )
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "workbench-team.png"))  # docs/workbench-team.png
    # ... and its answer when it comes, without a reload.
    expect(detail.locator(".team-thread")).to_contain_text("Outline of 7 slides", timeout=30000)
    expect(outline.locator(".team-status")).to_have_text("done")

    # The report, worded by the page; every step done; the polling ends with the task.
    report = panel.locator(".team-report-text")
    expect(report).to_contain_text("Report: A short deck", timeout=30000)
    expect(report).to_contain_text("Add a budget sheet (analyst): done")
    expect(panel.locator(".team-phase")).to_have_text("done")
    expect(board.locator(".team-status-done")).to_have_count(3)
    expect(page.locator(".task-status .badge")).to_have_text("done", timeout=15000)
    figures.click()
    expect(detail.locator(".team-thread")).to_contain_text("Figures gathered: sales grew 12 %.")
    # The reviewer's own messages beside the specialist's (its checks, its verdict).
    outline.click()
    expect(detail.locator(".team-review-box")).to_contain_text("The reviewer's messages (round 1)")
    expect(detail.locator(".team-review-thread")).to_contain_text("Acceptance checks")
    expect(detail.locator(".team-review-thread .msg-user .msg-role")).to_have_text("The lead")
    expect(detail.locator(".team-review-thread .msg-assistant .msg-role")).to_have_text("reviewer")
    expect(detail.locator(".team-review-thread")).to_contain_text(
        "Seven slides, each with a title."
    )
    expect(detail.locator(".team-review-PASS")).to_have_text("review passed")
    detail.screenshot(path=str(ARTIFACTS / "workbench-team-review.png"))
    team = bench.api.get(f"/v1/tasks/{sid}/team").json()
    assert [(s["id"], s["status"]) for s in team["steps"]] == [
        ("outline", "done"),
        ("figures", "done"),
        ("budget", "done"),
    ]
    assert fake.unscripted == 0


def test_the_chinese_page_words_the_team_task(
    routed_bench: Callable[[list[Any]], tuple[Workbench, RoutedProvider]],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    questions = {"questions": [{"id": "tone", "text": "语气？", "choices": ["正式", "轻松"], "default": "正式"}]}  # fmt: skip
    bench, _fake = routed_bench(
        [
            (LEAD, [calls_reply(API, ("q1", "ask_questions", questions)), plan_call("p1", [step("draft", "起草通知")], goal="一份通知")]),
            (step_marker("起草通知"), [text_reply(API, "已起草。")]),
        ]
    )  # fmt: skip
    page = open_page(bench, locale="zh-CN")
    page.goto(f"{bench.base}/#/tasks")
    expect(page.locator(".btn-team-new")).to_have_text("团队任务")
    sid = start_team_task(page, bench, "写一份通知")
    panel = page.locator("section.team")
    expect(panel.locator(".team-head h2")).to_have_text("团队")
    expect(panel.get_by_role("button", name="提交回答")).to_be_visible(timeout=30000)
    expect(panel.locator(".team-say")).to_have_text("负责人在制定计划前有几个问题。")
    expect(panel.get_by_role("radio", name=re.compile("^正式"))).to_be_checked()
    expect(panel.locator(".team-choice .chip")).to_have_text("默认")
    panel.get_by_role("button", name="提交回答").click()

    expect(panel.locator(".team-version")).to_have_text("第 1 版", timeout=30000)
    plan = panel.locator(".team-plan")
    expect(plan.locator("h1")).to_have_text("计划：一份通知")
    expect(plan).to_contain_text("负责角色：撰稿人")
    expect(plan).to_contain_text("依赖：无")
    expect(panel.get_by_role("button", name="修改计划")).to_be_visible()
    panel.get_by_role("button", name="批准计划").click()

    board = panel.locator(".team-board")
    expect(board.locator("th").first).to_have_text("角色", timeout=30000)
    expect(board.locator(".team-status")).to_have_text("完成", timeout=30000)
    expect(board.locator(".team-role")).to_have_text("撰稿人")
    report = panel.locator(".team-report-text")
    expect(report).to_contain_text("报告：一份通知", timeout=30000)
    expect(report).to_contain_text("起草通知（撰稿人）：完成")
    expect(panel.locator(".team-phase")).to_have_text("完成")
    expect(panel.locator(".team-say")).to_have_text("团队已完成工作。")
    assert bench.api.get(f"/v1/tasks/{sid}/team").json()["phase"] == "done"


def test_a_conflict_is_shown_in_words_with_the_versions_kept(
    routed_bench: Callable[[list[Any]], tuple[Workbench, RoutedProvider]],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    steps = [
        step("one", "Edit one", files=["shared.txt"]),
        step("two", "Edit two", files=["shared.txt"]),
    ]

    def editor(word: str, pause: float) -> list[Any]:
        command = f"sleep {pause} && sed -i 's/draft/{word}/' shared.txt"
        return [calls_reply(API, (f"c-{word}", "shell", {"command": command})), text_reply(API, "Edited.")]  # fmt: skip

    bench, _fake = routed_bench(
        [
            (LEAD, [plan_call("p1", steps)]),
            (step_marker("Edit one"), editor("first", 0.2)),
            (step_marker("Edit two"), editor("second", 1.5)),
        ]
    )
    (bench.workspace / "shared.txt").write_text("title: draft\nbody\n")
    page = open_page(bench)
    start_team_task(page, bench, "Edit the title twice", mode="quest")  # nobody is asked
    panel = page.locator("section.team")
    expect(panel.locator('tr[data-step="two"] .team-status')).to_have_text(
        "conflict", timeout=60000
    )
    expect(panel.locator('tr[data-step="one"] .team-status')).to_have_text("done")
    conflict = panel.locator('.team-conflict[data-path="shared.txt"]')
    expect(conflict).to_contain_text(
        "shared.txt: “Edit two” changed the same lines as another step."
    )
    expect(conflict).to_contain_text("The file in the workspace was left as it is.")
    expect(conflict.locator("code")).to_have_text("shared.two.conflict.txt")
    expect(panel.locator(".team-report-text")).to_contain_text(
        "conflict: shared.txt (the same lines changed)", timeout=30000
    )
    expect(panel.locator(".team-phase")).to_have_text("failed")
    expect(panel.locator(".team-say")).to_contain_text("some files need your choice")
    assert (bench.workspace / "shared.txt").read_text() == "title: first\nbody\n"
    assert (bench.workspace / "shared.two.conflict.txt").read_text() == "title: second\nbody\n"
