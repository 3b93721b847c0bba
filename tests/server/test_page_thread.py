"""The page keeps the thread (issue #19 items 1–3), in Debian's Chromium against a real
``hearth serve`` whose model is the scripted server of tests/fake_providers.py.

Re-attaching after a reload and after a server restart shows each message once (never
``null``); the connection's loss and return are said as they happen; the login cookie
outlives a restart; a stranger sees only the sign-in page, whose token form works;
``hearth serve --login-url`` gives a second browser its way in; errors a browser opens
are pages for people; and the model's words appear while it is still writing them.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import ports
from tests.e2e.conftest import HEARTH_CMD
from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.fake_providers import FakeProvider, Reply
from tests.server.test_browser import (  # noqa: F401 (fixtures)
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


def model_env(fake: FakeProvider) -> dict[str, str]:
    return {"OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test", "HEARTH_MODEL": MODEL}


@pytest.fixture
def fake_model() -> Iterator[Callable[[list[Reply]], FakeProvider]]:
    made: list[FakeProvider] = []

    def make(replies: list[Reply]) -> FakeProvider:
        fake = FakeProvider(replies).__enter__()
        made.append(fake)
        return fake

    yield make
    for fake in made:
        fake.__exit__(None, None, None)


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[Callable[..., Workbench]]:
    """``serving(env, port=…)``: a ``hearth serve`` of one home, stopped at the end."""
    started: list[Workbench] = []

    def make(env: dict[str, str] | None = None, *, port: int = 0) -> Workbench:
        bench = start_serve(tmp_path, env, port=port)
        started.append(bench)
        return bench

    yield make
    for bench in started:
        if bench.proc.poll() is None:
            stop_serve(bench)


def slow(reply: Reply, *, first: float = 0.0, pause: float = 0.0) -> Reply:
    """``reply`` whose head waits ``first`` seconds and whose pieces ``pause`` between them."""
    pieces: list[Any] = []
    for piece in reply.pieces:
        pieces.append(piece)
        if pause and not isinstance(piece, float):
            pieces.append(pause)
    return Reply(status=reply.status, pieces=pieces, headers=reply.headers, delay=first)


def write_call(call_id: str) -> Reply:
    return calls_reply("openai", (call_id, "write_file", {"path": "note.txt", "content": "hi"}))


def start_chat(page: Any, bench: Workbench, prompt: str, mode: str = "agent") -> str:
    page.goto(f"{bench.base}/#/chat")
    page.locator('.chat-form textarea[name="task"]').fill(prompt)
    page.locator('.chat-form select[name="mode"]').select_option(mode)
    page.locator('.chat-form button[type="submit"]').click()
    sync_api.expect(page).to_have_url(re.compile(r"#/chat/"))
    return str(page.url.rsplit("/", 1)[1])


def thread_text(page: Any) -> str:
    return str(page.locator(".thread").inner_text())


# ------------------------------------------------------------------ re-attach
def test_a_reload_mid_run_shows_each_message_once_and_never_null(
    fake_model: Callable[[list[Reply]], FakeProvider],
    serving: Callable[..., Workbench],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    fake = fake_model([write_call("call_t1"), text_reply("openai", "All written.")])
    bench = serving(model_env(fake))
    page = open_page(bench)
    prompt = "Write hi into note.txt please"
    sid = start_chat(page, bench, prompt)
    expect(page.locator(".approval")).to_contain_text("write_file")
    # A reload, the task view, and the chat view again: the same thread each time.
    for url in (page.url, f"{bench.base}/#/tasks/{sid}", f"{bench.base}/#/chat/{sid}"):
        page.goto(url)
        page.reload()
        expect(page.locator(".approval:not(.answered)")).to_have_count(1)
        expect(page.locator(".msg-user")).to_have_count(1)
        expect(page.locator(".msg-user")).to_have_text(re.compile(re.escape(prompt)))
        expect(page.locator("details.tool")).to_have_count(1)
        # The call waits for the user: it says so, not "running".
        expect(page.locator("details.tool .pill")).to_have_text("waiting for you")
        assert "null" not in thread_text(page)
    page.locator(".approval .btn-allow").click()
    expect(page.locator(".msg-assistant .msg-text")).to_have_text("All written.", timeout=20000)
    expect(page.locator(".task-status .badge")).to_have_text("done")
    page.reload()
    # Finished: the transcript alone, still once each.
    expect(page.locator(".msg-assistant")).to_have_count(1)
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator("details.tool")).to_have_count(1)
    assert "null" not in thread_text(page)
    assert (bench.workspace / "note.txt").read_text() == "hi"


def test_a_server_restart_is_said_and_the_page_reattaches_signed_in(
    fake_model: Callable[[list[Reply]], FakeProvider],
    serving: Callable[..., Workbench],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    fake = fake_model([write_call("call_s1"), text_reply("openai", "Finished after restart.")])
    port = ports.free_port()
    bench = serving(model_env(fake), port=port)
    page = open_page(bench)
    prompt = "Write the note, then stop"
    sid = start_chat(page, bench, prompt)
    expect(page.locator(".approval")).to_contain_text("write_file")

    stop_serve(bench)  # the server goes away with the task waiting
    banner = page.locator("#connection")
    expect(banner).to_be_visible(timeout=15000)
    expect(banner).to_contain_text("lost")
    assert page.locator(".conn-signin").count() == 0

    again = serving(model_env(fake), port=port)  # same home, same token, same port
    assert again.base == bench.base
    # The cookie still works: no sign-in; the run that was cut shows as stopped.
    expect(page.locator(".task-status .badge")).to_have_text("stopped", timeout=20000)
    expect(banner).to_be_hidden(timeout=10000)
    assert page.locator(".conn-signin").count() == 0
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator("details.tool")).to_have_count(1)
    assert "null" not in thread_text(page)
    # The call the restart cut is not "running" in the stored thread.
    expect(page.locator("details.tool .pill")).not_to_have_text("running")
    # Continue from the task view: the thread goes on, still without duplicates.
    page.goto(f"{bench.base}/#/tasks/{sid}")
    page.locator(".btn-continue").click()
    expect(page.locator(".msg-assistant .msg-text").last).to_have_text(
        "Finished after restart.", timeout=20000
    )
    expect(page.locator(".task-status .badge")).to_have_text("done")
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator("details.tool")).to_have_count(1)
    assert "null" not in thread_text(page)


def test_a_new_token_means_sign_in_again(
    serving: Callable[..., Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    port = ports.free_port()
    bench = serving(port=port)
    page = open_page(bench)
    page.goto(f"{bench.base}/#/memory")
    expect(page.locator("#memory-search")).to_be_visible()
    stop_serve(bench)
    (bench.home / "server.token").unlink()  # the user revoked the token
    serving(port=port)
    page.locator("#memory-search").fill("anything")  # a call that now gets 401
    page.keyboard.press("Enter")
    expect(page.locator(".conn-signin")).to_be_visible(timeout=15000)
    page.locator(".conn-signin a").click()
    expect(page.locator("#signin")).to_be_visible()


# ------------------------------------------------------------------ sign in
def test_a_stranger_sees_only_the_sign_in_page_and_the_token_form_signs_in(
    serving: Callable[..., Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = serving()
    page = open_page(bench, login=False)
    for path in ("/", "/index.html", "/#/chat"):
        page.goto(bench.base + path)
        expect(page.locator("#signin")).to_be_visible()
        assert page.locator(".nav, .chat-form").count() == 0
        assert "New task" not in page.content()
    token = (bench.home / "server.token").read_text().strip()
    # A wrong token: the sign-in page again, saying so in words.
    page.locator('#signin input[name="token"]').fill("not-the-token")
    page.locator('#signin button[type="submit"]').click()
    expect(page.locator("#signin-reason")).to_contain_text("not this server's token")
    # The right one signs in from Chromium (its form post passes the Origin check).
    page.locator('#signin input[name="token"]').fill(token)
    page.locator('#signin button[type="submit"]').click()
    page.wait_for_url(f"{bench.base}/")
    expect(page.locator(".nav")).to_be_visible()
    expect(page.locator("#tasks-table")).to_be_visible()
    # Signing out ends it: the sign-in page, and the cookie no longer opens the API.
    page.locator(".btn-signout").click()
    expect(page.locator("#signin")).to_be_visible()
    status = page.evaluate("fetch('/v1/info').then(r => r.status)")
    assert status == 401


def test_a_used_link_says_so_in_both_languages(
    serving: Callable[..., Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = serving()
    first = open_page(bench)  # uses the printed link
    expect(first.locator(".nav")).to_be_visible()
    for locale, words in (("en-US", "already used or has expired"), ("zh-CN", "已经用过或已过期")):
        page = open_page(bench, locale=locale, login=False)
        answer = page.goto(bench.login_url)
        assert answer is not None and answer.status == 401
        expect(page.locator("#signin-reason")).to_contain_text(words)
        assert "{" not in page.locator("body").inner_text()  # no raw JSON


def test_login_url_gives_a_second_browser_a_fresh_one_time_link(
    serving: Callable[..., Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = serving()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
    env["HEARTH_HOME"] = str(bench.home)

    def login_url() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*HEARTH_CMD, "serve", "--login-url"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    done = login_url()
    assert done.returncode == 0, done.stderr
    (url,) = done.stdout.split()
    assert url.startswith(f"{bench.base}/login?token=") and url != bench.login_url
    second = open_page(bench, login=False)
    second.goto(url)
    second.wait_for_url(f"{bench.base}/")
    expect(second.locator(".nav")).to_be_visible()
    assert httpx.get(url, follow_redirects=False).status_code == 401  # once only
    # No server running: one clear line, a non-zero exit.
    stop_serve(bench)
    gone = login_url()
    assert gone.returncode == 1 and gone.stdout == ""
    assert gone.stderr.count("\n") == 1 and "no hearth serve is running" in gone.stderr


def test_errors_a_browser_opens_are_pages_for_people_and_there_is_a_favicon(
    serving: Callable[..., Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = serving()
    page = open_page(bench, locale="zh-CN")
    answer = page.goto(f"{bench.base}/no/such/page")
    assert answer is not None and answer.status == 404
    assert "text/html" in answer.headers["content-type"]
    expect(page.locator("#error-title")).to_have_text("找不到页面")
    assert '"detail"' not in page.content()
    icon = httpx.get(f"{bench.base}/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
    # A program still gets JSON.
    api = bench.api.get("/v1/no-such-route")
    assert api.status_code == 404 and api.json()["detail"] == "no such API route"


# ------------------------------------------------------------------ progress
def test_the_thinking_line_and_streamed_words_show_before_the_reply_ends(
    fake_model: Callable[[list[Reply]], FakeProvider],
    serving: Callable[..., Workbench],
    open_page: Callable[..., Any],
) -> None:
    expect = sync_api.expect
    reply = text_reply("openai", "First **words** arrive. ", "Then ", "more ", "and the end.")
    fake = fake_model([slow(reply, first=2.5, pause=0.8)])
    bench = serving(model_env(fake))
    page = open_page(bench)
    start_chat(page, bench, "Tell me slowly", mode="ask")
    # While the model has said nothing: a live line says it is thinking, with the time.
    thinking = page.locator(".thinking")
    expect(thinking).to_be_visible(timeout=5000)
    expect(thinking).to_contain_text(re.compile(r"Thinking… \d+ s"), timeout=5000)
    # The first words show (as Markdown) while the reply is still being written.
    expect(page.locator(".msg-assistant .msg-text strong")).to_have_text("words", timeout=10000)
    assert "and the end." not in page.locator(".msg-assistant .msg-text").inner_text()
    expect(page.locator(".task-status .badge")).to_have_text("running")
    expect(page.locator(".msg-assistant .msg-text")).to_have_text(
        "First words arrive. Then more and the end.", timeout=20000
    )
    expect(page.locator(".task-status .badge")).to_have_text("done")
    expect(thinking).to_be_hidden()
