"""Elements by ref, and what an action did: the plumbing between the tools and the session.

Every function here runs on the browser's thread (inside :meth:`BrowserSession.do`).
Why one probe per action: each exchange with the page costs a round trip (a few
milliseconds), so a tool learns in one ``evaluate`` whether its ref still exists,
what kind of element it is, and the form it would submit. A ref given inside an
``<iframe>`` is looked for in that frame (:func:`~workhearth.agent.browser.frames.frame_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workhearth.agent.browser.approvals import FormField, is_secret_field
from workhearth.agent.browser.frames import frame_of
from workhearth.agent.browser.session import BrowserError, BrowserSession

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Locator, Page

ACTION_SECONDS = 5.0  # an element that cannot be acted on within this is hidden or covered
SETTLE_SECONDS = 5.0  # how long an action waits for the page it started to load

# One look at the element of a ref (null: gone), or at the focused element (ref null).
# Password values never leave the page: only whether one was typed.
_PROBE_JS = """(ref) => {
  const el = ref === null ? (document.activeElement || document.body)
    : document.querySelector(`[data-hearth-ref="${ref}"]`);
  if (!el) return null;
  const form = el.form || el.closest("form");
  const tag = el.tagName, type = (el.getAttribute("type") || "").toLowerCase();
  const text = (el.getAttribute("aria-label") || el.textContent || el.value || el.name || "")
    .replace(/\\s+/g, " ").trim().slice(0, 60);
  const labelOf = (e) => ((e.labels && e.labels[0] && e.labels[0].textContent) || e.name)
    .replace(/\\s+/g, " ").trim();
  const fields = !form ? [] : Array.from(form.elements)
    .filter((e) => e.name && !["submit", "button", "reset", "image", "file"].includes(e.type))
    .filter((e) => !["checkbox", "radio"].includes(e.type) || e.checked)
    .map((e) => ({ label: labelOf(e), name: e.name, type: e.type || "",
      autocomplete: e.getAttribute("autocomplete") || "",
      value: e.type === "password" ? (e.value ? "typed" : "") : String(e.value) }));
  return {
    tag, type, password: type === "password", file: tag === "INPUT" && type === "file",
    fieldName: el.name || el.id || "", autocomplete: el.getAttribute("autocomplete") || "",
    label: ((el.labels && el.labels[0] && el.labels[0].textContent) || el.getAttribute("aria-label")
      || el.name || "").replace(/\\s+/g, " ").trim().slice(0, 60),
    name: `${tag.toLowerCase()}${type ? "[" + type + "]" : ""} "${type === "password" ? "" : text}"`,
    form: !!form,
    button: !!form && ((tag === "BUTTON" && (type === "" || type === "submit"))
      || (tag === "INPUT" && (type === "submit" || type === "image"))),
    field: !!form && (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA"),
    action: form ? form.action : "", method: form ? (form.method || "get") : "", fields,
    url: location.href, focus: document.hasFocus(),
  };
}"""


def playwright_timeout() -> type[Exception]:
    """Playwright's timeout error (imported late: the package is an optional extra)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    return PlaywrightTimeout


def probe(s: BrowserSession, ref: int | None) -> dict[str, Any]:
    """What the element of ``ref`` is (see ``_PROBE_JS``), in whichever frame holds it
    (frames.py), or words saying why there is none."""
    from playwright.sync_api import Error

    frame = frame_of(s, ref)
    try:
        found = frame.evaluate(_PROBE_JS, ref) if frame is not None else None
    except Error:
        found = None  # Why: the frame went away (detached, reloading) under the call
    if ref is None and found is not None and found["tag"] in ("IFRAME", "FRAME"):
        # Why: a key pressed in a form inside a frame submits that form, not nothing.
        found = _focused_in(s.page().main_frame) or found
    if found is None:
        if ref is not None and ref >= s.next_ref:
            raise BrowserError(f"there is no ref {ref}; refs come from browser_snapshot: take one")
        raise BrowserError(f"ref {ref} is no longer on the page; take a new snapshot")
    return dict(found)


def _focused_in(frame: Frame) -> dict[str, Any] | None:
    """The probe of the focused element among ``frame``'s child frames (the one whose
    document has the focus), following nested frames; None when none has it."""
    from playwright.sync_api import Error

    for child in frame.child_frames:
        try:
            found = child.evaluate(_PROBE_JS, None)
        except Error:
            continue
        if found is not None and found["focus"]:
            inner = _focused_in(child) if found["tag"] in ("IFRAME", "FRAME") else None
            return inner or dict(found)
    return None


def locate(s: BrowserSession, ref: int) -> Locator:
    """The element of ``ref`` in the frame that holds it (no round trip: Playwright looks
    it up when it acts)."""
    frame = frame_of(s, ref)
    if frame is None:
        raise BrowserError(f"ref {ref} is no longer on the page; take a new snapshot")
    return frame.locator(f'[data-hearth-ref="{ref}"]').first


def act(s: BrowserSession, ref: int, verb: str, action: Callable[[Locator], object]) -> None:
    """Run ``action`` on the element of ``ref``, timing out in words."""
    try:
        action(locate(s, ref))
    except playwright_timeout():
        raise BrowserError(
            f"ref {ref} could not be {verb} within {ACTION_SECONDS:g} seconds (hidden, covered "
            "or disabled); take a new snapshot"
        ) from None


def form_fields(found: dict[str, Any]) -> list[FormField]:
    """The values a form would send, secrets marked (by type, name or autocomplete)."""
    return [
        FormField(
            f["label"] or f["name"],
            f["value"],
            is_secret_field(input_type=f["type"], name=f["name"], autocomplete=f["autocomplete"]),
        )
        for f in found["fields"][:40]
    ]


def secret_field(found: dict[str, Any]) -> bool:
    """Whether the probed element takes a secret (a password input, or a field whose name
    or ``autocomplete`` says so): its value comes from the user, never the model."""
    if found["tag"] not in ("INPUT", "TEXTAREA"):
        return False
    return is_secret_field(
        input_type=found["type"], name=found["fieldName"], autocomplete=found["autocomplete"]
    )


def tab_line(s: BrowserSession, page: Page) -> str:
    tabs = s.tabs()
    number = tabs.index(page) + 1 if page in tabs else 0
    return f'tab {number} of {len(tabs)}: "{page.title()[:100]}" {page.url}'


def settle(page: Page) -> str:
    """Let a page an action started finish loading; a note when it does not in time."""
    try:
        page.wait_for_load_state("load", timeout=SETTLE_SECONDS * 1000)
    except playwright_timeout():
        return f" (still loading after {SETTLE_SECONDS:g} seconds)"
    return ""


def after(s: BrowserSession, done: str) -> str:
    """``done``, then where the browser is now and what happened meanwhile."""
    blocked, opened = s.take_news()
    page = s.page()
    lines = [done, f"Now at {tab_line(s, page)}{settle(page)}"]
    lines += [f"Blocked: {words}" for words in blocked]
    lines += [f"Note: {words}" for words in s.take_notes()]
    if opened:
        lines.append(f"{len(opened)} new tab(s) opened; the newest is now the current tab")
    return "\n".join(lines)


# The fields of a form that the browser's own checks (required, type=email, pattern,
# min/max, a page's setCustomValidity) say fail: while one does, Chromium shows a bubble
# and sends nothing, unless the form or its submitter says novalidate. With a ref (null:
# the focused element) the form is found and remembered in the page; without one
# (``false``) the remembered form is read again, so a page that moved on reads as null.
_INVALID_JS = """(ref) => {
  let form;
  if (ref === false) {
    form = window.__hearthSubmitting;
    if (!form || !form.isConnected) return null;
  } else {
    const el = ref === null ? document.activeElement
      : document.querySelector(`[data-hearth-ref="${ref}"]`);
    form = el && (el.form || el.closest("form"));
    window.__hearthSubmitting = form || undefined;
    if (!form) return null;
    const isSubmit = (e) => (e.tagName === "BUTTON" && e.type === "submit")
      || (e.tagName === "INPUT" && (e.type === "submit" || e.type === "image"));
    const submitter = isSubmit(el) ? el : Array.from(form.elements).find(isSubmit);
    if (form.noValidate || (submitter && submitter.formNoValidate)) return [];
  }
  const words = (s) => (s || "").replace(/\\s+/g, " ").trim();
  const labelOf = (e) => {
    const label = e.labels && e.labels[0];
    const own = label ? Array.from(label.childNodes)
      .filter((n) => !(n.nodeType === 1 && n.matches("input, select, textarea, button")))
      .map((n) => n.textContent).join("") : "";
    return words(e.getAttribute("aria-label") || own || e.name || e.id || e.placeholder || e.type);
  };
  return Array.from(form.elements).filter((e) => e.willValidate && !e.validity.valid)
    .map((e) => [labelOf(e).slice(0, 60), words(e.validationMessage).slice(0, 160)]);
}"""
FIELDS_SHOWN = 6  # a blocked form's failing fields named in a result; the rest counted


def invalid_fields(frame: Frame, ref: int | None) -> list[tuple[str, str]]:
    """Just before an action submits the form of ``ref`` (None: the focused element) in
    ``frame``: its fields the browser's checks fail, each as (label, the browser's message).

    Why before the action and again after (:func:`still_invalid`): a page that sends its
    form by script and then empties it would read as blocked if only looked at after.
    Remembers the form in the page for :func:`still_invalid`.
    """
    return _failing(frame, ref)


def still_invalid(frame: Frame) -> list[tuple[str, str]]:
    """After the action: the remembered form's failing fields, when ``frame`` still shows it
    (empty: the page moved on, or a script made the fields pass before the browser looked)."""
    return _failing(frame, False)


def _failing(frame: Frame, ref: int | bool | None) -> list[tuple[str, str]]:
    from playwright.sync_api import Error as PlaywrightError

    try:
        found = frame.evaluate(_INVALID_JS, ref)
    except PlaywrightError:  # Why: a navigation (the action's, a script's) replaced the page
        return []
    return [(label, message) for label, message in found or []]


def not_submitted(fields: list[tuple[str, str]], done: str) -> str:
    """The words for a submission the browser's own checks stopped: its fields first (the
    line the audit and the terminal keep), then what the action did."""
    named = "; ".join(
        f"{label or 'a field'} — {message.rstrip('.')}" for label, message in fields[:FIELDS_SHOWN]
    )
    more = f"; and {len(fields) - FIELDS_SHOWN} more" if len(fields) > FIELDS_SHOWN else ""
    return (
        f"The form was not submitted: {named}{more}.\n{done}\nThe browser's own checks stopped "
        "it, so nothing was sent: correct these fields, then submit again."
    )


def unless_blocked(s: BrowserSession, ref: int | None, action: Callable[[], str]) -> str:
    """``action`` (one that submits the form of ``ref``), or a :class:`BrowserError` in
    words when the browser's own checks kept the form from being sent.

    Why an error: a click that sent nothing is no success, for the model nor for the
    audit, whose line (the first of the words) would otherwise read like a sent form.
    """
    frame = frame_of(s, ref)
    before = invalid_fields(frame, ref) if frame is not None else []
    done = action()
    blocked = still_invalid(frame) if frame is not None and before else []
    if blocked:
        raise BrowserError(not_submitted(blocked, done))
    return done
