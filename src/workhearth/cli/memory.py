"""``hearth memory …``: the awareness files and the bank, one command group."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper, PlainUsage
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table, short_time
from workhearth.errors import HearthError, UsageError

if TYPE_CHECKING:
    from workhearth.app import Workhearth

app = HearthTyper(help="Memory: plain Markdown you can edit, found by words.", no_args_is_help=True)

LayerOpt = Annotated[str | None, typer.Option("--layer", help="user | project (default: both)")]
# Why a cap: content is at most 8,000 characters; more than this on stdin is a mistake.
STDIN_MAX_BYTES = 1 << 20
# An option as a user types one: ``-v``, ``--level``, ``--level=low``.
_OPTION_LIKE = re.compile(r"--?[A-Za-z][\w-]*(?:=.*)?", re.DOTALL)


class TextArgCommand(PlainUsage):
    """A command whose TEXT may start with dashes (``-----BEGIN …``, ``--- note ---``).

    Why: click reads every word that starts with ``-`` as an option, so a pasted key or
    a Markdown rule failed with "No such option" instead of reaching the secrets check.
    A word that cannot be an option name (``-v``, ``--level``, ``--level=low``), such as
    one holding a space or a newline or starting with three dashes, is moved behind
    ``--``, where click takes it as an argument; option values and real (even
    misspelt) options are left alone.
    """

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        takes_value = {
            name
            for p in self.params
            if isinstance(p, typer.core.TyperOption) and not p.is_flag
            for name in p.opts
        }
        kept: list[str] = []
        texts: list[str] = []
        for i, arg in enumerate(args):
            if arg == "--":
                kept += args[i:]
                break
            value_of_option = i > 0 and args[i - 1] in takes_value
            if (
                arg.startswith("-")
                and arg != "-"
                and not value_of_option
                and not _OPTION_LIKE.fullmatch(arg)
            ):
                texts.append(arg)
            else:
                kept.append(arg)
        if texts:
            kept = [*kept, "--", *texts] if "--" not in kept else kept + texts
        return super().parse_args(ctx, kept)


def _text_arg(text: str) -> str:
    """TEXT as given, or read from standard input when it is ``-``."""
    if text != "-":
        return text
    if sys.stdin is None:
        raise UsageError("TEXT is - but there is no standard input to read it from")
    data = sys.stdin.buffer.read(STDIN_MAX_BYTES + 1)
    if len(data) > STDIN_MAX_BYTES:
        raise UsageError(
            f"standard input is over {STDIN_MAX_BYTES // 1024} KB; memory takes a sentence"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"standard input is not valid UTF-8 text (bad byte at offset {exc.start})"
        ) from None


def _layer(value: str | None):  # -> Layer | None
    if value not in (None, "user", "project"):
        raise UsageError(f"layer must be user or project, not {value!r}")
    return value


@app.command()
def index(
    prune: Annotated[
        bool,
        typer.Option(
            "--prune", help="Also drop the metadata of entries no Markdown file holds any more."
        ),
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Bring the index up to date with the Markdown files (only changed files are read)."""
    report = hearth().memory.index(prune=prune)
    if json:
        print_json(report.as_dict())
    else:
        print(
            f"{report.files_seen} files, {report.files_changed} re-indexed, "
            f"{report.files_removed} removed, {report.chunks} chunks"
        )
        if prune:
            print(f"pruned {report.pruned} orphaned metadata entries")


@app.command(cls=TextArgCommand)
def search(
    query: Annotated[str, typer.Argument(metavar="Q")],
    limit: Annotated[int, typer.Option(help="How many hits (1..50).")] = 6,
    layer: Annotated[
        str | None,
        typer.Option("--layer", help="user | project | wiki (default: all three)"),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Search memory by words (Chinese included), and the project's wiki pages."""
    if not query.strip():
        # Why: "no results" for an empty query reads as "searched and found nothing";
        # on the command line it is a mistake (the library and REST keep an empty list).
        raise UsageError("the search query is empty: give the words to find")
    hits = hearth().memory.search(
        query, limit=limit, layer="wiki" if layer == "wiki" else _layer(layer)
    )
    if json:
        print_json([h.as_dict() for h in hits])
        return
    if not hits:
        print("no results")
    for h in hits:
        tags = f" #{' #'.join(h.tags)}" if h.tags else ""
        print(f"[{h.score:.2f}] {h.layer}:{h.path}:{h.line_start}-{h.line_end}{tags}")
        print("    " + h.text.replace("\n", "\n    "))


@app.command()
def context(
    topic: Annotated[str | None, typer.Option(help="What the session is about.")] = None,
    budget: Annotated[
        int | None,
        typer.Option(help="Token ceiling for the whole text, headings included."),
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Show what would be injected at session start."""
    text = hearth().memory.context(topic=topic, budget=budget)
    if json:
        from workhearth.models.tokens import count_tokens

        print_json({"context": text, "tokens": count_tokens(text)})
    elif text:
        print(text)
    else:
        # Why stderr: stdout is exactly the injected text, which must stay inside --budget.
        print("(nothing to inject: memory is empty or nothing fits the budget)", file=sys.stderr)


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
    wiki = data.get("wiki") or {}
    if wiki.get("exists"):
        print(f"wiki     {wiki['folder']}: {wiki['files']} pages (read-only, level low)")
    print(f"maintenance: {data['maintenance']}")
    if "bank" in data:
        bank = data["bank"]
        print(
            f"team bank {bank['url']}: {bank['queued']} queued, "
            f"{bank['dead_letters']} dead letters ({bank['outbox']})"
        )


@app.command()
def sync(json: JsonOpt = False) -> None:
    """Send the saves queued for the team bank ([bank] url) and show what is left."""
    from workhearth.bank.client.facade import TeamBank

    team = hearth().memory.team_bank
    if not isinstance(team, TeamBank):
        raise UsageError("no team bank is configured: set [bank] url in config.toml")
    report = team.send_queued()
    if json:
        print_json(report.as_dict())
    else:
        print(f"sent {len(report.sent)} queued saves to {report.url}")
        for dead in report.dead:
            print(f"dead letter {dead['key']}: {dead['error']}: {dead['content'][:60]!r}")
        if report.queued:
            print(f"{len(report.queued)} still queued: {report.problem}")
        if report.dead_total:
            print(f"{report.dead_total} dead letters in {team.outbox.dead_path}")
        if report.other_urls:
            print(f"{report.other_urls} saves queued for another bank url wait in the outbox")
    # Why fail: a script (or cron) running sync must see that saves are still waiting
    # or were refused.
    if report.dead:
        raise HearthError(
            f"the team bank refused {len(report.dead)} saves: kept in {team.outbox.dead_path}"
        )
    if report.queued:
        raise HearthError(f"{len(report.queued)} saves still queued: {report.problem}")


@app.command(cls=TextArgCommand)
def save(
    text: Annotated[
        str, typer.Argument(metavar="TEXT", help="The sentence; - reads it from stdin.")
    ],
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
        _text_arg(text),
        level=level,
        tags=tag or [],
        contexts=contexts,
        layer=_layer(layer),
        redact=redact,
    )
    if json:
        print_json(entry.as_dict())
    elif entry.layer == "queued":
        problem = getattr(hearth().memory.team_bank, "last_sync", None)
        why = f" ({problem.problem})" if problem and problem.problem else ""
        print(f"queued {entry.id} for the team bank{why}; `hearth memory sync` sends it")
    elif entry.existed:
        print(f"already saved as {entry.id} in {entry.layer}:{entry.path}:{entry.line}")
    else:
        print(f"saved {entry.id} to {entry.layer}:{entry.path}:{entry.line}")


@app.command("list")
def list_(
    limit: Annotated[int, typer.Option(help="Entries per page (1..100).")] = 20,
    cursor: Annotated[str | None, typer.Option(help="next_cursor of the previous page.")] = None,
    layer: LayerOpt = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only entries with this tag.")] = None,
    json: JsonOpt = False,
) -> None:
    """Entries hearth saved, newest first."""
    entries, next_cursor = hearth().memory.list(
        limit=limit, cursor=cursor, layer=_layer(layer), tag=tag
    )
    if json:
        print_json({"entries": [e.as_dict() for e in entries], "next_cursor": next_cursor})
        return
    if not entries:
        print("no entries")
        return
    # Why: one line per entry; the content keeps the width, where and level give way first.
    columns = [
        Column("id", cut="never"),
        Column("level", cut="never", drop=2),
        Column("created", cut="never"),
        Column("where", cut="start", cap=20, drop=1),
        Column("tags", cap=12, drop=3),
        Column("content", main=True),
    ]
    rows = [
        [
            e.id,
            e.level + (" (pending)" if e.pending else ""),
            short_time(e.created),
            f"{e.layer}:{e.path}:{e.line}",
            " ".join(e.tags),
            e.content,
        ]
        for e in entries
    ]
    print_table(columns, rows)
    if next_cursor:
        print(f"more: --cursor {next_cursor}")


@app.command(cls=TextArgCommand)
def edit(
    entry_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[
        str, typer.Argument(metavar="TEXT", help="The new text; - reads it from stdin.")
    ],
    redact: Annotated[bool, typer.Option(help="Store secrets masked instead of refusing.")] = False,
    json: JsonOpt = False,
) -> None:
    """Replace an entry's text (its id stays); this also confirms a pending entry."""
    entry = hearth().memory.edit(entry_id, _text_arg(text), redact=redact)
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
def restore(entry_id: Annotated[str, typer.Argument(metavar="ID")], json: JsonOpt = False) -> None:
    """Bring back a deleted or evicted entry from .memory_evicted.log (same id)."""
    entry = hearth().memory.restore(entry_id)
    if json:
        print_json(entry.as_dict())
    else:
        print(f"restored {entry.id} to {entry.layer}:{entry.path}:{entry.line}")


@app.command()
def reflect(
    layer: LayerOpt = None,
    rollback: Annotated[
        bool, typer.Option("--rollback", help="Undo the newest reflection (from its backup).")
    ] = False,
    backup: Annotated[
        str | None, typer.Option(help="With --rollback: the backup to restore (default: newest).")
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Distill old daily logs and tidy MEMORY.md / USER.md with the model (backups first)."""
    wh = hearth()
    if backup is not None and not rollback:
        raise UsageError("--backup goes with --rollback")
    if rollback:
        from workhearth.memory.reflect import newest_backup
        from workhearth.memory.reflect import rollback as undo

        name = backup or newest_backup(wh.memory, layer=_layer(layer))
        outcome = undo(wh.memory, name, layer=_layer(layer))
        if json:
            print_json(outcome.as_dict())
        else:
            print(
                f"{outcome.layer}:{outcome.file}: {outcome.action}"
                + (f" ({outcome.reason})" if outcome.reason else "")
            )
        if outcome.action != "restored":
            raise HearthError(f"rollback not done: {outcome.reason or outcome.action}")
        return
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
    else:
        if not report.outcomes:
            print("nothing to reflect on")
        for o in report.outcomes:
            line = f"{o.layer}:{o.file}: {o.action}" + (f" ({o.reason})" if o.reason else "")
            print(line + (f"; backup {o.backup}" if o.backup else ""))
    failed = [o for o in report.outcomes if o.action in ("aborted", "conflict")]
    if failed:
        # Why: a script (or cron) must see that the reflection did not happen.
        first = failed[0]
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        raise HearthError(
            f"reflection aborted for {first.layer}:{first.file}: {first.reason}{more}"
        )


# ------------------------------------------------------------ maintenance
# Why: automatic maintenance (distilling daily logs, tidying MEMORY.md / USER.md)
# is started at most this often per project, so a busy day of runs does not start
# a model call after each; what is due waits at most a day.
MAINTAIN_EVERY = 24 * 3600.0
MAINTAIN_STAMP = ".maintenance-started"


def maintain_in_background(wh: Workhearth) -> bool:
    """Start automatic memory maintenance in a detached process; True if started.

    Called after a session ends (the answer is already printed): the user's
    prompt comes back at once, and a crash of the child loses nothing (every
    rewrite is backed up first and checked at the last moment). Silenced by
    ``maintenance = "manual"`` and skipped without a configured model.
    """
    import os
    import subprocess
    import sys
    import time

    if wh.config.memory.maintenance == "manual" or not wh.config.models.configured:
        return False
    folders = [wh.memory.folder("user"), wh.memory.folder("project")]
    if not any(f.is_dir() for f in folders):
        return False  # Why: no memory yet: nothing to distill or tidy
    stamp = folders[1] / MAINTAIN_STAMP if folders[1].is_dir() else folders[0] / MAINTAIN_STAMP
    try:
        if time.time() - stamp.stat().st_mtime < MAINTAIN_EVERY:
            return False
    except FileNotFoundError:
        pass
    try:
        # Why: stamped before the start, so a child that crashes is not restarted
        # after every run; it is tried again the next day.
        stamp.touch()
        subprocess.Popen(
            [sys.executable, "-m", "workhearth", "memory", "maintain"],
            cwd=wh.workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C at the prompt does not reach it
            close_fds=True,
            env=os.environ.copy(),
        )
    except OSError:
        return False  # Why: a read-only home or no fork: maintenance waits, the run is done
    return True


@app.command(hidden=True)
def maintain(json: JsonOpt = False) -> None:
    """Automatic reflection now (what a finished run starts in the background)."""
    from workhearth.memory.reflect import maybe_reflect

    wh = hearth()
    model = None
    if wh.config.models.configured:
        from workhearth.models.router import Router

        model = Router.from_config(wh.config.models)
    try:
        report = maybe_reflect(wh.memory, model)
    finally:
        if model is not None:
            model.close()
    if json:
        print_json(report.as_dict())
    else:
        print(report.skipped or f"{len(report.outcomes)} files reflected on")
