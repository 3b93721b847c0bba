"""Reading a URL as a browser does, and judging its addresses (agent/browser/urls.py)."""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

import pytest

from workhearth.agent.browser.urls import address_kind, parse_url, resolve, site_of
from workhearth.errors import UsageError


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://example.com/a?b=c#d", "https://example.com"),
        ("HTTPS://Example.COM:443/", "https://example.com"),
        ("http://example.com./", "http://example.com."),
        ("http://127.0.0.1.:8123/", "http://127.0.0.1:8123"),
        ("http://example.com:80", "http://example.com"),
        ("http://example.com:8080/x", "http://example.com:8080"),
        ("http://127.0.0.1:8123/", "http://127.0.0.1:8123"),
        ("http://[::1]:9000/", "http://[::1]:9000"),
        ("http://[0:0:0:0:0:0:0:1]/", "http://[::1]"),
        ("https://bücher.example/", "https://xn--bcher-kva.example"),
        ("  https://example.com/  ", "https://example.com"),
        ("about:blank", "about:blank"),
    ],
)
def test_site_is_scheme_host_and_port_as_a_browser_writes_them(url: str, site: str) -> None:
    assert site_of(url) == site


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0x7f.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("192.168.0x1.1", "192.168.1.1"),
        ("10.0.258", "10.0.1.2"),
    ],
)
def test_numeric_hosts_are_read_as_the_browser_reads_them(host: str, address: str) -> None:
    target = parse_url(f"http://{host}/")
    assert target.literal == ipaddress.ip_address(address)
    assert target.site == f"http://{address}"


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("file:///etc/passwd", "file: URLs are not opened"),
        ("FILE:///etc/passwd", "file: URLs are not opened"),
        ("chrome://settings", "browser's own settings"),
        ("view-source:https://example.com", "browser's own settings"),
        ("data:text/html,<b>x</b>", "data: URLs are not opened"),
        ("javascript:alert(1)", "javascript: URLs are not opened"),
        ("about:config", "only about:blank"),
        ("ftp://example.com/", "only http:// and https://"),
        ("example.com/page", "not a full URL"),
        ("http:example.com", "write the URL as http://host"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http://127%2e0%2e0%2e1/", "no % in host names"),
        ("http://exa\tmple.com/", "tab, newline or control"),
        ("http://example.com:99999/", "not a port"),
        ("http://example.com:0/", "not a port"),
        ("http://example.com:8o/", "not a port"),
        ("http:///path", "no host"),
        ("http://[::1/", "not a valid IPv6 host"),
        ("http://[fe80::1%25eth0]/", "not a valid IPv6 address"),
        ("http://256.1.1.1/", "not a valid IPv4 address"),
        ("http://1.2.3.4.5/", "not a valid IPv4 address"),
        ("http://09.1.1.1/", "not a valid IPv4 address"),
        ("http://bad_host!.com/", "not a valid host name"),
        ("http://" + "a" * 64 + ".com/", "not a valid host name"),
    ],
)
def test_what_a_browser_could_read_otherwise_is_refused_in_words(url: str, words: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_url(url)
    assert words in caught.value.message
    assert "\n" not in caught.value.message


def test_a_backslash_ends_the_host_as_in_a_browser() -> None:
    # Why: urllib reads 127.0.0.1 as the host here; Chromium reads example.com and a path.
    assert parse_url("http://example.com\\@127.0.0.1/").host == "example.com"
    assert parse_url("http://example.com\\path").host == "example.com"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.255", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("169.254.169.254", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("192.0.2.5", "reserved"),
        ("240.0.0.1", "reserved"),
        ("::", "unspecified"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fc00::1", "unique-local"),
        ("fd12:3456::1", "unique-local"),
        ("ff02::1", "multicast"),
        ("fec0::1", "site-local"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:a9fe:a9fe::", "link-local"),  # 6to4 of 169.254.169.254
        ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
        ("::7f00:1", "loopback"),  # the old IPv4-compatible form
        ("2001:db8::1", "reserved"),
    ],
)
def test_addresses_that_are_not_public_are_named(address: str, kind: str) -> None:
    assert address_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "93.184.216.34", "2606:4700::1111", "::ffff:8.8.8.8", "172.32.0.1"]
)
def test_public_addresses_pass(address: str) -> None:
    assert address_kind(ipaddress.ip_address(address)) is None


def test_resolve_uses_the_real_resolver_by_default() -> None:
    # localhost resolves from /etc/hosts on every machine the tests run on.
    found = resolve("localhost")
    assert found
    assert all(address_kind(a) == "loopback" for a in found)


def test_resolve_keeps_every_address_once_and_drops_a_scope() -> None:
    def getaddrinfo(host: str, port: int | None) -> list[tuple[object, ...]]:
        assert host == "multi.test"
        stream, dgram = socket.SOCK_STREAM, socket.SOCK_DGRAM
        return [
            (socket.AF_INET, stream, 6, "", ("93.184.216.34", 0)),
            (socket.AF_INET, dgram, 17, "", ("93.184.216.34", 0)),
            (socket.AF_INET6, stream, 6, "", ("fe80::1%eth0", 0, 0, 2)),
        ]

    assert resolve("multi.test", getaddrinfo) == (
        ipaddress.ip_address("93.184.216.34"),
        ipaddress.ip_address("fe80::1"),
    )


def test_a_name_that_does_not_resolve_is_said_in_words() -> None:
    def getaddrinfo(host: str, port: int | None) -> list[tuple[object, ...]]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(UsageError, match=r"cannot find the address of nowhere\.test"):
        resolve("nowhere.test", getaddrinfo)


# Every URL above that parse_url reads, read by Chromium's own parser: the sites must agree.
_AGREE = [
    "HTTPS://Example.COM.:443/",
    "http://127.0.0.1.:8123/",
    "http://example.com:8080/x",
    "http://0x7f.1:8123/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://192.168.0x1.1/",
    "http://10.0.258/",
    "http://[0:0:0:0:0:0:0:1]:9000/",
    "http://[::ffff:127.0.0.1]/",
    "https://bücher.example/",
    "http://example.com\\@127.0.0.1/",
    "http://localhost:80/",
]


def test_chromium_reads_the_same_site() -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian chromium is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        try:
            page = browser.new_page()
            origins = page.evaluate("(urls) => urls.map((u) => new URL(u).origin)", _AGREE)
        finally:
            browser.close()
    for url, origin in zip(_AGREE, origins, strict=True):
        assert site_of(url) == origin, url
