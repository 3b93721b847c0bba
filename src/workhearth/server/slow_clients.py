"""Cut clients that are slow to *send* a request (slowloris); never those slow to read.

uvicorn times only the idle gap between requests (``timeout_keep_alive``): a client
that trickles its request line, its headers or its body holds a connection — and, by
the thousand, the server — for as long as it likes. This HTTP protocol (uvicorn's h11
one, with two clocks) gives a request ``ClientTimeouts.headers`` seconds from its first
byte (or from the connection's start) to finish its head, then ``ClientTimeouts.body``
seconds to finish its body; each is a deadline for the whole part, so a trickle of
bytes does not extend it. A client too slow is disconnected, with a ``408`` first when
it had sent part of a request that nothing has answered yet. Once the request is in,
no clock runs: an SSE stream open for hours, or a slow reader of a response, is never cut
— and uvicorn's keep-alive gap starts only once the client has read the whole response.
"""

from __future__ import annotations

import asyncio
import fcntl
import struct
import termios
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

Phase = Literal["headers", "body"]

_TIMEOUT_BODY = b"request timeout\n"
REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n"
    b"connection: close\r\n\r\n" + _TIMEOUT_BODY
)


@dataclass(frozen=True)
class ClientTimeouts:
    """Seconds a client has to send a request's head, then its body."""

    headers: float = 10.0
    body: float = 30.0


def timed_protocol(timeouts: ClientTimeouts) -> type[asyncio.Protocol]:
    """The HTTP protocol class for ``uvicorn.Config(http=...)`` cutting slow senders."""
    return type("TimedH11Protocol", (TimedH11Protocol,), {"timeouts": timeouts})


class TimedH11Protocol(H11Protocol):
    timeouts: ClassVar[ClientTimeouts] = ClientTimeouts()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clock: asyncio.TimerHandle | None = None
        self._phase: Phase | None = None
        self._draining = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start("headers")

    def data_received(self, data: bytes) -> None:
        # Why: the first byte of a following request starts its head's clock; the idle
        # gap before it is uvicorn's keep-alive timeout, not ours.
        if self._phase is None and self.conn.their_state is h11.IDLE:
            self._start("headers")
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        self._draining = False
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE and not self.conn.trailing_data[0]:
            self._stop()  # idle between requests: keep-alive's business
        else:
            self._follow()  # a pipelined request already (partly) in

    def timeout_keep_alive_handler(self) -> None:
        # Why: uvicorn starts the keep-alive clock when the response is handed to the
        # transport, not when the client has read it; a slow reader still draining a
        # big response is not idle, so its idle gap is counted from when all is read.
        if self.transport.is_closing():
            return
        if self.transport.get_write_buffer_size() or _unacknowledged(self.transport):
            self._draining = True
            delay = min(self.timeout_keep_alive, 0.5)
        elif self._draining:
            self._draining = False
            delay = self.timeout_keep_alive
        else:
            super().timeout_keep_alive_handler()
            return
        self.timeout_keep_alive_task = self.loop.call_later(delay, self.timeout_keep_alive_handler)

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        # Why: the connection now belongs to the WebSocket protocol; no clock of ours.
        self._stop()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """Set the clock from where the client's side of the exchange stands."""
        if self.transport.get_protocol() is not self:
            return  # upgraded (handle_websocket_upgrade)
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            self._start("body")
        elif state is h11.IDLE:
            if self.conn.trailing_data[0]:
                self._start("headers")
        else:
            # Why: the request is in (DONE), or the connection is closing or upgraded:
            # whatever happens next is the response's pace, never timed.
            self._stop()

    def _start(self, phase: Phase) -> None:
        if self._phase == phase:
            return
        self._stop()
        seconds = self.timeouts.headers if phase == "headers" else self.timeouts.body
        self._phase = phase
        self._clock = self.loop.call_later(seconds, self._too_slow, phase)

    def _stop(self) -> None:
        if self._clock is not None:
            self._clock.cancel()
        self._clock, self._phase = None, None

    def _too_slow(self, phase: Phase) -> None:
        self._clock, self._phase = None, None
        if self.transport.is_closing():
            return
        if phase == "headers":
            # Why only after a partial head: a connection that sent nothing (a browser's
            # preconnect) is closed quietly, so no stale 408 waits for its first request.
            answer = bool(self.conn.trailing_data[0])
        else:
            # Why: once the app has begun its answer, a 408 would corrupt it.
            answer = self.cycle is not None and not self.cycle.response_started
        if answer:
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()


def _unacknowledged(transport: asyncio.Transport) -> int:
    """Bytes the kernel still holds for the client (Linux's ``TIOCOUTQ``), else 0."""
    sock = transport.get_extra_info("socket")
    request = getattr(termios, "TIOCOUTQ", None)
    if sock is None or request is None:
        return 0
    try:
        answer = fcntl.ioctl(sock.fileno(), request, b"\0\0\0\0")
    except OSError:
        return 0
    return int(struct.unpack("i", answer)[0])
