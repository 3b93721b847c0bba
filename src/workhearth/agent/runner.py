"""Assemble a run: session, model, tools, system prompt and limits, from one Workhearth.

The CLI (``hearth run``, ``hearth resume``, interactive ``hearth``) and, later, the
server build agents here, so every entry point gets the same safety rules. The
``task`` tool's subagents are built here too, from the parent's own parts, and a
run starts with the daily retention sweep (see :mod:`.retention`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TextIO

from workhearth.agent import scratch
from workhearth.agent.approval import ApprovalRequest, Approver, Gate, Policy, TerminalApprover
from workhearth.agent.audit import AuditLog
from workhearth.agent.browser.session import BrowserSession
from workhearth.agent.browser.tools import BROWSER_TOOLS
from workhearth.agent.changes import ChangeDetector
from workhearth.agent.compact import Compactor
from workhearth.agent.fences import fences_for
from workhearth.agent.loop import Agent, Limits, Listener, RunResult, ToolEvent
from workhearth.agent.receipts import OfficeChecker
from workhearth.agent.retention import sweep_if_due
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import (
    BoundTools,
    SkillState,
    Subagent,
    Tool,
    ToolContext,
    ToolRegistry,
    ToolResult,
    activate_skill,
    default_registry,
    quest_sandbox,
)
from workhearth.agent.tools import task as task_tool
from workhearth.agent.workspace import Workspaces
from workhearth.check.render import Tools
from workhearth.config import Tier
from workhearth.errors import HearthError, UsageError
from workhearth.models.streaming import ToolSpec
from workhearth.shell.sandbox import NOT_INSTALLED, Sandbox
from workhearth.shell.snapshot import Snapshot, capture
from workhearth.trash import Trash

if TYPE_CHECKING:
    from workhearth.config import Config
    from workhearth.memory.api import Memory
    from workhearth.paths import HearthPaths
    from workhearth.sessions.session import Session
    from workhearth.sessions.store import SessionStore
    from workhearth.skills.library import SkillLibrary


class Workhearth(Protocol):
    """What a run needs from the library object (``workhearth.Workhearth`` fits)."""

    config: Config
    workspace: Path
    project: Path  # whose project folder it uses (a team specialist's: the project's)

    @property
    def paths(self) -> HearthPaths: ...

    @property
    def memory(self) -> Memory: ...

    @property
    def sessions(self) -> SessionStore: ...

    @property
    def skills(self) -> SkillLibrary: ...


Mode = Literal["ask", "agent", "quest"]
MODES: tuple[Mode, ...] = ("ask", "agent", "quest")
MODE_TEXT = {
    "ask": "ask — you may only read and search; you cannot change files or run commands.",
    "agent": "agent — each write, delete or shell command is shown to the user, who allows or denies it.",
    "quest": "quest — you work alone inside preset boundaries (authorized folders, denied commands, "
    "step, time and cost limits); nobody answers questions, so decide and proceed.",
}
SYSTEM_TEMPLATE = """You are hearth, an agent doing real work on the user's own machine.
Workspace: {workspace}
Authorized folders: {roots}
Mode: {mode_text}

Work with the tools. Paths are relative to the workspace unless absolute. Deleted files go to a
restorable trash, and every overwrite keeps the previous version, but still act with care. Read
before you edit. Keep answers short and say plainly what you did and what remains.
Save to memory only short, plain sentences the user would confirm.
{skills}{memory}"""
SUBAGENT_STEPS = 25
SUBAGENT_TEMPLATE = """You are a hearth subagent: the main agent gave you the sub-task that follows.
Workspace: {workspace}
Authorized folders: {roots}
Mode: {mode_text}

Work with the tools; paths are relative to the workspace unless absolute. Read before you edit.
Nobody sees your work but the main agent, and it sees only your final answer: end with a
concise report of what you found or did (exact paths, names and numbers) and what remains.
"""


@dataclass
class RunOptions:
    mode: Mode | None = None  # None: the session's own mode (default "agent")
    model: str | None = None  # --model; None: the session's own model, else routed
    yes: bool = False
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: TextIO | None = None
    stderr: TextIO | None = None
    listener: Listener | None = None
    approver: Approver | None = None
    snapshot: Snapshot | None = None  # the user's shell, captured once per process
    skill: str | None = None  # `hearth run --skill NAME`: active from the first step
    # Why: tools from above the agent layer (MCP servers) come in here; agent/ never imports mcp/.
    extra_tools: Callable[[], Sequence[Tool]] | None = None  # called once per agent built
    # Called with the agent once it is built (the task service keeps its stop handle).
    on_agent: Callable[[Agent], None] | None = None
    # A team specialist (issue 23): its role's instructions after the system prompt, the
    # only tools it may call (None: every tool the mode allows), the tier it starts on.
    role_prompt: str | None = None
    only_tools: Sequence[str] | None = None
    tier: str | None = None


def _tier(value: str | None) -> Tier:
    """The router tier a checkpoint recorded; light when none (or one this version lacks)."""
    return "strong" if value == "strong" else "light"


def _mode(value: str | None, default: str | None) -> Mode:
    mode = value or default or "agent"
    if mode not in MODES:
        raise UsageError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    return mode


class NobodyToAsk(HearthError):
    """A call needed a person's approval and nobody could answer: the run stops."""

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(f"{request.tool} needs approval and there is no terminal to ask on")
        self.request = request


def _unasked_words(exc: NobodyToAsk, session_id: str) -> str:
    """What to do when nobody could approve a call: ``--yes`` or quest, except for a
    password, which only the user can type (``--yes`` and quest refuse it)."""
    if exc.request.secret is not None:
        return (
            f"{exc.request.tool} needs a password only you can type: continue in agent mode "
            f"at a terminal with `hearth resume {session_id}`, or from the page"
        )
    return (
        f"{exc}: run again with --yes to allow every action, or with "
        "--mode quest to work alone inside preset boundaries; "
        f"this session continues with `hearth resume {session_id} --yes`"
    )


class _StopWhenUnasked:
    """The bound tools, raising :class:`NobodyToAsk` after a call that nobody could approve.

    Why: telling the model "the user denied" when nobody was asked makes it give up
    or improvise; stopping lets the user rerun with ``--yes`` or in quest mode.
    """

    def __init__(self, tools: BoundTools, gate: Gate) -> None:
        self.tools = tools
        self.gate = gate

    @property
    def ctx(self) -> ToolContext:
        """The context the wrapped tools are bound to."""
        return self.tools.ctx

    def specs(self) -> Sequence[ToolSpec]:
        return self.tools.specs()

    def read_only(self, name: str) -> bool:
        return self.tools.read_only(name)

    def call(self, name: str, arguments: Mapping[str, Any], call_id: str) -> ToolResult:
        result = self.tools.call(name, arguments, call_id)
        if self.gate.unasked is not None:
            raise NobodyToAsk(self.gate.unasked)
        return result


def session_model(wh: Workhearth, session: Session, opts: RunOptions) -> str | None:
    """The model a run of ``session`` uses: ``--model``, else the one the session is pinned to.

    A session started with ``--model`` (or switched with it) keeps that model. A
    routed session whose models are no longer configured (``HEARTH_MODEL`` gone)
    continues with the model that last answered it. None: routed.
    """
    if opts.model:
        return opts.model
    business = session.load().business
    pinned = business.pinned or session.meta.model
    if pinned:
        return pinned
    if not wh.config.models.configured and business.model:
        return business.model
    return None


def check_model(wh: Workhearth, spec: str | None) -> None:
    """Fail now, before a session exists, when ``spec`` (or the default) cannot be called.

    Raises :class:`~workhearth.errors.ConfigError` for an unknown name, no model at
    all, or a missing API key (see :func:`workhearth.models.registry.require_key`).
    """
    from workhearth.models.registry import require_keys

    require_keys(spec, wh.config.models)


def check_browser_config(wh: Workhearth) -> None:
    """Fail now, before a session exists, on a ``[browser] allow`` entry that cannot be read
    (a bad host or address block): one line naming it, not a session that fails at start."""
    from workhearth.agent.browser.allow import parse_allow

    parse_allow(wh.config.browser.allow)


def system_prompt(wh: Workhearth, fs: SafeFS, mode: Mode, task: str | None) -> str:
    memory = wh.memory.context(topic=task) if task else wh.memory.context()
    return SYSTEM_TEMPLATE.format(
        workspace=wh.workspace,
        roots=", ".join(str(r.path) for r in fs.roots),
        mode_text=MODE_TEXT[mode],
        skills=_catalogue(wh),
        memory=f"\n# What you remember\n{memory}\n" if memory else "",
    )


def _catalogue(wh: Workhearth) -> str:
    """The skills part of the system prompt; a library that cannot be read leaves it out."""
    from workhearth.agent.tools.skills import catalogue

    try:
        return catalogue(wh.skills)
    except HearthError:
        return ""


def subagent_prompt(wh: Workhearth, fs: SafeFS, mode: Mode) -> str:
    return SUBAGENT_TEMPLATE.format(
        workspace=wh.workspace,
        roots=", ".join(str(r.path) for r in fs.roots),
        mode_text=MODE_TEXT[mode],
    )


def build_agent(
    wh: Workhearth, session: Session, opts: RunOptions, task: str | None, private_tmp: Path
) -> Agent:
    """The agent for ``session``; in quest mode its commands get ``private_tmp`` as their ``/tmp``."""
    from workhearth.models.router import Router

    state = session.load().business
    mode = _mode(opts.mode, state.mode)
    models = wh.config.models
    pinned = session_model(wh, session, opts)
    check_model(wh, pinned)
    router = Router.from_config(models, pinned=pinned, tier=_tier(opts.tier or state.tier))
    workspaces = Workspaces(wh.paths, current=wh.workspace)
    policy = Policy.from_config(wh.config.raw, str(wh.config.paths.config_file))
    roots = workspaces.roots()
    fs = SafeFS(
        roots,
        trash=Trash(wh.paths.trash),
        protected=workspaces.protected(),
        # Why (issue 17): every tool refuses what quest hides, not only the shell.
        fences=fences_for(mode, roots, opts.env, policy.hide),
    )
    approver = opts.approver or TerminalApprover(opts.stdin, opts.stderr, yes=opts.yes)
    sandbox = _sandbox(wh, mode, fs, private_tmp, opts, policy)
    _capture_shell(wh, mode, opts, policy)
    # Why: a resumed session keeps its active skill (and that skill's allowed-tools).
    skills = SkillState(wh.skills, state.active_skill)
    intro = None
    if opts.skill and skills.active is None:
        intro = (opts.skill, skills.activate(opts.skill, session))
    ctx = ToolContext(
        session=session,
        snapshot=opts.snapshot,
        fs=fs,
        mode=mode,
        memory=wh.memory,
        sessions=wh.sessions,
        approver=approver,
        audit=AuditLog(wh.paths.audit_log),
        policy=policy,
        env=opts.env,
        sandbox=sandbox,
        deadline=_command_deadline(mode, policy),
        skills=skills,
    )
    # Why (issue #18): "files changed" is what changed on disk around each call with side
    # effects, by whichever tool, never what the model asked for.
    ChangeDetector.for_context(ctx)
    # Why (issue #21): the office files a call produced are checked before the model hears back.
    ctx.office = OfficeChecker(Tools.find(wh.paths.office_profile))
    # Why (issue 25): a browser found on the machine brings the browser tools (not started yet).
    ctx.browser = BrowserSession.for_run(
        wh.config.browser,
        session,
        mode,
        quest_network=policy.network,
        env=opts.env,
        home=wh.paths.home,
    )
    registry = _registry(opts)
    if opts.only_tools is not None:
        registry = registry.only(opts.only_tools)
    assert ctx.gate is not None
    tools = _StopWhenUnasked(registry.bind(ctx), ctx.gate)
    # Why: a resumed session keeps the prompt it started with unless the mode changed.
    system = state.system if state.mode == mode else None
    system = system or system_prompt(wh, fs, mode, task)
    if opts.role_prompt and opts.role_prompt not in system:
        system = f"{system}\n\n# Your role\n{opts.role_prompt}\n"
    agent = Agent(
        session=session,
        model=router,
        tools=tools,
        system=system,
        mode=mode,
        limits=_limits(mode, policy),
        listener=opts.listener,
        compactor=Compactor(),
    )
    # Why only with a task: a resumed session already holds its skill's introduction.
    agent.skill_intro = intro if task else None
    if state.mode != mode or (opts.model and state.pinned != opts.model):
        # a mode or model switch is recorded, so the next resume keeps it
        agent.checkpoint(pinned=opts.model)
    # Why: a subagent never starts another, also when its session is resumed later.
    if not session.meta.parent_session:
        # Why: subagents use the model the session runs with, resumed sessions too.
        sub_opts = dataclasses.replace(opts, model=pinned)
        ctx.subagent = _subagent(wh, agent, ctx, registry, sub_opts, policy)
    return agent


def _sandbox(
    wh: Workhearth, mode: Mode, fs: SafeFS, private_tmp: Path, opts: RunOptions, policy: Policy
) -> Sandbox | None:
    """The quest sandbox for commands (None outside quest mode or when none is installed)."""
    if mode != "quest":
        return None
    sandbox = quest_sandbox(fs, private_tmp, opts.env, policy, wh.paths)
    if sandbox is None and opts.stderr is not None:
        print(f"hearth: quest mode: {NOT_INSTALLED}", file=opts.stderr)
    return sandbox


def _capture_shell(wh: Workhearth, mode: Mode, opts: RunOptions, policy: Policy) -> None:
    """Capture the user's shell into ``opts.snapshot`` unless the mode runs no commands."""
    if mode == "ask" or opts.snapshot is not None:
        return
    # Why (DESIGN §5 Shell): the user's shell is captured at session start, so a
    # broken or slow rc file is reported before any work, not mid-task.
    # Why: a quest's commands must not see the keys in the user's environment.
    opts.snapshot = capture(
        wh.paths,
        str(wh.workspace),
        opts.env,
        withhold=mode == "quest",
        keep=policy.env,
        project=wh.project,
    )
    if opts.snapshot.warning and opts.stderr is not None:
        print(f"hearth: {opts.snapshot.warning}", file=opts.stderr)


def _command_deadline(mode: Mode, policy: Policy) -> float | None:
    # Why: one long command must not carry a quest past its time limit.
    if mode == "quest" and policy.max_seconds is not None:
        return time.monotonic() + policy.max_seconds
    return None


def _registry(opts: RunOptions) -> ToolRegistry:
    """The built-in tools, ``task``, ``activate_skill`` and the caller's extra tools."""
    registry = default_registry()
    registry.add(task_tool)
    registry.add(activate_skill)
    for browser_tool in BROWSER_TOOLS:  # offered only when the run has a browser
        registry.add(browser_tool)
    for extra in opts.extra_tools() if opts.extra_tools else ():
        registry.add(extra)
    return registry


def _limits(mode: Mode, policy: Policy) -> Limits:
    # Why: [quest] boundaries bind quest mode; with a person present only the step cap applies.
    if mode == "quest":
        return Limits(policy.max_steps, policy.max_seconds, policy.max_cost)
    return Limits()


def _tool_events(listener: Listener | None) -> Listener | None:
    """Pass on a subagent's tool calls (progress), not its text (the report says it)."""
    if listener is None:
        return None
    return lambda event: listener(event) if isinstance(event, ToolEvent) else None


def _subagent(
    wh: Workhearth,
    parent: Agent,
    ctx: ToolContext,
    registry: ToolRegistry,
    opts: RunOptions,
    policy: Policy,
) -> Subagent:
    """What the ``task`` tool runs: an agent in a new session linked to ``parent``'s."""

    def run(prompt: str, call_id: str) -> RunResult:
        from workhearth.models.router import Router

        mode: Mode = ctx.mode
        child = wh.sessions.create(
            model=opts.model,
            mode=mode,
            workspace=ctx.session.workspace or None,
            extra_meta={"parent_session": ctx.session.id, "parent_call_id": call_id},
        )
        limits = Limits(SUBAGENT_STEPS)
        if mode == "quest":
            spent = parent.cost or 0.0
            limits = Limits(
                min(SUBAGENT_STEPS, policy.max_steps or SUBAGENT_STEPS),
                policy.max_seconds,
                None if policy.max_cost is None else policy.max_cost - spent,
            )
        with child:
            child.append("title", {"title": "subagent: " + " ".join(prompt.split())[:70]})
            # Same folders, approvals ("always" answers included), sandbox and shell
            # snapshot as the parent; its own session and file history; no subagent.
            child_ctx = dataclasses.replace(
                ctx,
                session=child,
                history=None,
                subagent=None,
                call_id="",
                skills=ctx.skills.fork() if ctx.skills else None,
            )
            tier: Tier = parent.model.tier if isinstance(parent.model, Router) else "light"
            router = Router.from_config(wh.config.models, pinned=opts.model, tier=tier)
            agent = Agent(
                session=child,
                model=router,
                tools=registry.bind(child_ctx),
                system=subagent_prompt(wh, ctx.fs, mode),
                mode=mode,
                limits=limits,
                listener=_tool_events(opts.listener),
                compactor=Compactor(),
            )
            agent.checkpoint()
            try:
                result = agent.run(prompt)
            finally:
                router.close()
        # Why: the work was done for the parent, so its usage and cost (and its
        # quest cost limit) count the subagent's too.
        parent.usage = parent.usage + result.usage
        if result.cost is not None:
            parent.cost = (parent.cost or 0.0) + result.cost
        return result

    return run


def new_session(wh: Workhearth, task: str, opts: RunOptions) -> Session:
    """The session a new ``task`` runs in, after every check that could refuse it."""
    if not task.strip():
        raise UsageError("the task is empty")
    mode = _mode(opts.mode, None)
    # Why: a model that cannot be called must not leave an empty session behind.
    check_model(wh, opts.model)
    if opts.skill:
        SkillState(wh.skills).load(opts.skill)  # Why: an unknown skill leaves no session
    return wh.sessions.create(model=opts.model, mode=mode)


def run_task(wh: Workhearth, task: str, opts: RunOptions) -> RunResult:
    """Start a new session in the current workspace and work on ``task``."""
    return resume(wh, new_session(wh, task, opts), opts, task)


def resume(
    wh: Workhearth, session: Session, opts: RunOptions, task: str | None = None
) -> RunResult:
    """Continue a session where it stopped (and, with ``task``, give it the next instruction)."""
    housekeeping(wh, opts)
    # Why: a quest's private /tmp lives as long as the run, never longer.
    with session, scratch.scratch("quest") as folder:
        agent = build_agent(wh, session, opts, task, folder)
        if opts.on_agent is not None:
            opts.on_agent(agent)
        try:
            return agent.run(task)
        except NobodyToAsk as exc:
            return RunResult(
                "error",
                "",
                0,
                session.id,
                agent.usage,
                agent.cost,
                list(agent.models),
                error=_unasked_words(exc, session.id),
            )
        finally:
            agent.model.close()
            tools = agent.tools
            if isinstance(tools, _StopWhenUnasked) and tools.ctx.changes is not None:
                tools.ctx.changes.close()  # Why: the checkpoint index for the next run
            if isinstance(tools, _StopWhenUnasked) and tools.ctx.browser is not None:
                tools.ctx.browser.close()  # Why (issue 25): no browser outlives its run


def housekeeping(wh: Workhearth, opts: RunOptions) -> None:
    """The retention sweep, at most once a day; a failure warns and never stops the run.

    Also removes the scratch folders that runs killed before their end left behind.
    """
    scratch.sweep_orphans()
    try:
        sweep_if_due(wh.paths, wh.config.retention)
    except OSError as exc:
        if opts.stderr is not None:
            print(f"hearth: retention sweep skipped ({exc.strerror or exc})", file=opts.stderr)
