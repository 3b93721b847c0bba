"""A form the browser's own checks stop is not reported as sent (issue 25).

Chromium validates a form before it sends it (``required``, ``type=email``,
``pattern``, ``min``/``max``): while a field fails it shows a bubble and sends
nothing. Each submitting action (a click on the button, Enter in a field, typing
with ``submit``) must then say so, naming each failing field with the browser's
message, as an error the audit keeps; a valid form still goes out. Real Chromium
against a form served on 127.0.0.1 whose server records every POST.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from tests.agent.browser.browsing import MakeCtx, call, needs_chromium, ref_of
from tests.agent.browser.pages import PageHandler, running
from workhearth.agent.approval import Answer, ApprovalRequest
from workhearth.agent.tools import ToolRegistry, ToolResult
from workhearth.config import Config

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium

_FIELDS = (
    '<label>Name <input name="name" required></label>'
    '<label>Email <input name="email" type="email"></label>'
    '<label>Code <input name="code" pattern="[A-Z]{3}"></label>'
    '<label>Count <input name="count" type="number" min="1" max="5"></label>'
    "<button>Send</button>"
)
FORM = f'<!doctype html><title>Order</title><form method="post" action="/send">{_FIELDS}</form>'
# Why: the page's own choice to skip the checks; the browser then sends whatever is there.
NOVALIDATE = FORM.replace("<form ", "<form novalidate ")
# A page that sends its form by script, then empties it: its required field fails *after*
# a submission that did go out, which must not read as blocked.
SCRIPTED = (
    '<!doctype html><title>Order</title><form id="f">' + _FIELDS + "</form><script>"
    "document.getElementById('f').addEventListener('submit', (e) => {"
    " e.preventDefault(); const body = new URLSearchParams(new FormData(e.target));"
    " e.target.reset(); fetch('/send', {method: 'POST', body}); });</script>"
)
NOTE = (
    '<!doctype html><title>Note</title><form method="post" action="/send">'
    '<label>Note <textarea name="note"></textarea></label><button>Send</button></form>'
)
PAGES = {"/form": FORM, "/novalidate": NOVALIDATE, "/scripted": SCRIPTED, "/note": NOTE}
VALID = {"Name": "Ana", "Email": "ana@example.com", "Code": "ABC", "Count": "3"}


class _Site(PageHandler):
    def do_GET(self) -> None:
        self._send(PAGES.get(self.path, "<!doctype html><title>Not found</title>"))

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append(parse_qs(body.decode()))  # type: ignore[attr-defined]
        self._send("<!doctype html><title>Thanks</title><p>Order received</p>")


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    server.received = []  # type: ignore[attr-defined]
    with running(server):
        yield server


@pytest.fixture
def base(web: ThreadingHTTPServer) -> str:
    web.received.clear()  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{web.server_address[1]}"


class Yes:
    """A person who allows every submission, and the questions they saw."""

    human = True

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def ask(self, request: ApprovalRequest) -> Answer:
        self.asked.append(request)
        return "once"


def _fill_and_submit(
    reg: ToolRegistry, make_ctx: MakeCtx, url: str, values: dict[str, str], way: str
) -> tuple[ToolResult, Yes]:
    """Open ``url``, type ``values`` into its fields in order, then submit ``way``: a
    click on Send, Enter in the last field, or the last field typed with submit."""
    user = Yes()
    ctx = make_ctx("agent", user)
    assert not call(reg, ctx, "browser_open", url=url).is_error
    snap = call(reg, ctx, "browser_snapshot").content
    *first, (last, text) = values.items()
    for label, value in first:
        assert not call(reg, ctx, "browser_type", ref=ref_of(snap, label), text=value).is_error
    field = ref_of(snap, last)
    if way == "type":
        return call(reg, ctx, "browser_type", ref=field, text=text, submit=True), user
    assert not call(reg, ctx, "browser_type", ref=field, text=text).is_error
    if way == "enter":
        return call(reg, ctx, "browser_press", key="Enter", ref=field), user
    return call(reg, ctx, "browser_click", ref=ref_of(snap, "Send")), user


WAYS = ("click", "enter", "type")
BLOCKED = {
    "required": ({"Name": ""}, "Name — Please fill out this field"),
    "email": ({"Email": "bob"}, "Email — Please include an '@' in the email address"),
    "pattern": ({"Code": "ab"}, "Code — Please match the requested format"),
    "max": ({"Count": "9"}, "Count — Value must be less than or equal to 5"),
}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("case", sorted(BLOCKED))
def test_a_form_the_browser_stops_is_reported_as_not_submitted(
    reg: ToolRegistry,
    make_ctx: MakeCtx,
    base: str,
    web: ThreadingHTTPServer,
    config: Config,
    case: str,
    way: str,
) -> None:
    wrong, words = BLOCKED[case]
    done, user = _fill_and_submit(reg, make_ctx, f"{base}/form", VALID | wrong, way)
    assert done.is_error, done.content
    first, *rest = done.content.splitlines()
    assert first.startswith(f"The form was not submitted: {words}"), done.content
    assert first.count(" — ") == 1  # only the failing field is named
    assert "nothing was sent" in rest[-1]
    assert web.received == []  # type: ignore[attr-defined]
    assert len(user.asked) == 1  # the user allowed a submission the browser then stopped
    tool = {"click": "browser_click", "enter": "browser_press", "type": "browser_type"}[way]
    audit = [json.loads(x) for x in config.paths.audit_log.read_text().splitlines()]
    line = [x for x in audit if x["tool"] == tool][-1]
    assert (line["decision"], line["outcome"]) == ("allowed-by-user", "error")
    assert line["summary"].startswith("The form was not submitted: ")


def test_every_failing_field_is_named_with_its_message(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer
) -> None:
    wrong = {"Name": "", "Email": "bob", "Code": "ab", "Count": "0"}
    done, _ = _fill_and_submit(reg, make_ctx, f"{base}/form", wrong, "click")
    assert done.is_error
    assert done.content.splitlines()[0] == (
        "The form was not submitted: Name — Please fill out this field; "
        "Email — Please include an '@' in the email address. 'bob' is missing an '@'; "
        "Code — Please match the requested format; "
        "Count — Value must be greater than or equal to 1."
    )
    assert web.received == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("way", WAYS)
def test_a_valid_form_is_sent_and_reported_as_done(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer, way: str
) -> None:
    done, user = _fill_and_submit(reg, make_ctx, f"{base}/form", VALID, way)
    assert not done.is_error, done.content
    assert "not submitted" not in done.content
    assert f'"Thanks" {base}/send' in done.content
    assert len(user.asked) == 1
    sent = {"name": ["Ana"], "email": ["ana@example.com"], "code": ["ABC"], "count": ["3"]}
    assert web.received == [sent]  # type: ignore[attr-defined]


def test_a_novalidate_form_is_sent_as_it_is(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer
) -> None:
    wrong = VALID | {"Email": "bob"}
    done, _ = _fill_and_submit(reg, make_ctx, f"{base}/novalidate", wrong, "click")
    assert not done.is_error, done.content
    assert [form["email"] for form in web.received] == [["bob"]]  # type: ignore[attr-defined]


def test_a_form_a_script_sends_then_empties_is_not_called_blocked(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer
) -> None:
    done, _ = _fill_and_submit(reg, make_ctx, f"{base}/scripted", VALID, "click")
    assert not done.is_error, done.content  # its Name is required, and empty again now
    assert "not submitted" not in done.content
    deadline = time.monotonic() + 5
    while not web.received and time.monotonic() < deadline:  # type: ignore[attr-defined]
        time.sleep(0.05)  # Why: the script's fetch goes out after the click returned
    assert len(web.received) == 1  # type: ignore[attr-defined]


def test_enter_in_a_textarea_is_a_new_line_not_a_submission(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, web: ThreadingHTTPServer
) -> None:
    user = Yes()
    ctx = make_ctx("agent", user)
    assert not call(reg, ctx, "browser_open", url=f"{base}/note").is_error
    note = ref_of(call(reg, ctx, "browser_snapshot").content, "Note")
    assert not call(reg, ctx, "browser_type", ref=note, text="first line").is_error
    pressed = call(reg, ctx, "browser_press", key="Enter", ref=note)
    assert not pressed.is_error and user.asked == [], pressed.content  # nothing to approve
    assert web.received == []  # type: ignore[attr-defined]
    assert ctx.browser is not None
    value = ctx.browser.do(lambda s: s.page().eval_on_selector("textarea", "e => e.value"))
    assert value == "first line\n"
