"""``hearth memory …``: the awareness files and the bank, one command group."""

from __future__ import annotations

from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import print_json, table, when
from workhearth.errors import UsageError

app = typer.Typer(help="Memory: plain Markdown you can edit, found by words.", no_args_is_help=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
LayerOpt = Annotated[str | None, typer.Option("--layer", help="user | project (default: both)")]


def _layer(value: str | None):  # -> Layer | None
    if value not in (None, "user", "project"):
        raise UsageError(f"layer must be user or project, not {value!r}")
    return value


@app.command()
def index(json: JsonOpt = False) -> None:
    """Bring the index up to date with the Markdown files (only changed files are read)."""
    report = hearth().memory.index()
    if json:
        print_json(report.as_dict())
    else:
        print(
            f"{report.files_seen} files, {report.files_changed} re-indexed, "
            f"{report.files_removed} removed, {report.chunks} chunks"
        )


@app.command()
def search(
    query: Annotated[str, typer.Argument(metavar="Q")],
    limit: Annotated[int, typer.Option(help="How many hits (1..50).")] = 6,
    layer: LayerOpt = None,
    json: JsonOpt = False,
) -> None:
    """Search memory by words (Chinese included)."""
    hits = hearth().memory.search(query, limit=limit, layer=_layer(layer))
    if json:
        print_json([h.as_dict() for h in hits])
        return
    if not hits:
        print("no results")
    for h in hits:
        print(f"[{h.score:.2f}] {h.layer}:{h.path}:{h.line_start}-{h.line_end}")
        print("    " + h.text.replace("\n", "\n    "))


@app.command()
def context(
    topic: Annotated[str | None, typer.Option(help="What the session is about.")] = None,
    budget: Annotated[int | None, typer.Option(help="Token budget per layer.")] = None,
    json: JsonOpt = False,
) -> None:
    """Show what would be injected at session start."""
    text = hearth().memory.context(topic=topic, budget=budget)
    if json:
        from workhearth.models.tokens import count_tokens

        print_json({"context": text, "tokens": count_tokens(text)})
    else:
        print(text or "(memory is empty)")


@app.command()
def status(json: JsonOpt = False) -> None:
    """Layers, files, entries and tokens against capacity."""
    data = hearth().memory.status()
    if json:
        print_json(data)
        return
    for layer in ("user", "project"):
        info = data[layer]
        if not info["exists"]:
            print(f"{layer:8} {info['folder']} (empty)")
            continue
        print(
            f"{layer:8} {info['folder']}: {info['files']} files, {info['entries']} entries, "
            f"{info['tokens']} / {info['capacity']} tokens"
        )
        if info.get("meta_damage"):
            print(f"warning: {info['meta_damage']}")
        for item in info.get("skipped", []):
            print(f"skipped: {layer}:{item['path']}: {item['reason']}")
        for item in info.get("decoded", []):
            print(f"note: {layer}:{item['path']}: {item['note']}")
    print(f"maintenance: {data['maintenance']}")


@app.command()
def save(
    text: Annotated[str, typer.Argument(metavar="TEXT")],
    level: Annotated[str, typer.Option(help="critical | normal | low")] = "normal",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    snippet: Annotated[str | None, typer.Option(help="Where it came from (provenance).")] = None,
    session: Annotated[str | None, typer.Option(help="Session id of the snippet.")] = None,
    message: Annotated[str | None, typer.Option(help="Message id of the snippet.")] = None,
    layer: Annotated[str, typer.Option(help="user | project")] = "project",
    redact: Annotated[bool, typer.Option(help="Store secrets masked instead of refusing.")] = False,
    json: JsonOpt = False,
) -> None:
    """Save a confirmed sentence to memory."""
    contexts = []
    if snippet or session or message:
        contexts.append(
            {
                "snippet": snippet or "",
                "session_id": session,
                "message_id": message,
                "origin": "cli",
            }
        )
    entry = hearth().memory.save(
        text, level=level, tags=tag or [], contexts=contexts, layer=_layer(layer), redact=redact
    )
    if json:
        print_json(entry.as_dict())
    else:
        print(f"saved {entry.id} to {entry.layer}:{entry.path}:{entry.line}")


@app.command("list")
def list_(
    limit: Annotated[int, typer.Option(help="Entries per page (1..100).")] = 20,
    cursor: Annotated[str | None, typer.Option(help="next_cursor of the previous page.")] = None,
    layer: LayerOpt = None,
    json: JsonOpt = False,
) -> None:
    """Entries hearth saved, newest first."""
    entries, next_cursor = hearth().memory.list(limit=limit, cursor=cursor, layer=_layer(layer))
    if json:
        print_json({"entries": [e.as_dict() for e in entries], "next_cursor": next_cursor})
        return
    if not entries:
        print("no entries")
        return
    table(
        ["id", "level", "created", "where", "content"],
        [
            [
                e.id,
                e.level + (" (pending)" if e.pending else ""),
                when(e.created),
                f"{e.layer}:{e.path}:{e.line}",
                e.content,
            ]
            for e in entries
        ],
    )
    if next_cursor:
        print(f"more: --cursor {next_cursor}")


@app.command()
def edit(
    entry_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str, typer.Argument(metavar="TEXT")],
    redact: Annotated[bool, typer.Option(help="Store secrets masked instead of refusing.")] = False,
    json: JsonOpt = False,
) -> None:
    """Replace an entry's text (its id stays); this also confirms a pending entry."""
    entry = hearth().memory.edit(entry_id, text, redact=redact)
    if json:
        print_json(entry.as_dict())
    else:
        print(f"edited {entry.id}")


@app.command()
def delete(entry_id: Annotated[str, typer.Argument(metavar="ID")], json: JsonOpt = False) -> None:
    """Remove an entry (a copy is kept in .memory_evicted.log)."""
    hearth().memory.delete(entry_id)
    if json:
        print_json({"id": entry_id, "deleted": True})
    else:
        print(f"deleted {entry_id} (kept in .memory_evicted.log)")


@app.command()
def reflect(layer: LayerOpt = None, json: JsonOpt = False) -> None:
    """Distill old daily logs and tidy MEMORY.md / USER.md with the model (backups first)."""
    wh = hearth()
    model = None
    if wh.config.models.configured:
        from workhearth.models.router import Router

        model = Router.from_config(wh.config.models)
    try:
        report = wh.memory.reflect(model, layer=_layer(layer))
    finally:
        if model is not None:
            model.close()
    if json:
        print_json(report.as_dict())
        return
    if not report.outcomes:
        print("nothing to reflect on")
    for o in report.outcomes:
        line = f"{o.layer}:{o.file}: {o.action}" + (f" ({o.reason})" if o.reason else "")
        print(line + (f"; backup {o.backup}" if o.backup else ""))
