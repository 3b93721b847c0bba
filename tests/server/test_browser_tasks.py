"""Tasks in the browser: a chat turn streamed from a scripted OpenAI-compatible server
with a tool call approved in the page, a page closed mid-task and reopened (the stream
re-attaches), and a skill example form filled and started.

The model is ``tests/fake_providers.py`` on loopback; ``hearth serve`` runs for real.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.fake_providers import FakeProvider, Reply
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    Workbench,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
    wait_until,
)

MODEL = "openai:qwen-plus"
pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")


@pytest.fixture
def bench_with(tmp_path: Path) -> Iterator[Callable[[list[Reply]], Workbench]]:
    """``bench_with(replies)``: ``hearth serve`` whose model plays ``replies``."""
    started: list[tuple[FakeProvider, Workbench]] = []

    def make(replies: list[Reply]) -> Workbench:
        fake = FakeProvider(replies).__enter__()
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}
        served = start_serve(tmp_path, env)
        served.fake = fake  # type: ignore[attr-defined]
        started.append((fake, served))
        return served

    yield make
    for fake, served in reversed(started):
        stop_serve(served)
        fake.__exit__(None, None, None)


def start_in_chat(page: Any, bench: Workbench, task: str, mode: str | None = "agent") -> None:
    """Start ``task`` from the chat page's form (in ``mode``; ``None``: the form's default)."""
    page.goto(f"{bench.base}/#/chat")
    page.get_by_label("What should the agent do?").fill(task)
    if mode is not None:
        page.locator('.chat-form select[name="mode"]').select_option(mode)
    page.get_by_role("button", name="Start task").click()


def write_call(call_id: str) -> Reply:
    return calls_reply("openai", (call_id, "write_file", {"path": "note.txt", "content": "hi"}))


def test_a_chat_turn_streams_and_a_tool_call_is_approved_in_the_page(
    bench_with: Callable[[list[Reply]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with(
        [write_call("call_w1"), text_reply("openai", "I wrote ", "note.txt ", "for you.")]
    )
    page = open_page(bench)
    start_in_chat(page, bench, "Write hi into note.txt")
    expect(page).to_have_url(re.compile(r"#/chat/"))
    approval = page.locator(".approval")
    expect(approval).to_contain_text("write_file")
    expect(page.locator("details.tool .tool-name")).to_have_text("write_file")
    assert not (bench.workspace / "note.txt").exists()  # the task waits for the answer
    allow = approval.get_by_role("button", name="Allow once")
    expect(allow).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".msg-assistant .msg-text")).to_have_text(
        "I wrote note.txt for you.", timeout=20000
    )
    expect(page.locator(".task-status .badge")).to_have_text("done", timeout=20000)
    expect(approval).to_contain_text("Allowed")
    assert (bench.workspace / "note.txt").read_text() == "hi"
    page.get_by_role("link", name="Open in Tasks").click()
    expect(page.locator("#view-tasks .transcript details.tool .tool-name")).to_have_text(
        "write_file"
    )
    expect(page.locator("#view-tasks .files-box")).to_contain_text("note.txt")


def test_closing_the_page_mid_task_and_reopening_reattaches_the_stream(
    bench_with: Callable[[list[Reply]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with([write_call("call_r1"), text_reply("openai", "Back ", "again.")])
    page = open_page(bench)
    start_in_chat(page, bench, "Write note.txt", mode=None)
    expect(page.locator(".approval")).to_be_visible()
    session_id = page.url.rsplit("/", 1)[1]
    context = page.context
    page.close()  # the task keeps running in the server, waiting for the answer

    status = bench.api.get(f"/v1/tasks/{session_id}").json()
    assert status["status"] == "waiting", status
    again = context.new_page()  # the same browser (its cookie), a new page
    again.goto(f"{bench.base}/#/tasks")
    link = again.locator(f'#tasks-table tr[data-id="{session_id}"]')
    expect(link.locator(".badge")).to_have_text("waiting")
    link.get_by_role("link").click()
    approval = again.locator(".live .approval")
    expect(approval).to_contain_text("write_file")  # replayed on re-attach
    approval.get_by_role("button", name="Allow once").click()
    expect(again.locator(".msg-text", has_text="Back again.")).to_be_visible(timeout=20000)
    expect(again.locator(".task-status .badge")).to_have_text("done", timeout=20000)
    assert (bench.workspace / "note.txt").read_text() == "hi"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    again.screenshot(path=str(ARTIFACTS / "test_reopened_task_reattached.png"), full_page=True)


def test_a_skill_example_form_is_filled_previewed_and_started(
    bench_with: Callable[[list[Reply]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with([text_reply("openai", "The command ", "needs make.")])
    (bench.workspace / "logs").mkdir()
    (bench.workspace / "logs" / "err.txt").write_text("make: command not found\n")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/skills")
    card = page.locator('.skill-card[data-skill="error-recovery"]')
    card.get_by_role("button", name=re.compile("Diagnose a failed command")).click()
    form = page.locator(".example-form")
    expect(form.locator('input[name="command"]')).to_be_focused()
    form.locator('input[name="command"]').fill("make build")
    form.locator('input[name="exit_code"]').fill("2")
    form.locator('input[name="stderr_file"]').fill("logs/err.txt")
    form.get_by_role("button", name="Preview prompt").click()
    preview = form.locator(".preview")
    expect(preview).to_contain_text("The command `make build` failed with exit code 2")
    expect(preview).to_contain_text("logs/err.txt")
    form.get_by_role("button", name="Start task").click()
    expect(page).to_have_url(re.compile(r"#/chat/"))
    expect(page.locator(".msg-assistant .msg-text")).to_have_text(
        "The command needs make.", timeout=20000
    )
    sent = str(bench.fake.bodies)  # type: ignore[attr-defined]
    assert "make build" in sent and "logs/err.txt" in sent


def test_the_skills_gallery_shows_examples_in_chinese(
    bench_with: Callable[[list[Reply]], Workbench], open_page: Callable[..., Any]
) -> None:
    bench = bench_with([])
    page = open_page(bench, locale="zh-CN")
    page.goto(f"{bench.base}/#/skills")
    card = page.locator('.skill-card[data-skill="error-recovery"]')
    sync_api.expect(card).to_contain_text("诊断失败的命令")
