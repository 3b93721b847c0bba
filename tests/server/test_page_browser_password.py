"""The page's approval card asks for a password for the agent's browser (issue 25): a
password input on the card, sent with the yes, gone from the page once answered; the
site gets it and the page never shows it. ``hearth serve`` for real, a scripted model,
Debian's Chromium for both the page and the agent, a sign-in site on 127.0.0.1."""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.agent.browser.login_site import PASSWORD, serve_login
from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.fake_providers import FakeProvider
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
)
from tests.server.test_browser_tasks import start_in_chat
from tests.server.test_page_browser_history import allow_the_site

MODEL = "openai:qwen-plus"
pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")
pytest.importorskip("playwright.sync_api")


@pytest.fixture
def site() -> Iterator[ThreadingHTTPServer]:
    with serve_login() as server:
        yield server


def test_the_card_asks_for_the_password_and_forgets_it(
    tmp_path: Path, site: ThreadingHTTPServer, open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    base = f"http://127.0.0.1:{site.server_address[1]}"
    allow_the_site(tmp_path)
    replies = [
        calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/login"})),
        calls_reply("openai", ("call_s", "browser_snapshot", {})),
        calls_reply("openai", ("call_p", "browser_type", {"ref": 2, "text": "", "submit": True})),
        text_reply("openai", "Signed in."),
    ]
    with FakeProvider(replies) as fake:
        env = {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}
        bench = start_serve(tmp_path, env)
        try:
            page = open_page(bench)
            start_in_chat(page, bench, "Sign in")
            expect(page).to_have_url(re.compile(r"#/chat/"))
            card = page.locator(".approval").first
            secret = card.get_by_label("Password")
            # Why long: the agent's browser starts first (seconds on a busy machine).
            expect(secret).to_have_attribute("type", "password", timeout=60000)
            expect(card).to_contain_text(f"Type the password for 'Password' on {base}")
            expect(card.get_by_role("button", name="Always allow (this task)")).to_have_count(0)
            card.get_by_role("button", name="Type it in").click()  # nothing typed: not sent
            expect(secret).to_be_focused()
            assert site.received == []  # type: ignore[attr-defined]
            secret.fill(PASSWORD)
            secret.press("Enter")
            expect(card).to_contain_text("Allowed", timeout=20000)
            expect(card.locator("input")).to_have_count(0)  # the typed password left the page
            submit = page.locator(".approval").nth(1)
            expect(submit).to_contain_text("Password: ••••••••", timeout=20000)
            submit.get_by_role("button", name="Allow once").click()
            expect(page.locator(".task-status .badge")).to_have_text("done", timeout=60000)
            assert PASSWORD not in page.content()
        finally:
            stop_serve(bench)
    [sent] = site.received  # type: ignore[attr-defined]
    assert f"password={PASSWORD}".encode() in sent
    assert all(PASSWORD.encode() not in r.raw for r in fake.received)
