"""``hearth wiki build|update [DIR] | show [PAGE] | search Q`` (DESIGN §3, issue 24)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table
from workhearth.errors import UsageError

if TYPE_CHECKING:
    from workhearth.wiki import PageInfo, WikiPlan, WikiReport

app = HearthTyper(
    help="The project wiki: pages the model writes about your folders, kept current.",
    no_args_is_help=True,
)

DirArg = Annotated[
    str | None,
    typer.Argument(metavar="DIR", help="An authorized folder (default: the workspace)."),
]
MaxCallsOpt = Annotated[
    int | None,
    typer.Option("--max-calls", help="The most model calls to make ([wiki] max_calls)."),
]


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class _Progress:
    """Lines on stderr as the run goes: the plan's call count, then each page as it lands."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.total = 0
        self.done = 0

    def plan(self, plan: WikiPlan) -> None:
        self.total = plan.calls
        if plan.calls > self.cap:
            _say(
                f"{plan.calls} model calls needed, {self.cap} allowed (cap): "
                "the rest are left for the next run"
            )
        else:
            _say(f"{plan.calls} model calls (cap {self.cap})")
        for path, why in plan.unreadable:
            _say(f"unreadable: {path}: {why}")

    def page(self, name: str, what: str) -> None:
        if what == "removed":
            _say(f"removed {name} (its folder holds no source any more)")
            return
        self.done += 1
        count = f"[{self.done}/{min(self.total, self.cap)}]"
        if what == "kept edit":
            _say(f"{count} kept your edit of {name}; the update is in {name}.update.md")
        else:
            _say(f"{count} wrote {name}")


def _run(update: bool, folder: str | None, max_calls: int | None, json: bool) -> None:
    wh = hearth()
    cap = wh.config.wiki.max_calls if max_calls is None else max_calls
    if cap < 1:
        raise UsageError(f"--max-calls must be at least 1, not {cap}")
    progress = _Progress(cap)
    run = wh.wiki.update if update else wh.wiki.build
    report = run(folder, max_calls=cap, on_page=progress.page, on_plan=progress.plan)
    if json:
        print_json(report.as_dict())
    else:
        _print_report(report)


def _print_report(report: WikiReport) -> None:
    if not (report.written or report.up_to_date or report.left or report.kept_edits):
        print("nothing to write: no text or office files found here")
        return
    print(
        f"{len(report.written)} pages written, {len(report.up_to_date)} up to date, "
        f"{report.calls} model calls; pages in {report.folder}"
    )
    for name in report.kept_edits:
        print(f"kept your edit of {name}; the update is in {name}.update.md")
    for name in report.removed:
        print(f"removed {name}")
    for path, why in report.unreadable:
        print(f"unreadable: {path}: {why}")
    if report.left:
        print(f"left for the next run (call cap reached): {', '.join(report.left)}")


@app.command()
def build(folder: DirArg = None, max_calls: MaxCallsOpt = None, json: JsonOpt = False) -> None:
    """Write the wiki of a folder: an overview and a page per folder (continues a stopped build)."""
    _run(False, folder, max_calls, json)


@app.command()
def update(folder: DirArg = None, max_calls: MaxCallsOpt = None, json: JsonOpt = False) -> None:
    """Rewrite only the pages whose sources changed, appeared or vanished."""
    _run(True, folder, max_calls, json)


@app.command()
def show(
    page: Annotated[
        str | None, typer.Argument(metavar="PAGE", help="A page's name (default: the list).")
    ] = None,
    json: JsonOpt = False,
) -> None:
    """List the pages (overview first), or print one page."""
    wiki = hearth().wiki
    if page is not None:
        found = wiki.read(page)
        if json:
            print_json(found.as_dict())
            return
        notes = _state(found)
        print(
            f"{found.name}: written {found.written} by {found.model}, "
            f"{len(found.sources)} sources" + (f" ({notes})" if notes else "")
        )
        print(found.text, end="" if found.text.endswith("\n") else "\n")
        return
    pages = wiki.pages()
    if json:
        print_json([p.as_dict() for p in pages])
        return
    if not pages:
        print("no wiki pages yet (hearth wiki build writes them)")
        return
    columns = [
        Column("page", cut="never"),
        Column("age", cut="never"),
        Column("sources", align="right", drop=2),
        Column("state", drop=1),
        Column("title", main=True),
    ]
    now = time.time()
    rows = [[p.name, _age(p.written, now), len(p.sources), _state(p), p.title] for p in pages]
    print_table(columns, rows)


def _state(page: PageInfo) -> str:
    notes = []
    if page.edited:
        notes.append("edited")
    if page.update_waiting:
        notes.append("update waiting")
    if page.stale:
        notes.append("stale")
    return ", ".join(notes)


def _age(written: str, now: float) -> str:
    """``5 min``, ``3 h``, ``2 d``: how long ago a page was written."""
    import calendar

    try:
        stamp = calendar.timegm(time.strptime(written, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return "?"
    seconds = max(0.0, now - stamp)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return "just now"


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="Q")],
    limit: Annotated[int, typer.Option(help="How many hits (1..50).")] = 6,
    json: JsonOpt = False,
) -> None:
    """Search the wiki's pages by words (Chinese included)."""
    if not query.strip():
        raise UsageError("the search query is empty: give the words to find")
    hits = hearth().memory.search(query, limit=limit, layer="wiki")
    if json:
        print_json([h.as_dict() for h in hits])
        return
    if not hits:
        print("no results")
    for h in hits:
        print(f"[{h.score:.2f}] {h.path}:{h.line_start}-{h.line_end}")
        print("    " + h.text.replace("\n", "\n    "))
