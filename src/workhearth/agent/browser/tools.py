"""The browser tools (DESIGN §5): typed functions over the session's :class:`BrowserSession`.

They are offered only when the session has a browser (``ToolContext.browser``, set by
the runner when one was found) and the site policy's mode offers them. What asks
the user: the first visit to each site (``browser_open``, in ask and agent mode, by
the policy's verdict), and in agent mode every form submission (a click on a submit
button, Enter in a form, ``submit=true``), download and upload. Clicking, typing and
the rest are "read-only" for the registry (no approval per call) and ask themselves
when they submit; ask mode does not offer them (the policy's ``offers``). A submission
the browser's own checks stop (a required field empty, a bad email…) sends nothing, and
its result is an error naming each failing field, not a success (``unless_blocked``).

Errors are words the model can act on ("ref 12 is no longer on the page; take a new
snapshot"), raised as :class:`ToolError`/:class:`BrowserError` and returned by the
registry as error results.

Passwords (issue 25): the model never supplies or sees one. ``browser_type`` on a secret
field (:func:`~workhearth.agent.browser.elements.secret_field`) takes an empty text, and
the approval asks the user for the value (:class:`SecretAsk`: a hidden prompt on the
terminal, a password input on the page's card); with nobody to ask, or in quest mode,
it is refused in words. The value goes to the page only: every browser tool's output
and error has it masked (:func:`_masking`), and the audit never holds it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import mimetypes
import time
import weakref
from collections.abc import Callable
from pathlib import PurePath
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Field

from workhearth.agent.approval import Gate, SecretAsk
from workhearth.agent.browser.approvals import (
    download_summary,
    secret_summary,
    submit_summary,
    upload_summary,
    visit_summary,
    without_secrets,
)
from workhearth.agent.browser.elements import (
    ACTION_SECONDS,
    act,
    after,
    form_fields,
    locate,
    playwright_timeout,
    probe,
    secret_field,
    tab_line,
    unless_blocked,
)
from workhearth.agent.browser.frames import frames_text, table_frame
from workhearth.agent.browser.session import BrowserError, BrowserSession
from workhearth.agent.browser.urls import site_of
from workhearth.agent.browser.view import showing
from workhearth.agent.tools.context import ToolContext, ToolError
from workhearth.agent.tools.files import _keep_previous, _open_for_reading
from workhearth.agent.tools.registry import Offered, ToolFunc, tool
from workhearth.errors import HearthError
from workhearth.models.tokens import count_tokens

if TYPE_CHECKING:
    from playwright.sync_api import Page

SNAPSHOT_TOKENS = 8_000
PAGE_OUTPUT_LIMIT = 64_000  # a snapshot or an extract may be longer than other tools' output
DOWNLOAD_LIMIT = 256 * 1024 * 1024

Ref = Annotated[
    int, Field(ge=1, description="The element's ref: the number in [brackets] in browser_snapshot")
]
Seconds = Annotated[float, Field(gt=0, le=120, description="How long to wait at most, in seconds")]
WorkspacePath = Annotated[
    str, Field(min_length=1, description="Path in the workspace (relative, or absolute inside it)")
]

_TABLE_JS = """(n) => {
  const tables = document.querySelectorAll("table");
  const table = tables[n - 1];
  if (!table) return { count: tables.length, rows: null };
  const rows = Array.from(table.rows).map((r) => Array.from(r.cells)
    .map((c) => (c.innerText || "").replace(/\\s+/g, " ").trim()));
  return { count: tables.length, rows };
}"""
_MAIN_JS = """() => {
  const main = document.querySelector("main, [role=main], article") || document.body;
  return main ? main.innerText : "";
}"""
_SCROLL_JS = """(d) => {
  window.scrollBy(0, d * window.innerHeight * 0.9);
  const root = document.scrollingElement || document.documentElement;
  return [Math.round(window.scrollY), window.innerHeight, root.scrollHeight];
}"""


NEEDS_THE_USER = "a password field needs the user; run it in agent mode with a terminal or the page"
# The passwords the user typed into each browser, masked in whatever its tools return.
# Why beside the session, not in it: they live only in memory, and only as long as it.
_typed: weakref.WeakKeyDictionary[BrowserSession, set[str]] = weakref.WeakKeyDictionary()


# ------------------------------------------------------------------ plumbing
def _secrets(ctx: ToolContext) -> set[str]:
    return _typed.get(ctx.browser, set()) if ctx.browser is not None else set()


def _masking(func: ToolFunc) -> ToolFunc:
    """``func`` with the typed passwords masked in its result and its errors.

    Why every tool: a page may show what was typed (an error page echoing the form, a
    title), and a snapshot, an extract or an error would carry it to the model.
    """

    @functools.wraps(func)
    def masked(ctx: ToolContext, *args: Any, **kwargs: Any) -> Any:
        try:
            out = func(ctx, *args, **kwargs)
        except Exception as exc:
            secrets = _secrets(ctx)  # Why after: this call may have asked for one
            if secrets and any(s in str(exc) for s in secrets):
                raise ToolError(without_secrets(str(exc), secrets)) from None
            raise
        secrets = _secrets(ctx)
        return without_secrets(out, secrets) if secrets and isinstance(out, str) else out

    return masked


def _offered(name: str) -> Offered:
    """Offered when the session has a browser and its site policy's mode offers ``name``."""

    def offered(ctx: ToolContext) -> bool:
        browser = ctx.browser
        if browser is None:
            return False
        return browser.policy is None or browser.policy.offers(name)

    return offered


def _browser(ctx: ToolContext) -> BrowserSession:
    if ctx.browser is None:
        raise ToolError("this session has no browser")
    return ctx.browser


def _ask(ctx: ToolContext, tool_name: str, summary: str, what: str, arguments: Any) -> None:
    """Ask the user through the session's gate; a :class:`ToolError` unless they say yes.

    Why a gate in agent mode for ask mode's first visits: ask mode's own gate refuses
    anything that is not read-only, yet a first visit is a question, not a change.
    """
    gate = ctx.gate
    assert gate is not None
    asker = gate if gate.mode != "ask" else Gate("agent", gate.policy, gate.approver)
    verdict = asker.decide(
        tool_name,
        read_only=False,
        summary=summary,
        arguments=arguments,
        call_id=ctx.call_id,
        allow_always=False,
    )
    if asker is not gate and asker.unasked is not None:
        gate.unasked = asker.unasked  # Why: the runner stops a run nobody could answer
    ctx.decided = verdict.decision
    if verdict.decision == "not-asked":
        raise ToolError(f"Not done: {what} needs the user's approval and nobody was there")
    if not verdict.allowed:
        raise ToolError(f"The user did not allow {what}; do not retry it unchanged")


def _visit(ctx: ToolContext, tool_name: str, url: str) -> None:
    """Check ``url`` with the site policy; a first visit asks the user."""
    policy = _browser(ctx).policy
    if policy is None:
        return
    verdict = policy.check_url(url)
    if verdict.outcome == "ask":
        summary = visit_summary(verdict.site, url)
        _ask(ctx, tool_name, summary, f"visiting {verdict.site}", {"url": url})
        policy.remember(verdict.site)
        verdict = policy.check_url(url)
    if not verdict.ok:
        raise ToolError(f"Refused: {verdict.reason}")


def _submitting(
    ctx: ToolContext,
    tool_name: str,
    ref: int | None,
    submits: Callable[[dict[str, Any]], bool],
    action: Callable[[BrowserSession, dict[str, Any]], str],
) -> str:
    """Run ``action`` with the element's probe; when the probe says it ``submits`` a form,
    first ask the user (agent mode: the site and the values, secrets masked) and make the
    session durable.

    Why in one browser call when nothing is submitted: each call is a thread hop.
    """
    browser = _browser(ctx)

    def first(s: BrowserSession) -> tuple[bool, dict[str, Any], str]:
        found = probe(s, ref)
        if submits(found):
            return True, found, ""
        return False, found, action(s, found)

    asking, found, done = browser.do(first)
    if not asking:
        return done
    _ask_submit(ctx, tool_name, found)
    return browser.do(lambda s: unless_blocked(s, ref, lambda: action(s, found)))


def _ask_submit(ctx: ToolContext, tool_name: str, found: dict[str, Any]) -> None:
    """Before a form is sent: ask (when the mode asks; its values shown, secrets masked)
    and make the session durable."""
    policy = _browser(ctx).policy
    if policy is not None and policy.asks("submit"):
        target = found["action"] or found["url"]
        summary = submit_summary(_site(found["url"]), form_fields(found), target)
        _ask(ctx, tool_name, summary, f"submitting the form to {target}", {"form": target})
    ctx.session.before_side_effect()


def _password(ctx: ToolContext, ref: int, found: dict[str, Any]) -> str:
    """The value of a secret field, asked of the user with the approval (never the model).

    Why refused in quest and without a person: a quest asks nothing, and a password the
    model would bring instead is one it could also send anywhere else.
    """
    gate = ctx.gate
    if gate is None or gate.mode != "agent":
        raise ToolError(f"Refused: {NEEDS_THE_USER}")
    site, label = _site(found["url"]), found["label"] or f"ref {ref}"
    ask = SecretAsk(f"the password for {label!r} on {site}")
    verdict = gate.decide(
        "browser_type",
        read_only=False,
        summary=secret_summary(site, label, found["url"]),
        arguments={"ref": ref},
        call_id=ctx.call_id,
        allow_always=False,
        secret=ask,
    )
    ctx.decided = verdict.decision
    if verdict.decision == "not-asked":
        raise ToolError(f"Not done: {NEEDS_THE_USER}")
    if verdict.decision == "denied-by-user":
        raise ToolError("The user did not give the password; ask them how to proceed")
    if not verdict.allowed or ask.value is None:
        raise ToolError(f"Refused: {NEEDS_THE_USER}")
    _typed.setdefault(_browser(ctx), set()).add(ask.value)
    return ask.value


def _what(found: dict[str, Any], ref: int | None) -> str:
    """The element an action was on, and the site, for the result's first line (which the
    audit and the terminal show)."""
    where = f" on {_site(found['url'])}"
    return f"{found['name']} (ref {ref}){where}" if ref is not None else f"the page{where}"


def _site(url: str) -> str:
    try:
        return site_of(url)
    except HearthError:
        return url


# ------------------------------------------------------------------ tools
@tool(read_only=True, alone=True, offered=_offered("browser_open"))
def browser_open(
    ctx: ToolContext,
    url: Annotated[str, Field(min_length=1, description="The full URL, https://…")],
    new_tab: Annotated[bool, Field(description="Open it in a new tab")] = False,
    seconds: Seconds = 20.0,
) -> str:
    """Open a web page in the browser (the current tab, or a new one). The first visit to a
    site asks the user. Then call browser_snapshot to read the page and get element refs."""
    _visit(ctx, "browser_open", url)

    def action(s: BrowserSession) -> str:
        s.take_news()
        page = s.context.new_page() if new_tab else s.page()
        s.switch(page)
        try:
            page.goto(url, wait_until="load", timeout=seconds * 1000)
        except playwright_timeout():
            blocked, _ = s.take_news()
            return (
                f"{url} did not finish loading within {seconds:g} seconds; it may still come: "
                "browser_wait, or browser_snapshot to see what is there"
                + "".join(f"\nBlocked: {b}" for b in blocked)
            )
        except BrowserError:
            raise
        except Exception as exc:
            blocked, _ = s.take_news()
            if blocked:
                raise BrowserError("; ".join(blocked)) from None
            raise BrowserError(f"{url} could not be opened: {str(exc).splitlines()[0]}") from None
        return after(s, f"Opened {url}")

    return _browser(ctx).do(action)


@tool(
    read_only=True, alone=True, output_limit=PAGE_OUTPUT_LIMIT, offered=_offered("browser_snapshot")
)
def browser_snapshot(
    ctx: ToolContext,
    max_tokens: Annotated[int, Field(ge=500, le=30_000, description="Cut the text here")] = (
        SNAPSHOT_TOKENS
    ),
) -> str:
    """The current tab as text: visible text, and each link, button and field as
    `[ref] kind "name"`. Act on elements by their ref; take a new snapshot after the page
    changes (refs of a page that changed may be gone)."""

    def action(s: BrowserSession) -> tuple[str, bool]:
        page = s.page()
        text, cut = s.snapshot(page, max_tokens * 4)
        notes = "".join(f"Note: {words}\n" for words in s.take_notes())
        return f"{notes}{tab_line(s, page)}\n{text}", cut

    text, cut = _browser(ctx).do(action)
    text, trimmed = _trim_tokens(text, max_tokens)
    if cut or trimmed:
        text += (
            f"\n[snapshot cut at about {max_tokens} tokens: browser_scroll then snapshot again, "
            "or browser_extract for the whole text]"
        )
    return text or "(an empty page)"


def _trim_tokens(text: str, limit: int) -> tuple[str, bool]:
    if count_tokens(text) <= limit:
        return text, False
    lines = text.splitlines()
    low, high = 0, len(lines)
    while low < high:  # the most lines that fit
        mid = (low + high + 1) // 2
        if count_tokens("\n".join(lines[:mid])) <= limit:
            low = mid
        else:
            high = mid - 1
    return "\n".join(lines[:low]), True


@tool(read_only=True, alone=True, offered=_offered("browser_click"))
def browser_click(ctx: ToolContext, ref: Ref) -> str:
    """Click the element of a ref (a link, a button, a checkbox…). Clicking a form's submit
    button asks the user first in agent mode."""

    def action(s: BrowserSession, found: dict[str, Any]) -> str:
        act(s, ref, "clicked", lambda el: el.click(timeout=ACTION_SECONDS * 1000))
        return after(s, f"Clicked {_what(found, ref)}")

    return _submitting(ctx, "browser_click", ref, lambda found: found["button"], action)


@tool(read_only=True, alone=True, offered=_offered("browser_type"))
def browser_type(
    ctx: ToolContext,
    ref: Ref,
    text: Annotated[
        str,
        Field(
            description='What to put in the field (it replaces its content); "" for a password '
            "field: the user types it"
        ),
    ],
    submit: Annotated[bool, Field(description="Press Enter after (submits a form)")] = False,
) -> str:
    """Fill a text field of a ref with text (replacing what it held); with submit, press
    Enter after, which submits its form (asks the user first in agent mode). A password
    field (or a PIN, a card code): give text "" and the user types the value when asked;
    you never see it and must never put one in text."""
    browser = _browser(ctx)

    def fill(s: BrowserSession, found: dict[str, Any], value: str, secret: bool) -> str:
        act(s, ref, "filled", lambda el: el.fill(value, timeout=ACTION_SECONDS * 1000))
        if secret:
            return f"Typed the password the user gave (hidden) into {_what(found, ref)}"
        hidden = " (hidden)" if found["password"] else ""
        return f"Typed {len(value)} characters{hidden} into {_what(found, ref)}"

    def enter(s: BrowserSession, done: str) -> str:
        act(s, ref, "submitted", lambda el: el.press("Enter", timeout=ACTION_SECONDS * 1000))
        return after(s, done + ", then pressed Enter")

    def first(s: BrowserSession) -> tuple[dict[str, Any], bool, str]:
        found = probe(s, ref)
        if secret_field(found):
            return found, True, ""
        return found, False, fill(s, found, text, False)

    found, secret, typed = browser.do(first)
    if secret:
        if text:
            ctx.masked = ("text",)  # Why: the audit must not keep what the model sent
            raise ToolError(
                f'ref {ref} is a password field: call browser_type with text "" and the user '
                "types the password when asked; never put a password in text"
            )
        value = _password(ctx, ref, found)
        typed = browser.do(lambda s: fill(s, found, value, True))
    if not submit:
        return typed
    if found["form"]:
        # Why after typing: the card shows the form as it will be sent (nothing leaves the
        # page before Enter).
        _ask_submit(ctx, "browser_type", browser.do(lambda s: probe(s, ref)))
    return browser.do(lambda s: unless_blocked(s, ref, lambda: enter(s, typed)))


@tool(read_only=True, alone=True, offered=_offered("browser_select"))
def browser_select(
    ctx: ToolContext,
    ref: Ref,
    option: Annotated[str, Field(description="The option's text as shown (or its value)")],
) -> str:
    """Choose an option of a select (drop-down) element by its text."""

    def action(s: BrowserSession) -> str:
        found = probe(s, ref)
        element = locate(s, ref)
        try:
            chosen = element.select_option(label=option, timeout=ACTION_SECONDS * 1000)
        except playwright_timeout():
            try:
                chosen = element.select_option(value=option, timeout=1000)
            except playwright_timeout():
                raise BrowserError(
                    f"ref {ref} has no option {option!r}; its options are in browser_snapshot"
                ) from None
        return after(s, f"Selected {option!r} (value {', '.join(chosen)}) in {_what(found, ref)}")

    return _browser(ctx).do(action)


@tool(read_only=True, alone=True, offered=_offered("browser_press"))
def browser_press(
    ctx: ToolContext,
    key: Annotated[
        str, Field(min_length=1, description="A key: Enter, Tab, Escape, ArrowDown, Control+A …")
    ],
    ref: Annotated[int | None, Field(ge=1, description="Press it in this element")] = None,
) -> str:
    """Press a key, in the element of a ref or wherever the focus is. Enter in a form
    submits it (asks the user first in agent mode)."""

    def action(s: BrowserSession, found: dict[str, Any]) -> str:
        if ref is None:
            s.page().keyboard.press(key)
        else:
            act(s, ref, "reached", lambda el: el.press(key, timeout=ACTION_SECONDS * 1000))
        return after(s, f"Pressed {key} in {_what(found, ref)}")

    def submits(found: dict[str, Any]) -> bool:
        # Why not a textarea: Enter there starts a new line; it sends nothing.
        field = found["field"] and found["tag"] != "TEXTAREA"
        return key.lower() == "enter" and (field or found["button"])

    return _submitting(ctx, "browser_press", ref, submits, action)


@tool(read_only=True, alone=True, offered=_offered("browser_scroll"))
def browser_scroll(
    ctx: ToolContext,
    direction: Literal["down", "up"] = "down",
    ref: Annotated[int | None, Field(ge=1, description="Scroll this element into view")] = None,
) -> str:
    """Scroll the page by about one screen, or until the element of a ref is in view."""

    def action(s: BrowserSession) -> str:
        if ref is not None:
            act(
                s,
                ref,
                "scrolled to",
                lambda el: el.scroll_into_view_if_needed(timeout=ACTION_SECONDS * 1000),
            )
            return f"Ref {ref} is in view"
        top, height, total = s.page().evaluate(_SCROLL_JS, 1 if direction == "down" else -1)
        end = " (the end of the page)" if top + height >= total else ""
        return f"Scrolled {direction}: showing {top}–{top + height} of {total} pixels{end}"

    return _browser(ctx).do(action)


@tool(read_only=True, alone=True, offered=_offered("browser_wait"))
def browser_wait(
    ctx: ToolContext,
    text: Annotated[str, Field(description="Wait until this text shows on the page")] = "",
    url: Annotated[str, Field(description="Or: wait until the address contains this")] = "",
    seconds: Seconds = 10.0,
) -> str:
    """Wait for text to show on the page, or for the page to go to an address containing
    `url`, or (neither given) for the page to finish loading."""

    def action(s: BrowserSession) -> str:
        page = s.page()
        try:
            if text:
                _wait_for_text(page, text, seconds)
            elif url:
                page.wait_for_url(lambda u: url in u, timeout=seconds * 1000)
            else:
                page.wait_for_load_state("load", timeout=seconds * 1000)
        except playwright_timeout():
            what = f"the text {text!r}" if text else f"an address with {url!r}" if url else "load"
            verb = "did not finish" if not (text or url) else "did not show"
            raise BrowserError(
                f"waited {seconds:g} seconds: {what} {verb}; take a snapshot to see the page"
            ) from None
        return after(
            s, "Found " + (repr(text) if text else repr(url) if url else "the page loaded")
        )

    return _browser(ctx).do(action)


def _wait_for_text(page: Page, text: str, seconds: float) -> None:
    """Until ``text`` shows in the tab or in one of its frames (a login or a payment frame).

    Why two ways: Playwright's wait covers one document; with frames, every frame is
    looked at in turn every 100 ms until the time is up.
    """
    if len(page.frames) == 1:
        page.get_by_text(text).first.wait_for(state="visible", timeout=seconds * 1000)
        return
    from playwright.sync_api import Error as PlaywrightError

    deadline = time.monotonic() + seconds
    while True:
        for frame in page.frames:
            with contextlib.suppress(PlaywrightError):  # a frame gone or navigating
                if frame.get_by_text(text).first.is_visible():
                    return
        if time.monotonic() >= deadline:
            raise playwright_timeout()(f"{text!r} did not show")
        page.wait_for_timeout(100)


@tool(read_only=True, alone=True, offered=_offered("browser_back"))
def browser_back(ctx: ToolContext) -> str:
    """Go back to the previous page of the current tab."""

    def action(s: BrowserSession) -> str:
        if s.page().go_back(wait_until="load") is None:
            raise BrowserError("there is no earlier page in this tab")
        return after(s, "Went back")

    return _browser(ctx).do(action)


@tool(read_only=True, alone=True, offered=_offered("browser_tabs"))
def browser_tabs(
    ctx: ToolContext,
    switch: Annotated[int | None, Field(ge=1, description="Make this tab the current one")] = None,
    close: Annotated[int | None, Field(ge=1, description="Close this tab")] = None,
) -> str:
    """List the open tabs (the current one marked *), switch to one, or close one."""

    def action(s: BrowserSession) -> str:
        tabs = s.tabs()
        for number in (switch, close):
            if number is not None and number > len(tabs):
                raise BrowserError(f"there is no tab {number}; {len(tabs)} are open")
        if close is not None:
            tabs[close - 1].close()
        if switch is not None:
            s.switch(tabs[switch - 1])
        s.take_news()
        current = s.page()
        return "\n".join(
            f'{"*" if p == current else " "} {n}. "{p.title()[:100]}" {p.url}'
            for n, p in enumerate(s.tabs(), 1)
        )

    return _browser(ctx).do(action)


@tool(
    read_only=True, alone=True, output_limit=PAGE_OUTPUT_LIMIT, offered=_offered("browser_extract")
)
def browser_extract(
    ctx: ToolContext,
    table: Annotated[
        int | None, Field(ge=1, description="The table's number (from the snapshot)")
    ] = None,
) -> str:
    """The page's main text in full, or one table as JSON rows (a list of lists of cell
    texts, the header row first) that can go straight into a sheet."""

    def action(s: BrowserSession) -> str:
        page = s.page()
        if table is None:
            text = str(page.evaluate(_MAIN_JS)).strip() + frames_text(page, _MAIN_JS)
            return text.strip() or "(no text on the page)"
        frame, number = table_frame(s, page, table)  # Why: a table may be in a frame
        found = frame.evaluate(_TABLE_JS, number)
        if found["rows"] is None:
            raise BrowserError(f"there is no table {table}; the page has {found['count']}")
        return json.dumps({"table": table, "rows": found["rows"]}, ensure_ascii=False)

    return _browser(ctx).do(action)


@tool(read_only=True, alone=True, offered=_offered("browser_screenshot"))
def browser_screenshot(
    ctx: ToolContext,
    full_page: Annotated[bool, Field(description="The whole page, not only the screen")] = False,
) -> str:
    """Save a picture of the current tab in the session's tool outputs (PNG)."""
    png = _browser(ctx).do(lambda s: s.page().screenshot(full_page=full_page))
    path = ctx.session.write_file(f"tool-outputs/{ctx.output_id()}.png", png)
    return f"Saved a screenshot ({len(png)} bytes) at {path}"


def _target(ctx: ToolContext, ref: int) -> tuple[str, str]:
    """The element of ``ref`` in words and the page's URL, for an approval card."""
    try:
        return _browser(ctx).do(lambda s: (probe(s, ref)["name"], s.page().url))
    except HearthError:
        return f"ref {ref}", "the current page"


def _preview_download(ctx: ToolContext, args: BaseModel) -> str:
    ref, path = args.ref, args.path  # type: ignore[attr-defined]
    name, url = _target(ctx, ref)
    return download_summary(_site(url), f"{url} (clicking {name})", ctx.fs.display(path))


@tool(
    read_only=False,
    preview=_preview_download,
    allow_always=False,
    offered=_offered("browser_download"),
)
def browser_download(
    ctx: ToolContext, ref: Ref, path: WorkspacePath, seconds: Seconds = 60.0
) -> str:
    """Click the element of a ref that downloads a file, and save the file in the workspace
    under `path` (your name for it, not the server's). Asks the user first in agent mode."""

    def action(s: BrowserSession) -> bytes:
        probe(s, ref)
        try:
            with s.page().expect_download(timeout=seconds * 1000) as info:
                locate(s, ref).click(timeout=ACTION_SECONDS * 1000)
            download = info.value
            failure = download.failure()
        except playwright_timeout():
            raise BrowserError(
                f"clicking ref {ref} started no download within {seconds:g} seconds"
            ) from None
        if failure:
            raise BrowserError(f"the download failed: {failure}")
        saved = download.path()
        size = saved.stat().st_size
        if size > DOWNLOAD_LIMIT:
            download.delete()
            raise BrowserError(f"the file is {size} bytes, more than the {DOWNLOAD_LIMIT} allowed")
        data = saved.read_bytes()
        download.delete()
        return data

    data = _browser(ctx).do(action)
    hook, saved = _keep_previous(ctx, path, data)
    previous = ctx.fs.write_bytes(path, data, before_replace=hook)
    kept = f"; the previous version is file-history #{saved[0]}" if saved else ""
    verb = "Saved" if previous is None else "Replaced"
    return f"{verb} {ctx.show(path)} ({len(data)} bytes) from the download{kept}"


def _preview_upload(ctx: ToolContext, args: BaseModel) -> str:
    ref, path = args.ref, args.path  # type: ignore[attr-defined]
    name, url = _target(ctx, ref)
    return f"{upload_summary(_site(url), ctx.fs.display(path))}, into {name} of {url}"


@tool(
    read_only=False, preview=_preview_upload, allow_always=False, offered=_offered("browser_upload")
)
def browser_upload(ctx: ToolContext, ref: Ref, path: WorkspacePath) -> str:
    """Put a workspace file into the file input of a ref (the page sends it when its form
    is submitted). Asks the user first in agent mode."""
    with _open_for_reading(ctx, path) as fh:
        data = fh.read()
    name = PurePath(path).name
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    payload = {"name": name, "mimeType": kind, "buffer": data}

    def action(s: BrowserSession) -> str:
        if not probe(s, ref)["file"]:
            raise BrowserError(f"ref {ref} is not a file input; uploads go into one")
        locate(s, ref).set_input_files(payload, timeout=ACTION_SECONDS * 1000)  # type: ignore[arg-type]
        return f"Put {ctx.show(path)} ({len(data)} bytes) into ref {ref}"

    return _browser(ctx).do(action)


@tool(read_only=True, alone=True, offered=_offered("browser_close"))
def browser_close(
    ctx: ToolContext,
    tab: Annotated[int | None, Field(ge=1, description="Close only this tab")] = None,
) -> str:
    """Close one tab, or (no tab given) the whole browser, at once."""
    browser = _browser(ctx)
    if tab is not None:
        return str(browser_tabs(ctx, close=tab))
    if not browser.running:
        return "The browser is not open"
    browser.close()
    return "Closed the browser"


# Why showing outermost: it adds the picture's name and no page text to the result, and its
# line (never the model's) names the field, not what was typed (view.py).
BROWSER_TOOLS = tuple(
    showing(_masking(func))
    for func in (
        browser_open,
        browser_snapshot,
        browser_click,
        browser_type,
        browser_select,
        browser_press,
        browser_scroll,
        browser_wait,
        browser_back,
        browser_tabs,
        browser_extract,
        browser_screenshot,
        browser_download,
        browser_upload,
        browser_close,
    )
)
