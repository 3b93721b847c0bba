"""Passwords in the agent's browser (issue 25 item 3): the value comes from the user at
approval time, reaches the site, and nothing else: not the tool result the model reads,
the audit, the session's files. Real Chromium against a login page served on 127.0.0.1
whose server records the bytes it received."""

from __future__ import annotations

import io
import json
import os
import pty
import termios
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from tests.agent.browser.browsing import MakeCtx, call, needs_chromium, ref_of
from tests.agent.browser.login_site import PASSWORD, PIN, serve_login
from workhearth.agent.approval import (
    Answer,
    ApprovalRequest,
    Gate,
    SecretAsk,
    TerminalApprover,
    read_hidden,
)
from workhearth.agent.browser.approvals import MASK
from workhearth.agent.browser.session import PROFILE
from workhearth.agent.tools import ToolContext, ToolRegistry
from workhearth.config import Config
from workhearth.sessions.session import Session

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadingHTTPServer]:
    with serve_login() as server:
        yield server


@pytest.fixture
def base(site: ThreadingHTTPServer) -> str:
    site.received.clear()  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{site.server_address[1]}"


class Typist:
    """A person at the approval: answers ``answer``, typing ``values`` (one per secret asked)."""

    human = True

    def __init__(self, *values: str, answer: Answer = "once") -> None:
        self.values = list(values)
        self.answer: Answer = answer
        self.asked: list[ApprovalRequest] = []

    def ask(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request)
        if request.secret is not None and self.values:
            request.secret.value = self.values.pop(0)
        return self.answer


def _leaks(config: Config, session: Session, secret: str) -> list[str]:
    """Every file of hearth's home holding ``secret``, but the browser's own profile (the
    browser is where the user's password is meant to go)."""
    needle = secret.encode()
    found = []
    for path in config.home.rglob("*"):
        if path.is_file() and PROFILE not in path.relative_to(config.home).parts:
            if needle in path.read_bytes():
                found.append(str(path))
    return found


def _sign_in_form(reg: ToolRegistry, ctx: ToolContext, base: str) -> str:
    opened = call(reg, ctx, "browser_open", url=f"{base}/login")
    assert not opened.is_error, opened.content
    snap = call(reg, ctx, "browser_snapshot").content
    assert not call(reg, ctx, "browser_type", ref=ref_of(snap, "User"), text="ana").is_error
    return snap


def test_the_password_comes_from_the_user_and_only_the_site_gets_it(
    reg: ToolRegistry,
    make_ctx: MakeCtx,
    base: str,
    site: ThreadingHTTPServer,
    config: Config,
    session: Session,
) -> None:
    user = Typist(PASSWORD, PIN)
    ctx = make_ctx("agent", user)
    snap = _sign_in_form(reg, ctx, base)
    results = [
        call(reg, ctx, "browser_type", ref=ref_of(snap, "Password"), text=""),
        call(reg, ctx, "browser_type", ref=ref_of(snap, "Card code"), text=""),
    ]
    for typed in results:
        assert typed.content.startswith("Typed the password the user gave (hidden) into")
    asked = user.asked[0]
    assert asked.secret is not None and not asked.allow_always
    assert asked.summary == (f"type a password you give into Password on {base} ({base}/login)")
    assert asked.secret.prompt == f"the password for 'Password' on {base}"
    assert PASSWORD not in repr(asked)
    signed = call(reg, ctx, "browser_click", ref=ref_of(snap, "Sign in"))
    assert not signed.is_error, signed.content
    assert "Password: " + MASK in user.asked[2].summary  # the submission's card
    results += [signed, call(reg, ctx, "browser_snapshot"), call(reg, ctx, "browser_extract")]
    # the site got both, as the user typed them
    [body] = site.received  # type: ignore[attr-defined]
    form = parse_qs(body.decode())
    assert form["password"] == [PASSWORD] and form["card_pin"] == [PIN]
    # the page echoes them; the model reads masks
    assert f"Signed in: ana / {MASK} / {MASK}" in results[-2].content
    for result in results:
        assert PASSWORD not in result.content and PIN not in result.content
    lines = [json.loads(x) for x in config.paths.audit_log.read_text().splitlines()]
    typed_lines = [x for x in lines if x["tool"] == "browser_type"][1:]
    assert [x["decision"] for x in typed_lines] == ["allowed-by-user", "allowed-by-user"]
    assert all(x["arguments"]["text"] == "" for x in typed_lines)
    assert _leaks(config, session, PASSWORD) == [] and _leaks(config, session, PIN) == []


def test_a_password_the_model_brings_is_refused_and_kept_out_of_the_audit(
    reg: ToolRegistry,
    make_ctx: MakeCtx,
    base: str,
    site: ThreadingHTTPServer,
    config: Config,
    session: Session,
) -> None:
    user = Typist(PASSWORD)
    ctx = make_ctx("agent", user)
    snap = _sign_in_form(reg, ctx, base)
    refused = call(reg, ctx, "browser_type", ref=ref_of(snap, "Password"), text=PASSWORD)
    assert refused.is_error and 'call browser_type with text "" and the user' in refused.content
    assert user.asked == []
    again = call(reg, ctx, "browser_snapshot").content
    assert '"Password" (empty)' in again  # nothing was typed
    lines = [json.loads(x) for x in config.paths.audit_log.read_text().splitlines()]
    [_, line] = [x for x in lines if x["tool"] == "browser_type"]
    assert line["arguments"]["text"] == MASK and line["outcome"] == "error"
    assert _leaks(config, session, PASSWORD) == []
    assert site.received == []  # type: ignore[attr-defined]


def test_nobody_to_ask_stops_as_not_asked_and_types_nothing(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, site: ThreadingHTTPServer
) -> None:
    ctx = make_ctx("agent", TerminalApprover(None, interactive=False, yes=True))
    snap = _sign_in_form(reg, ctx, base)
    typed = call(reg, ctx, "browser_type", ref=ref_of(snap, "Password"), text="")
    assert typed.is_error and typed.content == (
        "Not done: a password field needs the user; "
        "run it in agent mode with a terminal or the page"
    )
    assert ctx.gate is not None and ctx.gate.unasked is not None  # the runner stops on it
    assert ctx.gate.unasked.secret is not None
    assert '"Password" (empty)' in call(reg, ctx, "browser_snapshot").content


def test_a_quest_refuses_a_password_field_in_words_without_asking(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str
) -> None:
    user = Typist(PASSWORD)
    ctx = make_ctx("quest", user)
    snap = _sign_in_form(reg, ctx, base)
    typed = call(reg, ctx, "browser_type", ref=ref_of(snap, "Password"), text="")
    assert typed.is_error and typed.content == (
        "Refused: a password field needs the user; run it in agent mode with a terminal or the page"
    )
    assert user.asked == [] and ctx.gate is not None and ctx.gate.unasked is None


def test_an_approver_with_no_person_types_no_password(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str
) -> None:
    ctx = make_ctx("agent")  # allow_all: says yes to everything, can type nothing
    snap = _sign_in_form(reg, ctx, base)
    typed = call(reg, ctx, "browser_type", ref=ref_of(snap, "Password"), text="")
    assert typed.is_error and "a password field needs the user" in typed.content


def test_an_empty_answer_at_the_terminal_is_a_no(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str
) -> None:
    out = io.StringIO()
    ctx = make_ctx("agent", TerminalApprover(io.StringIO("\n"), out, interactive=True))
    snap = _sign_in_form(reg, ctx, base)
    typed = call(reg, ctx, "browser_type", ref=ref_of(snap, "Password"), text="")
    assert typed.is_error and "did not give the password" in typed.content
    assert f"Type the password for 'Password' on {base} (hidden" in out.getvalue()


# ------------------------------------------------------------ the terminal, alone
def test_the_terminal_reads_the_password_without_showing_it() -> None:
    out = io.StringIO()
    approver = TerminalApprover(io.StringIO(PASSWORD + "\n"), out, interactive=True)
    ask = SecretAsk("the password for 'Password' on https://a.test")
    verdict = Gate("agent", approver=approver).decide(
        "browser_type", read_only=False, summary="type a password", secret=ask
    )
    assert verdict.decision == "allowed-by-user" and ask.value == PASSWORD
    assert PASSWORD not in out.getvalue()
    assert "Type the password for 'Password' on https://a.test (hidden" in out.getvalue()


def test_yes_cannot_type_a_password_and_always_never_skips_the_question() -> None:
    ask = SecretAsk("the password")
    blind = TerminalApprover(io.StringIO(), yes=True, interactive=False)
    assert blind.ask(ApprovalRequest("browser_type", "x", secret=ask)) == "unasked"
    assert ask.value is None
    user = Typist("one", "two")
    gate = Gate("agent", approver=user)
    gate.always.add("browser_type")
    for value in ("one", "two"):
        again = SecretAsk("the password")
        gate.decide("browser_type", read_only=False, summary="x", secret=again)
        assert again.value == value
    assert len(user.asked) == 2


def test_the_terminal_turns_its_echo_off_for_the_password() -> None:
    """On a real terminal (a pty) the typed characters are not echoed back."""
    leader, follower = pty.openpty()
    got: list[str | None] = []
    try:
        with open(follower, closefd=False) as stream:
            reader = threading.Thread(target=lambda: got.append(read_hidden(stream)))
            reader.start()
            deadline = time.monotonic() + 5
            while termios.tcgetattr(follower)[3] & termios.ECHO:
                assert time.monotonic() < deadline, "the echo was never turned off"
                time.sleep(0.01)
            os.write(leader, PASSWORD.encode() + b"\n")
            reader.join(5)
            assert got == [PASSWORD + "\n"]
            assert termios.tcgetattr(follower)[3] & termios.ECHO  # restored
        os.set_blocking(leader, False)
        try:
            echoed = os.read(leader, 1000)
        except BlockingIOError:
            echoed = b""
        assert PASSWORD.encode() not in echoed
    finally:
        os.close(leader)
        os.close(follower)
