"""A fault at the network edge, between the bank client and the real ``hearth serve --store``.

An HTTP/1.1 relay (one upstream connection per client connection, keep-alive
kept) that can

- ``hold``: pass a ``POST /v1/memory`` on, read the server's answer (the save is
  committed then), note its ``Idempotency-Key`` in ``committed`` and never pass
  the answer back — so the client can be killed between the server's commit and
  its own bookkeeping;
- ``content_limit``: answer a save whose content is longer with a 422 itself, as
  a server of another version with a stricter limit would (``refusal``: another
  status instead of the 422).
"""

from __future__ import annotations

import json
import socket
import threading
import time

from tests.bank.team_server import free_port


def _read_message(sock: socket.socket, buf: bytearray) -> tuple[bytes, bytes] | None:
    """One HTTP message (head, body) by Content-Length; None when the peer closed."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    end = buf.index(b"\r\n\r\n") + 4
    head = bytes(buf[:end])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(buf) < end + length:
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    body = bytes(buf[end : end + length])
    del buf[: end + length]
    return head, body


def _header(head: bytes, name: bytes) -> str | None:
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode("latin-1")
    return None


class EdgeProxy:
    def __init__(self, upstream_port: int, port: int | None = None) -> None:
        self.upstream_port = upstream_port
        self.port = port or free_port()
        self.hold = False
        self.content_limit: int | None = None
        self.refusal = 422
        self.committed: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(conn,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        try:
            up = socket.create_connection(("127.0.0.1", self.upstream_port))
        except OSError:
            client.close()  # Why: the server is down; the client sees a dropped connection
            return
        cbuf, ubuf = bytearray(), bytearray()
        try:
            while True:
                request = _read_message(client, cbuf)
                if request is None:
                    return
                head, body = request
                is_save = head.startswith(b"POST /v1/memory ")
                if is_save and self.content_limit is not None:
                    content = json.loads(body).get("content", "")
                    if len(content) > self.content_limit:
                        detail = f"content over this server's {self.content_limit} characters"
                        payload = json.dumps({"detail": detail}).encode()
                        client.sendall(
                            f"HTTP/1.1 {self.refusal} Refused\r\ncontent-type: application/json".encode()
                            + f"\r\ncontent-length: {len(payload)}\r\n\r\n".encode()
                            + payload
                        )
                        continue
                up.sendall(head + body)
                answer = _read_message(up, ubuf)
                if answer is None:
                    return
                if is_save and self.hold:
                    self.committed.append(_header(head, b"idempotency-key") or "")
                    while not self._closed:
                        time.sleep(0.1)
                    return
                client.sendall(answer[0] + answer[1])
        except OSError:
            return
        finally:
            client.close()
            up.close()
