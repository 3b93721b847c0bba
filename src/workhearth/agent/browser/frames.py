"""Refs inside iframes: a tab's snapshot over its frames, and the frame that holds a ref.

Why: a login form, a payment field or a table inside an ``<iframe>`` (same-origin or
not: an SSO or a card frame) is part of the page the user sees, yet ``snapshot.js``
reads one document. So the snapshot runs that script in each frame the page shows, with
the session's one ref counter (refs stay unique in the tab), and puts each frame's lines
where its ``<iframe>`` stands, indented under a ``frame "Title" (url)`` line, nested
frames up to :data:`MAX_DEPTH`. Playwright runs a script in a cross-origin frame too (it
drives that frame's own process), so one path serves both; a frame that cannot be read
(detached meanwhile, an error page) is one short line.

Which frame holds a ref: a map ``ref → Frame``, filled only for refs given inside frames;
a ref not in it belongs to the tab's main document. So a page without frames costs what
it did before (no extra call to the browser). Playwright keeps a frame's ``Frame`` across
the frame's own reloads: a ref of a frame that reloaded is simply not found there (the
usual "no longer on the page" words), and a removed frame is detached.

The maps sit beside the session, not in it, as the typed passwords do in ``tools.py``:
they live in memory only, and only as long as it.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workhearth.agent.browser.session import first_line

if TYPE_CHECKING:
    from playwright.sync_api import Frame, Page

    from workhearth.agent.browser.session import BrowserSession

MAX_DEPTH = 3  # frames inside frames are read this deep
FRAME_MARK = "data-hearth-frame"  # snapshot.js marks each visible <iframe> with it

# The frame of each ref given inside a frame, and of each table numbered inside one.
_refs: weakref.WeakKeyDictionary[BrowserSession, dict[int, Frame]] = weakref.WeakKeyDictionary()
_tables: weakref.WeakKeyDictionary[BrowserSession, dict[int, tuple[Frame, int]]] = (
    weakref.WeakKeyDictionary()
)
# The mark of each frame's <iframe> (kept for its life): asking costs ~4 ms a frame.
_marks: weakref.WeakKeyDictionary[Frame, str] = weakref.WeakKeyDictionary()


def read_tab(s: BrowserSession, page: Page, script: str, max_chars: int) -> tuple[str, bool]:
    """``page`` as text with refs (``script`` is snapshot.js), its frames' lines in place,
    cut at ``max_chars`` in reading order; and whether it was cut."""
    out: dict[str, Any] = page.main_frame.evaluate(
        script, {"start": s.next_ref, "maxChars": max_chars}
    )
    s.next_ref = max(s.next_ref, int(out["next"]))
    _tables.pop(s, None)  # Why: table numbers are the last snapshot's
    if not out.get("frames"):
        return str(out["text"]), bool(out["cut"])
    refs = _refs.setdefault(s, {})
    for ref in [r for r, frame in refs.items() if frame.is_detached()]:
        del refs[ref]
    reading = _Reading(s, script, max_chars, refs, tables=int(out["tables"]))
    lines = reading.splice(page.main_frame, out, 1, 0)
    _tables[s] = reading.table_frames
    return _cut(lines, max_chars, bool(out["cut"]) or reading.cut)


def frame_of(s: BrowserSession, ref: int | None) -> Frame | None:
    """The frame to look for ``ref`` in (None: the focused element's, the main one); None
    when the frame that held it is gone or belongs to another tab (the ref is stale)."""
    page = s.page()
    frame = _refs.get(s, {}).get(ref) if ref is not None else None
    if frame is None:
        return page.main_frame
    if frame.is_detached() or frame.page is not page:
        return None
    return frame


def table_frame(s: BrowserSession, page: Page, number: int) -> tuple[Frame, int]:
    """Where table ``number`` of the last snapshot is: a frame and its number there (the
    main document's tables keep their own numbers)."""
    found = _tables.get(s, {}).get(number)
    if found is None or found[0].is_detached() or found[0].page is not page:
        return page.main_frame, number
    return found


def frames_text(page: Page, script: str) -> str:
    """The text ``script`` gives in each visible frame of ``page`` (nested ones too, to
    :data:`MAX_DEPTH`), each under its ``frame "Title" (url)`` line; "" without frames."""
    from playwright.sync_api import Error

    parts: list[str] = []

    def read(parent: Frame, depth: int) -> None:
        for child in parent.child_frames:
            try:
                handle = child.frame_element()
                shown = handle.is_visible()
                handle.dispose()
                shown = shown and not child.url.startswith("chrome-error:")  # refused, failed
                text = str(child.evaluate(script)).strip() if shown else ""
            except Error:
                continue  # detached meanwhile, or an error page: nothing to read
            if text:
                parts.append(f"{_header(child, child.title())}:\n{text}")
            if shown and depth < MAX_DEPTH:
                read(child, depth + 1)

    read(page.main_frame, 1)
    return "".join(f"\n\n{part}" for part in parts)


@dataclass
class _Reading:
    """One snapshot over a tab's frames: the counters they share and what they gave."""

    s: BrowserSession
    script: str
    max_chars: int
    refs: dict[int, Frame]
    tables: int
    table_frames: dict[int, tuple[Frame, int]] = field(default_factory=dict)
    cut: bool = False

    def splice(self, frame: Frame, out: dict[str, Any], depth: int, before: int) -> list[str]:
        """The lines of ``out`` (snapshot.js in ``frame``) with its frames' lines put where
        their ``<iframe>`` stands; ``before``: characters that come before it overall."""
        lines: list[str] = list(out["lines"])
        places: list[dict[str, Any]] = list(out["frames"])
        children = _children_by_mark(frame, {str(place["mark"]) for place in places})
        result: list[str] = []
        size = before
        done = 0
        for place in places:
            for line in lines[done : place["at"]]:
                result.append(line)
                size += len(line) + 1
            done = place["at"]
            child = children.get(str(place["mark"]))
            read = self.read(child, place, depth, size)
            result += read
            size += sum(len(line) + 1 for line in read)
        return result + lines[done:]

    def read(
        self, frame: Frame | None, place: dict[str, Any], depth: int, before: int
    ) -> list[str]:
        """The lines of one frame (``place``: its ``<iframe>``'s title, src): a header,
        then its own lines indented."""
        from playwright.sync_api import Error

        title, src = str(place["title"]), str(place["src"])
        if frame is None or frame.url.startswith("chrome-error:"):
            # Why the src: an error page's address says nothing of what was refused.
            words = "not loaded yet" if frame is None else "did not load (refused or failed)"
            return [f'frame "{_short(title, 80)}" ({_short(src, 120)}): {words}']
        if depth > MAX_DEPTH:
            return [f"{_header(frame, title)}: not read (frames nest deeper than {MAX_DEPTH})"]
        budget = self.max_chars - before
        if budget <= 0:
            self.cut = True
            return []
        args = {"start": self.s.next_ref, "maxChars": budget, "tables": self.tables, "refs": True}
        try:
            out: dict[str, Any] = frame.evaluate(self.script, args)
        except Error as exc:
            return [f"{_header(frame, title)}: not read ({first_line(exc)[:120]})"]
        self.s.next_ref = max(self.s.next_ref, int(out["next"]))
        for ref in out["refs"]:
            self.refs[int(ref)] = frame
        for number in range(self.tables + 1, int(out["tables"]) + 1):
            self.table_frames[number] = (frame, number - self.tables)
        self.tables = int(out["tables"])
        self.cut = self.cut or bool(out["cut"])
        if out.get("frames"):
            own = self.splice(frame, out, depth + 1, before)
        else:
            own = str(out["text"]).splitlines() if out["text"] else []
        if not own:
            return []  # Why: an empty frame (a tracker, a spacer) is not worth a line
        return [_header(frame, str(out["title"]) or title), *("  " + line for line in own)]


def _children_by_mark(frame: Frame, wanted: set[str]) -> dict[str, Frame]:
    """The child frames of ``frame`` by the mark snapshot.js gave their ``<iframe>``: known
    ones first; the others (new, or hidden) asked only while a wanted mark is missing."""
    from playwright.sync_api import Error

    found: dict[str, Frame] = {}
    unknown: list[Frame] = []
    for child in frame.child_frames:
        mark = _marks.get(child)
        if mark is None:
            unknown.append(child)
        else:
            found[mark] = child
    for child in unknown:
        if wanted <= found.keys():
            break
        try:
            handle = child.frame_element()
            mark = handle.evaluate(f"(e) => e.getAttribute('{FRAME_MARK}')")
            handle.dispose()
        except Error:
            continue  # detached meanwhile
        if mark:  # Why no "none" kept for a hidden frame: it may be shown later
            _marks[child] = str(mark)
            found[str(mark)] = child
    return found


def _header(frame: Frame, title: str) -> str:
    return f'frame "{_short(title, 80)}" ({_short(frame.url, 120)})'


def _short(text: str, most: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1] + "…"


def _cut(lines: list[str], max_chars: int, cut: bool) -> tuple[str, bool]:
    """The lines that fit in ``max_chars`` (reading order), and whether any did not."""
    size = 0
    for count, line in enumerate(lines):
        size += len(line) + 1
        if size > max_chars + 1:
            return "\n".join(lines[:count]), True
    return "\n".join(lines), cut
