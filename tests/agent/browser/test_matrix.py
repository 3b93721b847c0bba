"""Who is asked, per mode (issue 25 item 3), through the registry with Debian's Chromium:
ask mode reads only and a first visit asks; agent mode asks on a first visit (and on
submissions, downloads and uploads: test_tools.py); a quest asks nothing, opens the
allowed sites and refuses the others; ``[quest] network = false`` offers no browser tool."""

from __future__ import annotations

import json
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import MakeCtx, call, needs_chromium, ref_of
from tests.agent.conftest import Tree
from tests.agent.test_approval import Scripted
from workhearth.agent.approval import Answer, ApprovalRequest, TerminalApprover
from workhearth.agent.browser.approvals import visit_summary
from workhearth.agent.browser.policy import READ_ONLY_TOOLS, SitePolicy
from workhearth.agent.tools import ToolRegistry
from workhearth.config import BrowserConfig, Config

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


class Nobody:
    """A person who is never asked in a quest: every question is recorded (and refused)."""

    human = True

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def ask(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request)
        return "deny"


@pytest.mark.parametrize("mode", ["ask", "agent"])
def test_a_first_visit_asks_and_a_no_opens_nothing(
    reg: ToolRegistry, make_ctx: MakeCtx, mode: str, config: Config
) -> None:
    user = Scripted("deny")
    ctx = make_ctx(mode, user)
    assert ctx.browser is not None
    ctx.browser.policy = SitePolicy.from_config(BrowserConfig(), mode)  # type: ignore[arg-type]
    url = "http://shop.test/search?q=what+the+model+read"
    refused = call(reg, ctx, "browser_open", url=url)
    assert refused.is_error and "The user did not allow visiting http://shop.test" in (
        refused.content
    )
    [asked] = user.asked
    assert asked.summary == visit_summary("http://shop.test", url) and not asked.allow_always
    assert not ctx.browser.running  # nothing was started, so nothing was sent
    [line] = [json.loads(x) for x in config.paths.audit_log.read_text().splitlines()]
    assert (line["tool"], line["decision"]) == ("browser_open", "denied-by-user")


def test_in_ask_mode_nobody_to_ask_a_first_visit_stops_the_run(
    reg: ToolRegistry, make_ctx: MakeCtx
) -> None:
    ctx = make_ctx("ask", TerminalApprover(None, interactive=False))
    assert ctx.browser is not None
    ctx.browser.policy = SitePolicy.from_config(BrowserConfig(), "ask")
    opened = call(reg, ctx, "browser_open", url="http://shop.test/")
    assert opened.is_error and "needs the user's approval and nobody was there" in opened.content
    assert ctx.gate is not None and ctx.gate.unasked is not None  # the runner stops on it


def test_ask_mode_offers_exactly_the_reading_tools(reg: ToolRegistry, make_ctx: MakeCtx) -> None:
    offered = {spec.name for spec in reg.specs("ask", make_ctx("ask"))}
    assert offered == set(READ_ONLY_TOOLS)
    assert {"browser_open", "browser_snapshot", "browser_extract", "browser_screenshot"} <= offered


def test_a_quest_asks_nothing_opens_allowed_sites_and_refuses_others(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer, tree: Tree
) -> None:
    user = Nobody()
    ctx = make_ctx("quest", user)  # [browser] allow = ["127.0.0.1"]
    other = call(reg, ctx, "browser_open", url="http://shop.test/")
    assert other.is_error and other.content.startswith("Refused:"), other.content
    assert not call(reg, ctx, "browser_open", url=f"{base}/login").is_error
    snap = call(reg, ctx, "browser_snapshot").content
    sent = call(reg, ctx, "browser_type", ref=ref_of(snap, "User"), text="ana", submit=True)
    assert not sent.is_error, sent.content
    assert web.posts == [{"user": ["ana"]}]  # type: ignore[attr-defined]
    call(reg, ctx, "browser_open", url=f"{base}/files")
    files = call(reg, ctx, "browser_snapshot").content
    got = call(reg, ctx, "browser_download", ref=ref_of(files, "Get the report"), path="r.csv")
    assert not got.is_error, got.content
    assert (tree.root / "r.csv").read_bytes() == site.CSV
    assert user.asked == []


def test_a_quest_without_network_offers_no_browser_tool(
    reg: ToolRegistry, make_ctx: MakeCtx, tmp_path: Path
) -> None:
    ctx = make_ctx("quest")
    assert ctx.browser is not None
    ctx.browser.policy = SitePolicy.from_config(
        BrowserConfig(allow=("127.0.0.1",)), "quest", quest_network=False
    )
    assert reg.specs("quest", ctx) == []
    called = call(reg, ctx, "browser_open", url="http://127.0.0.1:9/")
    assert called.is_error and "unknown tool 'browser_open'" in called.content
