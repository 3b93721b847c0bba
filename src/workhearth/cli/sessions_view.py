"""How ``hearth sessions list`` and ``import`` read to a person (``--json`` is elsewhere)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workhearth.cli.tables import Column, print_table, short_time

if TYPE_CHECKING:
    # Why: every command imports this module (via audit); the store costs ~25 ms.
    from workhearth.sessions.store import FilesChanged, SessionInfo
    from workhearth.sessions.transfer import ImportResult

SIDECHAIN_MARK = "└ "
# Why: the title is what tells sessions apart, so it keeps the width; the id shortens to a
# prefix `hearth sessions show` still takes (date, time and four of its random digits),
# then the workspace (its tail) and the message count give way.
_COLUMNS = [
    Column("id", cut="never", short=20),
    Column("updated", cut="never"),
    Column("msgs", cut="never", align="right", drop=2),
    Column("title", main=True),
    Column("workspace", cut="start", cap=16, drop=1),
]


def home_short(path: str) -> str:
    """``/home/me/x`` as ``~/x``: the same folder, in fewer columns."""
    home = str(Path.home())
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


def in_tree_order(infos: list[SessionInfo]) -> list[tuple[SessionInfo, int]]:
    """Newest first, each sidechain right under its parent (with its depth) when listed."""
    listed = {i.session_id for i in infos}
    children: dict[str, list[SessionInfo]] = {}
    for info in infos:
        if info.parent in listed and info.parent != info.session_id:
            children.setdefault(info.parent, []).append(info)
    out: list[tuple[SessionInfo, int]] = []
    seen: set[str] = set()

    def place(info: SessionInfo, depth: int) -> None:
        if info.session_id in seen:
            return
        seen.add(info.session_id)
        out.append((info, depth))
        for child in reversed(children.get(info.session_id, [])):  # oldest run first
            place(child, depth + 1)

    for info in infos:
        if info.parent not in listed:
            place(info, 0)
    for info in infos:  # a cycle of parents: still list every session once
        place(info, 0)
    return out


def _title(info: SessionInfo, depth: int) -> str:
    title = info.title or ""
    if depth:
        return "  " * (depth - 1) + SIDECHAIN_MARK + (title or "(subagent)")
    if info.parent:
        return f"(subagent of {info.parent}) {title}".rstrip()
    return title


def print_sessions(infos: list[SessionInfo]) -> None:
    rows = [
        [
            info.session_id,
            short_time(info.updated),
            "" if info.messages is None else info.messages,
            _title(info, depth),
            home_short(info.workspace),
        ]
        for info, depth in in_tree_order(infos)
    ]
    print_table(_COLUMNS, rows)


def _skipped_lines(result: ImportResult) -> list[str]:
    lines = []
    for item in result.skipped:
        source = f" of {item['file']}" if item.get("file") else ""
        where = f"line {item['line']}{source} skipped: " if item.get("line") else ""
        lines.append(f"session {result.session_id}: {where}{item['reason']}")
    for side in result.sidechains:
        lines.extend(_skipped_lines(side))
    return lines


def skipped_total(result: ImportResult) -> int:
    return len(result.skipped) + sum(skipped_total(s) for s in result.sidechains)


def print_import(result: ImportResult) -> None:
    """One line saying what was imported; a warning on stderr for each thing left out."""
    for line in _skipped_lines(result):
        print(f"hearth: warning: {line}", file=sys.stderr)
    sides = len(result.sidechains)
    extra = f" (+{sides} linked sidechain sessions)" if sides else ""
    count = "?" if result.messages is None else result.messages
    print(f"imported {count} messages as session {result.session_id}{extra}")
    skipped = skipped_total(result)
    if skipped:
        print(
            f"hearth: warning: the import is incomplete: {skipped} part(s) of the source "
            "could not be read and were skipped (listed above)",
            file=sys.stderr,
        )


def _change_line(change: dict[str, Any]) -> str:
    path, entries = change["path"], change.get("entries")
    if entries is not None:
        path += f"/ (folder, {entries} {'entry' if entries == 1 else 'entries'} inside)"
    return f"  {change['kind']:<8}  {path}  ({change['tool']} {change['call_id']})"


def print_changes(files: FilesChanged) -> None:
    """The files a session's tool calls changed on disk, one line each (nothing if none)."""
    if not (files.changes or files.omitted or files.untracked):
        return
    print(f"\nfiles changed ({len(files.changes) + files.omitted}):")
    for change in files.changes:
        print(_change_line(change))
    if files.omitted:
        print(f"  … and {files.omitted} more (not recorded one by one)")
    if files.untracked:
        print(f"  not tracked from some point on: {files.untracked}")
