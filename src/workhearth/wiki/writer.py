"""Carrying out a plan: one model call per page, then the overview, each page on disk
(atomically) as soon as its call returns.

Why at once: a run killed after its tenth page keeps ten finished pages and no half one,
and the next run's plan finds them up to date (their front matter records the source
hashes they were written from), so it makes no call for them. A page the user edited is
never overwritten: its update goes beside it as ``<name>.update.md``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workhearth.errors import ModelError
from workhearth.fsutil import atomic_write
from workhearth.models.base import ModelRequest
from workhearth.models.messages import message_text, text_message
from workhearth.models.streaming import StreamingChatModel
from workhearth.wiki import office, prompts
from workhearth.wiki.pages import (
    OVERVIEW,
    PageFile,
    load,
    page_path,
    render,
    update_path,
)
from workhearth.wiki.plan import PlannedPage, WikiPlan, overview_stale
from workhearth.wiki.sources import Source
from workhearth.wiki.state import WikiState

# ``on_page(name, what)``: what is "written", "kept edit" or "removed".
OnPage = Callable[[str, str], None]


@dataclass
class WikiReport:
    """What a build or update did. ``kept_edits``: pages the user edited, whose update
    waits beside them as ``<name>.update.md``; ``left``: pages not written because the
    call cap was reached (the next run writes them); ``removed``: pages whose folder holds
    no source any more."""

    calls: int = 0
    written: list[str] = field(default_factory=list)
    kept_edits: list[str] = field(default_factory=list)
    up_to_date: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    folder: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "written": list(self.written),
            "kept_edits": list(self.kept_edits),
            "up_to_date": list(self.up_to_date),
            "left": list(self.left),
            "unreadable": [{"path": p, "reason": r} for p, r in self.unreadable],
            "removed": list(self.removed),
            "folder": self.folder,
        }


class PageWriter:
    """Writes one plan's pages into ``folder`` with ``model``, at most ``max_calls`` calls."""

    def __init__(
        self,
        root: Path,
        folder: Path,
        state: WikiState,
        model: StreamingChatModel | None,
        max_calls: int,
        on_page: OnPage | None = None,
    ) -> None:
        self.root = root
        self.folder = folder
        self.state = state
        self.model = model
        self.max_calls = max_calls
        self.on_page = on_page or (lambda name, what: None)
        self.report = WikiReport(folder=str(folder))

    def run(self, plan: WikiPlan) -> WikiReport:
        self.report.unreadable = list(plan.unreadable)
        for page in plan.pages:
            if page.name == OVERVIEW:
                continue
            if page.removes:
                self._remove(page.name)
            elif not page.needs_call:
                self.report.up_to_date.append(page.name)
            elif self.report.calls >= self.max_calls:
                self.report.left.append(page.name)
            else:
                self._write_page(page, plan.sources)
        self._overview(self._pages_now(plan.existing))
        return self.report

    # ------------------------------------------------------------------ pages
    def _write_page(self, page: PlannedPage, sources: dict[str, Source]) -> None:
        excerpts = [
            self._excerpt(sources[p])
            if n < prompts.MAX_EXCERPTS
            else prompts.Excerpt(p, sources[p].sha256, (), sources[p].problem, shown=False)
            for n, p in enumerate(page.sources)
        ]
        prompt = prompts.page_prompt(page.title, excerpts)
        text, model = self._call(prompts.PAGE_SYSTEM, prompt, page.name)
        problems = [(e.path, e.problem) for e in excerpts if e.problem]
        for path, why in problems:
            if (path, why) not in self.report.unreadable:
                self.report.unreadable.append((path, why))
        body = self._body(page.title, text, excerpts)
        hashed = [(e.path, e.sha256) for e in excerpts if e.sha256]
        content = render(
            title=page.title, model=model, sources=hashed, unreadable=problems, body=body
        )
        current = {e.path: e.sha256 for e in excerpts}
        self._put(page.name, content, current)

    def _excerpt(self, source: Source) -> prompts.Excerpt:
        if source.problem or source.sha256 is None:
            return prompts.Excerpt(source.path, source.sha256, (), source.problem or "unreadable")
        full = self.root / source.path
        try:
            if source.kind == "office":
                units = office.read_units(full)
            else:
                units = prompts.text_units(full.read_bytes().decode("utf-8", "replace"))
        except office.Unreadable as exc:
            return prompts.Excerpt(source.path, source.sha256, (), str(exc))
        except OSError as exc:
            why = f"cannot be read ({exc.strerror or exc.__class__.__name__})"
            return prompts.Excerpt(source.path, source.sha256, (), why)
        return prompts.Excerpt(source.path, source.sha256, units)

    def _call(self, system: str, prompt: str, name: str) -> tuple[str, str]:
        """One model call: the reply's text and the model that wrote it."""
        if self.model is None:  # pragma: no cover - a plan with calls always has a model
            raise ModelError("no model to write the wiki with", kind="config")
        self.report.calls += 1
        request = ModelRequest(system, [text_message("user", prompt)])
        completion = self.model.generate(request)
        text = message_text(completion.message).strip()
        if not text:
            raise ModelError(f"the model wrote nothing for wiki page {name}", kind="provider")
        return text, completion.model

    def _body(self, title: str, text: str, excerpts: list[prompts.Excerpt]) -> str:
        text = _without_title(text)
        listed = []
        for ex in excerpts:
            uri = (self.root / ex.path).as_uri()
            note = f" — unreadable: {ex.problem}" if ex.problem else ""
            listed.append(f"- [{ex.path}]({uri}){note}")
        return f"# {title}\n\n{text}\n\n## Sources\n" + "\n".join(listed) + "\n"

    def _put(self, name: str, content: str, current: dict[str, str | None]) -> None:
        """Write a page, or its update beside it when the user edited the page."""
        existing = load(self.folder, name)
        if existing is not None and existing.edited:
            atomic_write(update_path(self.folder, name), content.encode("utf-8"))
            self.state.kept[name] = current
            self.report.kept_edits.append(name)
            what = "kept edit"
        else:
            atomic_write(page_path(self.folder, name), content.encode("utf-8"))
            with contextlib.suppress(FileNotFoundError):
                update_path(self.folder, name).unlink()  # Why: superseded by the page
            self.state.kept.pop(name, None)
            self.report.written.append(name)
            what = "written"
        self.state.save(self.folder)
        self.on_page(name, what)

    def _remove(self, name: str) -> None:
        for path in (page_path(self.folder, name), update_path(self.folder, name)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self.state.kept.pop(name, None)
        self.report.removed.append(name)
        self.on_page(name, "removed")

    # --------------------------------------------------------------- overview
    def _pages_now(self, before: dict[str, PageFile]) -> dict[str, PageFile]:
        """The pages (not the overview) on disk now: the plan's, less those removed, with
        those written re-read (why: a no-change update parses each page once, not twice)."""
        pages = {n: p for n, p in before.items() if n not in self.report.removed}
        for name in self.report.written:
            if (page := load(self.folder, name)) is not None:
                pages[name] = page
        return dict(sorted(pages.items()))

    def _overview(self, pages: dict[str, PageFile]) -> None:
        if not pages:
            overview = load(self.folder, OVERVIEW)
            if overview is not None and not overview.edited:
                self._remove(OVERVIEW)  # Why: nothing left to link
            return
        if not overview_stale(self.folder, pages, self.state):
            self.report.up_to_date.append(OVERVIEW)
            return
        if self.report.calls >= self.max_calls:
            self.report.left.append(OVERVIEW)
            return
        root_name = self.root.name or str(self.root)
        listed = [(n, _title(p), p.body) for n, p in sorted(pages.items())]
        text, model = self._call(
            prompts.OVERVIEW_SYSTEM, prompts.overview_prompt(root_name, listed), OVERVIEW
        )
        text = _without_title(text)
        index = "\n".join(f"- [{title}]({n}.md)" for n, title, _ in listed)
        body = f"# Overview of {root_name}\n\n{text}\n\n## Pages\n{index}\n"
        content = render(
            title="Overview", model=model, sources=[], unreadable=[], body=body, links=sorted(pages)
        )
        # Why first: _put saves the state, so a kill right after it keeps the record.
        self.state.overview = {n: p.version for n, p in pages.items()}
        self._put(OVERVIEW, content, {})


def _without_title(text: str) -> str:
    """The model's text without a title line of its own: hearth writes the title."""
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        return "\n".join(lines[1:]).strip()
    return text


def _title(page: PageFile) -> str:
    return str(page.meta.get("title") or page.name)
