"""Refs inside iframes (frames.py): the snapshot reads each frame the page shows, and the
tools act by ref in whichever frame holds it — real Chromium against two sites served
here, one on 127.0.0.1 and one on 127.0.0.2 (another site: Chromium runs its frames in
a process of their own, as a payment or sign-in frame of another company would be)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from tests.agent.browser.browsing import (
    MakeCtx,
    call,
    needs_chromium,
    ref_of,
)
from tests.agent.browser.pages import PageHandler
from tests.agent.browser.test_passwords import Typist
from workhearth.agent.browser.policy import SitePolicy
from workhearth.agent.tools import ToolContext, ToolRegistry
from workhearth.config import BrowserConfig

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium

OTHER = "127.0.0.2"  # the other site's address (loopback: Linux answers all of 127/8)


def _page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>"
        f"<body>{body}</body></html>"
    ).encode()


class _Handler(PageHandler):
    def do_GET(self) -> None:
        server = self.server
        other = f"http://{OTHER}:{server.other_port}"  # type: ignore[attr-defined]
        pages = {
            "/outer": _page(
                "Outer",
                "<h1>Outer page</h1><p>Before the frames</p>"
                '<iframe src="/sign-in" title="Sign-in frame"></iframe>'
                "<p>Between the frames</p>"
                f'<iframe src="{other}/pay" title="Payment"></iframe>'
                "<p>After the frames</p>",
            ),
            "/sign-in": _page(
                "Sign in here",
                '<form method="post" action="/sign-in"><label>Member <input name="member">'
                '</label><button type="submit">Send it</button></form>',
            ),
            "/pay": _page(
                "Card payment",
                '<p>Pay 12 euros</p><form method="post" action="/pay">'
                '<button type="submit" name="pay" value="yes">Pay now</button></form>',
            ),
            "/refused-frame": _page(
                "Refused",
                "<p>Above</p>"
                '<iframe src="http://127.0.0.3:9/secret" title="Router"></iframe>'
                "<p>Below</p>",
            ),
            "/hidden-frame": _page(
                "Checkout",
                '<iframe src="/sign-in" title="Sign-in frame"></iframe>'
                '<iframe id="pay" src="/pay" style="display:none"></iframe>'
                "<button onclick=\"document.getElementById('pay').style.display='block'\">"
                "Show payment</button>",
            ),
            "/nested": _page("Nested", '<p>Level 0</p><iframe src="/level?n=1"></iframe>'),
            "/reloading": _page(
                "Reloading",
                '<iframe src="/reloader" title="Counter"></iframe>'
                "<button onclick=\"document.querySelector('iframe').remove()\">Remove frame"
                "</button>",
            ),
            "/with-table": _page(
                "Tables",
                "<table><tr><th>Outer</th></tr><tr><td>o1</td></tr></table>"
                '<iframe src="/table-only" title="Report"></iframe>',
            ),
            "/table-only": _page(
                "Report",
                "<p>Quarterly report</p><table><tr><th>Name</th><th>Sum</th></tr>"
                "<tr><td>north</td><td>7</td></tr><tr><td>south</td><td>9</td></tr></table>",
            ),
        }
        path, _, query = self.path.partition("?")
        if path == "/level":
            n = int(parse_qs(query)["n"][0])
            inner = f'<iframe src="/level?n={n + 1}"></iframe>' if n < 5 else ""
            self._send(_page(f"Level {n}", f"<button>Button {n}</button>{inner}"))
        elif path == "/reloader":
            server.loads += 1  # type: ignore[attr-defined]
            count = server.loads  # type: ignore[attr-defined]
            self._send(
                _page(
                    "Counter",
                    f"<p>Load {count}</p><button>Stay</button>"
                    '<button onclick="location.reload()">Reload me</button>',
                )
            )
        elif path in pages:
            self._send(pages[path])
        else:
            self.send_error(404)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.posts.append((self.path, parse_qs(body.decode())))  # type: ignore[attr-defined]
        self._send(_page("Thanks", "<p>Received, thank you</p>"))


def _start(host: str) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, 0), _Handler)
    server.daemon_threads = True
    server.posts = []  # type: ignore[attr-defined]
    server.loads = 0  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[ThreadingHTTPServer, ThreadingHTTPServer]]:
    here, other = _start("127.0.0.1"), _start(OTHER)
    here.other_port = other.server_address[1]  # type: ignore[attr-defined]
    other.other_port = other.server_address[1]  # type: ignore[attr-defined]
    try:
        yield here, other
    finally:
        for server in (here, other):
            server.shutdown()
            server.server_close()


@pytest.fixture
def base(sites: tuple[ThreadingHTTPServer, ThreadingHTTPServer]) -> str:
    for server in sites:
        server.posts.clear()  # type: ignore[attr-defined]
    return f"http://127.0.0.1:{sites[0].server_address[1]}"


@pytest.fixture
def user() -> Typist:
    return Typist()  # says yes to each question, and keeps them


@pytest.fixture
def ctx(make_ctx: MakeCtx, user: Typist) -> ToolContext:
    """An agent-mode context whose browser may visit both sites (allow-listed)."""
    policy = SitePolicy.from_config(BrowserConfig(allow=("127.0.0.1", OTHER)), "agent")
    return make_ctx("agent", user, policy=policy)


def _until(check: Callable[[], object], what: Callable[[], str], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, f"waited {seconds:g} s for {what()}"
        time.sleep(0.05)


def _snapshot_when(reg: ToolRegistry, ctx: ToolContext, text: str) -> str:
    """A snapshot once ``text`` shows in it (a frame loads after its page)."""
    found: list[str] = []

    def has() -> bool:
        found[:] = [call(reg, ctx, "browser_snapshot").content]
        return text in found[0]

    _until(has, lambda: f"{text!r} in:\n{found[0]}")
    return found[0]


def test_a_form_in_a_same_origin_frame_is_typed_into_and_sent(
    reg: ToolRegistry, ctx: ToolContext, base: str, sites, user: Typist
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/outer")
    snap = _snapshot_when(reg, ctx, "Pay now")
    lines = snap.splitlines()
    # the frame's lines stand where its <iframe> does, indented under its own line
    start = lines.index(f'frame "Sign in here" ({base}/sign-in)')
    assert lines[start - 1] == "Before the frames" and lines[start + 4] == "Between the frames"
    assert lines[start + 1 : start + 3] == [
        "  Member",
        f'  [{ref_of(snap, "Member")}] textbox "Member"',
    ]
    assert lines[-1] == "After the frames"
    refs = [int(x.split("]")[0].split("[")[-1]) for x in lines if "] " in x]
    assert len(refs) == len(set(refs)) == 3  # one counter: refs unique in the tab
    typed = call(reg, ctx, "browser_type", ref=ref_of(snap, "Member"), text="ana")
    assert not typed.is_error, typed.content
    assert '"ana"' in call(reg, ctx, "browser_snapshot").content
    sent = call(reg, ctx, "browser_click", ref=ref_of(snap, "Send it"))
    assert not sent.is_error, sent.content
    _until(lambda: sites[0].posts, lambda: f"the form after:\n{sent.content}")
    assert sites[0].posts == [("/sign-in", {"member": ["ana"]})]
    # the approval showed the frame's form and where it goes
    assert user.asked[-1].summary.splitlines() == [
        f"submit a form to {base} ({base}/sign-in), sending:",
        "    Member: 'ana'",
    ]
    _snapshot_when(reg, ctx, "Received, thank you")


def test_a_button_in_a_frame_of_another_site_is_clicked(
    reg: ToolRegistry, ctx: ToolContext, base: str, sites, user: Typist
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/outer")
    snap = _snapshot_when(reg, ctx, "Pay now")
    other = f"http://{OTHER}:{sites[1].server_address[1]}"
    assert f'frame "Card payment" ({other}/pay)' in snap
    assert "  Pay 12 euros" in snap.splitlines()
    clicked = call(reg, ctx, "browser_click", ref=ref_of(snap, "Pay now"))
    assert not clicked.is_error, clicked.content
    assert clicked.content.startswith('Clicked button[submit] "Pay now" (ref ')
    assert f"on {other}" in clicked.content.splitlines()[0]  # the frame's site, not the tab's
    _until(lambda: sites[1].posts, lambda: f"the payment form after:\n{clicked.content}")
    assert sites[1].posts == [("/pay", {"pay": ["yes"]})]
    assert user.asked[-1].summary.startswith(f"submit a form to {other} ({other}/pay)")
    assert sites[0].posts == []


def test_nested_frames_are_read_three_deep(reg: ToolRegistry, ctx: ToolContext, base: str) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/nested")
    snap = _snapshot_when(reg, ctx, "nest deeper")
    lines = snap.splitlines()
    for n, indent in ((1, ""), (2, "  "), (3, "    ")):
        assert f'{indent}frame "Level {n}" ({base}/level?n={n})' in lines
        assert f'{indent}  [{ref_of(snap, f"Button {n}")}] button "Button {n}"' in lines
    assert f'      frame "" ({base}/level?n=4): not read (frames nest deeper than 3)' in lines
    assert "Button 4" not in snap
    clicked = call(reg, ctx, "browser_click", ref=ref_of(snap, "Button 3"))
    assert not clicked.is_error and 'Clicked button "Button 3"' in clicked.content


def test_a_ref_of_a_frame_that_reloaded_or_went_away_is_stale_in_words(
    reg: ToolRegistry, ctx: ToolContext, base: str
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/reloading")
    snap = _snapshot_when(reg, ctx, "Reload me")
    stay = ref_of(snap, "Stay")
    assert not call(reg, ctx, "browser_click", ref=stay).is_error
    load = next(x for x in snap.splitlines() if "Load " in x).strip()
    assert not call(reg, ctx, "browser_click", ref=ref_of(snap, "Reload me")).is_error
    fresh = _snapshot_when(reg, ctx, f"Load {int(load.split()[1]) + 1}")
    stale = call(reg, ctx, "browser_click", ref=stay)
    assert stale.is_error
    assert stale.content == f"ref {stay} is no longer on the page; take a new snapshot"
    again = ref_of(fresh, "Stay")
    assert again > stay and not call(reg, ctx, "browser_click", ref=again).is_error
    # the frame removed from the page: its refs are gone too
    assert not call(reg, ctx, "browser_click", ref=ref_of(fresh, "Remove frame")).is_error
    gone = call(reg, ctx, "browser_type", ref=again, text="x")
    assert gone.is_error
    assert gone.content == f"ref {again} is no longer on the page; take a new snapshot"
    assert "Counter" not in call(reg, ctx, "browser_snapshot").content


def test_a_frame_s_text_and_table_are_in_the_snapshot_and_the_extract(
    reg: ToolRegistry, ctx: ToolContext, base: str
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/with-table")
    snap = _snapshot_when(reg, ctx, "Quarterly report")
    assert "(table 1: 2 rows; browser_extract table=1 gives its rows)" in snap
    assert "  (table 2: 3 rows; browser_extract table=2 gives its rows)" in snap.splitlines()
    assert json.loads(call(reg, ctx, "browser_extract", table=1).content)["rows"] == [
        ["Outer"],
        ["o1"],
    ]
    rows = json.loads(call(reg, ctx, "browser_extract", table=2).content)["rows"]
    assert rows == [["Name", "Sum"], ["north", "7"], ["south", "9"]]
    text = call(reg, ctx, "browser_extract").content
    assert text.startswith("Outer\no1")
    assert f'frame "Report" ({base}/table-only):\nQuarterly report' in text


def test_the_snapshot_cut_counts_the_frames_lines(
    reg: ToolRegistry, ctx: ToolContext, base: str
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/outer")
    _snapshot_when(reg, ctx, "Pay now")
    short = call(reg, ctx, "browser_snapshot", max_tokens=500).content
    assert "After the frames" in short  # small enough: whole
    browser = ctx.browser
    assert browser is not None
    text, cut = browser.do(lambda s: s.snapshot(s.page(), 60))
    assert cut and len(text) <= 60 and text.startswith("# Outer page")


def test_enter_pressed_in_a_frame_s_form_asks_before_it_is_sent(
    reg: ToolRegistry, ctx: ToolContext, base: str, sites, user: Typist
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/outer")
    snap = _snapshot_when(reg, ctx, "Pay now")
    call(reg, ctx, "browser_type", ref=ref_of(snap, "Member"), text="bo")  # the focus goes there
    asked = len(user.asked)
    pressed = call(reg, ctx, "browser_press", key="Enter")  # no ref: wherever the focus is
    assert not pressed.is_error, pressed.content
    assert len(user.asked) == asked + 1
    assert user.asked[-1].summary.startswith(f"submit a form to {base} ({base}/sign-in)")
    _until(lambda: sites[0].posts, lambda: "the frame's form to arrive")
    assert sites[0].posts == [("/sign-in", {"member": ["bo"]})]


def test_a_frame_the_policy_refused_is_one_line(
    reg: ToolRegistry, ctx: ToolContext, base: str
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/refused-frame")
    snap = call(reg, ctx, "browser_snapshot").content
    assert snap.splitlines()[1:] == [
        "Above",
        'frame "Router" (http://127.0.0.3:9/secret): did not load (refused or failed)',
        "Below",
    ]


def test_a_hidden_frame_shown_later_is_read_then(
    reg: ToolRegistry, ctx: ToolContext, base: str
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/hidden-frame")
    snap = _snapshot_when(reg, ctx, "Send it")
    assert "Pay" not in snap
    assert not call(reg, ctx, "browser_click", ref=ref_of(snap, "Show payment")).is_error
    shown = call(reg, ctx, "browser_snapshot").content
    assert f'frame "Card payment" ({base}/pay)' in shown
    assert shown.index("Send it") < shown.index("Pay now") < shown.index("Show payment")


def test_waiting_for_text_finds_it_inside_a_frame_of_another_site(
    reg: ToolRegistry, ctx: ToolContext, base: str
) -> None:
    call(reg, ctx, "browser_open", url=f"{base}/outer")
    found = call(reg, ctx, "browser_wait", text="Pay 12 euros", seconds=10)
    assert not found.is_error and found.content.startswith("Found 'Pay 12 euros'"), found.content
    missing = call(reg, ctx, "browser_wait", text="Nowhere at all", seconds=0.5)
    assert missing.is_error
    assert "waited 0.5 seconds: the text 'Nowhere at all' did not show" in missing.content
