"""What the model is given for one page, and for the overview.

Why a budget: one call must fit any model's window whatever the folder holds, so a page's
call carries numbered excerpts of its sources within :data:`PAGE_BUDGET` characters (an
equal share each, at least :data:`MIN_SHARE`; so at most :data:`MAX_EXCERPTS` files, in
path order, are read at all), while the sources are listed with their hashes (up to
:data:`MAX_LISTED`): the model knows what it did not see in full. Lines are numbered as the model must
cite them: ``path:LINE`` for text, ``path p.N`` for a PDF page or a slide, ``path ¶N`` for
a Word block, ``path Sheet!N`` for a row of a sheet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PAGE_BUDGET = 24_000
MIN_SHARE = 600
MAX_EXCERPTS = PAGE_BUDGET // MIN_SHARE
MAX_LISTED = 400
OVERVIEW_BUDGET = 32_000
OVERVIEW_SHARE = 1_200
OVERVIEW_MIN_SHARE = 160

PAGE_SYSTEM = """You write one page of a project wiki: a concise, accurate summary of one \
folder of the user's project, for a developer or an agent who has not read it.
Say what the folder is for, then what each notable file holds and how they fit together \
(the main functions, classes, sections, figures or decisions). Use Markdown headings (##) \
and short paragraphs or lists. Write only what the excerpts support.
Cite the sources you rely on exactly as the excerpts label them: `path:LINE` for text \
files, `path p.N` for a PDF page or a slide, `path ¶N` for a Word block, `path Sheet!N` \
for a spreadsheet row.
Do not write a title line or a list of sources: hearth adds both."""

OVERVIEW_SYSTEM = """You write the overview page of a project wiki: what the project is \
and how its parts fit together, from the pages below (one per folder).
Open with two or three sentences on the project as a whole, then group the pages by \
theme and say in a line what each holds, linking each page as [title](name.md).
Do not write a title line: hearth adds it, and a list of every page after your text."""


@dataclass(frozen=True)
class Excerpt:
    """One source as the model sees it: labelled units (line, page, block, row) or a problem."""

    path: str
    sha256: str | None
    units: Sequence[tuple[str, str]]
    problem: str | None = None
    shown: bool = True  # False: listed only (past the page's budget), never read


def page_prompt(title: str, excerpts: Sequence[Excerpt]) -> str:
    """The user message of a page's call: the source list, then each source's excerpt."""
    shown = [ex for ex in excerpts if ex.shown and ex.problem is None]
    share = max(MIN_SHARE, PAGE_BUDGET // max(1, len(shown)))
    head = [f"Folder: {title}", f"Sources ({len(excerpts)}):"]
    for ex in excerpts[:MAX_LISTED]:
        note = f" — could not be read: {ex.problem}" if ex.problem else ""
        note += "" if ex.shown else " (not excerpted: over this page's budget)"
        head.append(f"- {ex.path} (sha256 {(ex.sha256 or '?')[:12]}){note}")
    if len(excerpts) > MAX_LISTED:
        head.append(f"- … and {len(excerpts) - MAX_LISTED} more files")
    parts = ["\n".join(head)]
    parts += [f"=== {ex.path} ===\n{_excerpt(ex, share)}" for ex in shown]
    return "\n\n".join(parts)


def _excerpt(ex: Excerpt, share: int) -> str:
    lines: list[str] = []
    used = 0
    for n, (label, text) in enumerate(ex.units):
        line = f"{ex.path}{_sep(label)}{label}| {text}"
        if used + len(line) > share and lines:
            lines.append(f"… ({len(ex.units) - n} more not shown)")
            break
        lines.append(line[: share - used] if not lines else line)
        used += len(line) + 1
    return "\n".join(lines) if lines else "(empty)"


def _sep(label: str) -> str:
    return ":" if label.isdigit() else " "


def text_units(text: str) -> list[tuple[str, str]]:
    """A text file as numbered lines (blank ones left out, numbers kept)."""
    return [(str(n), line.rstrip()) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def overview_prompt(root_name: str, pages: Sequence[tuple[str, str, str]]) -> str:
    """The overview's user message: ``(name, title, body)`` of each page, each cut to a
    share of :data:`OVERVIEW_BUDGET`; past the budget a page is named by its title only."""
    share = max(OVERVIEW_MIN_SHARE, min(OVERVIEW_SHARE, OVERVIEW_BUDGET // max(1, len(pages))))
    parts = [f"Project: {root_name}", f"Pages ({len(pages)}):"]
    used = 0
    for name, title, body in pages:
        link = f"[{title}]({name}.md)"
        if used >= OVERVIEW_BUDGET:
            parts.append(f"=== {link} === (not summarized here: over the budget)")
            continue
        summary = _without_sources(body).strip()
        if len(summary) > share:
            summary = summary[:share].rsplit(" ", 1)[0] + " …"
        used += len(summary)
        parts.append(f"=== {link} ===\n{summary}")
    return "\n\n".join(parts)


def _without_sources(body: str) -> str:
    head, _, _ = body.partition("\n## Sources\n")
    lines = head.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]  # the title hearth wrote
    return "\n".join(lines)
