"""The checking forward proxy every request of the agent's browser goes through (issue 25).

Why a proxy: Playwright's ``context.route`` never sees the requests a redirect makes, so
an allowed page could send the browser on (a 302, a meta refresh seen as a redirect)
to 127.0.0.1, hearth's own server or 169.254.169.254 unchecked. Chromium started with
``--proxy-server`` (and ``--proxy-bypass-list=<-loopback>``, else it would skip the
proxy for loopback, the addresses that matter most) sends every HTTP request and every
TLS or WebSocket tunnel here instead: redirects, subresources, service workers alike.

Per request the proxy reads the host and port (the absolute-form request line of plain
http, the ``CONNECT host:port`` of a tunnel), asks the site policy's address rules
(:meth:`SitePolicy.check_connection`: schemes, ``[browser] allow``, hearth's own
server, private/loopback/link-local … on the RESOLVED addresses), and connects to
exactly the addresses that were judged: no second DNS lookup a rebinding name could
answer differently. A refusal is a ``403`` with a short text body naming the reason,
and words in :meth:`CheckingProxy.take_refusals` for the model.

Why not a library: proxy.py (``proxy-py``) and mitmproxy are whole servers with their
own processes, flags and event loops; what is needed here is ~200 lines of threads.
Why one connection per request (``Connection: close`` both ways): the check is per
request, and a kept-alive connection would carry the next request, perhaps for another
host, to the address checked for the first.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from workhearth.agent.browser.policy import SiteVerdict
from workhearth.agent.browser.urls import IPAddress, parse_url
from workhearth.errors import HearthError, UsageError

# What the policy answers for one URL: the verdict and the addresses it judged.
Check = Callable[[str], tuple[SiteVerdict, tuple[IPAddress, ...]]]

HEAD_LIMIT = 64 * 1024  # a request or response head longer than this is refused
CONNECT_SECONDS = 10.0
CHUNK = 64 * 1024
MAX_REFUSALS = 20  # kept between two actions (a page can fail hundreds of images)
_HOP_HEADERS = frozenset(
    {b"connection", b"proxy-connection", b"keep-alive", b"proxy-authorization"}
)


class ProxyError(HearthError):
    """The browser's checking proxy could not start."""


@dataclass(frozen=True)
class Refusal:
    """One request the proxy refused: its site, whether it was a tunnel, words for the model.

    Neither a ``CONNECT`` nor a plain request says who asked, and Chromium's own
    background requests (accounts.google.com, update.googleapis.com, despite the quiet
    switches) come here too: the session tells the model only of refusals a page sent a
    request for, matched by ``asked``: the whole URL of plain http, the site of a tunnel
    (all a ``CONNECT`` shows).
    """

    site: str
    tunnel: bool
    words: str
    url: str

    @property
    def asked(self) -> str:
        return self.site if self.tunnel else self.url


@dataclass(frozen=True)
class _Request:
    method: bytes
    url: str  # what the policy checks: http://host:port/path, or https://host:port/ for CONNECT
    site: str  # scheme://host[:port], as site_of says it
    host: str
    port: int
    tunnel: bool
    navigate: bool  # Sec-Fetch-Mode: navigate (Chromium says so to trustworthy origins)
    head: bytes  # the head to send upstream (plain http), rewritten to origin form
    rest: bytes  # bytes read after the head (the start of a body, or of the tunnel)


class CheckingProxy:
    """One browser's proxy: bound to 127.0.0.1 on a free port, a thread per connection.

    ``check`` is :meth:`SitePolicy.check_connection`. :meth:`start` returns the address
    for ``--proxy-server``; :meth:`stop` closes the listener and every open connection.
    """

    def __init__(self, check: Check) -> None:
        self.check = check
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._refusals: list[Refusal] = []
        self._lock = threading.Lock()

    # -------------------------------------------------------------- lifetime
    def start(self) -> str:
        """Listen on 127.0.0.1 (a free port); the proxy URL for Chromium's ``--proxy-server``."""
        try:
            listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        except OSError as exc:
            raise ProxyError(f"the browser's proxy could not listen on 127.0.0.1: {exc}") from None
        self._listener = listener
        self.port = listener.getsockname()[1]
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop listening and cut every connection (the browser is gone or going)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            _close(listener)
        with self._lock:
            sockets, self._open = list(self._open), set()
        for sock in sockets:
            _close(sock)

    def take_refusals(self) -> list[Refusal]:
        """What was refused since the last call (each URL once, at most ``MAX_REFUSALS``)."""
        with self._lock:
            refusals, self._refusals = self._refusals, []
        return refusals

    # -------------------------------------------------------------- serving
    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # stopped
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        self._track(client)
        try:
            request = _read_request(client)
            if request is None:
                return
            verdict, addresses = self.check(request.url)
            if not verdict.ok:
                self._refuse(client, request, verdict.reason)
                return
            upstream = _connect(addresses, request.port)
            if upstream is None:
                _answer(client, 502, f"could not connect to {request.host}:{request.port}")
                return
            self._track(upstream)
            if request.tunnel:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if request.rest:
                    upstream.sendall(request.rest)
                _pipe(client, upstream)
            else:
                upstream.sendall(request.head + request.rest)
                _pipe(client, upstream, _close_response_head)
        except (OSError, ValueError):
            pass  # hung up, or stop() closed the sockets under us: nothing to tell anyone
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    self._untrack(sock)
                    _close(sock)

    def _refuse(self, client: socket.socket, request: _Request, reason: str) -> None:
        what = "go to" if request.navigate else "reach" if request.tunnel else "load"
        words = f"the page tried to {what} {request.url[:200]} — refused: {reason}"
        refusal = Refusal(request.site, request.tunnel, words, request.url)
        with self._lock:
            if refusal not in self._refusals and len(self._refusals) < MAX_REFUSALS:
                self._refusals.append(refusal)
        _answer(client, 403, f"hearth refused {request.url[:200]}: {reason}")

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.add(sock)

    def _untrack(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)


# ------------------------------------------------------------------ HTTP pieces


def _read_head(sock: socket.socket) -> tuple[bytes, bytes] | None:
    """The head (through the blank line) and what came after it; None if cut short."""
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > HEAD_LIMIT:
            return None
        chunk = sock.recv(CHUNK)
        if not chunk:
            return None
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head + b"\r\n\r\n", rest


def _read_request(client: socket.socket) -> _Request | None:
    """The browser's request, or None (answered 400) when it is not one a proxy serves."""
    read = _read_head(client)
    if read is None:
        return None
    head, rest = read
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3:
        _answer(client, 400, "not an HTTP request")
        return None
    method, target, version = parts
    headers = [line for line in lines[1:] if line]
    navigate = any(
        h.split(b":", 1)[0].strip().lower() == b"sec-fetch-mode"
        and h.split(b":", 1)[1].strip().lower() == b"navigate"
        for h in headers
        if b":" in h
    )
    tunnel = method == b"CONNECT"
    text = target.decode("latin-1")
    url = f"https://{text}/" if tunnel else text
    if not tunnel and not url.lower().startswith("http://"):
        _answer(client, 400, "a proxy request needs an absolute http:// URL")
        return None
    try:
        found = parse_url(url)  # Why: the host and port exactly as the policy reads them
    except UsageError as exc:
        _answer(client, 400, exc.message)
        return None
    if tunnel:
        return _Request(method, url, found.site, found.name, found.port, True, navigate, b"", rest)
    path = url[7:].partition("/")[1:]
    kept = [h for h in headers if h.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS]
    origin = "".join(path).encode("latin-1") or b"/"
    upstream_head = b"\r\n".join(
        [b" ".join([method, origin, version]), *kept, b"Connection: close", b"", b""]
    )
    return _Request(
        method, url, found.site, found.name, found.port, False, navigate, upstream_head, rest
    )


def _answer(client: socket.socket, status: int, text: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    body = (text + "\n").encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with contextlib.suppress(OSError):
        client.sendall(head + body)


def _close_response_head(head: bytes) -> bytes:
    """The site's response head with ``Connection: close``: the browser must not send its
    next request on this connection (it would reach the address checked for this one)."""
    lines = head[:-4].split(b"\r\n")
    kept = [
        line
        for line in lines[1:]
        if line and line.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS
    ]
    return b"\r\n".join([lines[0], *kept, b"Connection: close", b"", b""])


def _connect(addresses: Iterable[IPAddress], port: int) -> socket.socket | None:
    """A connection to the first of ``addresses`` that answers (the ones the policy judged)."""
    for address in addresses:
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_SECONDS)
        try:
            sock.connect((str(address), port))
        except OSError:
            _close(sock)
            continue
        sock.settimeout(None)
        return sock
    return None


def _pipe(
    client: socket.socket,
    upstream: socket.socket,
    rewrite: Callable[[bytes], bytes] | None = None,
) -> None:
    """Copy bytes both ways until both sides are done; ``rewrite`` the first response head."""
    pending = b""  # the response head while it is still arriving (only with ``rewrite``)
    open_ends = {client, upstream}
    while open_ends:
        ready, _, _ = select.select(list(open_ends), [], [])
        for sock in ready:
            data = sock.recv(CHUNK)
            other = upstream if sock is client else client
            if not data:
                open_ends.discard(sock)
                if sock is upstream:
                    if pending:
                        client.sendall(pending)
                    return  # the site is done: the browser's connection ends with it
                with contextlib.suppress(OSError):
                    other.shutdown(socket.SHUT_WR)
                continue
            if sock is upstream and rewrite is not None:
                pending += data
                if b"\r\n\r\n" not in pending:
                    if len(pending) > HEAD_LIMIT:
                        return
                    continue
                head, _, body = pending.partition(b"\r\n\r\n")
                data, pending, rewrite = rewrite(head + b"\r\n\r\n") + body, b"", None
            other.sendall(data)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        sock.close()


def chromium_args(proxy_url: str) -> tuple[str, ...]:
    """Chromium's switches that send all of its traffic through the proxy at ``proxy_url``.

    Why ``<-loopback>``: Chromium otherwise goes straight to loopback addresses, the ones
    that matter most. Why the WebRTC policy: WebRTC's UDP would go around the proxy.
    """
    return (
        f"--proxy-server={proxy_url}",
        "--proxy-bypass-list=<-loopback>",
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    )
