"""The stdio transport for MCP servers, with the process lifecycle hearth needs.

The SDK's ``stdio_client`` starts the server in a new session too, but a
server that never answers costs its shutdown grace periods, and nothing ties the
server to hearth's life. Here the server is started through asyncio (which takes a
``preexec_fn``) as the leader of its own process group that dies with hearth
(:mod:`workhearth.mcp.client.processes`); the wire is the SDK's: one JSON-RPC message a line,
parsed and written by its own types.

Ending: a server that never sent a message is SIGKILLed with its whole group at once
(nothing of it is worth waiting for); one that answered gets the MCP shutdown
sequence (stdin closed, ``GRACE`` seconds, SIGTERM to the group, ``TERM_WAIT``
seconds) and then whatever is left of its group is SIGKILLed.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from workhearth.mcp.client.processes import GRACE, TERM_WAIT
from workhearth.procgroups import (
    GroupRecord,
    ProcessGroups,
    die_with_hearth,
    group_alive,
    signal_group,
)

_CHUNK = 1 << 16
_POLL = 0.02


def _message(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc  # Why: the session reports a bad line; it does not end the connection


class ServerProcess:
    """One stdio server: ``async with`` it for the (read, write) streams of a ClientSession."""

    def __init__(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str],
        cwd: Path,
        errlog: Any,
        groups: ProcessGroups,
    ) -> None:
        self.argv, self.env, self.cwd, self.errlog = argv, dict(env), cwd, errlog
        self.groups = groups
        self.answered = False  # it sent at least one message: it is a working MCP server
        self.killed = False
        self._proc: asyncio.subprocess.Process | None = None
        self._record: GroupRecord | None = None
        self._abandoned = False

    def kill(self) -> None:
        """SIGKILL the server's whole group now (or as soon as it is started).

        Its stdout then ends, so whatever waits for an answer gets an error at once.
        """
        self.killed = True
        if self._record is not None:
            self._record.end()
        elif self._proc is not None and self._proc.returncode is None:
            signal_group(self._proc.pid, signal.SIGKILL)

    async def _spawn(self) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errlog,
            env=self.env,
            cwd=self.cwd,
            start_new_session=True,
            preexec_fn=die_with_hearth(),
        )
        self._proc = proc
        self._record = self.groups.add(proc.pid)
        if self.killed:  # Why: it was stopped while the process was being started
            self.kill()
        if self._abandoned:
            self.groups.end(self._record)
        return proc

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        spawning = asyncio.ensure_future(self._spawn())
        try:
            proc = await asyncio.shield(spawning)
        except asyncio.CancelledError:
            # Why: asyncio would kill only the leader of a start cut short, not the
            # children it may have started already; let the start finish, then end it all.
            self.killed = self._abandoned = True
            spawning.add_done_callback(_seen)
            raise
        record = self._record
        to_session, from_server = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        try:
            async with anyio.create_task_group() as pumps:
                pumps.start_soon(self._read, proc, to_session)
                pumps.start_soon(self._write, proc, from_session)
                try:
                    yield from_server, to_server
                finally:
                    pumps.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._stop(proc, record)
            self.groups.forget(record)
            for stream in (to_session, from_server, to_server, from_session):
                stream.close()

    async def _read(self, proc: asyncio.subprocess.Process, sink: Any) -> None:
        """Server stdout → session, a line at a time; EOF closes the session's stream."""
        assert proc.stdout is not None
        decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        pending = ""
        async with sink:
            while chunk := await proc.stdout.read(_CHUNK):
                *lines, pending = (pending + decode(chunk)).split("\n")
                for line in lines:
                    if not line.strip():
                        continue
                    message = _message(line)
                    self.answered = self.answered or isinstance(message, SessionMessage)
                    try:
                        await sink.send(message)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return

    async def _write(self, proc: asyncio.subprocess.Process, source: Any) -> None:
        """Session → server stdin, one JSON line per message."""
        assert proc.stdin is not None
        async with source:
            async for message in source:
                line = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    proc.stdin.write(line.encode() + b"\n")
                    await proc.stdin.drain()
                except (ConnectionError, OSError):
                    return  # Why: the server is gone; its stdout's EOF tells the session

    async def _stop(self, proc: asyncio.subprocess.Process, record: GroupRecord | None) -> None:
        def signal_all(sig: int) -> None:
            if record is not None:
                record.signal(sig)
            elif proc.returncode is None:  # Why: without a record, only a leader not yet reaped
                signal_group(proc.pid, sig)

        if self.answered:
            assert proc.stdin is not None
            with contextlib.suppress(ConnectionError, OSError):
                proc.stdin.close()
            if not await _exited(proc, GRACE):
                signal_all(signal.SIGTERM)
                await _group_gone(proc.pid, TERM_WAIT)
        # Why: what is left of the group (a never-answering server, or its children) is killed.
        signal_all(signal.SIGKILL)
        await _exited(proc, 1.0)
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            # Why: a child that kept the pipes open would keep the transport (and a warning) alive.
            transport.close()


def _seen(future: asyncio.Future[Any]) -> None:
    """Mark an abandoned start's outcome as seen (a failed one is of no interest now)."""
    if not future.cancelled():
        future.exception()


async def _until(done: Callable[[], bool], seconds: float) -> bool:
    """Poll ``done`` for up to ``seconds``; whether it came true."""
    for _ in range(max(1, round(seconds / _POLL))):
        if done():
            return True
        await asyncio.sleep(_POLL)
    return done()


async def _exited(proc: asyncio.subprocess.Process, seconds: float) -> bool:
    """Whether the leader exited within ``seconds``: its returncode, not ``wait()``,
    which also waits for the pipes a child of it may still hold."""
    return await _until(lambda: proc.returncode is not None, seconds)


async def _group_gone(pgid: int, seconds: float) -> None:
    await _until(lambda: not group_alive(pgid), seconds)


__all__ = ["ServerProcess"]
