"""``hearth audit``: every tool call, its decision and outcome."""

from __future__ import annotations

from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import Column, JsonOpt, fit_table, print_json, terminal_width
from workhearth.cli.sessions_view import short_time

_COLUMNS = [
    Column("time", cut="never"),
    Column("mode", cut="never"),
    Column("tool"),
    Column("decision"),
    Column("outcome", cut="never"),
    Column("summary"),
]
# Why: the summary is one line of output and gives way first. The session id is
# what people copy into `hearth sessions show`, so it is never cut: it heads each
# run of its calls on a line of its own instead of taking a third of every row.
_SHRINK = [(5, 24), (2, 12), (3, 12), (5, 10)]
_DROP = [5, 1]
_INDENT = "  "


def audit(
    session: Annotated[str | None, typer.Option(help="Only this session's calls.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="The newest N records.")] = 50,
    json: JsonOpt = False,
) -> None:
    """Show the audit log (arguments are stored with secrets redacted)."""
    from workhearth.agent.audit import AuditLog

    wh = hearth()
    log = AuditLog(wh.paths.audit_log)
    records = log.read(session=session)
    if session is not None and not records:
        # Why: a typo must not read as "this session made no tool calls"; an id
        # prefix works as everywhere else, and a session deleted since still shows.
        session = wh.sessions.open(session).id  # NotFoundError: "no session 'x'"
        records = log.read(session=session)
    rows = [r.as_dict() for r in records[-limit:]]
    if json:
        print_json(rows)
        return
    if not rows:
        print(
            f"no tool calls recorded for session {session}" if session else "no tool calls recorded"
        )
        return
    width = terminal_width()
    lines = fit_table(
        _COLUMNS,
        [
            [short_time(r["time"]), r["mode"], r["tool"], r["decision"], r["outcome"], r["summary"]]
            for r in rows
        ],
        shrink=_SHRINK,
        drop=_DROP,
        width=None if width is None else width - len(_INDENT),
    )
    out = [_INDENT + lines[0]]
    current: object = object()
    for row, line in zip(rows, lines[1:], strict=True):
        if row["session"] != current:
            current = row["session"]
            out.append(f"session {current}" if current else "no session")
        out.append(_INDENT + line)
    print("\n".join(out))
