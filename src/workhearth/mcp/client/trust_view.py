"""What a folder's ``.mcp.json`` would start, shown before the user trusts it (DESIGN §5).

One view for the terminal question (``cli/trust.py``) and the page (``/v1/trust``): each
server's command line and arguments *as written* (``${VAR}`` not filled in: an untrusted
file never sees the user's variables), the variables it would inherit, and what its own
``env`` / ``headers`` would add.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from workhearth.errors import HearthError
from workhearth.mcp.client.servers import read_mcp_json, server_environment
from workhearth.trust import MCP_JSON

_SHOWN_VALUE = 60


def _cut(value: str) -> str:
    return value if len(value) <= _SHOWN_VALUE else value[: _SHOWN_VALUE - 1] + "…"


@dataclass(frozen=True)
class ServerView:
    name: str
    transport: str
    command_line: str  # the program and its arguments, or the URL
    receives: list[str] = field(default_factory=list)  # inherited variable names
    adds: list[str] = field(default_factory=list)  # NAME=value / header lines, as written

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def folder_servers(folder: Path, env: Mapping[str, str]) -> tuple[list[ServerView], str | None]:
    """The servers of ``folder``'s .mcp.json as written, and why it cannot be read (or None)."""
    try:
        specs = read_mcp_json(folder / MCP_JSON, None, lambda _message: None)
    except HearthError as exc:
        return [], str(exc)
    inherited = sorted(server_environment(env))
    views = []
    for name, spec in specs.items():
        adds = [f"{k}={_cut(v)}" for k, v in sorted(spec.env.items())]
        adds += [f"header {k}: {_cut(v)}" for k, v in sorted(spec.headers.items())]
        views.append(
            ServerView(
                name=name,
                transport=spec.transport,
                command_line=spec.url or " ".join([spec.command or "", *spec.args]),
                receives=inherited if spec.transport == "stdio" else [],
                adds=adds,
            )
        )
    return views, None


__all__ = ["ServerView", "folder_servers"]
