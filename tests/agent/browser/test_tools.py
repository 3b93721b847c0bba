"""The browser tools through the real registry, driving Debian's Chromium against a site
served on 127.0.0.1 (tests/agent/browser/site.py)."""

from __future__ import annotations

import json
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import MakeCtx, call, needs_chromium, ref_of
from tests.agent.browser.test_passwords import Typist
from tests.agent.conftest import Tree
from tests.agent.test_approval import Scripted
from workhearth.agent.approval import TerminalApprover
from workhearth.agent.browser.session import PROFILE, end_browsers_of
from workhearth.agent.tools import ToolRegistry
from workhearth.sessions.session import Session

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


def test_a_table_over_three_pages_is_read_as_rows(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str
) -> None:
    ctx = make_ctx("agent")
    opened = call(reg, ctx, "browser_open", url=f"{base}/table?page=1")
    assert not opened.is_error, opened.content
    assert '"Table page 1"' in opened.content
    rows: list[list[str]] = []
    for page in (1, 2, 3):
        snap = call(reg, ctx, "browser_snapshot").content
        assert f"# Sales, page {page}" in snap and "(table 1: 11 rows" in snap
        extract = call(reg, ctx, "browser_extract", table=1)
        got = json.loads(extract.content)["rows"]
        assert got[0] == ["Name", "Amount"]
        rows += got[1:]
        if page < 3:
            clicked = call(reg, ctx, "browser_click", ref=ref_of(snap, "Next page"))
            assert f"/table?page={page + 1}" in clicked.content, clicked.content
        else:
            assert "Next page" not in snap
    assert rows == [[name, str(amount)] for name, amount in site.ROWS]
    missing = call(reg, ctx, "browser_extract", table=2)
    assert missing.is_error and "there is no table 2; the page has 1" in missing.content


def test_a_login_asks_once_masks_the_password_and_reaches_the_page_behind_it(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer, config
) -> None:
    user = Typist("s3cret")  # the user types the password when asked (test_passwords.py)
    ctx = make_ctx("agent", user)
    call(reg, ctx, "browser_open", url=f"{base}/private")  # redirected to the form
    snap = call(reg, ctx, "browser_snapshot").content
    assert "/login" in snap.splitlines()[0]
    assert not call(reg, ctx, "browser_type", ref=ref_of(snap, "User"), text="ana").is_error
    password = ref_of(snap, "Password")
    typed = call(reg, ctx, "browser_type", ref=password, text="")
    assert typed.content == (
        f'Typed the password the user gave (hidden) into input[password] "" (ref {password}) '
        f"on {base}"
    )
    assert len(user.asked) == 1  # typing asks nothing but the password
    again = call(reg, ctx, "browser_snapshot").content
    assert "s3cret" not in again and '"Password" (filled, hidden)' in again
    signed = call(reg, ctx, "browser_click", ref=ref_of(snap, "Sign in"))
    assert not signed.is_error, signed.content
    assert "/private" in signed.content and '"Private"' in signed.content
    [_, asked] = user.asked
    assert asked.summary.splitlines() == [
        f"submit a form to {base} ({base}/login), sending:",
        "    User: 'ana'",
        "    Password: ••••••••",
    ]
    assert "Welcome ana" in call(reg, ctx, "browser_snapshot").content
    assert web.posts == [{"user": ["ana"], "password": ["s3cret"]}]  # type: ignore[attr-defined]
    # the audit says which element on which site, and who allowed the submission
    lines = [json.loads(x) for x in config.paths.audit_log.read_text().splitlines()]
    click = next(x for x in lines if x["tool"] == "browser_click")
    assert click["decision"] == "allowed-by-user"
    assert click["summary"] == f'Clicked button[submit] "Sign in" (ref 3) on {base}'


def test_a_submission_nobody_can_approve_is_not_sent(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer
) -> None:
    ctx = make_ctx("agent", TerminalApprover(None, interactive=False))
    call(reg, ctx, "browser_open", url=f"{base}/login")
    snap = call(reg, ctx, "browser_snapshot").content
    call(reg, ctx, "browser_type", ref=ref_of(snap, "User"), text="ana")
    pressed = call(reg, ctx, "browser_type", ref=ref_of(snap, "User"), text="ana", submit=True)
    assert pressed.is_error and "needs the user's approval and nobody was there" in pressed.content
    assert ctx.gate is not None and ctx.gate.unasked is not None  # the runner stops on it
    assert web.posts == []  # type: ignore[attr-defined]


def test_ask_mode_offers_only_reading_tools(reg: ToolRegistry, make_ctx: MakeCtx) -> None:
    ctx = make_ctx("ask")
    offered = {spec.name for spec in reg.specs("ask", ctx)}
    assert {"browser_open", "browser_snapshot", "browser_extract"} <= offered
    assert not offered & {"browser_click", "browser_type", "browser_download", "browser_upload"}
    refused = call(reg, ctx, "browser_click", ref=1)
    assert refused.is_error and "unknown tool 'browser_click'" in refused.content


def test_without_a_browser_no_browser_tool_is_offered(reg: ToolRegistry, make_ctx: MakeCtx) -> None:
    ctx = make_ctx("agent")
    ctx.browser = None
    assert reg.specs("agent", ctx) == []


def test_a_download_lands_under_the_models_name_after_a_yes(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, tree: Tree, tmp_path: Path
) -> None:
    user = Scripted("once", "once", "once")
    ctx = make_ctx("agent", user)
    call(reg, ctx, "browser_open", url=f"{base}/files")
    snap = call(reg, ctx, "browser_snapshot").content
    got = call(reg, ctx, "browser_download", ref=ref_of(snap, "Get the report"), path="in/r.csv")
    assert not got.is_error, got.content
    assert (tree.root / "in" / "r.csv").read_bytes() == site.CSV
    assert not list(tmp_path.rglob("evil.csv"))  # never the server's name
    asked = user.asked[0]
    assert "Get the report" in asked.summary and "in/r.csv" in asked.summary
    outside = call(
        reg, ctx, "browser_download", ref=ref_of(snap, "Get the report"), path="../x.csv"
    )
    assert outside.is_error and not (tree.root.parent / "x.csv").exists()
    none = call(
        reg, ctx, "browser_download", ref=ref_of(snap, "Not a file"), path="y.csv", seconds=1
    )
    assert none.is_error and "started no download within 1 seconds" in none.content


def test_an_upload_sends_a_workspace_file_and_nothing_outside(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, tree: Tree, web: ThreadingHTTPServer
) -> None:
    (tree.root / "report.txt").write_text("quarterly numbers 1234\n")
    user = Scripted("once", "once", "once", "once")
    ctx = make_ctx("agent", user)
    call(reg, ctx, "browser_open", url=f"{base}/upload")
    snap = call(reg, ctx, "browser_snapshot").content
    field = ref_of(snap, "Report")
    secret = call(reg, ctx, "browser_upload", ref=field, path=str(tree.secret))
    assert secret.is_error and "TOP SECRET" not in secret.content
    put = call(reg, ctx, "browser_upload", ref=field, path="report.txt")
    assert not put.is_error and "report.txt (23 bytes)" in put.content
    not_a_file = call(reg, ctx, "browser_upload", ref=ref_of(snap, "Send"), path="report.txt")
    assert not_a_file.is_error and "is not a file input" in not_a_file.content
    sent = call(reg, ctx, "browser_click", ref=ref_of(snap, "Send"))
    assert "Received" in call(reg, ctx, "browser_extract").content, sent.content
    [body] = [p["upload"] for p in web.posts]  # type: ignore[attr-defined]
    assert b"quarterly numbers 1234" in body and b"TOP SECRET" not in body
    assert "upload" in user.asked[0].summary and "report.txt" in user.asked[0].summary


def test_a_page_that_changes_under_the_agent_gives_stale_refs_in_words(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str
) -> None:
    ctx = make_ctx("agent")
    call(reg, ctx, "browser_open", url=f"{base}/changing")
    first = call(reg, ctx, "browser_snapshot").content
    old = ref_of(first, "Old button")
    assert not call(reg, ctx, "browser_wait", text="Version 2", seconds=15).is_error
    stale = call(reg, ctx, "browser_click", ref=old)
    assert stale.is_error
    assert stale.content == f"ref {old} is no longer on the page; take a new snapshot"
    unknown = call(reg, ctx, "browser_click", ref=999)
    assert unknown.is_error and "there is no ref 999" in unknown.content
    fresh = call(reg, ctx, "browser_snapshot").content
    new = ref_of(fresh, "New button")
    assert new > old  # refs never repeat within a session
    clicked = call(reg, ctx, "browser_click", ref=new)
    assert '"new clicked"' in clicked.content, clicked.content


def test_popups_become_tabs(reg: ToolRegistry, make_ctx: MakeCtx, base: str) -> None:
    ctx = make_ctx("agent")
    call(reg, ctx, "browser_open", url=f"{base}/popup")
    snap = call(reg, ctx, "browser_snapshot").content
    clicked = call(reg, ctx, "browser_click", ref=ref_of(snap, "Open the table in a new tab"))
    assert "1 new tab(s) opened" in clicked.content and "tab 2 of 2" in clicked.content
    window = call(reg, ctx, "browser_click", ref=ref_of(snap, "Sign-in window"))
    assert window.is_error  # the current tab is the table now: its refs are not the popup page's
    tabs = call(reg, ctx, "browser_tabs", switch=1).content.splitlines()
    assert tabs[0].startswith("* 1.") and '"Popup"' in tabs[0] and "/table?page=1" in tabs[1]
    window = call(reg, ctx, "browser_click", ref=ref_of(snap, "Sign-in window"))
    assert "tab 3 of 3" in window.content and '"Sign in"' in window.content
    closed = call(reg, ctx, "browser_close", tab=3).content
    assert len(closed.splitlines()) == 2
    assert call(reg, ctx, "browser_tabs", switch=7).is_error


def test_a_slow_page_and_a_missing_text_time_out_in_words(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str
) -> None:
    ctx = make_ctx("agent")
    slow = call(reg, ctx, "browser_open", url=f"{base}/slow", seconds=1)
    assert not slow.is_error
    assert slow.content.startswith(f"{base}/slow did not finish loading within 1 seconds")
    waited = call(reg, ctx, "browser_wait", text="finally", seconds=8)
    assert not waited.is_error, waited.content
    missing = call(reg, ctx, "browser_wait", text="never there", seconds=0.5)
    assert missing.is_error
    assert "waited 0.5 seconds: the text 'never there' did not show" in missing.content


def test_the_site_policy_refuses_in_words(reg: ToolRegistry, make_ctx: MakeCtx, base: str) -> None:
    ctx = make_ctx("agent")
    local = call(reg, ctx, "browser_open", url="file:///etc/passwd")
    assert local.is_error and "file: URLs are not opened" in local.content
    port = base.rsplit(":", 1)[1]
    other = call(reg, ctx, "browser_open", url=f"http://127.0.0.2:{port}/table")
    assert other.is_error and "loopback" in other.content


def test_scroll_back_screenshot_and_close(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, session: Session, browser_home: Path
) -> None:
    ctx = make_ctx("agent")
    assert call(reg, ctx, "browser_back").is_error  # nothing opened yet: no earlier page
    call(reg, ctx, "browser_open", url=f"{base}/big")
    scrolled = call(reg, ctx, "browser_scroll", direction="down").content
    assert scrolled.startswith("Scrolled down: showing ")
    call(reg, ctx, "browser_open", url=f"{base}/table?page=2")
    back = call(reg, ctx, "browser_back")
    assert "/big" in back.content, back.content
    shot = call(reg, ctx, "browser_screenshot")
    path = Path(shot.content.rsplit(" at ", 1)[1])
    assert path.parent == session.folder / "tool-outputs"
    assert path.read_bytes().startswith(b"\x89PNG")
    assert (session.folder / PROFILE).is_dir()
    assert call(reg, ctx, "browser_close").content == "Closed the browser"
    assert end_browsers_of(session.folder / PROFILE) == 0  # nothing left to end
    assert not (browser_home / ".config").exists()  # the user's own folders untouched
    again = call(reg, ctx, "browser_open", url=f"{base}/table?page=1")
    assert not again.is_error and "tab 1 of 1" in again.content


def test_a_snapshot_is_cut_in_words(reg: ToolRegistry, make_ctx: MakeCtx, base: str) -> None:
    ctx = make_ctx("agent")
    call(reg, ctx, "browser_open", url=f"{base}/big")
    snap = call(reg, ctx, "browser_snapshot", max_tokens=1000).content
    assert snap.endswith("or browser_extract for the whole text]")
    assert len(snap) < 6_000


def test_the_next_browser_of_the_session_reopens_its_tabs_still_signed_in(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, session: Session
) -> None:
    first = make_ctx("agent", Typist("s3cret"))
    call(reg, first, "browser_open", url=f"{base}/login")
    snap = call(reg, first, "browser_snapshot").content
    call(reg, first, "browser_type", ref=ref_of(snap, "User"), text="ana")
    call(reg, first, "browser_type", ref=ref_of(snap, "Password"), text="")
    assert "/private" in call(reg, first, "browser_click", ref=ref_of(snap, "Sign in")).content
    call(reg, first, "browser_open", url=f"{base}/table?page=2", new_tab=True)
    assert call(reg, first, "browser_close").content == "Closed the browser"
    resumed = make_ctx("agent")  # a resume: a new browser on the same session's profile
    again = call(reg, resumed, "browser_snapshot").content
    assert again.startswith(f"Note: reopened {base}/private")
    assert f"Note: reopened {base}/table?page=2" in again and "# Sales, page 2" in again
    tabs = call(reg, resumed, "browser_tabs").content.splitlines()
    assert f'  1. "Private" {base}/private' in tabs  # the login's cookie is in the profile
