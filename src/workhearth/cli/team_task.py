"""``hearth run --team`` and ``hearth resume ID --answers FILE``: a team task in the terminal.

The lead's questions and the plan's review are asked here when a person is at the
terminal; otherwise the task ends ``waiting`` and says how to continue (DESIGN §6).
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

import orjson

from workhearth.cli.output import print_json
from workhearth.errors import UsageError

if TYPE_CHECKING:
    from workhearth.tasks.team.plan import Question
    from workhearth.tasks.team.run import TeamOptions

# Why a code of its own: a script tells "waiting for you" from done (0) and failed (1).
WAITING_EXIT = 4


class TerminalTeamIO:
    """Questions and the plan's review, on the terminal."""

    def __init__(self, stdin: TextIO, out: TextIO) -> None:
        self.stdin = stdin
        self.out = out

    def _read(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        return line.strip()

    def ask(self, question: Question) -> str:
        self.out.write(f"\n{question.text}\n")
        for n, choice in enumerate(question.choices, 1):
            mark = " (default)" if choice == question.default else ""
            self.out.write(f"  {n}. {choice}{mark}\n")
        while True:
            hint = f" [{question.default}]" if question.default else ""
            answer = self._read(f"> {hint} ".replace(">  ", "> "))
            if not answer:
                return question.default
            if question.choices:
                if answer.isdigit() and 1 <= int(answer) <= len(question.choices):
                    return question.choices[int(answer) - 1]
                if answer in question.choices:
                    return answer
                self.out.write(f"  choose 1 to {len(question.choices)}, or press Enter\n")
                continue
            return answer

    def review_plan(
        self, path: Path, text: str
    ) -> tuple[Literal["approve", "edited", "nudge"], str]:
        self.out.write(f"\n{text}\n(the plan is in {path})\n")
        answer = self._read(
            "Enter to approve; 'e' once you edited the file; or say what to change: "
        )
        if not answer or answer.lower() in ("y", "yes", "ok", "approve"):
            return "approve", ""
        if answer.lower() in ("e", "edited"):
            return "edited", ""
        return "nudge", answer

    def say(self, line: str) -> None:
        print(f"hearth: {line}", file=sys.stderr)


class Board:
    """One line per specialist: role, step, status, elapsed. On a terminal the lines are
    redrawn in place (a live board, elapsed ticking each second); into a pipe or a log,
    one line is written each time a step moves."""

    def __init__(self, out: TextIO, *, live: bool | None = None) -> None:
        self.out = out
        self.live = out.isatty() if live is None else live
        self.steps: dict[str, dict[str, Any]] = {}
        self.drawn = 0
        self.lock = threading.Lock()
        self._ticker: threading.Thread | None = None

    def __call__(self, step: dict[str, Any]) -> None:
        with self.lock:
            self.steps[str(step.get("id", "?"))] = dict(step)
            if self.live:
                self._draw()
                self._tick()
            else:
                print(self.line(step), file=self.out, flush=True)

    @staticmethod
    def line(step: dict[str, Any], now: float | None = None) -> str:
        status = step.get("status", "")
        started, ended = step.get("started"), step.get("ended")
        elapsed = ""
        if started and ended:
            elapsed = f" {ended - started:.1f}s"
        elif started and status == "running":
            elapsed = f" {(now or time.time()) - started:.0f}s"
        line = f"[team] {step.get('role', '?'):<11} {step.get('id', '?'):<16} {status}{elapsed}"
        if step.get("error"):
            line += f": {step['error']}"
        return line

    def _draw(self) -> None:
        up = f"\x1b[{self.drawn}F" if self.drawn else ""
        lines = [self.line(s) for s in self.steps.values()]
        self.out.write(up + "".join(f"\x1b[2K{text}\n" for text in lines))
        self.out.flush()
        self.drawn = len(lines)

    def _tick(self) -> None:
        if self._ticker is not None:
            return

        def tick() -> None:
            while True:
                time.sleep(1.0)
                with self.lock:
                    if not any(s.get("status") == "running" for s in self.steps.values()):
                        self._ticker = None
                        return
                    self._draw()

        self._ticker = threading.Thread(target=tick, name="hearth-board", daemon=True)
        self._ticker.start()


def read_answers(path: Path | None) -> dict[str, str] | None:
    """``--answers FILE``: a JSON object, question id -> answer."""
    if path is None:
        return None
    try:
        raw = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc.msg})") from None
    if not isinstance(raw, dict):
        raise UsageError(f"{path}: the answers must be a JSON object (question id -> answer)")
    return {str(k): str(v) for k, v in raw.items()}


def options(answers: Path | None, yes: bool, parallel: int) -> TeamOptions:
    from workhearth.tasks.team.run import TeamOptions

    io = TerminalTeamIO(sys.stdin, sys.stdout) if sys.stdin.isatty() else None
    return TeamOptions(
        answers=read_answers(answers),
        yes=yes,
        io=io,
        parallel=parallel,
        on_step=Board(sys.stderr),
        notice=lambda line: print(f"hearth: {line}", file=sys.stderr),
    )


def say_waiting(session_id: str, reason: str, json: bool) -> None:
    """What a waiting team task needs, and how to give it."""
    from workhearth.cli.context import hearth

    with hearth().sessions.open(session_id) as session:
        state = orjson.loads(session.read_file("team/state.json"))
        plan = session.folder / "plan.md"
    if reason == "questions":
        questions = state.get("questions", [])
        if json:
            print_json(questions)
        else:
            for q in questions:
                choices = f" ({' / '.join(q['choices'])})" if q.get("choices") else ""
                print(f"{q['id']}: {q['text']}{choices} [default: {q.get('default', '')}]")
        print(
            f"hearth: session {session_id} waits for answers: write them as JSON "
            f"(question id -> answer) and run `hearth resume {session_id} --answers FILE`",
            file=sys.stderr,
        )
    else:
        if json:
            print_json({"plan": str(plan), "version": state.get("plan_version")})
        print(
            f"hearth: session {session_id} waits for its plan's approval ({plan}): "
            f"edit it if you like, then run `hearth resume {session_id} --yes`",
            file=sys.stderr,
        )
