"""Tools are typed Python functions; the registry turns them into specs and runs calls.

A tool is ``def name(ctx: ToolContext, arg: type = default, ...) -> str | ToolResult``
marked with :func:`tool`. Its parameters after ``ctx`` become a JSON schema (via
pydantic; ``Annotated[int, Field(ge=1, description=...)]`` adds limits and
words) and its docstring the description the model reads.

:meth:`ToolRegistry.call` is the one way a call runs: validate the input, ask the
:class:`~workhearth.agent.approval.Gate`, make the session durable before a side
effect, run, bound the output, and write one audit line. Every failure
(bad input, denial, :class:`PathDenied`, a missing file, a bug in a tool) comes
back as an ``is_error`` result; nothing but ``KeyboardInterrupt`` escapes.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import time
import typing
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from workhearth.agent.audit import (
    MASK,
    PEOPLE_SUMMARY,
    STARTED_SUMMARY,
    Decision,
    Outcome,
    summarize,
)
from workhearth.agent.reach import outside_reach
from workhearth.agent.tools.context import ToolContext, ToolResult, bound
from workhearth.errors import HearthError
from workhearth.models.streaming import ToolSpec

ToolFunc = Callable[..., "str | ToolResult"]
Preview = Callable[[ToolContext, BaseModel], str]
Offered = Callable[[ToolContext], bool]


@dataclass(frozen=True)
class ToolOptions:
    """How a tool is run.

    ``read_only`` tools need no approval and are offered in ask mode.
    ``alone`` keeps a read-only tool from running side by side with others (its
    own work is gated call by call, like the ``task`` subagent's). ``offered``
    decides, per context, whether the model sees the tool at all.
    """

    read_only: bool
    preview: Preview | None = None
    command_arg: str | None = None  # checked against the denied-command list
    allow_always: bool = True
    output_limit: int | None = None
    alone: bool = False
    offered: Offered | None = None
    # Why: the user's own config (not the tool) may let a tool run unasked in agent mode.
    preapproved: bool = False


def tool(
    *,
    read_only: bool,
    preview: Preview | None = None,
    command_arg: str | None = None,
    allow_always: bool = True,
    output_limit: int | None = None,
    alone: bool = False,
    offered: Offered | None = None,
) -> Callable[[ToolFunc], ToolFunc]:
    """Mark a function as a tool; it stays a plain function you can call directly."""

    def mark(func: ToolFunc) -> ToolFunc:
        func.__workhearth_tool__ = ToolOptions(  # type: ignore[attr-defined]
            read_only, preview, command_arg, allow_always, output_limit, alone, offered
        )
        return func

    return mark


@dataclass(frozen=True)
class Tool:
    name: str
    func: ToolFunc
    description: str
    model: type[BaseModel]
    options: ToolOptions

    @property
    def read_only(self) -> bool:
        return self.options.read_only

    def offered(self, ctx: ToolContext) -> bool:
        return self.options.offered is None or self.options.offered(ctx)

    @functools.cached_property
    def spec(self) -> ToolSpec:
        # Why: building the JSON schema is most of a step's overhead; it never changes.
        return ToolSpec(self.name, self.description, input_schema(self.model))

    @classmethod
    def from_function(cls, func: ToolFunc, name: str | None = None) -> Tool:
        """The tool of a function marked with :func:`tool`, built once per function (and
        name). Why once: its pydantic model and JSON schema never change, and building
        them again for every run's registry cost ~35 ms a run with the browser's tools."""
        built = _BUILT.get(func)
        if built is None:
            built = _BUILT.setdefault(func, {})
        if name not in built:
            built[name] = cls._build(func, name)  # a race builds it twice: the same tool
        return built[name]

    @classmethod
    def _build(cls, func: ToolFunc, name: str | None) -> Tool:
        options = getattr(func, "__workhearth_tool__", None)
        if options is None:
            raise TypeError(f"{func.__name__} is not marked with @tool")
        hints = typing.get_type_hints(func, include_extras=True)
        params = list(inspect.signature(func).parameters.values())[1:]  # after ctx
        fields: dict[str, Any] = {
            p.name: (hints.get(p.name, Any), ... if p.default is p.empty else p.default)
            for p in params
        }
        model = create_model(
            f"{func.__name__}_input", __config__=ConfigDict(extra="forbid"), **fields
        )
        description = inspect.getdoc(func) or func.__name__
        return cls(name or func.__name__, func, description, model, options)


# Why weak: an MCP server's tools are functions made per connection; they must not pile up.
_BUILT: weakref.WeakKeyDictionary[ToolFunc, dict[str | None, Tool]] = weakref.WeakKeyDictionary()


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema without pydantic's generated titles."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        if isinstance(prop, dict):
            prop.pop("title", None)
    return schema


def _validation_message(name: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:8]:
        where = ".".join(str(x) for x in err.get("loc", ())) or "input"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return f"invalid arguments for {name}: " + "; ".join(parts)


def _error_text(name: str, exc: BaseException) -> str:
    if isinstance(exc, HearthError):
        return str(exc)
    if isinstance(exc, ValidationError):
        return _validation_message(name, exc)
    if isinstance(exc, FileNotFoundError):
        return f"no such file: {exc.filename}"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{where}"
    return f"internal error in {name}: {type(exc).__name__}: {exc}"


def _default_preview(name: str, args: BaseModel) -> str:
    shown = ", ".join(f"{k}={v!r}"[:200] for k, v in args.model_dump().items())
    return f"{name}({shown})"


class ToolRegistry:
    def __init__(self, funcs: Iterable[ToolFunc] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for func in funcs:
            self.add(func)

    def add(self, func: ToolFunc | Tool, name: str | None = None) -> Tool:
        t = func if isinstance(func, Tool) else Tool.from_function(func, name)
        if t.name in self._tools:
            raise ValueError(f"a tool named {t.name!r} is already registered")
        self._tools[t.name] = t
        return t

    def names(self) -> list[str]:
        return list(self._tools)

    def only(self, names: Iterable[str]) -> ToolRegistry:
        """A registry of just the tools named (a team role's ``tools``; unknown names skipped)."""
        kept = ToolRegistry()
        wanted = set(names)
        kept._tools = {name: t for name, t in self._tools.items() if name in wanted}
        return kept

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def specs(self, mode: str | None = None, ctx: ToolContext | None = None) -> list[ToolSpec]:
        """Specs for the model; in ``ask`` mode only the read-only tools are offered.

        With ``ctx``, a tool whose ``offered`` check says no is left out too.
        """
        return [
            t.spec
            for t in self._tools.values()
            if (mode != "ask" or t.read_only)
            and (ctx is None or t.offered(ctx))
            and (ctx is None or ctx.skills is None or ctx.skills.allows(t.name))
        ]

    def read_only(self, name: str) -> bool:
        """True when calls to ``name`` change nothing and may run side by side."""
        t = self._tools.get(name)
        return t is not None and t.read_only and not t.options.alone

    def bind(self, ctx: ToolContext) -> BoundTools:
        return BoundTools(self, ctx)

    def call(self, name: str, arguments: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        """Run one call end to end (see module doc); always returns a result."""
        started = time.monotonic()
        decision: Decision = "allowed-by-mode"
        t = self._tools.get(name)
        if t is None or not t.offered(ctx):
            result = ToolResult(f"unknown tool {name!r}; available: {self._given(ctx)}", True)
            decision = "denied-by-policy"
        elif ctx.skills is not None and not ctx.skills.allows(name, arguments):
            # Why: the active skill's allowed-tools narrow what may run (see tools/skills.py).
            result = ToolResult(ctx.skills.refusal(name, arguments), True)
            decision = "denied-by-policy"
        elif ctx.mode == "ask" and not t.read_only:
            # Why: ask mode never gave the model this tool; name the ones it was given.
            result = ToolResult(
                f"Refused by policy: {name} changes things, and ask mode only reads "
                f"(the user can switch to agent mode); available: {self._given(ctx)}",
                True,
            )
            decision = "denied-by-policy"
        elif not isinstance(arguments, Mapping):
            result = ToolResult(f"the input of {name} must be a JSON object", True)
            decision = "denied-by-policy"
        else:
            try:
                args = t.model.model_validate(dict(arguments))
            except ValidationError as exc:
                result = ToolResult(_validation_message(name, exc), True)
                decision = "denied-by-policy"
            else:
                decision, result = self._run(t, args, ctx)
        reach = _reach(t, arguments, ctx, decision)
        if reach:
            result = dataclasses.replace(
                result,
                content=f"{result.content}\n[workhearth: a rewind cannot undo what this "
                f"command may have done beyond the authorized folders: {'; '.join(reach)}]",
            )
        if ctx.masked and isinstance(arguments, Mapping):
            arguments = {k: MASK if k in ctx.masked and v else v for k, v in arguments.items()}
        problem = self._audit(
            ctx, name, arguments, decision, result, time.monotonic() - started, reach
        )
        if problem:
            result = dataclasses.replace(
                result, content=f"{result.content}\n[workhearth: {problem}]"
            )
        return result

    def _given(self, ctx: ToolContext) -> str:
        """The names of the tools the model was given: exactly what :meth:`specs` offers."""
        return ", ".join(spec.name for spec in self.specs(ctx.mode, ctx))

    def _run(self, t: Tool, args: BaseModel, ctx: ToolContext) -> tuple[Decision, ToolResult]:
        opts = t.options
        assert ctx.gate is not None
        try:
            summary = opts.preview(ctx, args) if opts.preview else _default_preview(t.name, args)
            verdict = ctx.gate.decide(
                t.name,
                read_only=opts.read_only,
                summary=summary,
                arguments=args.model_dump(),
                command=getattr(args, opts.command_arg) if opts.command_arg else None,
                call_id=ctx.call_id,
                allow_always=opts.allow_always,
                preapproved=opts.preapproved,
            )
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            return "denied-by-policy", ToolResult(_error_text(t.name, exc), True)
        if verdict.decision == "denied-by-user":
            return verdict.decision, ToolResult(
                f"The user denied this {t.name} call. Do not retry it unchanged; "
                "ask the user how to proceed.",
                True,
            )
        if verdict.decision == "not-asked":
            return verdict.decision, ToolResult(
                f"Not run: this {t.name} call needs the user's approval and nobody "
                "was there to give it.",
                True,
            )
        if not verdict.allowed:
            return verdict.decision, ToolResult(f"Refused by policy: {verdict.reason}", True)
        if opts.command_arg:
            # Why (issue 18): a command may be cut off by a killed hearth; the audit says
            # it started, so a crash leaves "started, outcome unknown" behind.
            given = args.model_dump(exclude_unset=True)
            self._audit(ctx, t.name, given, verdict.decision, None, 0.0)
        detector = None if opts.read_only else ctx.changes
        if detector is None:
            result = self._invoke(t, args, ctx)
        else:
            # Why (issue 18): what the call changed on disk, whichever way it did it.
            result, changes = detector.around(
                lambda: self._invoke(t, args, ctx),
                tool=t.name,
                call_id=ctx.call_id,
                session=ctx.session,
            )
            result = dataclasses.replace(result, changes=tuple(changes))
            if ctx.office is not None and changes:
                result = ctx.office.after_call(ctx, result, changes)
        return ctx.decided or verdict.decision, result

    @staticmethod
    def _invoke(t: Tool, args: BaseModel, ctx: ToolContext) -> ToolResult:
        """Run an allowed call; a failure is an error result."""
        try:
            if not t.options.read_only:
                # Why (DESIGN §3 Durability): the call is on disk before its effect exists.
                ctx.session.before_side_effect()
            out = t.func(ctx, **{k: getattr(args, k) for k in type(args).model_fields})
            result = out if isinstance(out, ToolResult) else ToolResult(str(out))
            return dataclasses.replace(
                result,
                content=bound(ctx, result.content, t.options.output_limit),
                shown=result.shown or ctx.shown,
            )
        except KeyboardInterrupt:
            raise
        except Exception as exc:
            return ToolResult(_error_text(t.name, exc), True)

    @staticmethod
    def _audit(
        ctx: ToolContext,
        name: str,
        arguments: Any,
        decision: Decision,
        result: ToolResult | None,
        duration: float,
        reach: list[str] | None = None,
    ) -> str | None:
        """Write the audit line (``result`` None: the call starts); a description of the
        failure when it could not be written."""
        if ctx.audit is None:
            return None
        outcome: Outcome = "started"
        summary = STARTED_SUMMARY
        if result is not None:
            outcome = "error" if result.is_error else "ok"
            # Why: the result tells the model what to do next; the audit is read by people.
            summary = PEOPLE_SUMMARY.get(decision) or summarize(result.content)
        try:
            ctx.audit.record(
                session=ctx.session.id,
                mode=ctx.mode,
                tool=name,
                decision=decision,
                arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                duration=duration,
                outcome=outcome,
                summary=summary,
                call_id=ctx.call_id or None,
                reach=reach,
            )
        except OSError as exc:
            # Why: a full disk must not turn a finished call into a crash of the loop;
            # the call is still in the transcript, and the result says the audit missed it.
            return f"the audit log could not be written ({exc.strerror or exc})"
        return None


def _reach(
    t: Tool | None, arguments: Mapping[str, Any], ctx: ToolContext, decision: Decision
) -> list[str] | None:
    """What a command that ran may have done beyond a rewind (see agent/reach.py)."""
    if t is None or not t.options.command_arg or not isinstance(arguments, Mapping):
        return None
    if not decision.startswith("allowed"):
        return None
    command = arguments.get(t.options.command_arg)
    if not isinstance(command, str):
        return None
    # Why both spellings: the workspace may be reached through a link (/home -> /data/home).
    roots = [root.path for root in ctx.fs.roots] + [root.real for root in ctx.fs.roots]
    return outside_reach(command, roots, sandboxed=ctx.sandbox is not None) or None


class BoundTools:
    """A registry bound to one session's context: what the agent loop calls.

    ``specs()``, ``read_only(name)`` and ``call(name, arguments, call_id)``.
    """

    def __init__(self, registry: ToolRegistry, ctx: ToolContext) -> None:
        self.registry = registry
        self.ctx = ctx

    def specs(self) -> Sequence[ToolSpec]:
        return self.registry.specs(self.ctx.mode, self.ctx)

    def read_only(self, name: str) -> bool:
        return self.registry.read_only(name)

    def call(self, name: str, arguments: Mapping[str, Any], call_id: str) -> ToolResult:
        return self.registry.call(name, arguments, self.ctx.for_call(call_id))
