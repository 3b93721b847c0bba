"""The agent's browser pictures read back (issue 25 item 4): a thread shown from the stored
transcript (a reload, a session opened after a restart) captions each thumbnail with the
same line as the live stream did, in English and Chinese; and a team task shows its
specialist's browser steps the same way when the step is opened on the board.

``hearth serve`` runs for real with Debian's Chromium against a site on 127.0.0.1; the
model is scripted (tests/fake_providers.py).
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent.browser import site
from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.e2e.test_team import LEAD, plan_call, step, step_marker
from tests.fake_providers import FakeProvider, RoutedProvider
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    Workbench,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
)
from tests.server.test_page_team import routed_bench, start_team_task  # noqa: F401 (fixture)

API = "openai"
MODEL = "openai:qwen-plus"
pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")


def allow_the_site(root: Path) -> None:
    """``hearth serve``'s config under ``root``: the test site needs no approval."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        '[models]\nmax_retries = 0\n[browser]\nallow = ["127.0.0.1"]\n'
    )


def browse(base: str, prefix: str = "call") -> list[Any]:
    """A model's replies: open the table, read it, click “Next page”, say so."""
    return [
        calls_reply(API, (f"{prefix}_o", "browser_open", {"url": f"{base}/table?page=1"})),
        calls_reply(API, (f"{prefix}_s", "browser_snapshot", {})),
        calls_reply(API, (f"{prefix}_c", "browser_click", {"ref": 1})),
        text_reply(API, "Page 2 is open."),
    ]


def captions(port: int) -> list[str]:
    return [
        f"browser · open http://127.0.0.1:{port}/table?page=1",
        f"browser · 127.0.0.1:{port} · click “Next page” (ref 1)",
    ]


def wait_done(bench: Workbench, session_id: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = bench.api.get(f"/v1/tasks/{session_id}").json().get("status")
        if status not in ("running", "waiting", None):
            assert status == "done", status
            return
        time.sleep(0.1)
    raise AssertionError("the task did not end")


def loaded(page: Any, img: Any) -> int:
    """The natural width of ``img`` once loaded (0 never: it fails by timeout)."""
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    return int(img.evaluate("img => img.naturalWidth"))


def test_a_thread_from_history_captions_each_picture_as_live(
    tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    allow_the_site(tmp_path)
    with site.serve() as web:
        port = web.server_address[1]
        lines = captions(port)
        with FakeProvider(browse(f"http://127.0.0.1:{port}")) as fake:
            env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}
            bench = start_serve(tmp_path, env)
            try:
                started = bench.api.post("/v1/tasks", json={"task": "Open the sales table", "mode": "agent"})  # fmt: skip
                assert started.status_code == 201, started.text
                sid = started.json()["session_id"]
                wait_done(bench, sid)
                page = open_page(bench)
                page.goto(f"{bench.base}/#/chat/{sid}")
                expect(page.locator(".browser-shot .browser-line")).to_have_text(lines, timeout=20000)  # fmt: skip
                page.reload()
                expect(page.locator(".browser-shot .browser-line")).to_have_text(lines, timeout=20000)  # fmt: skip
                # The line is kept beside the result in the transcript, never sent to the model.
                stored = bench.api.get(f"/v1/sessions/{sid}/messages").json()["messages"]
                results = [
                    b for m in stored for b in m["content"] if b.get("type") == "tool_result"
                ]
                read = f"browser · 127.0.0.1:{port} · read the page"  # no picture: no thumbnail
                assert [b.get("line") for b in results] == [lines[0], read, lines[1]]
                assert all("browser ·" not in str(body) for body in fake.bodies)
            finally:
                stop_serve(bench)
            # A new server runs no task: the thread is the stored transcript only.
            again = start_serve(tmp_path, env)
            try:
                page = open_page(again)
                page.goto(f"{again.base}/#/chat/{sid}")
                for lang, alt in (
                    ("en", "The agent's browser after: "),
                    ("zh", "智能体浏览器在这一步之后："),
                ):
                    page.locator("#lang-select").select_option(lang)  # the header's switch
                    shots = page.locator(".history .browser-shot")
                    expect(shots.locator(".browser-line")).to_have_text(lines, timeout=20000)
                    thumb = shots.nth(1).locator("img")
                    assert loaded(page, thumb) == 640
                    assert thumb.get_attribute("alt") == alt + lines[1]
                    shots.nth(1).click()
                    dialog = page.locator("dialog.browser-dialog")
                    expect(dialog.locator(".browser-dialog-foot span")).to_have_text(alt + lines[1])
                    page.keyboard.press("Escape")
                    expect(dialog).to_have_count(0)
                    ARTIFACTS.mkdir(parents=True, exist_ok=True)
                    page.screenshot(
                        path=str(ARTIFACTS / f"test_browser_history_{lang}.png"), full_page=True
                    )
            finally:
                stop_serve(again)


def test_the_team_view_shows_a_specialists_browser_steps(
    tmp_path: Path,
    routed_bench: Callable[[list[Any]], tuple[Workbench, RoutedProvider]],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    allow_the_site(tmp_path)
    with site.serve() as web:
        port = web.server_address[1]
        title = "Look at the sales table"
        bench, fake = routed_bench(
            [
                (LEAD, [plan_call("p1", [step("look", title, "researcher")])]),
                (step_marker(title), browse(f"http://127.0.0.1:{port}", "web")),
            ]
        )
        page = open_page(bench, viewport={"width": 1280, "height": 900})
        sid = start_team_task(page, bench, "Read the sales table", mode="quest")
        panel = page.locator("section.team")
        row = panel.locator('tr[data-step="look"]')
        expect(row.locator(".team-status")).to_have_text("done", timeout=60000)
        row.locator(".team-step").click()
        thread = panel.locator(".team-detail .team-thread")
        expect(thread).to_contain_text("Page 2 is open.")
        shots = thread.locator(".browser-shot")
        expect(shots.locator(".browser-line")).to_have_text(captions(port))
        # The picture is the specialist's, served from its own session.
        specialist = bench.api.get(f"/v1/tasks/{sid}/team").json()["steps"][0]["session"]
        assert specialist and specialist != sid
        thumb = shots.nth(1).locator("img")
        assert f"/v1/sessions/{specialist}/screenshots/" in (thumb.get_attribute("src") or "")
        assert loaded(page, thumb) == 640
        shots.nth(1).click()
        expect(page.locator("dialog.browser-dialog img.browser-big")).to_be_visible()
        page.keyboard.press("Escape")
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        panel.screenshot(path=str(ARTIFACTS / "test_browser_team_en.png"))
        # The Chinese page words the picture; the line is the browser's own, as in the terminal.
        page.locator("#lang-select").select_option("zh")  # the header's switch
        expect(panel.locator(".team-head h2")).to_have_text("团队")
        panel.locator('tr[data-step="look"] .team-step').click()
        thumb = panel.locator(".team-thread .browser-shot img").nth(1)
        expect(thumb).to_have_attribute(
            "alt", "智能体浏览器在这一步之后：" + captions(port)[1], timeout=20000
        )
        assert loaded(page, thumb) == 640
        panel.screenshot(path=str(ARTIFACTS / "test_browser_team_zh.png"))
        assert fake.unscripted == 0
