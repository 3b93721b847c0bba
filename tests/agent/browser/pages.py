"""The base of the test sites the browser tests serve on 127.0.0.1: quiet, and one way to
answer with a page."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

Server = TypeVar("Server", bound=ThreadingHTTPServer)


class PageHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing and answers with :meth:`_send`."""

    def log_message(self, *args: object) -> None:
        pass

    def _send(
        self, body: bytes | str, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> None:
        """``body`` as an HTML page (UTF-8), with ``status`` and any other ``headers``."""
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def running(server: Server) -> Iterator[Server]:
    """``server`` answering on a thread of its own (each request on a daemon thread) until
    the block ends; then it is shut down and its socket closed."""
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
