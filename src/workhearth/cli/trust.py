"""The trust question a run asks before it loads what the folder brings (DESIGN §5 Trust).

A folder's ``.mcp.json`` starts programs and its skill folders instruct the model, so
neither loads until the user trusts the folder as it is now. A run on a terminal asks
once, showing each server's command line and the variables it would receive; without a
terminal it says in one line what it left out and how to trust the folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from workhearth.agent.approval import is_terminal
from workhearth.app import Workhearth
from workhearth.trust import MCP_JSON, PROJECT_ITEMS, FolderTrust, TrustStore

_settled: set[Path] = set()  # folders already asked about in this process


def _servers_lines(folder: Path, env: Mapping[str, str]) -> list[str]:
    """Each server of ``folder``'s .mcp.json: its command line and what it would receive."""
    from workhearth.mcp.client.trust_view import folder_servers

    views, problem = folder_servers(folder, env)
    if problem:
        return [f"    (cannot be read: {problem})"]
    lines = []
    for view in views:
        lines.append(f"    {view.name}: {view.command_line}")
        if view.transport == "stdio":
            lines.append(f"      receives {', '.join(view.receives) or 'no variables'}")
        if view.adds:
            lines.append(f"      and, from .mcp.json: {'; '.join(view.adds)}")
    return lines or ["    (no servers)"]


def _folder_lines(folder: Path) -> str:
    try:
        names = sorted(e.name for e in os.scandir(folder) if not e.name.startswith("."))
    except OSError:
        return ""
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"    {shown}" if shown else "    (empty)"


def describe(state: FolderTrust, items: list[str], env: Mapping[str, str]) -> list[str]:
    """What ``items`` of ``state.folder`` would load, for the question and the trust command."""
    lines = []
    for item in items:
        again = " (changed since you trusted it)" if item in state.changed else ""
        if item == MCP_JSON:
            lines.append(f"  {item}{again}: MCP servers — programs hearth would start:")
            lines += _servers_lines(state.folder, env)
        else:
            kind = "skills" if item.endswith("skills") else "agent roles"
            lines.append(f"  {item}{again}: {kind} the model would be given:")
            lines.append(_folder_lines(state.folder / item))
    return lines


def skipped_line(state: FolderTrust) -> str:
    """The one line said when nobody can be asked."""
    items = ", ".join(state.pending)
    return (
        f"hearth: not loading {items} from {state.folder}: this folder is not trusted"
        f"{' as it is now' if state.changed else ''}; "
        f"to load them, run `hearth workspace trust {state.folder}`"
    )


def settle(wh: Workhearth, stdin: TextIO | None, out: TextIO, env: Mapping[str, str]) -> None:
    """Ask about what the workspace brings and the user has not trusted (once per process)."""
    state = wh.trust
    pending = state.pending
    if not pending or state.folder in _settled:
        return
    _settled.add(state.folder)
    if not is_terminal(stdin):
        print(skipped_line(state), file=out)
        return
    assert stdin is not None
    out.write(f"\n{state.folder} brings what runs code or instructs the agent:\n")
    out.write("\n".join(describe(state, pending, env)) + "\n")
    out.write("Only trust folders whose authors you trust.\n")
    out.write(f"Trust this folder and load {'it' if len(pending) == 1 else 'them'}? [y]es, [n]o: ")
    out.flush()
    answer = stdin.readline().strip().lower()
    if answer in ("y", "yes"):
        TrustStore(wh.paths).trust(state.folder, seen=state.present)
        wh.refresh_trust()
        out.write(f"trusted {state.folder} (undo with `hearth workspace untrust {state.folder}`)\n")
    else:
        out.write(f"not loaded; to trust it later, run `hearth workspace trust {state.folder}`\n")
    out.flush()


__all__ = ["PROJECT_ITEMS", "describe", "settle", "skipped_line"]
