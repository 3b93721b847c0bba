"""``hearth resume``: rebuild a session's conversation (the agent loop continues it)."""

from __future__ import annotations

from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import print_json
from workhearth.errors import ConfigError, UsageError


def resume(
    session_id: Annotated[str | None, typer.Argument(metavar="[ID]")] = None,
    last: Annotated[
        bool, typer.Option("--last", help="The newest session of this folder.")
    ] = False,
    print_messages: Annotated[
        bool, typer.Option("--print-messages", help="Print the rebuilt conversation as JSON.")
    ] = False,
    format: Annotated[str, typer.Option("--format", help="openai | anthropic")] = "anthropic",
) -> None:
    """Resume a session where it stopped."""
    wh = hearth()
    if format not in ("openai", "anthropic"):
        raise UsageError(f"unknown format {format!r}; use openai or anthropic")
    if session_id and last:
        raise UsageError("give a session ID or --last, not both")
    if not session_id and not last:
        raise UsageError("which session? give its ID or --last")
    session = wh.sessions.last() if last else wh.sessions.open(session_id or "")
    resumed = session.resume(format)  # type: ignore[arg-type]
    if print_messages:
        print_json({"system": resumed.system, "messages": resumed.messages})
        return
    raise ConfigError(
        "no model configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY (or HEARTH_MODEL) "
        "to continue; use --print-messages to see the rebuilt conversation"
    )
