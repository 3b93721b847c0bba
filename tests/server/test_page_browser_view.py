"""The page shows the agent's browser (issue 25 item 4): a task in ``hearth serve`` browses a
site on 127.0.0.1 (Debian's Chromium, a scripted model); the task stream shows a thumbnail
after each step that changed the page, a click opens it bigger, and a reload keeps them."""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agent.browser import site
from tests.fake_providers import FakeProvider
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
)
from tests.server.test_browser_tasks import start_in_chat
from tests.server.test_page_browser_history import allow_the_site, browse

MODEL = "openai:qwen-plus"
pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")


def test_a_browsing_task_shows_thumbnails_that_open_bigger(
    tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    allow_the_site(tmp_path)
    with site.serve() as web:
        port = web.server_address[1]
        base = f"http://127.0.0.1:{port}"
        with FakeProvider(browse(base)) as fake:
            env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}
            bench = start_serve(tmp_path, env)
            try:
                page = open_page(bench)
                start_in_chat(page, bench, "Open the sales table")
                expect(page.locator(".msg-assistant .msg-text")).to_have_text(
                    "Page 2 is open.", timeout=60000
                )
                shots = page.locator(".live .browser-shot")
                expect(shots).to_have_count(2)  # after the open and the click, not the read
                click = shots.nth(1)
                expect(click).to_contain_text(f"browser · 127.0.0.1:{port} · click “Next page”")
                thumb = click.locator("img")
                page.wait_for_function(
                    "img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle()
                )
                assert thumb.evaluate("img => img.naturalWidth") == 640
                assert thumb.evaluate("img => img.getBoundingClientRect().width") <= 200
                click.click()
                dialog = page.locator("dialog.browser-dialog")
                expect(dialog).to_be_visible()
                big = dialog.locator("img.browser-big")
                page.wait_for_function(
                    "img => img.complete && img.naturalWidth > 0", arg=big.element_handle()
                )
                assert big.evaluate("img => img.getBoundingClientRect().width") > 500
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "test_browser_view_dialog.png"))
                page.keyboard.press("Escape")
                expect(dialog).to_have_count(0)
                session_id = page.url.rsplit("/", 1)[1]
                page.reload()  # the task's events again (replayed)
                expect(page.locator(".browser-shot")).to_have_count(2, timeout=20000)
                page.screenshot(
                    path=str(ARTIFACTS / "test_browser_view_stream.png"), full_page=True
                )
                name = click.get_attribute("data-shot") or "call_c.jpg"
                url = f"/v1/sessions/{session_id}/screenshots/{name}"
                got = bench.api.get(url)
                assert got.status_code == 200 and got.headers["content-type"] == "image/jpeg"
                assert httpx.get(bench.base + url).status_code == 401  # no token, no picture
                assert (
                    bench.api.get(f"/v1/sessions/{session_id}/screenshots/..%2Fx.jpg").status_code
                    == 404
                )
                assert re.match(r"^call_c(-\d+)?\.jpg$", name)
            finally:
                stop_serve(bench)
            # A new server knows no task: the stored transcript's results name the pictures.
            again = start_serve(tmp_path, env)
            try:
                page = open_page(again)
                page.goto(f"{again.base}/#/chat/{session_id}")
                shots = page.locator(".history .browser-shot")
                expect(shots).to_have_count(2, timeout=20000)
                thumb = shots.nth(1).locator("img")
                page.wait_for_function(
                    "img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle()
                )
                page.screenshot(
                    path=str(ARTIFACTS / "test_browser_view_history.png"), full_page=True
                )
            finally:
                stop_serve(again)
