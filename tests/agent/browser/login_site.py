"""A sign-in page served on 127.0.0.1 whose server records the bytes every POST sent.

Its answer to a POST echoes what it got (as careless sites do), so a snapshot of it
would carry a typed password to the model if nothing masked it.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs

from tests.agent.browser.pages import PageHandler, running

PASSWORD = "pw-Kq7-zz41-unique"  # a value that appears nowhere unless it leaked
PIN = "8807-4412"
LOGIN = (
    b"<!doctype html><title>Sign in</title>"
    b'<form method="post" action="/login"><label>User <input name="user"></label>'
    b'<label>Password <input name="password" type="password"></label>'
    b'<label>Card code <input name="card_pin" type="text"></label>'
    b'<button type="submit">Sign in</button></form>'
)


class _LoginSite(PageHandler):
    def do_GET(self) -> None:
        self._send(LOGIN)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.received.append(body)  # type: ignore[attr-defined]
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        echo = html.escape(f"{form.get('user')} / {form.get('password')} / {form.get('card_pin')}")
        self._send(f"<!doctype html><title>Welcome</title><p>Signed in: {echo}</p>".encode())


@contextmanager
def serve_login() -> Iterator[ThreadingHTTPServer]:
    """The sign-in site on a free port; ``server.received``: each POST body, as bytes."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LoginSite)
    server.received = []  # type: ignore[attr-defined]
    with running(server):
        yield server
