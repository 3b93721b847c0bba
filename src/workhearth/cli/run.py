"""``hearth run``, ``hearth resume`` and interactive ``hearth``: the agent at work."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.options import MODE_HELP, MODEL_HELP, ModeOpt
from workhearth.cli.output import print_json
from workhearth.errors import ConfigError, HearthError, UsageError
from workhearth.tasks.words import NO_MODEL

if TYPE_CHECKING:
    # Why not at run time: the agent (and pydantic) cost ~0.2 s that `hearth memory …` never pays.
    from workhearth.agent.runner import RunOptions
    from workhearth.tasks.task import Task, TaskEvent

EXIT = {
    "done": 0,
    "nothing_to_do": 0,
    "max_steps": 3,
    "time": 3,
    "cost": 3,
    "interrupted": 130,
    "stopped": 130,
    "error": 1,
}
AnswersOpt = Annotated[
    Path | None,
    typer.Option(
        "--answers",
        metavar="FILE",
        help="A team task's answers: JSON, question id -> answer.",
    ),
]
YesOpt = Annotated[
    bool, typer.Option("--yes", help="Allow every action without asking (agent mode).")
]
REPL_HELP = """/model [NAME]    show or switch the model
/mode [MODE]     show or switch the mode: ask | agent | quest
/memory [QUERY]  recent memory entries, or search them
/resume [ID]     continue another session (the newest of this folder without ID)
/quit            leave (Ctrl-D too)"""


class Progress:
    """The terminal's view of a task's events: the reply as it streams, one whole line per
    finished tool call (so calls that run side by side never interleave), notices on stderr.

    ``live``: a status line runs under it (a person watches a terminal, see
    :mod:`.status_line`).
    """

    def __init__(self, write: Callable[[str], None], live: bool = False) -> None:
        self.write = write
        self.live = live
        self.at_line_start = True

    def __call__(self, event: TaskEvent) -> None:
        if event.name == "tool_call" and self.live and not self.at_line_start:
            # Why: the status line is drawn at the start of a line; ending the reply's
            # line now rather than at the result leaves the same text on the screen.
            self.write("\n")
            self.at_line_start = True
        elif event.name == "text" and event.data.get("text"):
            text = str(event.data["text"])
            self.write(text)
            self.at_line_start = text.endswith("\n")
        elif event.name == "tool_result":
            subject = event.data.get("subject") or ""
            name = event.data.get("name", "")
            head = f"[{name} {subject}]" if subject else f"[{name}]"
            line = f"{head} {event.data['summary']}"
            if event.data.get("line"):
                # Why: a browser action says its site and element (agent/browser/view.py).
                line = str(event.data["line"])
            self.write(("" if self.at_line_start else "\n") + f"{line}\n")
            self.at_line_start = True
        elif event.name == "notice":
            print(f"hearth: {event.data['message']}", file=sys.stderr)


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def _progress() -> Progress:
    from workhearth.cli.status_line import wanted

    return Progress(_write, live=wanted(sys.stdout, sys.stderr, os.environ))


def _watched(
    progress: Progress, opts: RunOptions, start: Callable[[Callable[[TaskEvent], None]], Task]
) -> Task:
    """``start(on_event)``, its events rendered by ``progress`` under the live status line."""
    from workhearth.cli.status_line import watching

    with watching(progress, opts, progress.live) as on_event:
        return start(on_event)


def _service():  # -> TaskService
    from workhearth.tasks.service import TaskService

    wh = hearth()
    return TaskService(wh.config, wh.workspace, os.environ)


def _options(mode: str | None, model: str | None, yes: bool):  # -> RunOptions
    from workhearth.agent.runner import RunOptions
    from workhearth.cli.trust import settle
    from workhearth.mcp.client.tools import tools_for

    # Why first: the folder's .mcp.json and skills load only once the user trusts them.
    settle(hearth(), sys.stdin, sys.stderr, os.environ)

    return RunOptions(
        mode=mode,  # type: ignore[arg-type]
        model=model,
        yes=yes,
        env=dict(os.environ),
        stdin=sys.stdin,
        stderr=sys.stderr,
        # Why the shared factory: a page's task gets exactly the tools this run gets.
        extra_tools=tools_for(os.environ)(
            hearth(), lambda message: print(f"hearth: {message}", file=sys.stderr)
        ),
    )


def _stop_cleanly_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C, so a stopped run kills its commands and leaves a resumable log."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _require_model(model: str | None) -> None:
    """Fail before any session exists: no model at all, an unknown one, or a missing key."""
    from workhearth.agent.runner import check_browser_config, check_model

    if model is None and not hearth().config.models.configured:
        raise ConfigError(NO_MODEL)
    check_model(hearth(), model)
    check_browser_config(hearth())


def _global(ctx: typer.Context, name: str, value: str | None) -> str | None:
    """A subcommand's own option, else the same global one (``hearth --mode ask run …``)."""
    return value if value is not None else ctx.find_root().params.get(name)


def check_globals(mode: str | None, model: str | None) -> None:
    """The global ``--mode`` / ``--model``: a bad value is an error whatever the command."""
    # Why imports inside the branches: the agent and the model clients cost ~0.5 s to
    # import, which every `hearth memory …` paid for options it was not given.
    if mode is not None:
        from workhearth.agent.runner import MODES

        if mode not in MODES:
            raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if model is not None:
        from workhearth.models.registry import resolve

        resolve(model, hearth().config.models)


def _print_receipts(session_id: str) -> None:
    """Issue #21: one line per office file the task produced, hearth's verdict on it,
    and where its thumbnails are (the latest receipt per file)."""
    from workhearth.agent.receipts import kept_receipts
    from workhearth.check.receipt import Receipt
    from workhearth.errors import HearthError

    try:
        with hearth().sessions.open(session_id) as session:
            latest = {r["path"]: r for r in kept_receipts(session)}
            folder, sealed = session.folder / "receipts", session.encrypted
    except (HearthError, OSError):
        return
    for path, receipt in latest.items():
        # Why the library's words: the verdict is worded in one place (check/receipt.py).
        print(f"checked {path}: {Receipt.from_json(receipt).summary()}", file=sys.stderr)
        thumbs = receipt.get("thumbnails") or []
        if thumbs and not sealed:
            print(f"  thumbnails: {' '.join(str(folder / t) for t in thumbs)}", file=sys.stderr)


def _finish(task: Task, progress: Progress, *, json: bool = False) -> None:
    """Say how the task ended, as the task says it, and exit with its code."""
    sid, reason = task.session_id, task.reason or "error"
    if reason in ("questions", "plan"):
        from workhearth.cli import team_task

        if not progress.at_line_start:
            print()
        team_task.say_waiting(sid, reason, json)
        raise typer.Exit(team_task.WAITING_EXIT)
    if reason == "nothing_to_do":
        print(
            f"hearth: session {sid} is finished (its last message is an answer); "
            f"to give it a new task, run `hearth` and type `/resume {sid}`",
            file=sys.stderr,
        )
        raise typer.Exit(0)
    if not progress.at_line_start:
        print()
    _print_receipts(sid)
    if task.status == "failed":
        message = task.message or "it ended on an error"
        again = "" if "hearth resume" in message else f"; continue with `hearth resume {sid}`"
        print(f"hearth: session {sid} failed: {message}{again}", file=sys.stderr)
    elif task.status == "stopped":
        print(f"hearth: stopped; continue with `hearth resume {sid}`", file=sys.stderr)
    from workhearth.cli.memory import maintain_in_background

    # Why: the answer is printed; memory maintenance runs detached, never delaying the prompt.
    sys.stdout.flush()
    maintain_in_background(hearth())
    raise typer.Exit(EXIT.get(reason, 1))


def _skill_task(task: str | None, skill: str | None, example: str | None, sets: list[str]) -> str:
    """The task to run: ``task``, or ``--skill``'s example rendered with the ``--set`` values."""
    if example is None:
        if sets:
            raise UsageError("--set fills the variables of an example: give --example ID too")
        if not task:
            raise UsageError("what to do? give a TASK, or --skill NAME --example ID")
        return task
    if skill is None:
        raise UsageError("--example needs --skill NAME")
    if task:
        raise UsageError("give a TASK or --example, not both")
    values: dict[str, str] = {}
    for item in sets:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--set {item!r}: write it as NAME=VALUE")
        values[name.strip()] = value
    from workhearth.agent.workspace import Workspaces
    from workhearth.cli.trust import settle
    from workhearth.skills.library import make_file_check

    wh = hearth()
    # Why: --skill may name one of the folder's own skills, loaded only once trusted.
    settle(wh, sys.stdin, sys.stderr, os.environ)
    # Why: a file variable may name a file in any authorized folder, as the file tools may.
    roots = Workspaces(wh.paths, current=wh.workspace).roots()
    return wh.skills.render(skill, example, values, file_check=make_file_check(roots))


def run(
    ctx: typer.Context,
    task: Annotated[
        str | None, typer.Argument(metavar="TASK", help="What to do, in your own words.")
    ] = None,
    mode: ModeOpt = None,
    model: Annotated[str | None, typer.Option(metavar="MODEL", help=MODEL_HELP)] = None,
    yes: YesOpt = False,
    skill: Annotated[
        str | None,
        typer.Option("--skill", metavar="NAME", help="Activate this skill for the task."),
    ] = None,
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            metavar="ID",
            help="Run this example task of --skill (see hearth skills examples NAME).",
        ),
    ] = None,
    sets: Annotated[
        list[str] | None,
        typer.Option(
            "--set", metavar="VAR", help="A variable of --example as NAME=VALUE; repeatable."
        ),
    ] = None,
    team: Annotated[
        bool,
        typer.Option(
            "--team", help="A team task: questions, a plan to approve, specialists in parallel."
        ),
    ] = False,
    answers: AnswersOpt = None,
    json: Annotated[
        bool, typer.Option("--json", help="With --team: print a waiting task's questions as JSON.")
    ] = False,
) -> None:
    """Do one task and exit; the exit code tells whether it finished."""
    mode, model = _global(ctx, "mode", mode), _global(ctx, "model", model)
    if team and (skill or example):
        raise UsageError("--team does not take --skill or --example")
    if (answers or json) and not team:
        raise UsageError("--answers and --json go with --team")
    task = _skill_task(task, skill, example, sets or [])
    _require_model(model)
    _stop_cleanly_on_sigterm()
    opts = _options(mode, model, yes)
    opts.skill = skill
    progress = _progress()
    service, wh = _service(), hearth()
    if team:
        from workhearth.cli import team_task

        team_opts = team_task.options(answers, yes, wh.config.team_parallel)
        started = _watched(
            progress, opts, lambda on: service.run_team_new(wh, task, opts, team_opts, on)
        )
        _finish(started, progress, json=json)
        return
    _finish(_watched(progress, opts, lambda on: service.run_new(wh, task, opts, on)), progress)


def resume(
    ctx: typer.Context,
    session_id: Annotated[
        str | None, typer.Argument(metavar="ID", help="The session to resume.")
    ] = None,
    last: Annotated[
        bool, typer.Option("--last", help="The newest session of this folder.")
    ] = False,
    print_messages: Annotated[
        bool,
        typer.Option(
            "--print-messages", help="Print the rebuilt conversation as JSON (no model needed)."
        ),
    ] = False,
    format: Annotated[
        str,
        typer.Option(
            "--format", metavar="FORMAT", help="With --print-messages: openai | anthropic."
        ),
    ] = "anthropic",
    mode: Annotated[
        str | None, typer.Option(metavar="MODE", help="Switch mode: " + MODE_HELP)
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            metavar="MODEL", help="Switch to this model from now on (default: the session's)."
        ),
    ] = None,
    yes: YesOpt = False,
    answers: AnswersOpt = None,
) -> None:
    """Resume a session where it stopped and finish its task, with the model it ran with."""
    wh = hearth()
    mode, model = _global(ctx, "mode", mode), _global(ctx, "model", model)
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

    _stop_cleanly_on_sigterm()
    progress, opts = _progress(), _options(mode, model, yes)
    service = _service()
    team_opts = None
    if answers is not None or session.meta.event.get("team"):
        from workhearth.cli import team_task

        if not session.meta.event.get("team"):
            raise UsageError(f"session {session.id} is not a team task; --answers is for one")
        team_opts = team_task.options(answers, yes, wh.config.team_parallel)
    _finish(
        _watched(
            progress,
            opts,
            lambda on: service.run_here(wh, session, opts, None, on, team=team_opts),
        ),
        progress,
    )


# ------------------------------------------------------------- interactive


def _say_error(exc: BaseException) -> None:
    text = str(exc).strip()
    print(f"hearth: {text.splitlines()[0] if text else type(exc).__name__}", file=sys.stderr)


class Repl:
    """Interactive ``hearth``: one session (created at the first message), slash commands.

    A mistake (a bad name, an unknown session, a model that fails) prints one line
    and the prompt comes back; only ``/quit`` and the end of input leave.
    """

    def __init__(self, mode: str | None, model: str | None) -> None:
        self.wh = hearth()
        self.opts = _options(mode, model, False)
        self.service = _service()
        self.session_id: str | None = None

    def current_mode(self) -> str:
        if self.opts.mode:
            return self.opts.mode
        if self.session_id:
            with self.wh.sessions.open(self.session_id) as session:
                return str(session.load().business.mode or "agent")
        return "agent"

    def current_model(self) -> str:
        if self.opts.model:
            return self.opts.model
        default = self.wh.config.models.default
        return f"routed (default {default})" if default else "routed"

    def command(self, line: str) -> bool:
        """Run one slash command; False means leave."""
        from workhearth.agent.runner import MODES, RunOptions, check_model, session_model

        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if name in ("quit", "exit", "q"):
            return False
        if name == "help":
            print(REPL_HELP)
        elif name == "mode":
            if arg and arg not in MODES:
                raise UsageError(f"mode must be one of {', '.join(MODES)}")
            if arg:
                self.opts.mode = arg
            print(f"mode: {self.current_mode()}")
        elif name == "model":
            if arg:
                check_model(self.wh, arg)
                self.opts.model = arg
            print(f"model: {self.current_model()}")
        elif name == "memory":
            self.memory(arg)
        elif name == "resume":
            session = self.wh.sessions.open(arg) if arg else self.wh.sessions.last()
            with session:
                # Why: a resumed session goes on with its own model, as `hearth resume` does.
                self.opts.model = session_model(self.wh, session, RunOptions()) or self.opts.model
            self.session_id = session.id
            self.opts.mode = None  # and with its own mode, until /mode switches it
            print(f"resumed session {session.id} (model: {self.current_model()})")
        else:
            print(f"unknown command /{name}; /help lists them")
        return True

    def memory(self, query: str) -> None:
        if query:
            hits = self.wh.memory.search(query, limit=6)
            for h in hits:
                print(f"[{h.score:.2f}] {h.path}:{h.line_start}  {h.text.splitlines()[0]}")
            if not hits:
                print("(nothing found)")
            return
        entries, _ = self.wh.memory.list(limit=10)
        for e in entries:
            print(f"{e.id}  {e.content.splitlines()[0] if e.content else ''}")
        if not entries:
            print("(no memory entries yet; /memory QUERY searches the Markdown too)")

    def turn(self, line: str) -> None:
        if self.session_id is None:
            # Why: created at the first message, so leaving at once leaves no empty session.
            mode = self.opts.mode or "agent"
            self.session_id = self.wh.sessions.create(model=self.opts.model, mode=mode).id
        progress = _progress()
        session = self.wh.sessions.open(self.session_id)
        task = _watched(
            progress,
            self.opts,
            lambda on: self.service.run_here(self.wh, session, self.opts, line, on),
        )
        if not progress.at_line_start:
            print()
        if task.reason == "interrupted":
            print("(interrupted; the transcript is saved — type to continue)", file=sys.stderr)
        elif task.status == "failed":
            print(f"hearth: failed: {task.message}", file=sys.stderr)

    def loop(self) -> None:
        print(
            f"hearth in {self.wh.workspace} — model {self.current_model()}, mode "
            f"{self.current_mode()}. /help for commands, Ctrl-D to leave."
        )
        while True:
            try:
                line = input("› ").strip()
            except EOFError:
                print()
                return
            except KeyboardInterrupt:
                print()
                continue
            if not line:
                continue
            try:
                if line.startswith("/"):
                    if not self.command(line):
                        return
                else:
                    self.turn(line)
            except HearthError as exc:
                _say_error(exc)
            except KeyboardInterrupt:
                print("\n(interrupted)", file=sys.stderr)


def interactive(mode: str | None = None, model: str | None = None) -> None:
    """The interactive agent: one session, a prompt per turn, slash commands."""
    _require_model(model)
    repl = Repl(mode, model)
    repl.loop()
    if repl.session_id is not None:
        from workhearth.cli.memory import maintain_in_background

        # Why: as after `hearth run`: the session ended, the prompt is back; maintenance detached.
        sys.stdout.flush()
        maintain_in_background(repl.wh)
