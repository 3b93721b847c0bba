"""Agent tools (DESIGN §5 Tools): typed functions, a registry, and the context they share.

``default_registry()`` holds the built-in tools under their contract names;
``registry.bind(ctx)`` gives the agent loop its tool box (``specs``,
``read_only``, ``call``). ``task`` (the subagent) is added by the runner, which
gives it a subagent to run, and so is ``activate_skill``, which needs the
session's skills (``ToolContext.skills``).
"""

from __future__ import annotations

from workhearth.agent.tools.context import (
    OUTPUT_LIMIT,
    Subagent,
    ToolContext,
    ToolError,
    ToolResult,
)
from workhearth.agent.tools.files import delete, edit_file, list_dir, read_file, write_file
from workhearth.agent.tools.memory import memory_save, memory_search
from workhearth.agent.tools.registry import BoundTools, Tool, ToolRegistry, tool
from workhearth.agent.tools.search import glob, grep
from workhearth.agent.tools.sessions import session_list, session_read
from workhearth.agent.tools.shell import quest_sandbox, shell
from workhearth.agent.tools.skills import SkillState, activate_skill
from workhearth.agent.tools.task import task

BUILTIN_TOOLS = (
    read_file,
    write_file,
    edit_file,
    list_dir,
    glob,
    grep,
    shell,
    delete,
    memory_search,
    memory_save,
    session_list,
    session_read,
)


def default_registry() -> ToolRegistry:
    """A fresh registry with every built-in tool; add skill, task or MCP tools to it."""
    return ToolRegistry(BUILTIN_TOOLS)


__all__ = [
    "BUILTIN_TOOLS",
    "OUTPUT_LIMIT",
    "BoundTools",
    "SkillState",
    "Subagent",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "activate_skill",
    "default_registry",
    "quest_sandbox",
    "task",
    "tool",
]
