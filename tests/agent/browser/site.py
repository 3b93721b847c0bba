"""A small web site the browser tests serve on 127.0.0.1: real HTTP, real pages.

Pages: a table over three pages (``/table?page=N``), a login form and a page behind
it (``/login`` → ``/private``), a download (``/files``), an upload form
(``/upload``), a page that rebuilds itself under the agent (``/changing``), popups
(``/popup``), a slow page (``/slow``) and a page of 2,000 elements (``/big``).
"""

from __future__ import annotations

import hashlib
import html
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.agent.browser.pages import PageHandler, running

ROWS = [(f"item {n}", n * 10) for n in range(1, 31)]  # 30 rows, 10 a page
PER_PAGE = 10
CSV = b"name,amount\nalpha,1\nbeta,2\n"


def _page(title: str, body: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head>"
        f"<body>{body}</body></html>"
    ).encode()


def _table(page: int) -> bytes:
    rows = ROWS[(page - 1) * PER_PAGE : page * PER_PAGE]
    cells = "".join(f"<tr><td>{name}</td><td>{amount}</td></tr>" for name, amount in rows)
    nav = f'<a href="/table?page={page + 1}">Next page</a>' if page * PER_PAGE < len(ROWS) else ""
    return _page(
        f"Table page {page}",
        f"<main><h1>Sales, page {page}</h1><table><tr><th>Name</th><th>Amount</th></tr>"
        f"{cells}</table>{nav}</main>",
    )


LOGIN = _page(
    "Sign in",
    '<form method="post" action="/login"><label>User <input name="user"></label>'
    '<label>Password <input name="password" type="password"></label>'
    '<button type="submit">Sign in</button></form>',
)
CHANGING = _page(
    "Changing",
    '<div id="app"><p>Version 1</p><button onclick="document.title=\'clicked\'">Old button</button>'
    "</div><script>setTimeout(() => { document.getElementById('app').innerHTML = "
    "'<p>Version 2</p><button onclick=\"document.title=\\'new clicked\\'\">New button</button>';"
    # Why 2.5 s: the agent opens and snapshots the page first; under load that took over 400 ms.
    "}, 2500);</script>",
)
POPUP = _page(
    "Popup",
    '<a href="/table?page=1" target="_blank">Open the table in a new tab</a>'
    "<button onclick=\"window.open('/login')\">Sign-in window</button>",
)
UPLOAD = _page(
    "Upload",
    '<form method="post" action="/upload" enctype="multipart/form-data">'
    '<label>Report <input type="file" name="report"></label>'
    '<button type="submit">Send</button></form>',
)
FILES = _page(
    "Files",
    '<a href="/files/report.csv">Get the report</a> <a href="/table?page=1">Not a file</a>',
)


def _big() -> bytes:
    items = "".join(
        f'<li><a href="/table?page={n % 3 + 1}">link {n}</a> <button>button {n}</button> '
        f"<span>text {n}</span></li>"
        for n in range(1000)
    )
    return _page("Big", f"<ul>{items}</ul>")


class _Handler(PageHandler):
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        signed_in = "session=ana" in (self.headers.get("Cookie") or "")
        if url.path == "/table":
            self._send(_table(int(query.get("page", ["1"])[0])))
        elif url.path == "/login":
            self._send(LOGIN)
        elif url.path == "/private":
            if signed_in:
                self._send(_page("Private", "<h1>Welcome ana</h1><p>Your balance: 42</p>"))
            else:
                self._send(b"", 303, {"Location": "/login"})
        elif url.path == "/changing":
            self._send(CHANGING)
        elif url.path == "/popup":
            self._send(POPUP)
        elif url.path == "/upload":
            self._send(UPLOAD)
        elif url.path == "/files":
            self._send(FILES)
        elif url.path == "/files/report.csv":
            headers = {
                "Content-Type": "text/csv",
                # Why: the server's name must never be where the file lands.
                "Content-Disposition": 'attachment; filename="../../evil.csv"',
            }
            self.send_response(200)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(CSV)))
            self.end_headers()
            self.wfile.write(CSV)
        elif url.path == "/slow":
            time.sleep(4)
            self._send(_page("Slow", "<p>finally</p>"))
        elif url.path == "/big":
            self._send(_big())
        else:
            self._send(_page("Not found", "<p>no such page</p>"), 404)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path == "/login":
            form = parse_qs(body.decode())
            self.server.posts.append(form)  # type: ignore[attr-defined]
            if form.get("user") == ["ana"] and form.get("password") == ["s3cret"]:
                self._send(
                    b"",
                    303,
                    {"Location": "/private", "Set-Cookie": "session=ana; Path=/; Max-Age=3600"},
                )
            else:
                self._send(_page("Sign in", "<p>Wrong user or password</p>"), 401)
        elif self.path == "/upload":
            digest = hashlib.sha256(body).hexdigest()
            self.server.posts.append({"upload": body})  # type: ignore[attr-defined]
            self._send(
                _page("Uploaded", f"<p>Received {len(body)} bytes {html.escape(digest)}</p>")
            )
        else:
            self._send(b"", 404)


@contextmanager
def serve() -> Iterator[ThreadingHTTPServer]:
    """The site on 127.0.0.1 (a free port); ``server.posts`` records what forms sent."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.posts = []  # type: ignore[attr-defined]
    with running(server):
        yield server
