"""The redirect side door is shut (issue 25 item 3): real Chromium, sites on 127.0.0.1.

The allow list names one port of 127.0.0.1; every other port is "a loopback address, not
allowed". Each "other" server counts the TCP connections it accepts, so "refused" means
the request never reached it — not only that the model was told so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from socket import socket
from urllib.parse import quote

import pytest

from tests.agent.browser.browsing import (
    MakeCtx,
    call,
    needs_chromium,
)
from tests.agent.browser.counting import Counting, serving, tls_context
from workhearth.agent.browser.policy import SitePolicy
from workhearth.agent.tools import ToolContext, ToolRegistry, ToolResult
from workhearth.config import BrowserConfig

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium

Make = Callable[..., ToolContext]


@pytest.fixture
def allowed() -> Iterator[Counting]:
    with serving() as server:
        yield server


@pytest.fixture
def other() -> Iterator[Counting]:
    with serving() as server:
        yield server


@pytest.fixture
def make(make_ctx: MakeCtx) -> Make:
    """``make(allow, server_urls=(), extra_args=())``: an agent-mode context whose browser's
    policy allows exactly ``allow``."""

    def build(
        allow: tuple[str, ...], server_urls: tuple[str, ...] = (), extra_args: tuple[str, ...] = ()
    ) -> ToolContext:
        policy = SitePolicy.from_config(
            BrowserConfig(allow=allow), "agent", server_urls=server_urls
        )
        return make_ctx("agent", policy=policy, extra_args=extra_args)

    return build


def _until(
    reg: ToolRegistry, ctx: ToolContext, first: ToolResult, words: str, tries: int = 10
) -> str:
    """The results of ``browser_wait`` calls, joined, until ``words`` shows in one (a
    navigation the page starts itself may be refused after the opening call returned)."""
    seen = first.content
    for _ in range(tries):
        if words in seen:
            break
        seen += "\n" + call(reg, ctx, "browser_wait", seconds=1.0).content
    return seen


def test_a_redirect_to_another_loopback_port_is_refused_in_words_and_never_sent(
    reg: ToolRegistry, make: Make, allowed: Counting, other: Counting
) -> None:
    ctx = make((f"127.0.0.1:{allowed.port}",))
    target = f"http://127.0.0.1:{other.port}/secret?data=42"
    result = call(
        reg, ctx, "browser_open", url=f"http://127.0.0.1:{allowed.port}/redirect?to={quote(target)}"
    )
    # Why these words: Chromium sent the loopback request to the proxy (<-loopback>),
    # which refused it; route() never saw the redirect.
    assert f"the page tried to go to {target} — refused: 127.0.0.1 is a loopback" in (
        result.content
    ), result.content
    assert other.connections == 0
    snap = call(reg, ctx, "browser_snapshot").content
    assert "hearth refused" in snap and "served by port" not in snap


@pytest.mark.parametrize("how", ["meta", "js"])
def test_a_page_that_sends_the_browser_on_by_itself_is_refused(
    reg: ToolRegistry, make: Make, allowed: Counting, other: Counting, how: str
) -> None:
    ctx = make((f"127.0.0.1:{allowed.port}",))
    base = f"http://127.0.0.1:{allowed.port}"
    direct = f"http://127.0.0.1:{other.port}/direct"
    # A meta refresh or a script: a navigation route() sees and refuses …
    first = call(reg, ctx, "browser_open", url=f"{base}/{how}?to={quote(direct)}")
    seen = _until(reg, ctx, first, "/direct: 127.0.0.1 is a loopback")
    assert f"the page went to {direct}: 127.0.0.1 is a loopback" in seen, seen
    # … and one that lands on an allowed page that redirects: the proxy refuses that hop.
    hidden = f"http://127.0.0.1:{other.port}/hidden"
    bounce = f"{base}/redirect?to={quote(hidden)}"
    first = call(reg, ctx, "browser_open", url=f"{base}/{how}?to={quote(bounce)}")
    seen = _until(reg, ctx, first, "refused:")
    assert f"the page tried to go to {hidden} — refused: 127.0.0.1 is a loopback" in seen, seen
    assert other.connections == 0


def test_images_and_fetches_to_a_private_port_are_never_sent(
    reg: ToolRegistry, make: Make, allowed: Counting, other: Counting
) -> None:
    ctx = make((f"127.0.0.1:{allowed.port}",))
    base = f"http://127.0.0.1:{allowed.port}"
    direct = f"http://127.0.0.1:{other.port}/pixel.png"
    result = call(reg, ctx, "browser_open", url=f"{base}/parts?to={quote(direct)}")
    assert not result.is_error, result.content
    bounced = f"{base}/redirect?to={quote(f'http://127.0.0.1:{other.port}/after.png')}"
    result = call(reg, ctx, "browser_open", url=f"{base}/parts?to={quote(bounced)}")
    assert not result.is_error, result.content
    seen = _until(reg, ctx, result, "after.png")
    assert f"the page tried to load http://127.0.0.1:{other.port}/after.png — refused" in seen
    assert "parts page" in call(reg, ctx, "browser_snapshot").content
    assert other.connections == 0


def test_a_redirect_to_hearths_own_server_is_refused_even_when_allowed(
    reg: ToolRegistry, make: Make, allowed: Counting, other: Counting
) -> None:
    hearth = f"http://127.0.0.1:{other.port}"
    ctx = make(("127.0.0.1",), server_urls=(hearth,))
    result = call(
        reg,
        ctx,
        "browser_open",
        url=f"http://127.0.0.1:{allowed.port}/redirect?to={quote(hearth + '/api/sessions')}",
    )
    assert "refused: that is hearth's own server" in result.content, result.content
    assert other.connections == 0


def test_a_redirect_between_allowed_sites_still_works(
    reg: ToolRegistry, make: Make, allowed: Counting, other: Counting
) -> None:
    ctx = make((f"127.0.0.1:{allowed.port}", f"127.0.0.1:{other.port}"))
    target = f"http://127.0.0.1:{other.port}/landed"
    result = call(
        reg, ctx, "browser_open", url=f"http://127.0.0.1:{allowed.port}/redirect?to={target}"
    )
    assert not result.is_error and "Now at tab 1 of 1" in result.content, result.content
    assert target in result.content and "refused" not in result.content
    assert f"served by port {other.port}" in call(reg, ctx, "browser_snapshot").content
    assert other.connections >= 1


def test_the_browsers_own_background_requests_are_refused_but_not_told(
    reg: ToolRegistry, make: Make, allowed: Counting, other: Counting
) -> None:
    """Chromium's updater sends plain http through the proxy by itself (CI saw
    update.googleapis.com told as "the page tried to load …"): refused, never told,
    while a page's refused redirect in the same action still is."""
    ctx = make((f"127.0.0.1:{allowed.port}",))
    assert not call(reg, ctx, "browser_open", url=f"http://127.0.0.1:{allowed.port}/").is_error
    browser = ctx.browser
    assert browser is not None and browser._proxy is not None
    background = f"http://127.0.0.1:{other.port}/service/update2/json"
    with socket() as sock:  # what the browser process asks on its own, as Chromium would
        sock.connect(("127.0.0.1", browser._proxy.port))
        sock.sendall(f"GET {background} HTTP/1.1\r\nHost: 127.0.0.1:{other.port}\r\n\r\n".encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 403"), "the proxy let it through"
    target = f"http://127.0.0.1:{other.port}/secret"
    result = call(
        reg, ctx, "browser_open", url=f"http://127.0.0.1:{allowed.port}/redirect?to={quote(target)}"
    )
    seen = _until(reg, ctx, result, target)
    assert f"{target} — refused" in seen, seen
    assert "update2" not in seen, seen
    for _ in range(2):  # nor held back and told one action later
        assert "update2" not in call(reg, ctx, "browser_snapshot").content
    assert other.connections == 0


def test_https_goes_through_the_proxy_as_a_checked_tunnel(
    reg: ToolRegistry, make: Make, tmp_path: Path
) -> None:
    tls = tls_context(tmp_path)
    with serving(tls) as secure, serving(tls) as hidden:
        # Why --ignore-certificate-errors: the test's certificate is self-signed (test only).
        ctx = make((f"127.0.0.1:{secure.port}",), extra_args=("--ignore-certificate-errors",))
        base = f"https://127.0.0.1:{secure.port}"
        opened = call(reg, ctx, "browser_open", url=f"{base}/hello")
        assert not opened.is_error, opened.content
        assert f"served by port {secure.port}" in call(reg, ctx, "browser_snapshot").content
        to = f"https://127.0.0.1:{hidden.port}/secret"
        result = call(reg, ctx, "browser_open", url=f"{base}/redirect?to={quote(to)}")
        assert f"tried to reach https://127.0.0.1:{hidden.port}/ — refused: 127.0.0.1 is a" in (
            result.content
        ), result.content
        assert hidden.connections == 0
        assert secure.connections >= 1


def test_the_proxy_ends_with_the_browser(reg: ToolRegistry, make: Make, allowed: Counting) -> None:
    ctx = make((f"127.0.0.1:{allowed.port}",))
    assert not call(reg, ctx, "browser_open", url=f"http://127.0.0.1:{allowed.port}/").is_error
    browser = ctx.browser
    assert browser is not None and browser._proxy is not None
    port = browser._proxy.port
    call(reg, ctx, "browser_close")
    probe = socket()
    try:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the proxy still listens"
    finally:
        probe.close()
