"""What a build or update would do, decided without a model call.

A page is written when it does not exist (``new``), when the content hash of one of its
sources differs from the one its front matter records (``changed``), or when a source
appeared (``source added``) or vanished (``source removed``) in its folder; a page whose
folder holds no source any more is removed (no call). A page the user edited whose
waiting update was written from the current sources is ``up to date``: the model is not
asked the same thing again. The overview is written when a page it links was written
since, or pages appeared or vanished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workhearth.wiki import grouping
from workhearth.wiki.pages import OVERVIEW, PageFile, load, page_names, page_path
from workhearth.wiki.sources import Source, StatCache, list_files, scan
from workhearth.wiki.state import WikiState

Reason = Literal["new", "changed", "source added", "source removed", "overview", "up to date"]
WRITES = frozenset({"new", "changed", "source added", "source removed", "overview"})


@dataclass
class PlannedPage:
    """One page of the plan: ``sources`` are workspace-relative paths; ``folder`` the one
    it summarizes (``.`` the top level, ``""`` the overview)."""

    name: str
    title: str
    sources: list[str]
    reason: Reason
    folder: str = field(default="", repr=False)

    @property
    def removes(self) -> bool:
        """The page's folder holds no source any more: the page goes, no call."""
        return self.reason == "source removed" and not self.sources and self.name != OVERVIEW

    @property
    def needs_call(self) -> bool:
        return self.reason in WRITES and not self.removes

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "sources": list(self.sources),
            "reason": self.reason,
        }


@dataclass
class WikiPlan:
    """Pages (the overview last), the calls they need, and the sources that cannot be read."""

    pages: list[PlannedPage]
    calls: int
    unreadable: list[tuple[str, str]]
    sources: dict[str, Source] = field(default_factory=dict, repr=False)
    cache: StatCache = field(default_factory=StatCache, repr=False)
    # The pages (not the overview) on disk when the plan was made, parsed once.
    existing: dict[str, PageFile] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pages": [p.as_dict() for p in self.pages],
            "calls": self.calls,
            "unreadable": [{"path": p, "reason": r} for p, r in self.unreadable],
        }


def in_scope(folder: str, scope: str) -> bool:
    return scope == "." or folder == scope or folder.startswith(scope + "/")


def _folder_of(page: PageFile) -> str | None:
    """The folder a page of ours summarizes (None: a page the user wrote, no sources)."""
    paths = list(page.sources)
    if not page.meta or not paths:
        return None
    head, _, _ = paths[0].rpartition("/")
    return head or "."


def make_plan(
    root: Path, scope: str, folder: Path, state: WikiState, excluded: list[Path]
) -> WikiPlan:
    """The plan for ``root/scope``, its pages in ``folder`` (pages outside scope untouched)."""
    cache = StatCache(state.stat)
    found = scan(root, list_files(root, scope, excluded), cache)
    by_folder: dict[str, list[Source]] = {}
    for source in found:
        by_folder.setdefault(source.folder, []).append(source)
    existing = {n: p for n in page_names(folder) if n != OVERVIEW and (p := load(folder, n))}
    existing_folders = {n: f for n, p in existing.items() if (f := _folder_of(p)) is not None}
    names = grouping.page_names([*by_folder, *existing_folders.values()])
    planned: list[PlannedPage] = []
    for where in sorted(by_folder):
        sources = by_folder[where]
        name = names[where]
        current = {s.path: s.sha256 for s in sources}
        reason = _reason(existing.get(name), current, state.kept.get(name))
        planned.append(
            PlannedPage(name, grouping.title_of(where), sorted(current), reason, folder=where)
        )
    wanted = {p.name for p in planned}
    for name, where in sorted(existing_folders.items()):
        # Why not an edited one: the user made it theirs; it stays (listed as stale).
        if name not in wanted and in_scope(where, scope) and not existing[name].edited:
            planned.append(PlannedPage(name, grouping.title_of(where), [], "source removed", where))
    planned.append(_overview(folder, planned, existing, state))
    return WikiPlan(
        pages=planned,
        calls=sum(1 for p in planned if p.needs_call),
        unreadable=[(s.path, s.problem) for s in found if s.problem],
        sources={s.path: s for s in found},
        cache=cache,
        existing=existing,
    )


def _reason(
    page: PageFile | None,
    current: dict[str, str | None],
    kept: dict[str, str | None] | None,
) -> Reason:
    if page is None:
        return "new"
    recorded = page.sources
    if kept is not None and page.edited:
        recorded = kept  # Why: the waiting update already answers these sources
    if any(recorded.get(p, "") != sha for p, sha in current.items() if p in recorded):
        return "changed"
    if set(current) - set(recorded):
        return "source added"
    if set(recorded) - set(current):
        return "source removed"
    return "up to date"


def overview_stale(folder: Path, pages: dict[str, PageFile], state: WikiState) -> bool:
    """True when the overview is missing or was written from other pages than ``pages``
    (a page written since, or pages that appeared or vanished)."""
    recorded = state.overview
    return (
        not page_path(folder, OVERVIEW).exists()
        or recorded is None
        or set(recorded) != set(pages)
        or any(p.version != recorded.get(n) for n, p in pages.items())
    )


def _overview(
    folder: Path, planned: list[PlannedPage], existing: dict[str, PageFile], state: WikiState
) -> PlannedPage:
    """The overview's line of the plan: ``overview`` when it must be written."""
    removed = {p.name for p in planned if p.removes}
    after = {n: p for n, p in existing.items() if n not in removed}
    changing = any(p.reason in WRITES for p in planned)
    written = any(p.needs_call for p in planned)
    stale = overview_stale(folder, after, state) or written
    has_pages = bool(after) or written
    reason: Reason = "overview" if has_pages and (changing or stale) else "up to date"
    return PlannedPage(OVERVIEW, "Overview", [], reason)
