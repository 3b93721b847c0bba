"""Browser tool fixtures: a session context whose browser (Debian's Chromium) may visit 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import CHROMIUM, TEST_ARGS, MakeCtx, browser_env
from workhearth.agent.approval import Approver, allow_all
from workhearth.agent.audit import AuditLog
from workhearth.agent.browser.policy import SitePolicy
from workhearth.agent.browser.session import BrowserSession
from workhearth.agent.browser.tools import BROWSER_TOOLS
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import ToolContext, ToolRegistry
from workhearth.config import BrowserConfig, Config
from workhearth.sessions.session import Session


@pytest.fixture
def browser_home(tmp_path: Path) -> Path:
    home = tmp_path / "browser home"
    home.mkdir()
    return home


@pytest.fixture
def make_ctx(session: Session, fs: SafeFS, config: Config, browser_home: Path) -> Iterator[MakeCtx]:
    """``make_ctx(mode, approver, policy=None, extra_args=())``: a context whose browser
    follows ``policy`` (by default: ``mode``'s rules with 127.0.0.1 allowed)."""
    browsers: list[BrowserSession] = []

    def make(
        mode: str = "agent",
        approver: Approver = allow_all,
        *,
        policy: SitePolicy | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> ToolContext:
        browser = BrowserSession.for_session(
            session, CHROMIUM, env=browser_env(browser_home), extra_args=TEST_ARGS + extra_args
        )
        browser.policy = policy or SitePolicy.from_config(
            BrowserConfig(allow=("127.0.0.1",)),
            mode,  # type: ignore[arg-type]
        )
        browsers.append(browser)
        return ToolContext(
            session=session,
            fs=fs,
            mode=mode,  # type: ignore[arg-type]
            approver=approver,
            audit=AuditLog(config.paths.audit_log),
            browser=browser,
        )

    yield make
    for browser in browsers:
        browser.close()


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    """The test site (tests/agent/browser/site.py), one per test module."""
    with site.serve() as server:
        yield server


@pytest.fixture
def base(web: ThreadingHTTPServer) -> str:
    """The test site's address; what forms sent before this test is forgotten."""
    web.posts.clear()  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{web.server_address[1]}"


@pytest.fixture
def reg() -> ToolRegistry:
    return ToolRegistry(BROWSER_TOOLS)
