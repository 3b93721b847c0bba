"""``hearth audit``: every tool call, its decision and outcome."""

from __future__ import annotations

from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import print_json, table, when


def audit(
    session: Annotated[str | None, typer.Option(help="Only this session's calls.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="The newest N records.")] = 50,
    json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show the audit log (arguments are stored with secrets redacted)."""
    from workhearth.agent.audit import AuditLog

    records = AuditLog(hearth().paths.audit_log).read(session=session)[-limit:]
    rows = [r.as_dict() if hasattr(r, "as_dict") else vars(r) for r in records]
    if json:
        print_json(rows)
        return
    if not rows:
        print("no tool calls recorded")
        return
    table(
        ["time", "session", "mode", "tool", "decision", "outcome", "summary"],
        [
            [
                when(r["time"]),
                r["session"],
                r["mode"],
                r["tool"],
                r["decision"],
                r["outcome"],
                r["summary"],
            ]
            for r in rows
        ],
    )
