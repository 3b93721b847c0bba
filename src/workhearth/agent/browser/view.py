"""What the user sees of the agent's browser (issue 25 item 4): one line per action, and a
small picture of the page after each action that changes it.

:func:`showing` wraps a browser tool. Before an action on a ref it looks at the element
(one in-page probe, ~1 ms) for the words of the line, ``browser · 127.0.0.1:8123 · click
“Next page” (ref 12)``; after the action it takes a JPEG of the tab (:data:`WIDTH` px
wide) into the session's tool outputs, queued on the browser's thread so the result
does not wait for it (:func:`_keep_picture`). Both reach the surfaces as the call's
:class:`~workhearth.agent.tools.context.Shown` (the task's ``tool_result`` event: ``line``,
``screenshot``); the picture is also named in the result's last line (``Screenshot:
tool-outputs/NAME.jpg``), so a page that reloads the transcript finds it again.

Why a wrapper and not inside each tool: the tools tell the model what happened; what a
person watching sees is a separate concern, and a typed text is never part of it (the
line names the field, never what was typed, so no password can reach a terminal).
Why the DevTools protocol for the picture: Playwright's ``screenshot`` has no scale; the
browser scaling the frame itself makes it three times smaller for the same time.
"""

from __future__ import annotations

import base64
import functools
import re
import secrets
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workhearth.agent.browser.approvals import shown
from workhearth.agent.browser.elements import probe
from workhearth.agent.browser.session import BrowserSession
from workhearth.agent.browser.urls import site_of
from workhearth.agent.tools.context import Shown, ToolContext
from workhearth.agent.tools.registry import ToolFunc
from workhearth.errors import HearthError

if TYPE_CHECKING:
    from playwright.sync_api import CDPSession, Page

WIDTH = 640  # the picture's width in pixels (a 1280 px tab is scaled by half)
QUALITY = 60  # JPEG quality: ~5-15 KB a picture
LABEL_LIMIT = 60
URL_LIMIT = 100
# The tools after which the page may look different: a picture follows them.
CHANGES_THE_PAGE = frozenset(
    {
        "browser_open",
        "browser_click",
        "browser_select",
        "browser_press",
        "browser_scroll",
        "browser_wait",
        "browser_back",
    }
)
_VIEW_JS = "() => [innerWidth, innerHeight, scrollX, scrollY]"
_SAVED = re.compile(r"tool-outputs/([A-Za-z0-9_.\-]+\.png)$")  # browser_screenshot's file
_cdp: weakref.WeakKeyDictionary[Page, CDPSession] = weakref.WeakKeyDictionary()


def showing(func: ToolFunc) -> ToolFunc:
    """``func`` (a browser tool) with its action shown: the line, and after an action that
    changes the page, the picture (both in ``ctx.shown``, see the module doc)."""
    name = func.__name__

    @functools.wraps(func)
    def shown_call(ctx: ToolContext, **arguments: Any) -> Any:
        browser = ctx.browser
        element = _element(browser, arguments.get("ref")) if browser is not None else None
        out = func(ctx, **arguments)
        if browser is None or not isinstance(out, str):
            return out
        site = _host(element["url"]) if element else _host_now(browser)
        line = action_line(name, arguments, element, site)
        picture = ""
        if name == "browser_screenshot":
            # Why: the picture the model asked for is the user's to see too.
            saved = _SAVED.search(out)
            picture = saved.group(1) if saved else ""
        elif browser.screenshots and browser.running and _changes_page(name, arguments):
            picture = _keep_picture(ctx, browser)
        ctx.shown = Shown(line, picture)
        if not picture or name == "browser_screenshot":  # its result names its file already
            return out
        return f"{out}\nScreenshot: tool-outputs/{picture}"

    return shown_call


def _changes_page(name: str, arguments: Mapping[str, Any]) -> bool:
    # Why typing only with submit: a field filling in is not worth a picture; a form sent is.
    return name in CHANGES_THE_PAGE or (name == "browser_type" and bool(arguments.get("submit")))


def action_line(
    tool_name: str,
    arguments: Mapping[str, Any],
    element: Mapping[str, Any] | None,
    site: str,
) -> str:
    """The one line a person sees for a browser call: ``browser · SITE · WHAT``."""
    ref = arguments.get("ref")
    what = _label(element, ref)
    verb = tool_name.removeprefix("browser_")
    if verb == "open":
        return f"browser · open {shown(str(arguments.get('url', '')), URL_LIMIT)}"
    if verb == "close":
        return "browser · close" + (f" tab {arguments['tab']}" if arguments.get("tab") else "")
    words = {
        "click": f"click {what}",
        "type": f"type into {what}" + (" and press Enter" if arguments.get("submit") else ""),
        "select": f"select “{shown(str(arguments.get('option', '')), LABEL_LIMIT)}” in {what}",
        "press": f"press {shown(str(arguments.get('key', '')), 30)}"
        + (f" in {what}" if ref is not None else ""),
        "scroll": f"scroll to {what}"
        if ref is not None
        else f"scroll {arguments.get('direction', 'down')}",
        "wait": _wait_words(arguments),
        "back": "back",
        "snapshot": "read the page",
        "extract": f"extract table {arguments['table']}"
        if arguments.get("table")
        else "extract the text",
        "tabs": "tabs",
        "screenshot": "screenshot",
        "download": f"download {what}",
        "upload": f"upload into {what}",
    }.get(verb, verb)
    return f"browser · {site} · {words}" if site else f"browser · {words}"


def _wait_words(arguments: Mapping[str, Any]) -> str:
    if arguments.get("text"):
        return f"wait for “{shown(str(arguments['text']), LABEL_LIMIT)}”"
    if arguments.get("url"):
        return f"wait for an address with “{shown(str(arguments['url']), LABEL_LIMIT)}”"
    return "wait for the page to load"


def _label(element: Mapping[str, Any] | None, ref: Any) -> str:
    """“Next page” (ref 12): a field by its label, anything else by its text; never a
    field's value (what was typed)."""
    if ref is None:
        return "the page"
    words = ""
    if element is not None:
        if element.get("field") or element.get("tag") in ("INPUT", "SELECT", "TEXTAREA"):
            words = str(element.get("label") or element.get("fieldName") or "")
        else:
            name = str(element.get("name", ""))
            words = name.split('"', 1)[1].rsplit('"', 1)[0] if name.count('"') >= 2 else ""
    words = shown(words, LABEL_LIMIT)
    return f"“{words}” (ref {ref})" if words else f"ref {ref}"


def _element(browser: BrowserSession, ref: Any) -> dict[str, Any] | None:
    """The element a call is about to act on, when the browser runs and has it (else None:
    the tool says what is wrong)."""
    if not isinstance(ref, int) or not browser.running:
        return None
    try:
        return browser.do(lambda s: probe(s, ref))
    except HearthError:
        return None


def _host_now(browser: BrowserSession) -> str:
    if not browser.running:
        return ""
    try:
        return _host(browser.do(lambda s: s.page().url))
    except HearthError:
        return ""


def _host(url: str) -> str:
    """``127.0.0.1:8123`` of ``http://127.0.0.1:8123/x``; "" for a page that is no site."""
    try:
        return site_of(url).split("://", 1)[-1]
    except HearthError:
        return ""


# ------------------------------------------------------------------ pictures
def picture(s: BrowserSession, width: int = WIDTH, quality: int = QUALITY) -> bytes:
    """A JPEG of what the current tab shows, scaled to ``width`` (runs on the browser's
    thread: inside :meth:`BrowserSession.do`)."""
    page = s.page()
    view_w, view_h, x, y = page.evaluate(_VIEW_JS)
    cdp = _cdp.get(page)
    if cdp is None:
        cdp = _cdp[page] = s.context.new_cdp_session(page)
    # Why the scroll offsets: the clip is in the document's coordinates, not the screen's.
    clip = {"x": x, "y": y, "width": view_w, "height": view_h, "scale": min(1, width / view_w)}
    shot = cdp.send("Page.captureScreenshot", {"format": "jpeg", "quality": quality, "clip": clip})
    return base64.b64decode(shot["data"])


def _keep_picture(ctx: ToolContext, browser: BrowserSession) -> str:
    """The file name the picture of the tab will have in the session's tool outputs.

    Why later: a frame capture costs ~30-50 ms of the browser's time, which the action's
    result need not wait for; the picture is queued on the browser's thread
    (:meth:`BrowserSession.later`) and taken while the model reads the result, before
    the next browser action. The page retries a thumbnail that is not there yet; a picture
    the browser could not take (a stop, a crash) is simply missing, never an error.
    """
    name = _free_name(ctx)
    session = ctx.session

    def take(s: BrowserSession) -> None:
        # Why not durable: a picture lost in a power cut costs nothing; an fsync a step does.
        session.write_file(f"tool-outputs/{name}", picture(s), durable=False)

    browser.later(take)
    return name


def _free_name(ctx: ToolContext) -> str:
    """``<call id>.jpg``, not yet taken (some servers reuse ids like call_0 every turn)."""
    try:
        folder = ctx.session.tool_output_path(ctx.call_id).parent
        stem = ctx.call_id
    except HearthError:
        return f"shot-{secrets.token_hex(6)}.jpg"
    name, n = f"{stem}.jpg", 1
    while (folder / name).exists():
        n += 1
        name = f"{stem}-{n}.jpg"
    return name
