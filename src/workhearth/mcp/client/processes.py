"""MCP server process groups: each server leads its own group, which never outlives hearth.

The mechanics (start times, boot ids, ``PR_SET_PDEATHSIG``, records on disk) live in
:mod:`workhearth.procgroups`, shared with shell commands. Every server is started from the
MCP client's loop thread, which lives until the servers are closed, so the death signal
(which follows the starting *thread*) never fires early. Each live server group has a
record in ``$HEARTH_HOME/cache/mcp/running/``.
"""

from __future__ import annotations

from workhearth.procgroups import (
    GroupRecord,
    ProcessGroups,
    die_with_hearth,
    group_alive,
    signal_group,
    start_time,
)

GRACE = 2.0  # seconds a server that answered has to exit once its stdin is closed
TERM_WAIT = 1.0  # seconds between SIGTERM and SIGKILL to its group


__all__ = [
    "GRACE",
    "TERM_WAIT",
    "GroupRecord",
    "ProcessGroups",
    "die_with_hearth",
    "group_alive",
    "signal_group",
    "start_time",
]
