"""What the user sees of the browser tools (agent/browser/view.py): one line per action with
the site and the element, and a small JPEG of the page after each action that changes it,
through the real registry and Debian's Chromium against a site on 127.0.0.1."""

from __future__ import annotations

import time
from http.server import ThreadingHTTPServer

import pytest

from tests.agent.browser.browsing import MakeCtx, call, needs_chromium, ref_of
from workhearth.agent.browser.view import picture
from workhearth.agent.tools import ToolRegistry
from workhearth.sessions.session import Session

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's frame header (SOF0/SOF2)."""
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    i = 2
    while i < len(data):
        marker, length = data[i + 1], int.from_bytes(data[i + 2 : i + 4], "big")
        if marker in (0xC0, 0xC2):
            return int.from_bytes(data[i + 7 : i + 9], "big"), int.from_bytes(
                data[i + 5 : i + 7], "big"
            )
        i += 2 + length
    raise AssertionError("no frame header")


def test_each_action_has_its_line_and_a_small_picture_of_the_page_after_it(
    reg: ToolRegistry, make_ctx: MakeCtx, web: ThreadingHTTPServer, session: Session
) -> None:
    port = web.server_address[1]
    base = f"http://127.0.0.1:{port}"
    ctx = make_ctx("agent")
    opened = call(reg, ctx, "browser_open", url=f"{base}/table?page=1")
    assert opened.shown is not None and opened.shown.line == f"browser · open {base}/table?page=1"
    snap = call(reg, ctx, "browser_snapshot")
    assert (
        snap.shown is not None and snap.shown.line == f"browser · 127.0.0.1:{port} · read the page"
    )
    assert snap.shown.screenshot == ""  # reading changes nothing: no picture
    ref = ref_of(snap.content, "Next page")
    clicked = call(reg, ctx, "browser_click", ref=ref)
    assert clicked.shown is not None
    assert clicked.shown.line == f"browser · 127.0.0.1:{port} · click “Next page” (ref {ref})"
    name = clicked.shown.screenshot
    assert name.endswith(".jpg")
    assert clicked.content.splitlines()[-1] == f"Screenshot: tool-outputs/{name}"
    # The picture is taken after the result returns, on the browser's thread, before
    # whatever the browser does next: here, an action that does nothing.
    assert ctx.browser is not None
    ctx.browser.do(lambda s: None)
    data = (session.folder / "tool-outputs" / name).read_bytes()
    width, height = jpeg_size(data)
    assert width == 640 and 300 <= height <= 400  # the 1280x720 tab, halved
    assert len(data) < 40_000, len(data)
    assert opened.shown.screenshot != name  # one picture per action
    asked = call(reg, ctx, "browser_screenshot")  # the model's own picture is shown too
    assert asked.shown is not None and asked.shown.screenshot.endswith(".png")
    assert asked.content.endswith(f"/tool-outputs/{asked.shown.screenshot}")
    assert (session.folder / "tool-outputs" / asked.shown.screenshot).is_file()


def test_typing_names_the_field_never_what_was_typed(
    reg: ToolRegistry, make_ctx: MakeCtx, web: ThreadingHTTPServer
) -> None:
    port = web.server_address[1]
    ctx = make_ctx("agent")
    call(reg, ctx, "browser_open", url=f"http://127.0.0.1:{port}/login")
    snap = call(reg, ctx, "browser_snapshot").content
    user = ref_of(snap, "User")
    typed = call(reg, ctx, "browser_type", ref=user, text="ana-the-user")
    assert not typed.is_error, typed.content
    assert typed.shown is not None
    assert typed.shown.line == f"browser · 127.0.0.1:{port} · type into “User” (ref {user})"
    assert typed.shown.screenshot == ""  # a field filling in is no step worth a picture
    again = call(reg, ctx, "browser_type", ref=user, text="bo")  # the field now holds a value
    assert again.shown is not None and "ana" not in again.shown.line


def test_a_picture_follows_a_scroll_and_shows_what_is_on_screen(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, session: Session
) -> None:
    ctx = make_ctx("agent")
    call(reg, ctx, "browser_open", url=f"{base}/big")
    top = ctx.browser.do(picture)  # type: ignore[union-attr]
    scrolled = call(reg, ctx, "browser_scroll", direction="down")
    assert scrolled.shown is not None and scrolled.shown.line.endswith(" · scroll down")
    ctx.browser.do(lambda s: None)  # type: ignore[union-attr]  # the picture is taken first
    below = (session.folder / "tool-outputs" / scrolled.shown.screenshot).read_bytes()
    assert below != top  # the screen, not the top of the document


def test_screenshots_can_be_switched_off_and_cost_little(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, session: Session
) -> None:
    ctx = make_ctx("agent")
    assert ctx.browser is not None
    ctx.browser.screenshots = False
    opened = call(reg, ctx, "browser_open", url=f"{base}/big")
    assert opened.shown is not None and opened.shown.screenshot == ""
    assert "Screenshot:" not in opened.content
    assert not (session.folder / "tool-outputs").exists()
    times = []
    for _ in range(5):
        started = time.perf_counter()
        ctx.browser.do(picture)
        times.append(time.perf_counter() - started)
    assert sorted(times)[2] < 0.5  # ~30 ms here; a loaded test machine gets room
