"""``[browser] allow`` entries read into patterns (issue 25), for :mod:`.policy`.

An entry names sites by host (``example.com``, ``*.example.com``, ``127.0.0.1``,
``[::1]:9000``, ``https://example.com``) or by address block (``10.0.0.0/8``,
``192.168.1.0/24:8080``, ``fd00::/8``, ``[fd00::/8]:8080``). The two act differently,
and why:

* a host pattern lists the sites it matches (quest mode visits them, agent mode does
  not ask), and, unless it is wildcards only (``*``), lets the browser reach every
  address its names resolve to: the user named the host;
* a block lists the addresses written in a URL that lie in it (``http://10.1.2.3/``),
  and lets the browser reach those addresses, whichever name resolved to them, and no
  other: a name resolving into it as well as outside it is still refused for the
  outside addresses. A block never lists a NAME: which block a name is in is known only
  after the lookup, and the lookup itself sends the name out, which the first-visit
  question (or a quest's list of names) exists to prevent.

A block that spans non-public addresses of several kinds (``0.0.0.0/0``, ``::/0``,
``0.0.0.0/1``: loopback and private and link-local at once) names no network of the
user's and is refused as a config error, as is an IPv6 block that only carries IPv4
addresses (``::ffff:10.0.0.0/104``; addresses are judged by the IPv4 address they carry,
so write the IPv4 block).
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from workhearth.agent.browser.urls import (
    DEFAULT_PORTS,
    NOT_PUBLIC,
    IPAddress,
    Target,
    ipv4,
    plain,
)
from workhearth.errors import ConfigError, UsageError

Block = ipaddress.IPv4Network | ipaddress.IPv6Network
# IPv6 ranges whose addresses are judged by the IPv4 address they carry (urls.plain).
_V4_CARRIERS = tuple(
    ipaddress.IPv6Network(net) for net in ("::ffff:0:0/96", "64:ff9b::/96", "2002::/16")
)


@dataclass(frozen=True)
class SitePattern:
    """One ``[browser] allow`` entry: ``host`` a glob (``*.example.com``) or, for a block,
    the block as text; ``block`` the addresses of a block entry; ``port`` None = any."""

    text: str
    host: str
    port: int | None = None
    scheme: str | None = None
    block: Block | None = None

    @property
    def broad(self) -> bool:
        """True for a pattern of wildcards only (``*``): it names no particular host."""
        return self.block is None and not re.search(r"[^*?.]", self.host)

    def matches(self, target: Target) -> bool:
        """Whether the entry lists ``target``'s site (a block: an address written in it)."""
        if not self._same_door(target):
            return False
        if self.block is not None:
            return target.literal is not None and _in_block(target.literal, self.block)
        return fnmatch.fnmatchcase(target.name, self.host)

    def reaches(self, target: Target, address: IPAddress) -> bool:
        """Whether the entry lets the browser reach the non-public ``address`` that
        ``target``'s host resolved to: a block holding it, or a host pattern (not ``*``)
        that names the host."""
        if not self._same_door(target):
            return False
        if self.block is not None:
            return _in_block(address, self.block)
        return not self.broad and fnmatch.fnmatchcase(target.name, self.host)

    def _same_door(self, target: Target) -> bool:
        if self.scheme is not None and self.scheme != target.scheme:
            return False
        return self.port is None or self.port == target.port


def _in_block(address: IPAddress, block: Block) -> bool:
    # Why plain: ``::ffff:10.0.0.1`` is 10.0.0.1 to the address rules, so to a block too.
    address = plain(address)
    return address.version == block.version and address in block


def parse_allow(entries: Iterable[str]) -> tuple[SitePattern, ...]:
    """Every ``[browser] allow`` entry read; :class:`ConfigError` names the first that
    cannot be (a run checks them before its session exists, ``hearth doctor`` shows it)."""
    return tuple(parse_pattern(entry) for entry in entries)


def parse_pattern(text: str) -> SitePattern:
    """Read an ``allow`` entry: ``host``, ``*.host``, ``host:port``, ``[::1]:port``,
    ``https://host`` (the scheme then counts too), or a block ``10.0.0.0/8[:port]``,
    ``fd00::/8``, ``[fd00::/8]:port``. Raises :class:`ConfigError` (one line naming it)."""
    words = (
        f"[browser] allow: {text!r} is not a site; write a host (example.com, "
        "*.example.com, 127.0.0.1) or an address block (10.0.0.0/8) with an optional :port"
    )
    rest, scheme = text.strip(), None
    if "://" in rest:
        scheme, rest = rest.split("://", 1)
        if scheme.lower() not in DEFAULT_PORTS:
            raise ConfigError(words)
        scheme = scheme.lower()
    rest = rest.rstrip("/")
    if re.fullmatch(r"\[?[0-9A-Fa-f:.]+/[0-9]+\]?(:[0-9*]*)?", rest):
        return _block_pattern(text, rest, scheme, words)
    if not rest or re.search(r"[\s/@\\%]", rest):
        raise ConfigError(words)
    if rest.startswith("[") or rest.count(":") > 1:
        return _v6_pattern(text, rest, scheme, words)
    host, _, port_text = rest.partition(":")
    return SitePattern(text, _pattern_host(host, words), _pattern_port(port_text, words), scheme)


# ------------------------------------------------------------------ address blocks


def _block_pattern(text: str, rest: str, scheme: str | None, words: str) -> SitePattern:
    port_text = ""
    if rest.startswith("["):
        rest, bracket, after = rest[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ConfigError(words)
        port_text = after[1:]
    elif rest.count(":") <= 1:  # an IPv4 block, perhaps with a port
        rest, _, port_text = rest.partition(":")
    block = _read_block(text, rest)
    return SitePattern(text, str(block), _pattern_port(port_text, words), scheme, block)


def _read_block(text: str, rest: str) -> Block:
    """The block ``rest`` names, refused in words when it is wrong or too broad."""
    try:
        block = ipaddress.ip_network(rest)
    except ValueError:
        try:
            loose = ipaddress.ip_network(rest, strict=False)
        except ValueError:
            raise ConfigError(
                f"[browser] allow: {text!r} is not an address block; "
                "write one as 10.0.0.0/8, 192.168.1.0/24:8080 or fd00::/8"
            ) from None
        raise ConfigError(
            f"[browser] allow: {text!r} has address bits set past its prefix; "
            f"write the block as {loose}"
        ) from None
    if isinstance(block, ipaddress.IPv6Network) and any(
        block.subnet_of(carrier) for carrier in _V4_CARRIERS
    ):
        raise ConfigError(
            f"[browser] allow: {text!r} holds IPv6 forms of IPv4 addresses, which are "
            "judged as the IPv4 address they carry; write the IPv4 block instead"
        )
    kinds = sorted({kind for net, kind in NOT_PUBLIC if _overlaps(block, net)})
    if len(kinds) > 1:
        raise ConfigError(
            f"[browser] allow: {text!r} is too broad: it spans {', '.join(kinds)} addresses "
            "at once; name your own network's block (192.168.1.0/24, 10.0.0.0/8, fd00::/8)"
        )
    return block


def _overlaps(block: Block, net: Block) -> bool:
    return block.version == net.version and block.overlaps(net)


# ------------------------------------------------------------------ hosts


def _v6_pattern(text: str, rest: str, scheme: str | None, words: str) -> SitePattern:
    host, port_text = rest, ""
    if rest.startswith("["):
        host, bracket, after = rest[1:].partition("]")
        if not bracket or (after and not after.startswith(":")):
            raise ConfigError(words)
        port_text = after[1:]
    try:
        address = ipaddress.IPv6Address(host)
    except ValueError:
        raise ConfigError(words) from None
    return SitePattern(text, str(address), _pattern_port(port_text, words), scheme)


def _pattern_host(host: str, words: str) -> str:
    name = host.lower().removesuffix(".")
    if not name:
        raise ConfigError(words)
    if re.fullmatch(r"[0-9a-fx.]+", name):  # an address, perhaps written as a browser reads it
        try:
            v4 = ipv4(name)
        except UsageError:
            raise ConfigError(words) from None
        if v4 is not None:
            return str(v4)
    if not name.isascii():
        try:
            name = ".".join(
                x if re.search(r"[*?]", x) else x.encode("idna").decode() for x in name.split(".")
            )
        except UnicodeError:
            raise ConfigError(words) from None
    if not re.fullmatch(r"[a-z0-9_*?.-]+", name):
        raise ConfigError(words)
    return name


def _pattern_port(port_text: str, words: str) -> int | None:
    if port_text in ("", "*"):
        return None
    if not port_text.isdigit() or not 0 < int(port_text) <= 65535:
        raise ConfigError(words)
    return int(port_text)
