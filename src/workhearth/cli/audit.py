"""``hearth audit``: every tool call, its decision and outcome."""

from __future__ import annotations

from typing import Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, fit_table, header, short_time, terminal_width

_COLUMNS = [
    Column("time", cut="never"),
    Column("mode", cut="never", drop=1),
    Column("tool", cap=14),
    Column("decision", cut="never"),
    Column("outcome", cut="never"),
    Column("summary", main=True),
]
# Why: the summary keeps the width and decisions stay whole words. The session id is
# what people copy into `hearth sessions show`, so it is never cut: it heads each
# run of its calls on a line of its own instead of taking a third of every row.
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
        width=None if width is None else width - len(_INDENT),
    )
    out = [_INDENT + header(lines[0])]
    current: object = object()
    for row, line in zip(rows, lines[1:], strict=True):
        if row["session"] != current:
            current = row["session"]
            out.append(f"session {current}" if current else "no session")
        out.append(_INDENT + line)
    print("\n".join(out))
