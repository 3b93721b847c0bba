"""Issue #19 item 4 in Chromium against a real ``hearth serve``: the page words errors by
their code in the user's language, never with CLI flags or pydantic's jargon; built-in
skills, their example fields and the audit trail read in Chinese on the Chinese page."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_browser import (  # noqa: F401  (fixtures)
    Workbench,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
)
from workhearth.agent.audit import AuditLog
from workhearth.memory.bank import CONTENT_MAX

SECRET = "my key is sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCD"
# What a Chinese sentence may hold in Latin letters: names the user typed or must type.
NAMES = {"openai", "anthropic", "no-such-model", "config.toml", "HEARTH_MODEL", "hearth", "serve"}
MODEL_TEXT = (
    "The user denied this shell call. Do not retry it unchanged; ask the user how to proceed."
)


def english_words(text: str) -> list[str]:
    """Latin-letter words in ``text`` that are not names the words quote."""
    return [w for w in re.findall(r"[A-Za-z][A-Za-z_.:-]+", text) if w.strip(".:") not in NAMES]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Workbench]:
    bench = start_serve(tmp_path)
    yield bench
    stop_serve(bench)


def view(page: Any, served: Workbench, route: str) -> None:
    """Go to a view once the first one (the task list) has loaded."""
    page.wait_for_load_state("networkidle")
    page.goto(f"{served.base}/#/{route}")


def error_of(form: Any) -> str:
    box = form.locator(".form-error")
    sync_api.expect(box).not_to_be_empty()
    return str(box.inner_text()).strip()


def test_memory_errors_read_in_chinese(
    served: Workbench,
    open_page: Callable[..., Any],  # noqa: F811
) -> None:
    page = open_page(served, locale="zh-CN")
    view(page, served, "memory")
    page.locator("#memory-add").click()
    form = page.locator("#memory-new")
    content = form.locator("textarea[name=content]")
    shown: list[str] = []
    for text, words in (
        ("   ", "请先写下要记住的内容。"),
        ("x" * (CONTENT_MAX + 1), f"内容太长：最多 {CONTENT_MAX} 个字符。"),
        (SECRET, "没有保存：内容里似乎含有密钥、令牌或密码。"),
    ):
        content.fill(text)
        form.locator("button[type=submit]").click()
        sync_api.expect(form.locator(".form-error")).to_contain_text(words)
        shown.append(error_of(form))
        form.locator(".form-error").evaluate("el => { el.textContent = ''; }")
    for line in shown:
        assert english_words(line) == [], line
        assert "--redact" not in line and "String should" not in line
    assert served.memory() == []


def test_task_errors_read_in_chinese(
    served: Workbench,
    open_page: Callable[..., Any],  # noqa: F811
) -> None:
    page = open_page(served, locale="zh-CN")
    view(page, served, "chat")
    form = page.locator("form.chat-form")
    form.locator("textarea[name=task]").fill("总结这个文件夹")
    form.locator("button[type=submit]").click()
    sync_api.expect(form.locator(".form-error")).to_contain_text("还没有设置模型")
    no_model = error_of(form)

    form.locator("input[name=model]").fill("no-such-model")
    form.locator("button[type=submit]").click()
    sync_api.expect(form.locator(".form-error")).to_contain_text("没有名为“no-such-model”的模型")
    unknown = error_of(form)
    assert "configured models are none" not in unknown

    form.locator("input[name=workspace]").fill("relative/folder")
    form.locator("button[type=submit]").click()
    sync_api.expect(form.locator(".form-error")).to_have_text("工作区必须是完整路径，以 / 开头。")
    for line in (no_model, unknown, error_of(form)):
        assert english_words(line) == [], line


def test_skills_read_in_chinese_and_a_missing_field_is_named_by_its_label(
    served: Workbench,
    open_page: Callable[..., Any],  # noqa: F811
) -> None:
    expect = sync_api.expect
    page = open_page(served, locale="zh-CN")
    view(page, served, "skills")
    card = page.locator(".skill-card[data-skill=docx]")
    expect(card.locator(".skill-desc")).to_contain_text("创建、填写、读取、审阅和转换 Word 文档")
    expect(card.locator(".panel-head")).to_contain_text("内置")
    for name in ("pdf", "xlsx", "pptx", "create-skill", "hearth-guidance"):
        desc = page.locator(f".skill-card[data-skill={name}] .skill-desc").inner_text()
        assert re.search(r"[\u4e00-\u9fff]", desc), (name, desc)
    card.locator('[data-example="docx/md-to-docx"]').click()
    form = page.locator("form.example-form")
    expect(form).to_contain_text("输入文件")
    expect(form).to_contain_text("输出文件")
    form.locator(".btn-preview").click()
    expect(form.locator(".form-error")).to_have_text("请填写“输入文件”：这个示例需要它。")
    line = error_of(form)
    assert "--set" not in line and english_words(line) == []

    form.locator("input[name=input]").fill("/etc/hostname")
    form.locator(".btn-preview").click()
    expect(form.locator(".form-error")).to_have_text("这个文件不在已授权的文件夹里。")

    # The same page in English keeps the English words, still without a flag.
    page.locator("#lang-select").select_option("en")
    view(page, served, "skills")
    page.reload()
    card = page.locator(".skill-card[data-skill=docx]")
    expect(card.locator(".skill-desc")).to_contain_text("Create, fill, read, review")
    card.locator('[data-example="docx/md-to-docx"]').click()
    form = page.locator("form.example-form")
    form.locator(".btn-preview").click()
    expect(form.locator(".form-error")).to_have_text("Fill in “Input file”: this example needs it.")


def test_the_audit_trail_reads_in_chinese_and_speaks_to_people(
    served: Workbench,
    open_page: Callable[..., Any],  # noqa: F811
) -> None:
    expect = sync_api.expect
    log = AuditLog(served.home / "audit.jsonl")
    # What an older hearth wrote for a denied call: the words meant for the model.
    log.record(
        session="s-1",
        mode="agent",
        tool="shell",
        decision="denied-by-user",
        outcome="error",
        summary=MODEL_TEXT,
    )
    log.record(
        session="s-1", mode="agent", tool="read_file", decision="allowed-by-mode", summary="ok"
    )
    page = open_page(served, locale="zh-CN")
    view(page, served, "trash/s-1")
    table = page.locator("table.audit")
    expect(table).to_be_visible()
    expect(table).to_contain_text("你已拒绝")
    expect(table).to_contain_text("你拒绝了这次调用，它没有运行。")
    expect(table).to_contain_text("已允许（只读，或 quest 模式）")
    expect(table).to_contain_text("失败")
    assert "Do not retry" not in table.inner_text()
    assert "denied-by-user" not in table.inner_text()
    # The outcome header stays on one line (it wrapped one character per line).
    header = table.locator("th", has_text="结果")
    box = header.bounding_box()
    assert box is not None and box["height"] < 40, box


def test_counts_are_worded_for_one_and_for_many(
    served: Workbench,
    open_page: Callable[..., Any],  # noqa: F811
) -> None:
    expect = sync_api.expect
    served.save("The deploy runs on Tuesdays")
    served.save("The backup runs on Fridays")
    page = open_page(served)
    view(page, served, "memory")
    search = page.locator("#memory-search")
    summary = page.locator("#memory-summary")
    search.fill("Tuesdays")
    expect(summary).to_have_text("1 match")
    search.fill("runs on")
    expect(summary).to_have_text("2 matches")
