"""``hearth run`` shows each browser action in one line with its site and element (issue 25
item 4): the real command, a scripted model, Debian's Chromium, a site on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import needs_chromium
from tests.e2e.conftest import Hearth
from tests.e2e.test_agent_run import calls_reply, text_reply, write_config
from tests.e2e.test_first_hour import MODEL, hearth_run
from tests.fake_providers import FakeProvider

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    with site.serve() as server:
        yield server


def test_the_terminal_prints_each_browser_action_with_its_site_and_element(
    hearth: Hearth, web: ThreadingHTTPServer
) -> None:
    write_config(hearth, '[browser]\nallow = ["127.0.0.1"]\n')
    port = web.server_address[1]
    base = f"http://127.0.0.1:{port}"
    replies = [
        calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/table?page=1"})),
        calls_reply("openai", ("call_s", "browser_snapshot", {})),
        calls_reply("openai", ("call_c", "browser_click", {"ref": 1})),
        calls_reply("openai", ("call_l", "browser_open", {"url": f"{base}/login"})),
        calls_reply("openai", ("call_n", "browser_snapshot", {})),
        calls_reply("openai", ("call_t", "browser_type", {"ref": 2, "text": "ana-typed-name"})),
        text_reply("openai", "Done."),
    ]
    with FakeProvider(replies) as fake:
        ran = hearth_run(
            hearth, fake, "run", "browse", "--mode", "quest", "--model", MODEL, timeout=120
        )
    assert ran.code == 0, ran.err
    lines = [ln for ln in ran.out.splitlines() if ln.startswith("browser · ")]
    assert lines == [
        f"browser · open {base}/table?page=1",
        f"browser · 127.0.0.1:{port} · read the page",
        f"browser · 127.0.0.1:{port} · click “Next page” (ref 1)",
        f"browser · open {base}/login",
        f"browser · 127.0.0.1:{port} · read the page",
        f"browser · 127.0.0.1:{port} · type into “User” (ref 2)",
    ], ran.out
    assert "ana-typed-name" not in ran.out + ran.err  # what was typed is never printed
    [folder] = hearth.home.glob("projects/*/sessions/*/tool-outputs")
    pictures = sorted(p.name for p in folder.glob("*.jpg"))
    assert pictures == ["call_c.jpg", "call_l.jpg", "call_o.jpg"]  # after open, click, open
