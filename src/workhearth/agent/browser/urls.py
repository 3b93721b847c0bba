"""A URL and its addresses as the browser will see them (issue 25), for :mod:`.policy`.

URLs are read the way a browser reads them (WHATWG): ``http://0x7f.1/`` is 127.0.0.1,
``HTTP://Example.COM:80`` is ``http://example.com``; anything a browser could read
differently from Python's ``urllib`` (a user name in the URL, ``%`` or a backslash in the
host) is refused rather than guessed. Addresses are judged by what they are (loopback,
private, link-local …), an IPv6 form that carries an IPv4 address by the address it carries.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workhearth.errors import UsageError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# socket.getaddrinfo's shape: (host, port) -> [(family, type, proto, canonname, sockaddr)].
GetAddrInfo = Callable[[str, int | None], Sequence[tuple[Any, ...]]]
DEFAULT_PORTS = {"http": 80, "https": 443}

_BROWSER_SCHEMES = frozenset(
    {"chrome", "chrome-extension", "chrome-untrusted", "edge", "brave", "devtools", "view-source"}
)
_INLINE_SCHEMES = frozenset({"data", "javascript", "blob", "filesystem", "vbscript"})
SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LABEL = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?")
_IPV4_PART = re.compile(r"0x[0-9a-f]*|[0-9]+")


# ------------------------------------------------------------------ reading a URL


@dataclass(frozen=True)
class Target:
    """A URL as the browser reads it: ``host`` lowercased, IDNA, no brackets."""

    url: str
    scheme: str
    host: str
    port: int
    literal: IPAddress | None  # the host when it is an address

    @property
    def name(self) -> str:
        """The host without a final dot: what DNS and ``[browser] allow`` see."""
        return self.host.removesuffix(".")

    @property
    def site(self) -> str:
        """``scheme://host[:port]``, the default port left out (the unit of first visits)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS.get(self.scheme) == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"


def site_of(url: str) -> str:
    """``scheme://host[:port]`` of an http(s) URL; ``about:blank`` for itself.

    Raises :class:`UsageError` (one line the model can act on) for anything else.
    """
    if is_blank(url):
        return "about:blank"
    return parse_url(url).site


def parse_url(url: str) -> Target:
    """Read an http(s) URL as a browser would, refusing what a browser could read otherwise."""
    text = url.strip(" \x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r")
    if _CONTROL.search(text):
        raise UsageError("the URL has a tab, newline or control character in it")
    found = SCHEME.match(text)
    if found is None:
        raise UsageError(f"{_short(text)!r} is not a full URL; start it with https:// or http://")
    scheme = found.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise UsageError(_scheme_refusal(scheme))
    rest = text[found.end() :]
    if not rest.startswith("//"):
        raise UsageError(f"write the URL as {scheme}://host/…")
    # Why: for http(s) a browser ends the host at a backslash as at a slash.
    authority = re.split(r"[/?#\\]", rest[2:], maxsplit=1)[0]
    if "@" in authority:
        raise UsageError("URLs with a user name or password in them (user@host) are not opened")
    host, port = _split_port(authority, scheme)
    literal, host = _read_host(host)
    return Target(text, scheme, host, port, literal)


def is_blank(url: str) -> bool:
    return url.strip().lower() == "about:blank"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scheme_refusal(scheme: str) -> str:
    if scheme == "file":
        return "file: URLs are not opened: the browser does not read local files (use read_file)"
    if scheme in _BROWSER_SCHEMES:
        return f"{scheme}: pages (the browser's own settings and internals) are not opened"
    if scheme in _INLINE_SCHEMES:
        return f"{scheme}: URLs are not opened; open a page by its https:// address"
    if scheme == "about":
        return "of about: pages only about:blank is opened"
    return f"only http:// and https:// URLs are opened, not {scheme}:"


def _split_port(authority: str, scheme: str) -> tuple[str, int]:
    if authority.startswith("["):
        host, bracket, after = authority[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise UsageError(f"{authority!r} is not a valid IPv6 host; write it as [::1]:8080")
        host, port_text = f"[{host}]", after[1:]
    else:
        host, _, port_text = authority.partition(":")
    if not host:
        raise UsageError("the URL has no host")
    if port_text == "":
        return host, DEFAULT_PORTS[scheme]
    if not port_text.isascii() or not port_text.isdigit() or not 0 < int(port_text) <= 65535:
        raise UsageError(f"{port_text!r} is not a port (1 to 65535)")
    return host, int(port_text)


def _read_host(host: str) -> tuple[IPAddress | None, str]:
    """The host as an address (when it is one) and as text, the way a browser reads it."""
    if host.startswith("["):
        try:
            if "%" in host:  # Why: a browser takes no zone (%eth0); Python accepts one
                raise ValueError(host)
            address = ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise UsageError(f"{host} is not a valid IPv6 address") from None
        return address, str(address)
    if "%" in host:
        raise UsageError(f"{host!r} is not a valid host name (no % in host names)")
    # Why: a browser keeps a final dot (``example.com.`` is a site of its own) but reads
    # ``127.0.0.1.`` as the address; the checks read the name without it.
    dot = "." if host.endswith(".") and len(host) > 1 else ""
    name = host.lower().removesuffix(".")
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise UsageError(f"{host!r} is not a valid host name") from None
    v4 = ipv4(name)
    if v4 is not None:
        return v4, str(v4)
    labels = name.split(".")
    if len(name) > 253 or not all(len(x) <= 63 and _LABEL.fullmatch(x) for x in labels):
        raise UsageError(f"{host!r} is not a valid host name")
    return None, name + dot


def ipv4(name: str) -> ipaddress.IPv4Address | None:
    """The WHATWG IPv4 reading: a name ending in a number is an address (``0x7f.1``)."""
    parts = name.split(".")
    if not _IPV4_PART.fullmatch(parts[-1]):
        return None
    numbers = [_ipv4_number(p, name) for p in parts]
    if len(numbers) > 4 or any(n > 255 for n in numbers[:-1]):
        raise UsageError(f"{name!r} is not a valid IPv4 address")
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        raise UsageError(f"{name!r} is not a valid IPv4 address")
    value = numbers[-1] + sum(n << 8 * (3 - i) for i, n in enumerate(numbers[:-1]))
    return ipaddress.IPv4Address(value)


def _ipv4_number(part: str, name: str) -> int:
    try:
        if part.startswith("0x"):
            return int(part[2:] or "0", 16)
        if len(part) > 1 and part.startswith("0"):
            return int(part, 8)
        return int(part, 10)
    except ValueError:
        raise UsageError(f"{name!r} is not a valid IPv4 address") from None


# ------------------------------------------------------------------ addresses

# The non-public ranges and their kind (.allow also reads them: a block spanning two kinds
# is too broad).
NOT_PUBLIC: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(net), words)
    for net, words in (
        ("0.0.0.0/8", "unspecified"),
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("100.64.0.0/10", "shared (carrier-grade NAT)"),
        ("169.254.0.0/16", "link-local"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("fc00::/7", "unique-local"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def address_kind(address: IPAddress) -> str | None:
    """Why ``address`` is not a public one ("loopback", "private" …), or None when it is.

    IPv6 forms that carry an IPv4 address (mapped ``::ffff:a.b.c.d``, 6to4, NAT64,
    the old compatible ``::a.b.c.d``) are judged by the address they carry.
    """
    embedded = _embedded_v4(address)
    if embedded is not None:
        return address_kind(embedded)
    for network, words in NOT_PUBLIC:
        if address.version == network.version and address in network:
            return words
    return None if address.is_global else "reserved"


def plain(address: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 form carries (``::ffff:127.0.0.1`` → 127.0.0.1), else itself."""
    return _embedded_v4(address) or address


def _embedded_v4(address: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64:
        return low
    if address in _V4_COMPATIBLE and int(address) > 1:
        return low
    return None


def is_localhost(name: str) -> bool:
    # Why: Chromium answers localhost and *.localhost itself, with no DNS lookup.
    return name == "localhost" or name.endswith(".localhost")


def resolve(host: str, getaddrinfo: GetAddrInfo = socket.getaddrinfo) -> tuple[IPAddress, ...]:
    """Every address ``host`` resolves to (``socket.getaddrinfo``; tests pass their own).

    Raises :class:`UsageError` when it resolves to nothing.
    """
    try:
        infos = getaddrinfo(host, None)
    except (OSError, UnicodeError):
        raise UsageError(
            f"cannot find the address of {host} (no such host, or no network)"
        ) from None
    found: dict[IPAddress, None] = {}
    for info in infos:
        text = str(info[4][0]).split("%", 1)[0]  # an IPv6 scope (fe80::1%eth0) is no part
        found[ipaddress.ip_address(text)] = None
    if not found:
        raise UsageError(f"cannot find the address of {host}")
    return tuple(found)
