"""Tasks in the server: the task service (:mod:`workhearth.tasks`) running each task in a
background thread of the server process, so closing the browser never stops it, and
its events as server-sent events.

A page that subscribes late gets a replay, then the live stream. The transcript stays
the durable record: after a server restart the page reads a session's messages through
the sessions routes, and its status (with a failed run's reason) from the transcript.
Web tasks get exactly the tools a ``hearth run`` gets: the same MCP servers, trusted
the same way (a folder's own ``.mcp.json`` only once the user trusts it).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import orjson

from workhearth.config import Config
from workhearth.tasks.service import TaskConflict, TaskService, transcript_status
from workhearth.tasks.task import Task, TaskEvent, parse_event_id


def sse(event: TaskEvent, run: str) -> bytes:
    body = orjson.dumps(event.data).decode()
    return f"id: {run}-{event.seq}\nevent: {event.name}\ndata: {body}\n\n".encode()


def hello(task: Task, after: int) -> bytes:
    """The first event of every connection (no id: the browser keeps its Last-Event-ID).

    ``run`` names the run whose events follow, ``messages_before`` how many transcript
    messages come before them, and ``after`` the seq this stream resumes after (0: a
    replay from the start). A page that held another run reloads the transcript up to
    ``messages_before`` and renders the events: never a duplicate, never a gap.
    """
    data = {"run": task.run, "messages_before": task.base, "after": after, "status": task.status}
    return f"event: run\ndata: {orjson.dumps(data).decode()}\n\n".encode()


async def sse_stream(
    task: Task, last_event_id: str | None, heartbeat: float, closing: threading.Event | None
) -> AsyncIterator[bytes]:
    """SSE bytes: the events after ``Last-Event-ID`` (within this run), then live ones
    until ``done``."""
    after = parse_event_id(last_event_id, task.run)
    # Why: tells EventSource how long to wait before it reconnects on its own.
    yield b"retry: 2000\n\n"
    yield hello(task, after)
    async for event in task.follow(after, heartbeat, closing):
        # Why a comment line: it keeps proxies and browsers from closing a quiet stream.
        yield b": keep-alive\n\n" if event is None else sse(event, task.run)


def task_service(config: Config, workspace: Path, env: Mapping[str, str] | None) -> TaskService:
    """The server's task service: its tasks' commands see ``env`` (``hearth serve``'s own)."""
    from workhearth.mcp.client.tools import tools_for

    return TaskService(config, workspace, env, tools_for=tools_for(env or {}))


__all__ = [
    "Task",
    "TaskConflict",
    "TaskService",
    "sse",
    "sse_stream",
    "task_service",
    "transcript_status",
]
