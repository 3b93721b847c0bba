"""MCP tools in the agent: ``mcp__SERVER__TOOL``, or two meta-tools when there are too many.

Each remote tool becomes a registry :class:`Tool`, so it goes through the same
path as a built-in one (``ToolRegistry.call``: the mode's gate, approval, the
durability point before a side effect, the output bound, one audit line).

A server's annotations are hints, never permissions (DESIGN §5 Trust): a server that
says ``readOnlyHint`` may still write. Only the user's ``config.toml`` decides:
``[mcp.servers.NAME] read_only_tools = [...]`` are offered in ask mode and run
unasked; ``trust = true`` lets every tool of the server run unasked in agent mode
and offers the server in quest mode (its tools run outside the sandbox, so quest
offers no other server). Every other tool asks in agent mode like a write, and is
neither offered nor run in ask mode.

Past ``[mcp] max_tools`` tools, or ``[mcp] tool_tokens`` tokens of tool specs, the
model gets only ``search_capabilities`` and ``execute_capability``; the second
runs the named tool through a registry of the MCP tools, with the same checks and
an audit line under the tool's own name. ``search_capabilities`` ranks the tools
with the memory search's own engine (:class:`~workhearth.memory.index.MemoryIndex`
over a temporary Markdown file, one section per tool), Chinese included.
"""

from __future__ import annotations

import atexit
import bisect
import functools
import hashlib
import json
import re
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workhearth.agent.tools import Tool, ToolContext, ToolRegistry, ToolResult, tool
from workhearth.agent.tools.registry import ToolOptions
from workhearth.app import Workhearth
from workhearth.config import Config
from workhearth.errors import ConfigError
from workhearth.mcp.client.servers import (
    MCPServers,
    RemoteTool,
    Warn,
    configured_servers,
    servers_of,
)
from workhearth.memory.index import MemoryIndex
from workhearth.models.streaming import ToolSpec
from workhearth.models.tokens import count_tokens
from workhearth.procgroups import ProcessGroups
from workhearth.tasks.service import ToolsFor
from workhearth.trust import FolderTrust

PREFIX = "mcp__"
# Why: OpenAI and Anthropic both accept tool names matching ^[a-zA-Z0-9_-]{1,64}$.
NAME_MAX = 64
_BAD = re.compile(r"[^A-Za-z0-9_-]")
SEARCH_LIMIT = 8
CATALOG_FILE = "TOOLS.md"


def exposed_name(server: str, name: str, taken: set[str] | None = None) -> str:
    """``mcp__SERVER__TOOL`` within the providers' name rules, unique among ``taken``."""
    full = f"{PREFIX}{_BAD.sub('_', server)}__{_BAD.sub('_', name)}"
    if len(full) <= NAME_MAX and (taken is None or full not in taken):
        return full
    # Why: a cut or clashing name keeps a readable head and a hash of the original.
    digest = hashlib.sha256(f"{server}\0{name}".encode()).hexdigest()[:8]
    return f"{full[: NAME_MAX - 9]}_{digest}"


class _Arguments(BaseModel):
    """The whole JSON object the model sent; the server validates it against its schema."""

    model_config = ConfigDict(extra="forbid")
    arguments: dict[str, Any]

    @model_validator(mode="before")
    @classmethod
    def _wrap(cls, data: Any) -> Any:
        return {"arguments": data}


@dataclass(frozen=True)
class McpTool(Tool):
    """A remote tool as a registry tool; its spec is the server's own input schema."""

    remote: RemoteTool | None = field(default=None, compare=False)

    @functools.cached_property
    def spec(self) -> ToolSpec:
        assert self.remote is not None
        return ToolSpec(self.name, self.description, self.remote.input_schema)


def _preview(name: str) -> Callable[[ToolContext, BaseModel], str]:
    def preview(_ctx: ToolContext, args: BaseModel) -> str:
        shown = json.dumps(getattr(args, "arguments", {}), ensure_ascii=False)
        return f"{name} {shown[:400]}"

    return preview


def _quest_offers(trusted: bool) -> Callable[[ToolContext], bool]:
    # Why: quest runs unattended and MCP servers run outside its sandbox, so only a
    # server the user's config trusts is offered there.
    return lambda ctx: trusted or ctx.mode != "quest"


def make_tool(servers: MCPServers, remote: RemoteTool, name: str) -> McpTool:
    spec = servers.specs.get(remote.server)
    trusted = spec is not None and spec.trust
    read_only = spec is not None and remote.name in spec.read_only_tools

    def run(_ctx: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        outcome = servers.call(remote.server, remote.name, arguments)
        return ToolResult(outcome.text or "(no output)", outcome.is_error)

    where = f"[MCP server {remote.server}, tool {remote.name}]"
    return McpTool(
        name=name,
        func=run,
        description=f"{remote.description}\n{where}".strip(),
        model=_Arguments,
        options=ToolOptions(
            read_only=read_only,
            preview=_preview(name),
            offered=_quest_offers(trusted),
            preapproved=trusted,
        ),
        remote=remote,
    )


def build_tools(servers: MCPServers, lists: Mapping[str, Sequence[RemoteTool]]) -> list[McpTool]:
    """Every remote tool under its exposed name (``names_back`` maps them home)."""
    taken: set[str] = set()
    tools = []
    for server in sorted(lists):
        for remote in lists[server]:
            name = exposed_name(server, remote.name, taken)
            taken.add(name)
            tools.append(make_tool(servers, remote, name))
    return tools


def names_back(tools: Sequence[McpTool]) -> dict[str, tuple[str, str]]:
    """Exposed name → (server, tool name on that server)."""
    return {t.name: (t.remote.server, t.remote.name) for t in tools if t.remote is not None}


def too_many(tools: Sequence[McpTool], max_tools: int, tool_tokens: int) -> bool:
    if len(tools) > max_tools:
        return True
    specs = [
        {"name": t.name, "description": t.description, "parameters": t.spec.parameters}
        for t in tools
    ]
    blob = json.dumps(specs, ensure_ascii=False, default=str)
    return count_tokens(blob) > tool_tokens


# ------------------------------------------------------------------ capability search


def _words(name: str) -> str:
    """``get_weather`` / ``getWeather`` → ``get weather``: the word search sees the words."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return re.sub(r"[_\-./:]+", " ", spaced).strip()


class Catalog:
    """The MCP tools ranked by the memory search's engine, over a temporary Markdown file."""

    def __init__(self, tools: Sequence[McpTool]) -> None:
        self.tools = {t.name: t for t in tools}
        self._lock = threading.Lock()
        self._dir = tempfile.TemporaryDirectory(prefix="hearth-mcp-catalog-")
        folder = Path(self._dir.name)
        lines: list[str] = []
        self._starts: list[int] = []
        self._names: list[str] = []
        for t in tools:
            assert t.remote is not None
            self._starts.append(len(lines) + 1)
            self._names.append(t.name)
            desc = " ".join(t.remote.description.split())
            lines += [
                f"## {t.name}",
                f"{_words(t.remote.name)} ({t.remote.server}) {_words(t.remote.server)}",
                desc,
                "",
            ]
        (folder / CATALOG_FILE).write_text("\n".join(lines), encoding="utf-8")
        self._index = MemoryIndex(folder)
        self._index.update()
        self._chunks = {row[0]: row[2] for row in self._index.chunks()}

    def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[McpTool]:
        """The best tools for ``query``, best first (at most ``limit``)."""
        with self._lock:
            scores = self._index.searcher().candidates(query, limit)
        best: dict[str, float] = {}
        for cid, score in scores.items():
            line = self._chunks.get(cid)
            if line is None:
                continue
            at = bisect.bisect_right(self._starts, line) - 1
            if at >= 0:
                name = self._names[at]
                best[name] = max(best.get(name, 0.0), score)
        ranked = sorted(best, key=lambda n: (-best[n], n))[:limit]
        return [self.tools[n] for n in ranked]

    def close(self) -> None:
        self._index.close()
        self._dir.cleanup()


def _describe(t: McpTool) -> str:
    assert t.remote is not None
    kind = (
        "read-only"
        if t.read_only
        else "runs unasked (trusted)"
        if t.options.preapproved
        else "may change things (needs approval)"
    )
    schema = json.dumps(t.remote.input_schema, ensure_ascii=False, separators=(",", ":"))
    return f"- {t.name} — {' '.join(t.remote.description.split())[:300]} [{kind}]\n  arguments: {schema[:1500]}"


def meta_tools(tools: Sequence[McpTool], servers: Sequence[str]) -> list[Tool]:
    """``search_capabilities`` and ``execute_capability`` over ``tools``."""
    catalog = Catalog(tools)
    inner = ToolRegistry()
    for t in tools:
        inner.add(t)
    where = ", ".join(servers)

    @tool(read_only=True)
    def search_capabilities(
        ctx: ToolContext,
        query: Annotated[
            str,
            Field(
                min_length=1, max_length=500, description="Words (any language) for what you need."
            ),
        ],
        limit: Annotated[int, Field(ge=1, le=25)] = SEARCH_LIMIT,
    ) -> str:
        found = [
            t
            for t in catalog.search(query, limit)
            if (ctx.mode != "ask" or t.read_only) and t.offered(ctx)
        ]
        if not found:
            return f"No capability matches {query!r}; try other words."
        return "\n".join(_describe(t) for t in found)

    @tool(read_only=True, alone=True)
    def execute_capability(
        ctx: ToolContext,
        name: Annotated[
            str,
            Field(
                min_length=1, description="The capability's name, as search_capabilities gave it."
            ),
        ],
        arguments: Annotated[
            dict[str, Any], Field(description="Its arguments, as its schema says.")
        ] = {},  # noqa: B006
    ) -> ToolResult:
        if inner.get(name) is None:
            return ToolResult(
                f"no capability named {name!r}; find one with search_capabilities", True
            )
        # Why: the inner registry applies the tool's own read-only flag to the mode's
        # gate and writes the audit line under the tool's own name.
        return inner.call(name, arguments, ctx)

    search_capabilities.__doc__ = (
        f"Find tools among the {len(tools)} tools of the connected MCP servers ({where}) "
        "by words, in any language. Returns names, descriptions and argument schemas; "
        "then call one with execute_capability."
    )
    execute_capability.__doc__ = (
        "Run one tool found with search_capabilities: its name and a JSON object of "
        "its arguments. Tools that change things need the same approval as any write."
    )
    return [Tool.from_function(search_capabilities), Tool.from_function(execute_capability)]


# ------------------------------------------------------------------ for a run


@dataclass
class AgentTools:
    """What a run adds to its registry, and how the model's names map back."""

    tools: list[Tool]
    names: dict[str, tuple[str, str]]
    meta: bool


def agent_tools(
    servers: MCPServers,
    *,
    budget: float,
    max_tools: int,
    tool_tokens: int,
    warn: Warn | None = None,
) -> AgentTools:
    """The tools of every server that answers within ``budget`` seconds (or is cached)."""
    lists = servers.tool_lists(budget, warn)
    tools = build_tools(servers, lists)
    names = names_back(tools)
    if not tools:
        return AgentTools([], names, False)
    if too_many(tools, max_tools, tool_tokens):
        return AgentTools(meta_tools(tools, sorted(lists)), names, True)
    return AgentTools(list(tools), names, False)


def run_tools(
    config: Config,
    workspace: Path,
    env: Mapping[str, str],
    warn: Warn,
    trust: FolderTrust | None = None,
) -> Callable[[], list[Tool]] | None:
    """For ``RunOptions.extra_tools``: the MCP tools of this workspace, built on first use.

    None when no server is configured (a run then never loads the SDK). The servers
    live as long as the process (an interactive session's turns share them) and
    are stopped at exit. A broken ``.mcp.json`` warns and leaves MCP out of the run;
    so does one the user has not trusted (``trust``; the caller says so).
    """
    try:
        specs = configured_servers(config, workspace, env, warn, trust)
    except ConfigError as exc:
        warn(f"{exc}; MCP servers are left out of this run")
        return None
    # Why every run: a crashed run's servers are ended even if this folder now has none.
    ProcessGroups(config.home / "cache" / "mcp" / "running").end_orphans()
    if not specs:
        return None
    built: list[list[Tool]] = []

    def factory() -> list[Tool]:
        if not built:
            servers = servers_of(config, workspace, env, specs)
            atexit.register(servers.close)
            found = agent_tools(
                servers,
                budget=config.mcp.start_budget,
                max_tools=config.mcp.max_tools,
                tool_tokens=config.mcp.tool_tokens,
                warn=warn,
            )
            built.append(found.tools)
        return built[0]

    return factory


def tools_for(env: Mapping[str, str]) -> ToolsFor:
    """How every starter (terminal, page) builds a task's MCP tools: the servers of its
    workspace, trusted the same way (a folder's own ``.mcp.json`` once the user trusts it)."""

    def build(wh: Workhearth, warn: Warn) -> Callable[[], list[Tool]] | None:
        return run_tools(wh.config, wh.workspace, env, warn, wh.trust)

    return build
