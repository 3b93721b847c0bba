"""The browser's checking proxy spoken to directly (no browser): what it sends where.

Real sockets on 127.0.0.1; the policy is the real :class:`SitePolicy`, given its own
``getaddrinfo`` where a test needs a name that resolves (the network edge).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent.browser.counting import Counting, serving
from workhearth.agent.browser.policy import SitePolicy
from workhearth.agent.browser.proxy import CheckingProxy
from workhearth.config import BrowserConfig


@pytest.fixture
def other() -> Iterator[Counting]:
    with serving() as server:
        yield server


@pytest.fixture
def allowed() -> Iterator[Counting]:
    with serving() as server:
        yield server


def _proxy(allow: tuple[str, ...], names: dict[str, str] | None = None) -> CheckingProxy:
    def getaddrinfo(host: str, port: int | None) -> list[tuple[Any, ...]]:
        if names and host in names:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (names[host], 0))]
        raise OSError("no such host in this test")

    policy = SitePolicy.from_config(BrowserConfig(allow=allow), "agent", getaddrinfo=getaddrinfo)
    proxy = CheckingProxy(policy.check_connection)
    proxy.start()
    return proxy


def _exchange(proxy: CheckingProxy, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=5) as sock:
        sock.sendall(data)
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
    return got


def test_a_refused_request_is_a_403_naming_the_reason(other: Counting) -> None:
    proxy = _proxy(("example.com",))
    try:
        url = f"http://127.0.0.1:{other.port}/x"
        got = _exchange(proxy, f"GET {url} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        assert got.startswith(b"HTTP/1.1 403 Forbidden\r\n")
        assert f"hearth refused {url}: 127.0.0.1 is a loopback address".encode() in got
        refused = proxy.take_refusals()
        assert [r.words for r in refused] == [
            f"the page tried to load {url} — refused: 127.0.0.1 is a loopback address; the "
            "browser does not visit loopback, private or link-local addresses unless "
            "[browser] allow names the host"
        ]
        assert not refused[0].tunnel and proxy.take_refusals() == []
        tunnel = _exchange(proxy, b"CONNECT 169.254.169.254:443 HTTP/1.1\r\n\r\n")
        assert tunnel.startswith(b"HTTP/1.1 403") and b"link-local" in tunnel
        assert other.connections == 0
    finally:
        proxy.stop()


def test_it_connects_to_the_address_it_checked_without_a_second_lookup(
    allowed: Counting,
) -> None:
    # Why a made-up name: only the policy's lookup knows it; a second lookup by the
    # proxy (the system's DNS) would find nothing and the request would fail.
    proxy = _proxy((f"intranet.test:{allowed.port}",), {"intranet.test": "127.0.0.1"})
    try:
        url = f"http://intranet.test:{allowed.port}/page"
        got = _exchange(proxy, f"GET {url} HTTP/1.1\r\nHost: intranet.test\r\n\r\n".encode())
        assert got.startswith(b"HTTP/1.0 200") or got.startswith(b"HTTP/1.1 200"), got[:200]
        assert f"served by port {allowed.port}".encode() in got
        assert b"\r\nConnection: close\r\n" in got.partition(b"\r\n\r\n")[0] + b"\r\n"
        assert allowed.connections == 1
    finally:
        proxy.stop()


def test_a_second_request_on_the_same_connection_never_reaches_another_host(
    allowed: Counting, other: Counting
) -> None:
    proxy = _proxy((f"127.0.0.1:{allowed.port}", f"127.0.0.1:{other.port}"))
    try:
        first = f"GET http://127.0.0.1:{allowed.port}/a HTTP/1.1\r\nHost: a\r\n\r\n"
        second = f"GET http://127.0.0.1:{other.port}/b HTTP/1.1\r\nHost: b\r\n\r\n"
        _exchange(proxy, (first + second).encode())
        assert allowed.connections == 1 and other.connections == 0
    finally:
        proxy.stop()


def test_stop_closes_the_port() -> None:
    proxy = _proxy(())
    port = proxy.port
    proxy.stop()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0
