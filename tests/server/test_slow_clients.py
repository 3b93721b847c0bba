"""Slow clients are cut, slow readers are not: the real ``hearth serve`` over raw sockets.

A slowloris holds connections open by trickling a request; uvicorn alone never cuts
one. ``hearth serve`` gives a client 10 s for its request line and headers and 30 s for
its body (issue 17, hole 11). The tests use ``HEARTH_CLIENT_TIMEOUTS`` (read by the
CLI only) to shorten them, except the first, which checks the 10 s default.
"""

from __future__ import annotations

import contextlib
import re
import selectors
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, write_config
from tests.fake_providers import FakeProvider, Reply
from tests.server.tasks_helpers import Event, read_events, wait_for

Serve = Callable[[list[Reply]], FakeProvider]


@dataclass
class Running:
    port: int
    token: str

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        return sock

    def request(self, method: str, path: str, body: bytes = b"") -> bytes:
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Length: {len(body)}\r\n"
        )
        if body:
            head += "Content-Type: application/json\r\n"
        return head.encode() + b"\r\n" + body


@contextlib.contextmanager
def hearth_serve(hearth: Hearth, env: dict[str, str]) -> Iterator[Running]:
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", "0", "--no-open"],
        cwd=hearth.workspace,
        env={**hearth.env, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    out: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            out.append(line.decode("utf-8", "replace"))

    threading.Thread(target=read, daemon=True).start()
    try:
        port = wait_for(
            "the server's address",
            lambda: next(
                (int(m[1]) for o in out if (m := re.search(r" on http://\S+:(\d+)/", o))), None
            ),
            timeout=30,
        )
        token = (hearth.home / "server.token").read_text().strip()
        with httpx.Client(timeout=10) as client:
            deadline = time.monotonic() + 30
            while client.get(f"http://127.0.0.1:{port}/v1/info").status_code != 401:
                assert time.monotonic() < deadline
        yield Running(port, token)
        assert "Traceback" not in "".join(out), "".join(out)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def seconds_until_closed(sock: socket.socket, limit: float = 40) -> tuple[float, bytes]:
    """How long the server keeps ``sock`` open (reading what it sends), and what it sent."""
    started = time.monotonic()
    got = b""
    sock.settimeout(limit)
    try:
        while chunk := sock.recv(65536):
            got += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {limit} s; received {got!r}") from None
    except ConnectionResetError:
        pass
    return time.monotonic() - started, got


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One whole response (Content-Length framed) from a keep-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before the headers: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)[1])  # type: ignore[index]
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, "closed mid-body"
        body += chunk
    return status, body


def test_half_a_request_line_is_cut_after_the_default_ten_seconds(tmp_path: Path) -> None:
    with hearth_serve(make_hearth(tmp_path), {}) as server, server.connect() as sock:
        sock.sendall(b"GET /v1/info HT")
        waited, got = seconds_until_closed(sock)
    assert 9 <= waited < 20
    assert got == b"" or got.startswith(b"HTTP/1.1 408 ")


def test_headers_trickled_byte_by_byte_are_cut_on_time(tmp_path: Path) -> None:
    """Progress does not extend the deadline: it is for the whole request head."""
    env = {"HEARTH_CLIENT_TIMEOUTS": "2,3"}
    with hearth_serve(make_hearth(tmp_path), env) as server, server.connect() as sock:
        started = time.monotonic()
        closed = False
        for byte in server.request("GET", "/v1/info") * 10:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            time.sleep(0.2)
            if time.monotonic() - started > 20:
                break
        _, got = seconds_until_closed(sock, limit=20)
    total = time.monotonic() - started
    assert closed or got.startswith(b"HTTP/1.1 408 ")
    assert b"HTTP/1.1 200" not in got and total < 15


def test_a_crowd_of_slow_clients_is_cut_while_others_are_served(tmp_path: Path) -> None:
    """The attack: hundreds of connections held open, silent or half-sent."""
    with hearth_serve(make_hearth(tmp_path), {"HEARTH_CLIENT_TIMEOUTS": "2,3"}) as server:
        started = time.monotonic()
        crowd = [server.connect() for _ in range(300)]
        body = server.request("POST", "/v1/memory", b'{"content": "' + b"y" * 50 + b'"}')
        for n, sock in enumerate(crowd):
            sock.setblocking(False)
            if n % 3 == 1:
                sock.sendall(b"GET /v1/in")
            elif n % 3 == 2:
                sock.sendall(body[:-20])
        with httpx.Client(timeout=10) as client:
            info = client.get(
                f"http://127.0.0.1:{server.port}/v1/info",
                headers={"Authorization": f"Bearer {server.token}"},
            )
        assert info.status_code == 200
        open_ = set(crowd)
        with selectors.DefaultSelector() as watch:
            for sock in crowd:
                watch.register(sock, selectors.EVENT_READ)
            while open_ and time.monotonic() - started < 30:
                for key, _ in watch.select(timeout=1):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    try:
                        if sock.recv(65536):
                            continue
                    except ConnectionResetError:
                        pass
                    watch.unregister(sock)
                    open_.discard(sock)
        waited = time.monotonic() - started
        for sock in crowd:
            sock.close()
    assert len(open_) == 0, f"{len(open_)} of 300 still open after {waited:.1f} s"
    assert 1.5 <= waited < 20


def test_a_body_that_never_ends_is_cut(tmp_path: Path) -> None:
    with hearth_serve(make_hearth(tmp_path), {"HEARTH_CLIENT_TIMEOUTS": "2,4"}) as server:
        with server.connect() as sock:
            whole = server.request("POST", "/v1/memory", b'{"content": "' + b"x" * 80 + b'"}')
            sock.sendall(whole[:-40])  # the headers and half the body
            waited, got = seconds_until_closed(sock)
        # Why: the deadline is the body's (4 s), not the headers' (2 s).
        assert 3.5 <= waited < 14
        assert b"HTTP/1.1 201" not in got
        with server.connect() as sock:  # the same request, whole, is served
            sock.sendall(whole)
            status, _ = read_response(sock)
            assert status == 201


def test_keep_alive_and_slow_readers_are_not_cut(tmp_path: Path) -> None:
    with hearth_serve(make_hearth(tmp_path), {"HEARTH_CLIENT_TIMEOUTS": "1,1"}) as server:
        with server.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(server.request("GET", "/openapi.json"))
            # Reads nothing for longer than both timeouts and uvicorn's 5 s keep-alive:
            # the response waits in the server's buffers, which is not being idle.
            time.sleep(6)
            status, schema = read_response(sock)
            assert status == 200 and schema.startswith(b"{")
            sock.sendall(server.request("GET", "/v1/info"))
            assert read_response(sock)[0] == 200
            # A following request is timed like the first.
            sock.sendall(b"GET /v1/info HTTP/1.1\r\nHost: 127")
            waited, _ = seconds_until_closed(sock)
            assert waited < 10


def test_a_task_stream_outlives_the_header_timeout(tmp_path: Path, serve: Serve) -> None:
    hearth = make_hearth(tmp_path)
    write_config(hearth)
    write = calls_reply("openai", ("call_s1", "write_file", {"path": "a.txt", "content": "1"}))
    agent = Agent(hearth, "openai", serve([write, text_reply("openai", "written")]))
    env = {k: v for k, v in agent.env.items() if k not in hearth.env}
    with hearth_serve(hearth, {**env, "HEARTH_CLIENT_TIMEOUTS": "1,1"}) as server:
        base, auth = f"http://127.0.0.1:{server.port}", {"Authorization": f"Bearer {server.token}"}
        with httpx.Client(base_url=base, headers=auth, timeout=30) as client:
            started = client.post("/v1/tasks", json={"task": "write a.txt", "mode": "agent"})
            assert started.status_code == 201, started.text
            sid = started.json()["session_id"]
            with client.stream("GET", f"/v1/tasks/{sid}/events") as answer:
                events = read_events(answer.iter_lines())
                seen: list[Event] = []
                for event in events:
                    seen.append(event)
                    if event.name == "approval":
                        break
                time.sleep(3)  # the stream stays open, quiet, well past both timeouts
                ok = client.post(f"/v1/tasks/{sid}/approvals/call_s1", json={"answer": "once"})
                assert ok.status_code == 204
                rest = [e.name for e in events]
    assert "done" in rest and "tool_result" in rest, rest
    assert (hearth.workspace / "a.txt").read_text() == "1"
