"""The ``task`` tool: hand a sub-task to a subagent with its own linked session (DESIGN §5).

The runner fills :attr:`ToolContext.subagent`; without it (inside a subagent, or
a bare context) the tool is not offered, so a subagent never starts another.
The subagent works in the same workspace and mode with the same tools minus
``task``, and asks the same approver. Its transcript is a session of its own
whose meta names the parent session and call; the tool returns its final text
and that session's id.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from workhearth.agent.tools.context import ToolContext, ToolError, ToolResult
from workhearth.agent.tools.registry import tool


def _has_subagent(ctx: ToolContext) -> bool:
    return ctx.subagent is not None


# Why alone: a subagent may write (each write gated on its own) and talks to the
# same terminal; two of them side by side would interleave both.
@tool(read_only=True, alone=True, offered=_has_subagent)
def task(
    ctx: ToolContext,
    prompt: Annotated[
        str,
        Field(
            min_length=1,
            description="The sub-task, self-contained: the subagent sees nothing of this "
            "conversation, so give it every path, name and constraint it needs",
        ),
    ],
) -> ToolResult:
    """Hand a self-contained sub-task (a search across many files, an investigation, a
    focused change) to a subagent. It works in its own session with the same tools and
    mode and returns a concise report, which keeps long explorations out of this
    conversation. Several independent sub-tasks: call it once for each."""
    if ctx.subagent is None:
        raise ToolError("subagents are not available here")
    if ctx.mode != "ask":
        # Why (DESIGN §3 Durability): the call is on disk before the subagent's effects.
        ctx.session.before_side_effect()
    result = ctx.subagent(prompt, ctx.call_id)
    if result.status == "interrupted":
        # Why: Ctrl-C stops the whole run, not only the subagent.
        raise KeyboardInterrupt
    where = (
        f"[subagent session {result.session_id}; "
        f"the user can read it with `hearth sessions show {result.session_id}`]"
    )
    text = result.text.strip()
    if result.ok:
        return ToolResult(f"{text or '(the subagent reported nothing)'}\n\n{where}")
    reason = result.error or result.status.replace("_", " ")
    last = f"\nIts last words:\n{text}" if text else ""
    return ToolResult(f"The subagent stopped before finishing ({reason}).{last}\n\n{where}", True)
