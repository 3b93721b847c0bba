"""``hearth run``, ``hearth resume`` and interactive ``hearth``: the agent at work."""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import print_json
from workhearth.errors import ConfigError, UsageError

EXIT = {
    "done": 0,
    "nothing_to_do": 0,
    "max_steps": 3,
    "time": 3,
    "cost": 3,
    "interrupted": 130,
    "error": 1,
}
NO_MODEL = (
    "no model configured: set OPENAI_API_KEY (with OPENAI_BASE_URL) or ANTHROPIC_API_KEY and "
    "HEARTH_MODEL=openai:NAME (or anthropic:NAME), or add [models.NAME] to config.toml; "
    "memory and sessions commands work without one"
)


def _options(mode: str | None, model: str | None, yes: bool):  # -> RunOptions
    from workhearth.agent.loop import print_stream
    from workhearth.agent.runner import RunOptions

    def write(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    return RunOptions(
        mode=mode,  # type: ignore[arg-type]
        model=model,
        yes=yes,
        env=dict(os.environ),
        stdin=sys.stdin,
        stderr=sys.stderr,
        listener=print_stream(write),
    )


def _stop_cleanly_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C, so a stopped run kills its commands and leaves a resumable log."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _require_model(model: str | None) -> None:
    if model is None and not hearth().config.models.configured:
        raise ConfigError(NO_MODEL)


def _finish(result) -> None:  # result: RunResult
    if not result.text.endswith("\n"):
        print()
    if result.status == "error":
        print(f"hearth: {result.error}", file=sys.stderr)
    elif result.status not in ("done", "nothing_to_do"):
        print(
            f"hearth: stopped ({result.status.replace('_', ' ')}); continue with `hearth resume {result.session_id}`",
            file=sys.stderr,
        )
    raise typer.Exit(EXIT[result.status])


def run(
    task: Annotated[str, typer.Argument(metavar="TASK")],
    mode: Annotated[str | None, typer.Option(help="ask | agent | quest")] = None,
    model: Annotated[
        str | None, typer.Option(help="A [models.NAME], or openai:NAME / anthropic:NAME.")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Allow every action without asking.")] = False,
) -> None:
    """Do one task and exit; the exit code tells whether it finished."""
    from workhearth.agent.runner import run_task

    _require_model(model)
    _stop_cleanly_on_sigterm()
    _finish(run_task(hearth(), task, _options(mode, model, yes)))


def resume(
    session_id: Annotated[str | None, typer.Argument(metavar="[ID]")] = None,
    last: Annotated[
        bool, typer.Option("--last", help="The newest session of this folder.")
    ] = False,
    print_messages: Annotated[
        bool,
        typer.Option(
            "--print-messages", help="Print the rebuilt conversation as JSON (no model needed)."
        ),
    ] = False,
    format: Annotated[str, typer.Option("--format", help="openai | anthropic")] = "anthropic",
    mode: Annotated[str | None, typer.Option(help="Switch mode: ask | agent | quest")] = None,
    model: Annotated[str | None, typer.Option(help="Use this model from now on.")] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Allow every action without asking.")] = False,
) -> None:
    """Resume a session where it stopped and finish its task."""
    wh = hearth()
    if format not in ("openai", "anthropic"):
        raise UsageError(f"unknown format {format!r}; use openai or anthropic")
    if session_id and last:
        raise UsageError("give a session ID or --last, not both")
    if not session_id and not last:
        raise UsageError("which session? give its ID or --last")
    session = wh.sessions.last() if last else wh.sessions.open(session_id or "")
    if print_messages:
        resumed = session.resume(format)  # type: ignore[arg-type]
        from workhearth.cli.sessions import warn

        warn(session.warnings())
        print_json({"system": resumed.system, "messages": resumed.messages})
        return
    from workhearth.agent.runner import resume as resume_run

    _require_model(model)
    _stop_cleanly_on_sigterm()
    _finish(resume_run(wh, session, _options(mode, model, yes)))


def interactive(mode: str | None = None, model: str | None = None) -> None:
    """The interactive agent: one session, a prompt per turn, slash commands."""
    from workhearth.agent.runner import resume as resume_run

    _require_model(model)
    wh = hearth()
    opts = _options(mode, model, False)
    session = wh.sessions.create(model=model, mode=opts.mode or "agent")
    print(f"hearth — session {session.id} in {wh.workspace}. /help for commands, Ctrl-D to leave.")
    while True:
        try:
            line = input("› ").strip()
        except EOFError:
            print()
            break
        except KeyboardInterrupt:
            print()
            continue
        if not line:
            continue
        if line.startswith("/"):
            cmd, _, arg = line[1:].partition(" ")
            arg = arg.strip()
            if cmd in ("quit", "exit", "q"):
                break
            if cmd == "help":
                print("/mode ask|agent|quest  /model NAME  /memory QUERY  /resume ID  /quit")
            elif cmd == "mode":
                from workhearth.agent.runner import MODES

                if arg not in MODES:
                    print(f"hearth: mode must be one of {', '.join(MODES)}", file=sys.stderr)
                else:
                    opts.mode = arg  # type: ignore[assignment]
                    print(f"mode: {arg}")
            elif cmd == "model":
                opts.model = arg or None
                print(f"model: {arg or 'routed'}")
            elif cmd == "memory":
                for h in wh.memory.search(arg or "user", limit=6):
                    print(f"[{h.score:.2f}] {h.path}:{h.line_start}  {h.text.splitlines()[0]}")
            elif cmd == "resume":
                session = wh.sessions.open(arg) if arg else wh.sessions.last()
                print(f"resumed session {session.id}")
            else:
                print(f"unknown command /{cmd}; /help lists them")
            continue
        try:
            result = resume_run(wh, wh.sessions.open(session.id), opts, task=line)
        except UsageError as exc:
            print(f"hearth: {exc}", file=sys.stderr)
            continue
        print()
        if result.status == "error":
            print(f"hearth: {result.error}", file=sys.stderr)
        elif result.status == "interrupted":
            print("(interrupted; the transcript is saved — type to continue)", file=sys.stderr)
