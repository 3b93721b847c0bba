"""Elements by ref, and what an action did: the plumbing between the tools and the session.

Every function here runs on the browser's thread (inside :meth:`BrowserSession.do`).
Why one probe per action: each exchange with the page costs a round trip (a few
milliseconds), so a tool learns in one ``evaluate`` whether its ref still exists,
what kind of element it is, and the form it would submit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workhearth.agent.browser.approvals import FormField, is_secret_field
from workhearth.agent.browser.session import BrowserError, BrowserSession

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

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
    url: location.href,
  };
}"""


def playwright_timeout() -> type[Exception]:
    """Playwright's timeout error (imported late: the package is an optional extra)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    return PlaywrightTimeout


def probe(s: BrowserSession, ref: int | None) -> dict[str, Any]:
    """What the element of ``ref`` is (see ``_PROBE_JS``), or words saying why there is none."""
    found = s.page().evaluate(_PROBE_JS, ref)
    if found is None:
        if ref is not None and ref >= s.next_ref:
            raise BrowserError(f"there is no ref {ref}; refs come from browser_snapshot: take one")
        raise BrowserError(f"ref {ref} is no longer on the page; take a new snapshot")
    return dict(found)


def locate(s: BrowserSession, ref: int) -> Locator:
    """The element of ``ref`` (no round trip: Playwright looks it up when it acts)."""
    return s.page().locator(f'[data-hearth-ref="{ref}"]').first


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
