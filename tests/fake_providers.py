"""Local HTTP servers that speak the providers' real streaming protocols.

A :class:`FakeProvider` listens on ``127.0.0.1:<free port>`` in a thread and
answers each request with the next scripted :class:`Reply`: a status, headers,
and body pieces written (and flushed) one by one over HTTP/1.1 chunked transfer
encoding, as the real APIs do. A reply can pause (a float among the pieces),
stall before its headers (``delay``), or drop the connection midway (``cut``).
Every request is recorded with its path, headers and JSON body so a test can
check what the client really sent.

The SSE builders write what the providers put on the wire: OpenAI
``data: {chunk}`` lines closed by ``data: [DONE]``; Anthropic ``event:`` +
``data:`` pairs. Shapes follow the providers' documented streams.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Piece = bytes | float


@dataclass
class Reply:
    status: int = 200
    pieces: Sequence[Piece] = ()
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line (a stalled server)
    cut: bool = False  # drop the connection after the pieces, without ending the body
    content_type: str = "text/event-stream"


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""  # the body's bytes as they arrived


def json_reply(status: int, payload: Any, **headers: str) -> Reply:
    return Reply(
        status=status,
        pieces=[json.dumps(payload).encode()],
        headers=headers,
        content_type="application/json",
    )


def split(pieces: Iterable[bytes], size: int, pause: float = 0.0) -> list[Piece]:
    """Re-cut a byte stream into ``size``-byte pieces (mid-line, mid-character)."""
    data = b"".join(pieces)
    out: list[Piece] = []
    for start in range(0, len(data), size):
        out.append(data[start : start + size])
        if pause:
            out.append(pause)
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        fake = self.server.fake
        fake.received.append(
            Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
        )
        reply = fake.reply_for(raw)
        if reply.delay:
            time.sleep(reply.delay)
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for piece in reply.pieces:
            if isinstance(piece, float):
                time.sleep(piece)
                continue
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
        if reply.cut:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeProvider

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Why: a client that timed out closes its socket; the late write fails. Expected.
        pass


class FakeProvider:
    """A scripted provider endpoint; use as a context manager."""

    def __init__(self, replies: Iterable[Reply]) -> None:
        self.replies: deque[Reply] = deque(replies)
        self.received: list[Received] = []
        self.unscripted = 0
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.fake = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def next_reply(self) -> Reply:
        if self.replies:
            return self.replies.popleft()
        self.unscripted += 1
        return json_reply(500, {"error": {"message": "fake server: no reply scripted"}})

    def reply_for(self, raw: bytes) -> Reply:
        """The reply to a request whose body is ``raw`` (in order, whatever it asks)."""
        return self.next_reply()

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.received]

    def __enter__(self) -> FakeProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class RoutedProvider(FakeProvider):
    """Replies by who asks, for callers that run side by side (a team's specialists):
    each request takes the next reply of the first route whose marker its body holds."""

    def __init__(self, routes: Sequence[tuple[str, Iterable[Reply]]]) -> None:
        super().__init__([])
        self.routes = [(marker.encode(), deque(replies)) for marker, replies in routes]
        self.asked: list[str] = []  # the marker of each request, in arrival order
        self._lock = threading.Lock()

    def reply_for(self, raw: bytes) -> Reply:
        text = json.loads(raw) if raw.startswith(b"{") else {}
        # Why decoded: the body is JSON, where a marker's non-ASCII or quotes are escaped.
        body = json.dumps(text, ensure_ascii=False).encode()
        with self._lock:
            for marker, replies in self.routes:
                if marker in body or marker in raw:
                    self.asked.append(marker.decode())
                    if replies:
                        return replies.popleft()
                    break
            self.unscripted += 1
        return json_reply(500, {"error": {"message": "fake server: no reply scripted"}})


# --------------------------------------------------------------------------- OpenAI


def openai_chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    *,
    model: str = "qwen-plus",
    usage: dict[str, Any] | None = None,
    choices: bool = True,
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` as OpenAI sends it with ``include_usage``."""
    chunk: dict[str, Any] = {
        "id": "chatcmpl-9fake",
        "object": "chat.completion.chunk",
        "created": 1_718_000_000,
        "model": model,
        "system_fingerprint": "fp_fake",
        "choices": [],
        "usage": usage,
    }
    if choices:
        chunk["choices"] = [
            {"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}
        ]
    return chunk


def openai_sse(chunks: Iterable[dict[str, Any]], *, done: bool = True) -> list[bytes]:
    out = [b"data: " + json.dumps(c, ensure_ascii=False).encode() + b"\n\n" for c in chunks]
    if done:
        out.append(b"data: [DONE]\n\n")
    return out


def openai_usage(prompt: int = 31, completion: int = 9, cached: int = 0) -> dict[str, Any]:
    return openai_chunk(
        choices=False,
        usage={
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    )


def openai_text(pieces: Sequence[str], *, reasoning: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Chunks of a plain reply (DeepSeek/Qwen style ``reasoning_content`` first, if any)."""
    chunks = [openai_chunk({"role": "assistant", "content": ""})]
    chunks += [openai_chunk({"content": None, "reasoning_content": r}) for r in reasoning]
    chunks += [openai_chunk({"content": p}) for p in pieces]
    chunks += [openai_chunk({}, "stop"), openai_usage()]
    return chunks


def openai_tool_calls(calls: Sequence[tuple[str, str, Sequence[str]]]) -> list[dict[str, Any]]:
    """Chunks of a reply that calls tools: ``(id, name, argument fragments)`` per call."""
    chunks = [openai_chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, fragments) in enumerate(calls):
        head = {"index": index, "id": call_id, "type": "function"}
        head["function"] = {"name": name, "arguments": ""}
        chunks.append(openai_chunk({"tool_calls": [head]}))
        for fragment in fragments:
            piece = {"index": index, "function": {"arguments": fragment}}
            chunks.append(openai_chunk({"tool_calls": [piece]}))
    chunks += [openai_chunk({}, "tool_calls"), openai_usage()]
    return chunks


# --------------------------------------------------------------------------- Anthropic


def anthropic_sse(events: Iterable[dict[str, Any]]) -> list[bytes]:
    return [
        f"event: {e['type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n".encode()
        for e in events
    ]


def anthropic_start(model: str = "claude-sonnet-4-5", input_tokens: int = 42) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01FakeFakeFake",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": model,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": 1,
            },
        },
    }


def anthropic_block(index: int, block: dict[str, Any], deltas: Sequence[dict[str, Any]]) -> list:
    events: list[dict[str, Any]] = [
        {"type": "content_block_start", "index": index, "content_block": block}
    ]
    events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
    events.append({"type": "content_block_stop", "index": index})
    return events


def anthropic_text_block(index: int, pieces: Sequence[str]) -> list:
    return anthropic_block(
        index, {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces]
    )


def anthropic_thinking_block(index: int, pieces: Sequence[str], signature: str) -> list:
    deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces]
    deltas.append({"type": "signature_delta", "signature": signature})
    return anthropic_block(index, {"type": "thinking", "thinking": "", "signature": ""}, deltas)


def anthropic_tool_block(index: int, call_id: str, name: str, fragments: Sequence[str]) -> list:
    deltas = [{"type": "input_json_delta", "partial_json": ""}]
    deltas += [{"type": "input_json_delta", "partial_json": f} for f in fragments]
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return anthropic_block(index, block, deltas)


def anthropic_end(stop_reason: str = "end_turn", output_tokens: int = 17) -> list:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def anthropic_message(*blocks: list, stop_reason: str = "end_turn") -> list[bytes]:
    """A whole stream: start, a ping, the blocks, the end."""
    events: list[dict[str, Any]] = [anthropic_start(), {"type": "ping"}]
    for block in blocks:
        events += block
    return anthropic_sse([*events, *anthropic_end(stop_reason)])
