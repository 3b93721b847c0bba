"""A password for the agent's browser typed on the page (issue 25): the approval event says
what to type, the answer carries it, the site gets it, and no event, model request,
transcript or audit line holds it. The real API (uvicorn), a scripted model, Debian's
Chromium and a sign-in page on 127.0.0.1 (tests/agent/browser/login_site.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser.browsing import needs_chromium
from tests.agent.browser.login_site import PASSWORD, serve_login
from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.tasks_helpers import Api
from tests.server.test_tasks import audit

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadingHTTPServer]:
    with serve_login() as server:
        yield server


def test_the_page_asks_for_the_password_and_only_the_site_gets_it(
    api_for: Callable[..., Api], tmp_path: Path, site: ThreadingHTTPServer
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[models]\nmax_retries = 0\n\n[browser]\nallow = ["127.0.0.1"]\n'
    )
    base = f"http://127.0.0.1:{site.server_address[1]}"
    api = api_for(
        [
            calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/login"})),
            calls_reply("openai", ("call_s", "browser_snapshot", {})),
            calls_reply("openai", ("call_u", "browser_type", {"ref": 1, "text": "ana"})),
            calls_reply(
                "openai", ("call_p", "browser_type", {"ref": 2, "text": "", "submit": True})
            ),
            calls_reply("openai", ("call_r", "browser_snapshot", {})),
            text_reply("openai", "Signed in."),
        ]
    )
    sid = api.start(task="sign in", mode="agent")
    url = f"/v1/tasks/{sid}/approvals/call_p"
    with api.events(sid) as events:
        seen = api.until(events, "approval")
        question = seen[-1].data
        assert question["secret"] == f"the password for 'Password' on {base}"
        assert question["summary"].startswith("type a password you give into Password")
        empty = api.client.post(url, json={"answer": "once"})
        assert empty.status_code == 422 and empty.json()["code"] == "approval_value", empty.text
        assert api.client.post(url, json={"answer": "once", "value": PASSWORD}).status_code == 204
        submit = api.until(events, "approval")
        assert "Password: ••••••••" in submit[-1].data["summary"]
        assert "secret" not in submit[-1].data
        assert api.client.post(url, json={"answer": "once"}).status_code == 204
        rest = list(events)
        seen += submit + rest
    assert rest[-1].data == {"reason": "done", "status": "done"}
    [sent] = site.received  # type: ignore[attr-defined]
    assert f"password={PASSWORD}".encode() in sent
    stream = json.dumps([e.data for e in seen], ensure_ascii=False)
    assert "type a password you give into Password" in stream and PASSWORD not in stream
    fake = api.fake  # type: ignore[attr-defined]
    assert len(fake.received) == 6
    assert all(PASSWORD.encode() not in r.raw for r in fake.received)
    messages = json.dumps(api.client.get(f"/v1/sessions/{sid}/messages").json(), ensure_ascii=False)
    assert "Signed in: ana / ••••••••" in messages and PASSWORD not in messages
    leaks = [
        p
        for p in home.rglob("*")
        if p.is_file() and "browser-profile" not in p.parts and PASSWORD.encode() in p.read_bytes()
    ]
    assert leaks == []
    typed = [r for r in audit(home) if r["call_id"] == "call_p"]
    assert [(r["decision"], r["outcome"]) for r in typed] == [("allowed-by-user", "ok")]
