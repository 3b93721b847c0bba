"""First visits remembered across a resume (agent/browser/visits.py): the sites the user let
the browser visit are kept in the session folder (``browser-sites.json``), read back when
a resumed run makes its policy, and nothing else is kept: not a site the user refused, an
allow-listed site, a quest's visits, nor anything of an encrypted session.

Real Chromium against the test site on 127.0.0.1, reached as ``localhost`` (a name, so its
first visit asks) through ``[browser] allow = ["127.0.0.0/8", "::1/128"]``; the last test
runs the real ``hearth run`` then ``hearth resume`` with a scripted model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser.browsing import MakeCtx, browser_env, call, needs_chromium
from tests.agent.test_approval import Scripted
from tests.e2e.conftest import Hearth, make_hearth
from tests.e2e.test_agent_run import calls_reply, text_reply, write_config
from tests.e2e.test_first_hour import MODEL, audit, hearth_run
from tests.fake_providers import FakeProvider
from workhearth.agent.approval import Approver
from workhearth.agent.browser.session import BrowserSession
from workhearth.agent.browser.visits import SITES, Visits
from workhearth.agent.tools import ToolContext, ToolRegistry
from workhearth.config import BrowserConfig, load_config
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium
LOOPBACK = BrowserConfig(allow=("127.0.0.0/8", "::1/128"))


@pytest.fixture
def local(web: ThreadingHTTPServer) -> str:
    """The test site by name: ``http://localhost:PORT`` (a first visit asks)."""
    return f"http://localhost:{web.server_address[1]}"


@pytest.fixture
def run_ctx(make_ctx: MakeCtx, session: Session, browser_home: Path) -> Iterator[MakeCtx]:
    """``run_ctx(mode, approver, session=…)``: a context whose browser and policy are made
    by :meth:`BrowserSession.for_run`, as ``hearth run`` and ``hearth resume`` make them."""
    browsers: list[BrowserSession] = []

    def make(mode: str, approver: Approver, of: Session = session) -> ToolContext:
        for done in browsers:  # Why: a resume starts after the run before it ended
            done.close()
        ctx = make_ctx(mode, approver)
        env = browser_env(browser_home)
        browser = BrowserSession.for_run(
            LOOPBACK,
            of,
            mode,  # type: ignore[arg-type]
            quest_network=True,
            env=env,
            home=browser_home,
        )
        assert browser is not None
        browser.extra_args = ("--no-sandbox",)
        browsers.append(browser)
        ctx.browser = browser
        ctx.session = of
        return ctx

    yield make
    for browser in browsers:
        browser.close()


def _kept(session: Session) -> object:
    path = session.folder / SITES
    return json.loads(path.read_bytes()) if path.exists() else None


def test_a_site_the_user_allowed_is_not_asked_again_by_the_next_runs_policy(
    reg: ToolRegistry, run_ctx: MakeCtx, session: Session, local: str
) -> None:
    user = Scripted("once")
    first = run_ctx("agent", user)
    opened = call(reg, first, "browser_open", url=f"{local}/table")
    assert not opened.is_error, opened.content
    assert len(user.asked) == 1
    assert _kept(session) == [local]
    assert (session.folder / SITES).stat().st_mode & 0o777 == 0o600
    # The resumed run: a new policy, the same session folder.
    again = Scripted()  # any question would fail: nothing is scripted
    second = run_ctx("agent", again)
    reopened = call(reg, second, "browser_open", url=f"{local}/table?page=2")
    assert not reopened.is_error and "Table page 2" in reopened.content, reopened.content
    assert again.asked == []


def test_a_site_the_user_refused_is_not_kept(
    reg: ToolRegistry, run_ctx: MakeCtx, session: Session, local: str
) -> None:
    refused = call(reg, run_ctx("agent", Scripted("deny")), "browser_open", url=f"{local}/")
    assert refused.is_error and "The user did not allow" in refused.content
    assert _kept(session) is None
    user = Scripted("deny")
    asked_again = call(reg, run_ctx("agent", user), "browser_open", url=f"{local}/")
    assert asked_again.is_error and len(user.asked) == 1


def test_allow_listed_sites_and_quest_visits_are_not_kept(
    reg: ToolRegistry, run_ctx: MakeCtx, session: Session, web: ThreadingHTTPServer
) -> None:
    listed = f"http://127.0.0.1:{web.server_address[1]}"  # written in 127.0.0.0/8: unasked
    for mode in ("agent", "quest"):
        opened = call(reg, run_ctx(mode, Scripted()), "browser_open", url=f"{listed}/table")
        assert not opened.is_error, opened.content
    assert _kept(session) is None


def test_an_encrypted_session_keeps_no_list(
    reg: ToolRegistry, run_ctx: MakeCtx, tmp_path: Path, local: str
) -> None:
    config = load_config(
        {"HEARTH_HOME": str(tmp_path / "sealed home"), "HEARTH_PASSPHRASE": "correct horse"}
    )
    work = tmp_path / "sealed work"
    work.mkdir()
    sealed = SessionStore(config, work).create(mode="agent", encrypt=True)
    try:
        assert sealed.encrypted
        user = Scripted("once", "once")
        opened = call(reg, run_ctx("agent", user, sealed), "browser_open", url=f"{local}/")
        assert not opened.is_error, opened.content
        assert not (sealed.folder / SITES).exists()
        call(reg, run_ctx("agent", user, sealed), "browser_open", url=f"{local}/")
        assert len(user.asked) == 2  # asked again: the price of keeping nothing in plain text
    finally:
        sealed.close()


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b'{"https://a.test": 1}', b'["file:///etc", "about:blank", 7, "x"]'],
)
def test_a_damaged_list_reads_as_empty_and_a_good_entry_survives(
    session: Session, content: bytes
) -> None:
    (session.folder / SITES).write_bytes(content)
    assert "https://a.test" not in Visits.of_session(session)
    (session.folder / SITES).write_bytes(b'["https://a.test", "https://A.test/x", 3]')
    visits = Visits.of_session(session)
    assert "https://a.test" in visits and "https://A.test/x" not in visits
    visits.add("http://b.test:8080")
    assert _kept(session) == ["http://b.test:8080", "https://a.test"]


# ------------------------------------------------------------ the whole program


@pytest.fixture
def hearth(tmp_path: Path) -> Hearth:
    return make_hearth(tmp_path)


def test_hearth_resume_does_not_ask_again_for_a_site_allowed_in_the_first_run(
    hearth: Hearth, local: str
) -> None:
    write_config(hearth, '[browser]\nallow = ["127.0.0.0/8", "::1/128"]\n')
    first = [
        calls_reply("openai", ("call_a", "browser_open", {"url": f"{local}/table"})),
        text_reply("openai", "Opened."),
    ]
    with FakeProvider(first) as fake:
        ran = hearth_run(
            hearth, fake, "run", "open the table", "--mode", "agent", "--yes", "--model", MODEL,
            timeout=90,
        )  # fmt: skip
    assert ran.code == 0, ran.err
    [kept] = hearth.home.glob(f"projects/*/sessions/*/{SITES}")
    assert json.loads(kept.read_bytes()) == [local]
    session_id = kept.parent.name
    with hearth.store().open(session_id) as session:
        session.append_message({"role": "user", "content": [{"type": "text", "text": "next"}]})
    # Without --yes and with no terminal: a question would stop the run `not-asked`.
    other = local.replace("//localhost", "//app.localhost")
    second = [
        calls_reply("openai", ("call_b", "browser_open", {"url": f"{local}/table?page=2"})),
        calls_reply("openai", ("call_c", "browser_open", {"url": f"{other}/table"})),
        text_reply("openai", "Never reached."),
    ]
    with FakeProvider(second) as fake:
        resumed = hearth_run(hearth, fake, "resume", session_id, "--model", MODEL, timeout=90)
        bodies = list(fake.bodies)
    assert len(bodies) == 2, resumed.err
    [page_two] = [m for m in bodies[1]["messages"] if m.get("tool_call_id") == "call_b"]
    assert "Table page 2" in page_two["content"], page_two["content"]
    # The site nobody allowed yet still asks, and with nobody there the run stops.
    assert resumed.code == 1 and "--yes" in resumed.err, resumed.err
    assert audit(hearth)[-3:] == [
        ("browser_open", "allowed-by-flag", "ok"),
        ("browser_open", "allowed-by-mode", "ok"),
        ("browser_open", "not-asked", "error"),
    ]
    assert json.loads(kept.read_bytes()) == [local]
