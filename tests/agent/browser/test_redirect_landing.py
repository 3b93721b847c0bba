"""A server's redirect to a site the mode does not allow yet (issue 25 item 3): real Chromium.

Neither Playwright's routing (it never sees a redirect's hop) nor the proxy (inside TLS it
sees only ``CONNECT host``) can tell such a hop from a page's own parts, so the address
rules hold it on the way and the mode's rules where it lands: the tab is emptied unread
and the agent is told to ``browser_open`` the site, which asks.

The "other site" is a name (``elsewhere.test``) that the policy's DNS table (the network
edge) resolves to 127.0.0.1, and ``allow`` holds the block ``127.0.0.0/8``: its address is
allowed, the name is not listed, so it is a first visit in agent mode and not an allowed
site in a quest — as a public site would be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from urllib.parse import quote

import pytest

from tests.agent.browser.browsing import (
    MakeCtx,
    call,
    needs_chromium,
)
from tests.agent.browser.counting import Counting, serving
from tests.agent.browser.test_policy import Dns
from tests.agent.test_approval import Scripted
from workhearth.agent.approval import Approver, Mode, allow_all
from workhearth.agent.browser.approvals import visit_summary
from workhearth.agent.browser.policy import SitePolicy
from workhearth.agent.tools import ToolContext, ToolRegistry
from workhearth.config import BrowserConfig

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium

Make = Callable[..., ToolContext]
ELSEWHERE = "elsewhere.test"


@pytest.fixture
def web() -> Iterator[Counting]:
    with serving() as server:
        yield server


@pytest.fixture
def make(make_ctx: MakeCtx) -> Make:
    """``make(mode, approver=allow_all)``: a context whose policy allows 127.0.0.0/8 and
    resolves elsewhere.test (and only it) to 127.0.0.1."""

    def build(mode: Mode, approver: Approver = allow_all) -> ToolContext:
        policy = SitePolicy.from_config(
            BrowserConfig(allow=("127.0.0.0/8",)),
            mode,
            getaddrinfo=Dns({ELSEWHERE: ["127.0.0.1"]}),
        )
        return make_ctx(mode, approver, policy=policy)

    return build


@pytest.mark.parametrize("mode", ["agent", "quest"])
def test_a_redirect_to_a_site_not_allowed_yet_leaves_the_tab_empty_and_says_so(
    reg: ToolRegistry, make: Make, web: Counting, mode: Mode
) -> None:
    ctx = make(mode)
    landing = f"http://{ELSEWHERE}:{web.port}/landed?data=42"
    start = f"http://127.0.0.1:{web.port}/redirect?to={quote(landing)}"
    result = call(reg, ctx, "browser_open", url=start)
    if mode == "agent":
        assert (
            f"a redirect took the page to http://{ELSEWHERE}:{web.port}, a site not visited "
            "yet in this session; the tab was emptied unread"
        ) in result.content, result.content
    else:
        assert f"a redirect took the page to {landing}: quest mode visits only" in (
            result.content
        ), result.content
    # The model reads nothing of where the redirect went.
    snap = call(reg, ctx, "browser_snapshot").content
    assert "served by port" not in snap and "about:blank" in snap


def test_opened_with_the_users_yes_the_same_site_is_read(
    reg: ToolRegistry, make: Make, web: Counting
) -> None:
    user = Scripted("allow")
    ctx = make("agent", user)
    landing = f"http://{ELSEWHERE}:{web.port}/landed"
    call(reg, ctx, "browser_open", url=f"http://127.0.0.1:{web.port}/redirect?to={quote(landing)}")
    opened = call(reg, ctx, "browser_open", url=landing)
    assert not opened.is_error and "emptied" not in opened.content, opened.content
    [asked] = user.asked  # the redirect asked nothing; browser_open did
    assert asked.summary == visit_summary(f"http://{ELSEWHERE}:{web.port}", landing)
    assert f"served by port {web.port}" in call(reg, ctx, "browser_snapshot").content
    # Now visited: a redirect there later is read, not emptied.
    again = call(
        reg, ctx, "browser_open", url=f"http://127.0.0.1:{web.port}/redirect?to={quote(landing)}"
    )
    assert "emptied" not in again.content and landing in again.content, again.content
