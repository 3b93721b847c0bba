"""``hearth rewind``: a session's files and conversation back to just before a turn (DESIGN §6)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table
from workhearth.errors import UsageError

if TYPE_CHECKING:
    from workhearth.tasks.rewind import RewindPlan, Turn

# Why: the crash tests kill the real process at a named step of a rewind; unset, nothing.
KILL_AT_ENV = "HEARTH_TEST_REWIND_KILL_AT"


def _killer() -> Callable[[str], None] | None:
    at = os.environ.get(KILL_AT_ENV)
    if not at:
        return None

    def step(name: str) -> None:
        if name == at:
            os.kill(os.getpid(), signal.SIGKILL)

    return step


def rewind(
    session_id: Annotated[
        str | None, typer.Argument(metavar="ID", help="The session (default: the newest here).")
    ] = None,
    list_: Annotated[
        bool, typer.Option("--list", help="List the turns, their prompts and files changed.")
    ] = False,
    to: Annotated[
        int | None,
        typer.Option("--to", metavar="N", help="Undo turn N and every later turn."),
    ] = None,
    files_only: Annotated[
        bool, typer.Option("--files-only", help="Put back the files; keep the conversation.")
    ] = False,
    conversation_only: Annotated[
        bool,
        typer.Option("--conversation-only", help="Rewind the conversation; leave the files."),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print what would change (with diffs); change nothing."),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Also replace files changed outside the task (they go to the trash first).",
        ),
    ] = False,
    summarize: Annotated[
        bool,
        typer.Option("--summarize", help="Leave a summary of the undone turns (needs a model)."),
    ] = False,
    undo: Annotated[
        bool, typer.Option("--undo", help="Put back what the last rewind changed.")
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Undo what a session's turns did: files (also what shell commands changed) and conversation."""
    chosen = [
        name for name, on in (("--list", list_), ("--to", to is not None), ("--undo", undo)) if on
    ]
    if len(chosen) != 1:
        raise UsageError("give one of --list, --to N or --undo")
    if files_only and conversation_only:
        raise UsageError("give --files-only or --conversation-only, not both")
    wh = hearth()
    session = wh.sessions.open(session_id) if session_id else wh.sessions.last()
    from workhearth.tasks.service import TaskService

    service = TaskService(wh.config, workspace=wh.workspace)
    if list_:
        _print_turns(*service.rewind_turns(session.id), json=json)
        return
    plan = service.rewind(
        session.id,
        to=to,
        undo=undo,
        files=not conversation_only,
        conversation=not files_only,
        dry_run=dry_run,
        force=force,
        summarize=summarize,
        on_step=_killer(),
    )
    if json:
        print_json(plan.as_dict())
        return
    _print_plan(plan, dry_run=dry_run, undo=undo)


def _print_turns(session_id: str, turns: list[Turn], *, json: bool) -> None:
    if json:
        print_json({"session_id": session_id, "turns": [t.as_dict() for t in turns]})
        return
    if not turns:
        print(f"session {session_id} has no turns")
        return
    rows = []
    for t in turns:
        number = str(t.number) if t.number is not None else "-"
        marks = []
        if t.undone:
            marks.append("undone")
        if t.files_undone:
            marks.append("files undone")
        files = ", ".join(t.files) if t.files else ""
        if t.skipped:
            files += f"; not kept: {', '.join(t.skipped)}"
        if marks:
            files = f"({', '.join(marks)}) {files}".strip()
        rows.append([number, t.prompt, files])
    print_table(
        [
            Column("turn", cut="never", align="right"),
            Column("prompt", cut="end", main=True),
            Column("files changed", cut="end"),
        ],
        rows,
    )


def _print_plan(plan: RewindPlan, *, dry_run: bool, undo: bool) -> None:
    what = "undo the last rewind" if undo else f"rewind to before turn {plan.to_turn}"
    what = what[0].upper() + what[1:]
    # Why two lines: a session id is 32 characters; the two together wrap at 80 columns.
    print(f"{what} (dry run: nothing changed)" if dry_run else f"{what}: done")
    print(f"  session {plan.session_id}")
    for f in plan.files:
        note = " CONFLICT: changed outside the task" if f.conflict else ""
        if f.missing:
            note += f" SKIPPED: {f.missing}"
        print(f"  {f.action:<7} {f.path}{note}")
        if dry_run and f.diff:
            for line in f.diff.rstrip("\n").splitlines():
                print(f"    {line}")
    if not plan.files:
        print("  no files to change")
    if plan.conversation:
        if undo:
            print("  conversation: the rewound turns are back")
        else:
            print(
                f"  conversation: ends before turn {plan.to_turn}; the next prompt is turn "
                f"{plan.to_turn}"
            )
    if not dry_run and not undo:
        print(f"put it back with `hearth rewind {plan.session_id} --undo`", file=sys.stderr)
