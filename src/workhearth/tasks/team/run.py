"""A team task from request to report (issue 23, DESIGN §6 ``hearth run --team``).

Phases, each kept in ``team/state.json`` of the lead's session (atomic writes), and each
step's changes as ``team_step`` events of the lead's transcript (durable by the user's
fsync policy, sealed when the session is encrypted), so a run killed anywhere resumes
where it stopped and never redoes a finished step:

1. **Questions.** The lead (a model call with two tools, ``ask_questions`` and
   ``write_plan``) decides whether the request is clear. Its questions are asked in the
   terminal; without one, they are written out and the task ends ``waiting`` until
   ``--answers FILE``; in quest mode, with nobody to ask, the defaults are taken.
2. **Plan.** The lead's ``write_plan`` becomes ``plan.md`` in the session folder (every
   version kept as ``team/plan-<n>.md``). The user approves it, edits the file, or
   nudges it in words and the lead revises it. Without a terminal the task waits for
   approval unless ``--yes``; in quest the plan is taken as written.
3. **Specialists.** Each step runs as a linked session of its own with its owner role's
   prompt, tools and model tier (tasks/team/roles.py), ready steps in parallel up to
   ``[team] parallel`` (default 3). Whoever writes works in a scratch copy outside
   HEARTH_HOME (tasks/team/scratch.py); the lead merges it back, and a file two
   specialists changed the same way is a conflict, shown, never overwritten.
4. **Report.** Each deliverable, its checks and where it is (``team/report.md``).

The lead's side of the conversation (its calls, the answers, the plan's approval) is in
its session's transcript like any other.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import orjson

from workhearth.agent.approval import Answer, ApprovalRequest, Approver, Mode, TerminalApprover
from workhearth.agent.loop import RunResult
from workhearth.agent.runner import RunOptions, resume
from workhearth.app import Workhearth
from workhearth.config import CheckpointsConfig
from workhearth.errors import HearthError, UsageError
from workhearth.models.messages import Message
from workhearth.sessions.session import Session
from workhearth.tasks.team.plan import Plan, Question, Step, parse_plan, render_plan
from workhearth.trash import Trash

__all__ = [
    "TEAM_META",
    "TeamIO",
    "TeamOptions",
    "TeamResult",
    "is_team",
    "run_team",
    "team_view",
]

TEAM_META = "team"
TEAM_STEP = "team_step"  # a transcript event: one step's entry after a change
STATE = "team/state.json"
PLAN = "plan.md"
DEFAULT_PARALLEL = 3
OVERVIEW_CHARS = 6000  # of the wiki's overview a specialist is given
Phase = Literal["start", "questions", "plan", "running", "done", "failed"]

LEAD_SYSTEM = """You lead a small team of specialists who work on the user's request in \
parallel. First decide whether the request is clear enough to plan. If something that \
matters is unclear, call ask_questions with at most 4 short questions, each with a \
default (and choices when there are a few obvious ones). Otherwise, or once you have \
the answers, call write_plan: the goal, the deliverables (files with formats), and the \
steps, each owned by one role, with the steps it depends on, the files it reads or \
changes, what it produces, and acceptance checks. Independent steps run at the same \
time, so only add a dependency when a step needs another's result.

Roles you can assign:
{roles}
"""

ASK_TOOL: dict[str, Any] = {
    "name": "ask_questions",
    "description": "Ask the user a few structured questions before planning.",
    "parameters": {
        "type": "object",
        "properties": {
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "text": {"type": "string"},
                        "choices": {"type": "array", "items": {"type": "string"}},
                        "default": {"type": "string"},
                    },
                    "required": ["id", "text", "default"],
                },
            }
        },
        "required": ["questions"],
    },
}
PLAN_TOOL: dict[str, Any] = {
    "name": "write_plan",
    "description": "Write (or rewrite) the team's plan.",
    "parameters": {
        "type": "object",
        "properties": {
            "goal": {"type": "string"},
            "deliverables": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "format": {"type": "string"},
                        "what": {"type": "string"},
                    },
                    "required": ["path"],
                },
            },
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "title": {"type": "string"},
                        "owner": {"type": "string", "description": "a role name"},
                        "depends_on": {"type": "array", "items": {"type": "string"}},
                        "files": {"type": "array", "items": {"type": "string"}},
                        "produces": {"type": "array", "items": {"type": "string"}},
                        "checks": {"type": "array", "items": {"type": "string"}},
                        "detail": {"type": "string"},
                    },
                    "required": ["id", "title", "owner"],
                },
            },
        },
        "required": ["goal", "steps"],
    },
}


class TeamIO(Protocol):
    """A person at a terminal (or the page): answers questions and reviews the plan."""

    def ask(self, question: Question) -> str: ...

    def review_plan(
        self, path: Path, text: str
    ) -> tuple[Literal["approve", "edited", "nudge"], str]:
        """``("approve", "")``, ``("edited", "")`` (the file was changed) or
        ``("nudge", words)``."""
        ...

    def say(self, line: str) -> None: ...


@dataclass
class TeamOptions:
    """What a team run was given besides the task: ``answers`` (``--answers FILE``),
    ``yes`` (approve the plan), ``io`` (a person to ask; None: nobody), ``parallel``,
    ``on_step`` (the board: called with each step's new state)."""

    answers: Mapping[str, str] | None = None
    yes: bool = False
    io: TeamIO | None = None
    parallel: int = DEFAULT_PARALLEL
    on_step: Callable[[dict[str, Any]], None] | None = None
    scratch_root: Path | None = None
    notice: Callable[[str], None] | None = None  # what the run says without a person to ask
    review_rounds: int = 2  # fixes a step gets after a failed review
    nudge: str | None = None  # the plan's change asked for without a terminal (the page)


@dataclass
class TeamResult:
    status: Literal["done", "waiting", "failed", "interrupted"]
    reason: str | None = None  # waiting: "questions" | "plan"; failed: why
    text: str = ""
    questions: list[dict[str, Any]] = field(default_factory=list)


def is_team(session: Session) -> bool:
    return bool(session.meta.event.get(TEAM_META))


# ------------------------------------------------------------------ state
class _State:
    """``team/state.json``: the phase, questions and answers, plan version, each step.

    Each step's change is also a ``team_step`` event of the lead's transcript, which is
    what makes it durable: the file is rewritten without an fsync after a step's change
    (a cache the page reads), and the events after the ``seq`` it was written at are
    folded in again when it is read.
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lock = threading.Lock()
        try:
            data = orjson.loads(session.read_file(STATE))
        except (OSError, ValueError, HearthError):
            data = {}
        self.phase: Phase = data.get("phase", "start")
        self.task: str = data.get("task", "")
        self.questions: list[dict[str, Any]] = data.get("questions", [])
        self.answers: dict[str, str] = data.get("answers", {})
        self.plan_version: int = data.get("plan_version", 0)
        self.steps: dict[str, dict[str, Any]] = data.get("steps", {})
        self.merges: list[dict[str, Any]] = data.get("merges", [])
        self.seq: int = data.get("seq", 0)
        for event in session.events(after_seq=self.seq):
            if event.get("type") == TEAM_STEP and isinstance(event.get("entry"), dict):
                self.steps[str(event.get("step"))] = event["entry"]
                if isinstance(event.get("merge"), dict):
                    self.merges.append(event["merge"])
                self.seq = event["seq"]

    def save(self, durable: bool = True) -> None:
        data = {
            "phase": self.phase,
            "task": self.task,
            "questions": self.questions,
            "answers": self.answers,
            "plan_version": self.plan_version,
            "steps": self.steps,
            "merges": self.merges,
            "seq": self.seq,
        }
        self.session.write_file(
            STATE, orjson.dumps(data, option=orjson.OPT_INDENT_2), durable=durable
        )

    def step(
        self, step_id: str, merge: dict[str, Any] | None = None, **changes: Any
    ) -> dict[str, Any]:
        """Change a step (``merge``: what its merge back did) and record it."""
        with self.lock:
            entry = self.steps.setdefault(step_id, {"status": "pending"})
            entry.update(changes)
            event: dict[str, Any] = {"step": step_id, "entry": entry}
            if merge is not None:
                merge = {"step": step_id, **merge}
                self.merges.append(merge)
                event["merge"] = merge
            self.seq = self.session.append(TEAM_STEP, event)
            if entry.get("status") != "running":
                # Why: a step's end must survive a power loss (as the user's fsync policy
                # keeps a turn); its start is redone if lost.
                self.session.turn_end()
            self.save(durable=False)
            return dict(entry, id=step_id)


# ------------------------------------------------------------------ the run
class TeamRun:
    def __init__(
        self, wh: Workhearth, session: Session, opts: RunOptions, team: TeamOptions
    ) -> None:
        from workhearth.models.router import Router
        from workhearth.tasks.team.roles import RoleLibrary

        self.wh = wh
        self.session = session
        self.opts = opts
        self.team = team
        self.state = _State(session)
        self.roles = RoleLibrary(wh.paths, wh.workspace, trusted=lambda: wh.trust.trusted_items)
        self.router = Router.from_config(wh.config.models, pinned=opts.model)
        self.mode: Mode = _mode(opts.mode or session.meta.mode)
        self._merge_lock = threading.Lock()
        self._ask_lock = threading.Lock()
        self._thread = threading.local()
        self._memories: list[Any] = []
        # Why no checkpoints in a scratch copy: it is thrown away; what reaches the
        # workspace is the merge, and the workspace's own files are never touched there.
        self._scratch_config = dataclasses.replace(
            wh.config, checkpoints=CheckpointsConfig(enabled=False)
        )

    def close(self) -> None:
        self.router.close()
        for memory in self._memories:
            memory.close()

    def _copy(self, folder: Path) -> Workhearth:
        """The project's hearth working in a scratch copy, with this thread's Memory."""
        memory = getattr(self._thread, "memory", None)
        if memory is None:
            # Why one per pool thread: a Memory is not for two threads at once, and one
            # per step cost ~1 ms (its SQLite connection, its meta).
            memory = self._thread.memory = self.wh.open_memory()
            with self._merge_lock:
                self._memories.append(memory)
        return self.wh.in_copy(folder, config=self._scratch_config, memory=memory)

    # -------------------------------------------------------------- phases
    def run(self, task: str | None) -> TeamResult:
        st = self.state
        if st.phase == "done" and not task:
            return TeamResult("done", text=self.session.read_file("team/report.md").decode())
        if st.phase == "failed":
            st.phase = "running"  # Why: a resume retries the steps that did not finish
        if st.phase == "start":
            if not task:
                raise UsageError("a team task needs a request")
            st.task = task
            self.session.append_message(_text("user", task))
            self._lead_turn()
        if st.phase == "questions":
            answered = self._answers()
            if answered is None:
                return TeamResult("waiting", "questions", questions=st.questions)
            self._answer(answered)
        if st.phase == "plan":
            if not self._approve():
                return TeamResult("waiting", "plan", text=self._plan_text())
        if st.phase == "running":
            plan = parse_plan(self._plan_text())
            self._execute(plan)
            if st.phase == "done":
                self._review(plan)
        return self._report()

    def _lead_turn(self, extra: str | None = None) -> None:
        """One lead call: questions (phase ``questions``) or a plan (phase ``plan``)."""
        roles = "\n".join(f"- {r.name}: {r.description}" for r in self.roles.list() if r.ok)
        for attempt in range(2):
            messages = self._lead_messages()
            reply = self.router.complete(
                LEAD_SYSTEM.format(roles=roles), messages, tools=[ASK_TOOL, PLAN_TOOL]
            )
            self.session.append_message(reply)
            calls = [b for b in reply["content"] if b.get("type") == "tool_use"]
            if not calls:
                note = "Call ask_questions or write_plan; do not answer in text."
                self.session.append_message(_text("user", note))
                continue
            call = calls[0]
            raw = call.get("input")
            args: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
            if call.get("name") == "ask_questions" and not self.state.questions:
                qs = [
                    Question.from_dict(q, n) for n, q in enumerate(args.get("questions") or (), 1)
                ]
                if qs:
                    self.state.questions = [q.as_dict() for q in qs]
                    self.state.phase = "questions"
                    self.state.save()
                    return
            try:
                plan = Plan.from_call(args)
                self._check_roles(plan)
            except UsageError as exc:
                self.session.append_message(_result(call, f"The plan was refused: {exc}", True))
                if attempt == 0:
                    continue
                raise
            self._save_plan(plan)
            self.session.append_message(
                _result(call, f"Plan version {self.state.plan_version} saved as plan.md.")
            )
            return
        raise UsageError("the lead made no plan (its replies called neither tool)")

    def _lead_messages(self) -> list[Message]:
        from workhearth.sessions.reconstruct import repair

        return repair(self.session.load().messages).messages

    def _check_roles(self, plan: Plan) -> None:
        known = {r.name for r in self.roles.list() if r.ok}
        for s in plan.steps:
            if s.owner not in known:
                raise UsageError(
                    f"step {s.id}'s owner {s.owner!r} is not a role; roles: {', '.join(sorted(known))}"
                )

    def _answers(self) -> dict[str, str] | None:
        from workhearth.tasks.team.plan import parse_answers

        questions = [Question.from_dict(q, n) for n, q in enumerate(self.state.questions, 1)]
        given = dict(parse_answers(dict(self.team.answers), questions)) if self.team.answers else {}
        if all(q.id in given for q in questions):
            return given
        if self.team.io is not None:
            for q in questions:
                if q.id not in given:
                    given[q.id] = self.team.io.ask(q) or q.default
            return given
        if self.mode == "quest":
            for q in questions:
                given.setdefault(q.id, q.default)
            self._say("nobody to ask in quest mode: the questions take their defaults")
            return given
        return None

    def _answer(self, answers: dict[str, str]) -> None:
        self.state.answers = answers
        text = "\n".join(
            f"{q['text']} — {answers.get(q['id'], q['default'])}" for q in self.state.questions
        )
        last = self.session.load().messages[-1]
        calls = [b for b in last["content"] if b.get("type") == "tool_use"]
        if last["role"] == "assistant" and calls:
            self.session.append_message(_result(calls[0], "The user answered:\n" + text))
        else:
            self.session.append_message(_text("user", "My answers:\n" + text))
        self.state.save()
        self._lead_turn()

    def _save_plan(self, plan: Plan) -> None:
        questions = [Question.from_dict(q, n) for n, q in enumerate(self.state.questions, 1)]
        text = render_plan(plan, questions, self.state.answers)
        self.state.plan_version += 1
        self.session.write_file(f"team/plan-{self.state.plan_version}.md", text.encode())
        self.session.write_file(PLAN, text.encode())
        self.state.phase = "plan"
        self.state.save()

    def _plan_text(self) -> str:
        return self.session.read_file(PLAN).decode("utf-8")

    def _approve(self) -> bool:
        """Approve, edit or nudge until approved; False: waiting for the user."""
        if self.team.nudge:
            self.session.append_message(_text("user", "Revise the plan: " + self.team.nudge))
            self.team.nudge = None
            self._lead_turn()
        if self.team.yes or self.mode == "quest":
            if self.mode == "quest" and not self.team.yes:
                self._say("quest mode: the plan is taken as written")
            self._start_running()
            return True
        io = self.team.io
        if io is None:
            return False
        while True:
            text = self._plan_text()
            choice, words = io.review_plan(self.session.folder / PLAN, text)
            if choice == "approve":
                break
            if choice == "edited":
                try:
                    plan = parse_plan(self._plan_text())
                    self._check_roles(plan)
                except UsageError as exc:
                    io.say(f"plan.md: {exc}")
                    continue
                self.state.plan_version += 1
                self.session.write_file(
                    f"team/plan-{self.state.plan_version}.md", self._plan_text().encode()
                )
                self.state.save()
                continue
            self.session.append_message(_text("user", "Revise the plan: " + words))
            self._lead_turn()
        self._start_running()
        return True

    def _start_running(self) -> None:
        plan = parse_plan(self._plan_text())
        self._check_roles(plan)
        self.session.append_message(
            _text("user", f"The plan (version {self.state.plan_version}) is approved: go ahead.")
        )
        self.state.phase = "running"
        self.state.save()

    # -------------------------------------------------------------- specialists
    def _execute(self, plan: Plan) -> None:
        st = self.state
        parallel = max(1, self.team.parallel)
        done = {sid for sid, s in st.steps.items() if s.get("status") == "done"}
        # Why not retried: a conflict waits for the user to resolve it, beside the file.
        failed = {sid for sid, s in st.steps.items() if s.get("status") == "conflict"}
        pending = [s for s in plan.steps if s.id not in done | failed]
        running: dict[Future[dict[str, Any]], str] = {}
        with ThreadPoolExecutor(parallel, thread_name_prefix="hearth-team") as pool:
            while pending or running:
                ready = [s for s in pending if set(s.depends_on) <= done]
                for s in ready[: parallel - len(running)]:
                    pending.remove(s)
                    running[pool.submit(self._run_step, plan, s)] = s.id
                blocked = [s for s in pending if set(s.depends_on) & failed]
                for s in blocked:
                    pending.remove(s)
                    failed.add(s.id)
                    self._update(s.id, status="blocked", error="a step it depends on failed")
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    step_id = running.pop(future)
                    try:
                        entry = future.result()
                    except Exception as exc:  # a step's crash must not stop the others
                        entry = self._update(step_id, status="failed", error=_words(exc))
                    (done if entry.get("status") == "done" else failed).add(step_id)
        st.phase = "failed" if failed else "done"
        st.save()

    def _update(self, step_id: str, **changes: Any) -> dict[str, Any]:
        entry = self.state.step(step_id, **changes)
        if self.team.on_step is not None:
            self.team.on_step(entry)
        return entry

    def _run_step(self, plan: Plan, step: Step) -> dict[str, Any]:
        """A step's specialist from start (or from where a killed run left it) to merged."""
        entry = self.state.steps.get(step.id, {})
        prompt = None if entry.get("session") else self._step_prompt(plan, step)
        return self._work(plan, step, prompt)

    def _work(self, plan: Plan, step: Step, prompt: str | None) -> dict[str, Any]:
        """Run the owner of ``step`` on ``prompt`` (None: continue its unfinished turn) in a
        scratch copy, then merge its changes back."""
        role = self.roles.get(step.owner)
        entry = self.state.steps.get(step.id, {})
        scratch = self._scratch(step, entry.get("scratch"))
        specialist_wh = self._copy(scratch.root)
        session = self._open(specialist_wh, entry.get("session"))
        if session is None:
            session = self._new_session(specialist_wh, role, step.id)
            prompt = prompt or self._step_prompt(plan, step)
        self._update(
            step.id,
            status="running",
            role=role.name,
            title=step.title,
            session=session.id,
            scratch=str(scratch.path),
            started=entry.get("started") or time.time(),
        )
        result = self._specialist(specialist_wh, session, role, prompt, who=step.id)
        if not result.ok:
            return self._update(
                step.id,
                status="failed",
                ended=time.time(),
                error=result.error or f"it ended: {result.status}",
            )
        merged = self._merge(scratch)
        conflicts = list(merged.get("conflicts") or [])
        return self._update(
            step.id,
            merge=merged,
            status="done" if not conflicts else "conflict",
            ended=time.time(),
            summary=result.text.strip()[:2000],
            conflicts=conflicts,
            scratch=None,
        )

    def _scratch(self, step: Step, kept: str | None, *, files: Sequence[str] = ()) -> Any:
        from workhearth.tasks.team.scratch import Scratch

        if kept and Path(kept).is_dir():
            return Scratch.open(Path(kept))
        return Scratch.create(
            Path(self.wh.workspace),
            step.id,
            files=[*(files or (*step.files, *step.produces))],
            parent=self._scratch_root(),
            outside=[self.wh.home],
            repo=self._repo,
        )

    @functools.cached_property
    def _repo(self) -> Path | None:
        from workhearth.tasks.team.scratch import repo_top

        return repo_top(Path(self.wh.workspace))

    def _open(self, wh: Workhearth, session_id: str | None) -> Session | None:
        if not session_id:
            return None
        try:
            return wh.sessions.open(session_id)
        except HearthError:
            return None

    def _new_session(self, wh: Workhearth, role: Any, step_id: str) -> Session:
        mode, _tools = role.narrow(self.mode, _all_tools())
        # Why the copy's hearth (Workhearth.in_copy): the session belongs with the
        # project's, in its folder; it works in the scratch copy.
        return wh.sessions.create(
            model=role.model or self.opts.model,
            mode=mode,
            extra_meta={"parent_session": self.session.id, "team_step": step_id, "role": role.name},
        )

    def _specialist(
        self, wh: Workhearth, session: Session, role: Any, prompt: str | None, *, who: str
    ) -> RunResult:
        mode, tools = role.narrow(self.mode, _all_tools())
        approver = self.opts.approver or TerminalApprover(
            self.opts.stdin, self.opts.stderr, yes=self.opts.yes
        )
        opts = dataclasses.replace(
            self.opts,
            mode=mode,
            model=role.model or self.opts.model,
            role_prompt=role.prompt,
            only_tools=tools,
            tier=role.tier,
            listener=None,
            on_agent=None,
            # Why: specialists ask one at a time, each question saying who asks.
            approver=_Queued(approver, f"{role.name} · {who}", self._ask_lock),
        )
        with session:
            return resume(wh, session, opts, prompt)

    def _merge(self, scratch: Any) -> dict[str, Any]:
        """Merge a step's scratch copy back into the workspace; what it did."""
        from workhearth.tasks.team.scratch import merge

        trash = Trash(self.wh.paths.trash)
        with self._merge_lock:
            report = merge(
                Path(self.wh.workspace),
                [scratch],
                discard=lambda path: trash.put(path, reason="team merge", session=self.session.id),
            )
        scratch.remove()
        return report.as_dict()

    # -------------------------------------------------------------- review
    def _review(self, plan: Plan) -> None:
        """Each step with acceptance checks goes to the reviewer; a FAIL goes back to its
        owner with the reviewer's notes, at most ``review_rounds`` times."""
        names = {r.name for r in self.roles.list() if r.ok}
        if "reviewer" not in names:
            return
        reviewer = self.roles.get("reviewer")
        for step in plan.steps:
            entry = self.state.steps.get(step.id, {})
            if not step.checks or entry.get("status") != "done":
                continue
            while (entry.get("review") or {}).get("verdict") != "PASS":
                rounds = int(entry.get("rounds", 0))
                verdict, notes, seen_by = self._review_step(plan, step, reviewer, rounds)
                review = {"verdict": verdict, "notes": notes[:2000], "round": rounds}
                entry = self._update(step.id, review={**review, "session": seen_by})
                if verdict == "PASS":
                    break
                if rounds >= self.team.review_rounds:
                    self._update(
                        step.id,
                        status="failed",
                        error=f"the reviewer still found problems after {rounds} fixes",
                    )
                    break
                self._update(step.id, rounds=rounds + 1)
                fix = (
                    "The reviewer checked your work against the plan and found problems:\n"
                    f"{notes}\n\nFix them, then reply with a short summary of what you changed."
                )
                entry = self._work(plan, step, fix)
                if entry.get("status") != "done":
                    break

    def _review_step(
        self, plan: Plan, step: Step, reviewer: Any, rounds: int
    ) -> tuple[str, str, str]:
        """The reviewer's verdict (PASS or FAIL), its notes and its session's id."""
        scratch = self._scratch(step, None, files=[*step.produces, *step.files])
        try:
            wh = self._copy(scratch.root)
            session = self._new_session(wh, reviewer, f"{step.id}-review-{rounds + 1}")
            entry = self.state.steps.get(step.id, {})
            prompt = "\n\n".join(
                p
                for p in (
                    f"Review the step '{step.title}' of the team's plan (owner: {step.owner}).",
                    f"The team's goal: {plan.goal}",
                    "Deliverables: " + ", ".join(step.produces) if step.produces else "",
                    "Acceptance checks:\n" + "\n".join(f"- {c}" for c in step.checks),
                    f"The owner reported: {entry.get('summary', '')}",
                    "Start your reply with PASS or FAIL on a line of its own.",
                )
                if p
            )
            result = self._specialist(wh, session, reviewer, prompt, who=f"review {step.id}")
        finally:
            scratch.remove()  # Why: a review changes nothing in the workspace
        text = result.text.strip()
        first = text.splitlines()[0].strip().strip("*#` ").upper() if text else ""
        verdict = "PASS" if first.startswith("PASS") and result.ok else "FAIL"
        return verdict, text or (result.error or "the review did not finish"), session.id

    def _scratch_root(self) -> Path:
        # Why per user: another user's folder of the same name must never be ours.
        default = Path(tempfile.gettempdir()) / f"hearth-team-{os.getuid()}"
        root = self.team.scratch_root or default
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        return root

    def _step_prompt(self, plan: Plan, step: Any) -> str:
        earlier = [
            f"- {dep}: {self.state.steps.get(dep, {}).get('summary', '(no summary)')}"
            for dep in step.depends_on
        ]
        parts = [
            f"Your step of the team's plan: {step.title}",
            step.detail,
            f"The team's goal: {plan.goal}",
        ]
        if step.files:
            parts.append("Files: " + ", ".join(step.files))
        if step.produces:
            parts.append("You produce: " + ", ".join(step.produces))
        if step.checks:
            parts.append("It will be checked that:\n" + "\n".join(f"- {c}" for c in step.checks))
        if earlier:
            parts.append("What earlier steps reported:\n" + "\n".join(earlier))
        overview = self._overview
        if overview:
            parts.append(
                "The project's wiki overview (read it first; its pages are found by "
                "memory_search):\n" + overview
            )
        parts.append(
            "When you are done, reply with a short summary of what you produced and where."
        )
        return "\n\n".join(p for p in parts if p)

    @functools.cached_property
    def _overview(self) -> str:
        """The project wiki's overview (issue 24), trimmed; empty when there is none."""
        from workhearth.errors import NotFoundError

        try:
            text = self.wh.wiki.read("overview").text.strip()
        except (NotFoundError, OSError, UsageError):
            return ""
        return text if len(text) <= OVERVIEW_CHARS else text[:OVERVIEW_CHARS] + "\n…"

    # -------------------------------------------------------------- the end
    def _report(self) -> TeamResult:
        plan = parse_plan(self._plan_text())
        lines = [f"# Report: {plan.goal}", ""]
        for s in plan.steps:
            entry = self.state.steps.get(s.id, {})
            status = entry.get("status", "pending")
            lines.append(f"- {s.title} ({s.owner}): {status}")
            if entry.get("summary"):
                lines.append(f"  {entry['summary'].splitlines()[0]}")
            if entry.get("error"):
                lines.append(f"  {entry['error']}")
            for c in entry.get("conflicts") or []:
                kept = ", ".join(c.get("kept") or ())
                beside = f"; the other version is beside it: {kept}" if kept else ""
                lines.append(f"  conflict: {c.get('path')} ({c.get('reason', '')}){beside}")
        if plan.deliverables:
            lines += ["", "Deliverables:"]
            for d in plan.deliverables:
                there = (Path(self.wh.workspace) / d.path).exists()
                lines.append(f"- {d.path}: {'ready' if there else 'missing'}")
        text = "\n".join(lines) + "\n"
        self.session.write_file("team/report.md", text.encode())
        self.session.append_message(_text("assistant", text))
        bad = [sid for sid, s in self.state.steps.items() if s.get("status") != "done"]
        if bad:
            return TeamResult("failed", f"steps not done: {', '.join(sorted(bad))}", text)
        return TeamResult("done", None, text)

    def _say(self, line: str) -> None:
        if self.team.io is not None:
            self.team.io.say(line)
        elif self.team.notice is not None:
            self.team.notice(line)


class _Queued:
    """Approvals of several specialists, one at a time, each saying who asks."""

    def __init__(self, inner: Approver, who: str, lock: threading.Lock) -> None:
        self.inner = inner
        self.who = who
        self.lock = lock

    @property
    def human(self) -> bool:
        return self.inner.human

    def ask(self, request: ApprovalRequest) -> Answer:
        with self.lock:
            asked = dataclasses.replace(request, summary=f"[{self.who}] {request.summary}")
            return self.inner.ask(asked)


def team_view(session: Session) -> dict[str, Any]:
    """What the page shows of a team task: phase, questions, plan, board, report."""
    st = _State(session)

    def read(name: str) -> str | None:
        try:
            return session.read_file(name).decode("utf-8")
        except (OSError, HearthError, UnicodeDecodeError):
            return None

    plan_text = read(PLAN)
    steps: list[dict[str, Any]] = []
    try:
        plan = parse_plan(plan_text) if plan_text else None
    except UsageError:
        plan = None
    for s in plan.steps if plan else ():
        entry = st.steps.get(s.id, {})
        steps.append(
            {
                **{k: v for k, v in entry.items() if k not in ("scratch",)},
                "id": s.id,
                "title": s.title,
                "owner": s.owner,
                "depends_on": list(s.depends_on),
                "status": entry.get("status", "pending"),
            }
        )
    return {
        "session_id": session.id,
        "phase": st.phase,
        "questions": st.questions,
        "answers": st.answers,
        "plan": plan_text,
        "plan_version": st.plan_version,
        "steps": steps,
        "report": read("team/report.md"),
    }


def _mode(value: str | None) -> Mode:
    return value if value in ("ask", "agent", "quest") else "agent"  # type: ignore[return-value]


@functools.cache
def _all_tools() -> tuple[str, ...]:
    """The names of every built-in tool (a role narrows these); built once per process."""
    from workhearth.agent.runner import _registry

    return tuple(_registry(RunOptions()).names())


def _text(role: str, text: str) -> Message:
    return {"role": role, "content": [{"type": "text", "text": text}]}  # type: ignore[typeddict-item]


def _result(call: Mapping[str, Any], text: str, error: bool = False) -> Message:
    block: Any = {"type": "tool_result", "tool_use_id": call.get("id"), "content": text}
    if error:
        block["is_error"] = True
    return {"role": "user", "content": [block]}


def _words(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, HearthError) else f"{type(exc).__name__}: {exc}"


def run_team(
    wh: Workhearth, session: Session, opts: RunOptions, task: str | None, team: TeamOptions
) -> TeamResult:
    """Run (or continue) the team task of ``session``."""
    run = TeamRun(wh, session, opts, team)
    try:
        return run.run(task)
    finally:
        run.close()
