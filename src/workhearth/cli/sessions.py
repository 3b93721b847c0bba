"""``hearth sessions …``: list, show, latest, verify, delete, import, export."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.errors import UsageError
from workhearth.tasks.words import brief, one_line

app = HearthTyper(help="Find, read, check, move and delete sessions.", no_args_is_help=True)


def _text_of(message: dict) -> str:
    parts = []
    for block in message.get("content", []):
        kind = block.get("type")
        if kind == "text":
            parts.append(block.get("text", ""))
        elif kind == "tool_use":
            subject = brief(block.get("input") or {})
            parts.append(f"[tool call {block.get('name')}{' ' + subject if subject else ''}]")
        elif kind == "tool_result":
            parts.append("[tool error]" if block.get("is_error") else "[tool result]")
        elif kind == "thinking":
            parts.append(f"[thinking] {one_line(block.get('thinking', ''), 200)}")
    return " ".join(p for p in parts if p)


def warn(warnings: list[str]) -> None:
    """Damage found while reading: one stderr line each, the answer still goes to stdout."""
    for line in warnings:
        print(f"hearth: warning: {line}", file=sys.stderr)


@app.command("list")
def list_(
    json: JsonOpt = False,
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 30,
    here: Annotated[bool, typer.Option(help="Only sessions of the current folder.")] = False,
) -> None:
    """Newest sessions first, with title, workspace and message count."""
    wh = hearth()
    infos = wh.sessions.list(limit=limit, workspace=wh.workspace if here else None)
    if json:
        print_json([i.as_dict() for i in infos])
        return
    if not infos:
        print("no sessions yet")
        return
    from workhearth.cli.sessions_view import print_sessions

    print_sessions(infos)


@app.command()
def show(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    count: Annotated[int, typer.Option(help="Last N messages (1..30).")] = 10,
    json: JsonOpt = False,
) -> None:
    """The last messages of a session, and the files its tool calls changed."""
    wh = hearth()
    data = wh.sessions.read_transcript(session_id, count)
    warn(data.warnings)
    files = wh.sessions.files_changed(data.session_id)
    from workhearth.tasks.service import transcript_status

    # Why: how the last run ended (a failed task says why) is the first thing asked.
    with wh.sessions.open(data.session_id) as session:
        status, reason = transcript_status(session)
    if json:
        print_json(
            {**data.as_dict(), "status": status, "reason": reason, "files_changed": files.as_dict()}
        )
        return
    print(f"session {data.session_id}: {data.returned} of {data.total} messages")
    print(f"status: {status}" + (f" — {reason}" if reason else ""))
    for msg in data.messages:
        print(f"\n[{msg['role']}] {_text_of(msg)}")
    from workhearth.cli.sessions_view import print_changes

    print_changes(files)


@app.command()
def latest(session_id: Annotated[str, typer.Argument(metavar="ID")], json: JsonOpt = False) -> None:
    """The newest message of a session."""
    data = hearth().sessions.latest_message(session_id)
    warn(data.warnings)
    if json:
        print_json(data)
        return
    msg = data.message
    print(f"[{msg['role']}] {_text_of(msg)}" if msg else "(no messages)")


@app.command()
def verify(session_id: Annotated[str, typer.Argument(metavar="ID")], json: JsonOpt = False) -> None:
    """Read the whole transcript and report damaged, skipped lines."""
    report = hearth().sessions.verify(session_id)
    if json:
        print_json(report)
    else:
        damage = {k: v for k, v in report.damage.items() if v}
        state = (
            "ok" if report.ok else "damaged: " + ", ".join(f"{k} {v}" for k, v in damage.items())
        )
        print(
            f"session {report.session_id}: {report.events} events, "
            f"{report.messages} messages, {state}"
        )
        if report.header_rebuilt:
            print(
                "the header (meta line) was damaged and rebuilt from the folder name, "
                "the other lines and the snapshot"
            )
        if not report.private:
            print("warning: some session files are readable by other users", file=sys.stderr)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def delete(session_id: Annotated[str, typer.Argument(metavar="ID")], json: JsonOpt = False) -> None:
    """Move a session to the trash (restore it with `hearth trash restore`)."""
    data = hearth().sessions.delete(session_id)
    if json:
        print_json(data)
    else:
        print(f"moved session {data.session_id} to the trash as {data.trash_id}")


@app.command("import")
def import_(
    path: Annotated[Path, typer.Argument(metavar="PATH")],
    from_: Annotated[
        str | None, typer.Option("--from", help="claude-code | qwen-code | bundle (detected).")
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option(help="Workspace folder the session belongs to here.")
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Import a Claude Code or Qwen Code transcript, or a bundle from another machine."""
    from workhearth.sessions.transfer import import_path

    result = import_path(
        hearth().sessions, path, from_, str(workspace.absolute()) if workspace else None
    )
    from workhearth.cli.sessions_view import print_import, skipped_total

    if json:
        print_json(result)
        if skipped_total(result):
            print('hearth: warning: the import is incomplete; see "skipped"', file=sys.stderr)
        return
    print_import(result)


@app.command()
def export(
    session_id: Annotated[str, typer.Argument(metavar="ID")],
    format: Annotated[str, typer.Option("--format", help="jsonl | markdown | bundle")] = "jsonl",
    output: Annotated[Path | None, typer.Option("-o", "--output", help="File to write.")] = None,
) -> None:
    """Export a session; a bundle imports and resumes on another machine."""
    from workhearth.fsutil import atomic_write
    from workhearth.sessions.transfer import EXPORT_FORMATS, export_session

    if format not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {format!r}; use {', '.join(EXPORT_FORMATS)}")
    if format == "bundle" and output is None:
        raise UsageError("a bundle is binary: give a file with -o FILE")
    if output is not None:
        target = output.absolute()
        if target.is_dir():
            raise UsageError(f"{output} is a folder; give a file name with -o FILE")
        if not target.parent.is_dir():
            raise UsageError(f"cannot write {output}: folder {target.parent} does not exist")
    wh = hearth()
    data = export_session(wh.sessions.open(session_id), format, wh.sessions)
    if output is None:
        sys.stdout.buffer.write(data)
        return
    atomic_write(output.absolute(), data, mode=0o600)
    print(f"wrote {output} ({len(data)} bytes)", file=sys.stderr)
