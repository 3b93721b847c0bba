"""In the browser (issue #21): a task's view shows each office file it produced with
hearth's receipt — verdict, problems, thumbnails, a download — in the page's language,
and a task that said "done" over a failing file shows ``failed`` with the reason.

``hearth serve`` runs for real, with ``tests/fake_providers.py`` as its model.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    Workbench,
    browser,
    open_page,
    sync_api,
)
from tests.server.test_browser_tasks import bench_with  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")

MAKE_DOCX = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
    "from docx import Document; d = Document(); d.add_heading('Quarterly report', 1);"
    " d.add_paragraph('Sales grew in the third quarter.'); d.save('report.docx')"
)


@pytest.mark.parametrize("locale", ["en-US", "zh-CN"])
def test_the_task_view_shows_each_produced_file_with_its_receipt(
    locale: str, bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with(
        [
            calls_reply("openai", ("call_doc", "shell", {"command": MAKE_DOCX})),
            calls_reply(
                "openai", ("call_bad", "write_file", {"path": "sums.xlsx", "content": "1,2"})
            ),
            text_reply("openai", "Both files are ready."),
        ]
    )
    page = open_page(bench, locale=locale)
    page.goto(f"{bench.base}/#/chat")
    page.locator(".chat-form textarea").fill("Write the report and the sums")
    page.locator('.chat-form select[name="mode"]').select_option("agent")
    page.locator(".chat-form button[type=submit]").click()
    for _ in range(2):
        page.locator(".approval").last.locator("button").first.click()  # allow once
    expect(page.locator(".task-status .badge")).to_have_text(
        "failed" if locale == "en-US" else "失败", timeout=60000
    )
    (session,) = bench.api.get("/v1/sessions").json()["sessions"]
    page.goto(f"{bench.base}/#/tasks/{session['session_id']}")
    expect(page.locator(".task-reason")).to_contain_text("sums.xlsx")
    cards = page.locator(".receipts-box .receipt")
    expect(cards).to_have_count(2, timeout=30000)
    good = page.locator('.receipt[data-path="report.docx"]')
    bad = page.locator('.receipt[data-path="sums.xlsx"]')
    expect(good.locator(".badge-ok")).to_have_text(
        "checked: ok" if locale == "en-US" else "检查通过"
    )
    expect(bad.locator(".badge-fails")).to_be_visible()
    expect(bad.locator(".receipt-problems li").first).to_contain_text(
        "does not open" if locale == "en-US" else "无法打开"
    )
    # The problem itself in the page's language (hearth's English stays in the API).
    expect(bad.locator(".receipt-problems li").first).to_contain_text(
        "not a valid Office file" if locale == "en-US" else "不是有效的 Office 文件"
    )
    thumb = good.locator(".receipt-thumbs img").first
    expect(thumb).to_be_visible()
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth > 0", arg=thumb.element_handle()
    )
    with page.expect_download() as download:
        good.locator(".receipt-download").click()
    saved = Path(download.value.path())
    assert saved.read_bytes() == (bench.workspace / "report.docx").read_bytes()
    assert download.value.suggested_filename == "report.docx"
