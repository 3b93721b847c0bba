"""A user's stop ends the task's browser at once, mid-page (issue 25), over the real API.

The model is a scripted OpenAI-compatible server; the browser is Debian's Chromium; the
page is tests/agent/browser/site.py's ``/slow`` (it answers after 4 seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import needs_chromium
from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.tasks_helpers import Api

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


def _browsers_under(home: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if f"--user-data-dir={home}" in args.replace("\0", " "):
                found.append(int(entry.name))
    return found


def test_a_stop_ends_the_browser_mid_page(api_for: Callable[..., Api], tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[models]\nmax_retries = 0\n\n[browser]\nallow = ["127.0.0.1"]\n'
    )
    with site.serve() as web:
        url = f"http://127.0.0.1:{web.server_address[1]}/slow"
        opening = calls_reply("openai", ("call_b", "browser_open", {"url": url, "seconds": 60}))
        api = api_for([opening, text_reply("openai", "never")])
        sid = api.start(task="open the slow page", mode="quest")
        with api.events(sid) as events:
            api.until(events, "tool_call")
            deadline = time.monotonic() + 30
            while not _browsers_under(home) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _browsers_under(home), "the task should have started its browser"
            asked = time.monotonic()
            assert api.client.post(f"/v1/tasks/{sid}/stop").status_code == 202
            rest = list(events)
            ended = time.monotonic() - asked
    assert rest[-1].data == {"reason": "stopped", "status": "stopped"}
    assert ended < 3.0, ended  # /slow would have held it 4 s
    assert _browsers_under(home) == []
