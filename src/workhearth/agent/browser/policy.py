"""Where the agent's browser may go and what asks first (issue 25): decisions, no Playwright.

Why a URL is checked at all: a URL carries data out (a model that read a file can put it
in a query string, or in a host name, which a DNS lookup already sends), and the browser
reaches what the user's machine reaches: the router on the LAN, a cloud's metadata
address, hearth's own server where the user is logged in. So:

* only ``http:``/``https:`` (and ``about:blank``) are opened; ``file:``, ``chrome:``,
  ``data:``, ``javascript:`` … are refused with words the model can act on;
* hearth's own server is refused in every mode, even when ``[browser] allow`` names it;
* a host whose address (the literal, or EVERY address its name resolves to) is loopback,
  private, link-local, unique-local, shared (CGNAT), multicast, unspecified or otherwise
  not public is refused unless an ``allow`` entry names it (a bare ``*`` names no
  private host) or is an address block holding that address (``10.0.0.0/8``: ``.allow``
  says why a block lists addresses but never names);
* per mode: ``ask`` offers the read-only tools, ``agent`` all; in both the first visit to
  each site asks (a site is ``scheme://host[:port]``, remembered for the session, and
  across its resumes in the session folder: ``.visits``), and
  an ``allow``-listed site never asks (the user's config vouches for it, as
  ``trust = true`` does for an MCP server); ``quest`` visits only ``allow``-listed sites
  and asks nothing; ``[quest] network = false`` offers no browser tool at all (the
  browser runs outside the sandbox).

The name of an unvisited, unlisted site is not resolved before the user says yes: the
lookup itself would send the name out. URLs are read the way a browser reads them
(WHATWG): ``http://0x7f.1/`` is 127.0.0.1, and anything a browser could read differently
from us (a user name in the URL, ``%`` or a backslash in the host) is refused. The
browser's route handler checks the URL Chromium itself canonicalised before a page's
request goes out, and its proxy (``proxy.py``, :meth:`SitePolicy.check_connection`)
every request, redirects included, connecting to the addresses checked; those checks
are the ones that count, this one words it early.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

from workhearth.agent.approval import Mode
from workhearth.agent.browser.allow import SitePattern, parse_allow, parse_pattern
from workhearth.agent.browser.approvals import mask
from workhearth.agent.browser.finder import find_browser, why_no_browser
from workhearth.agent.browser.urls import (
    SCHEME,
    GetAddrInfo,
    IPAddress,
    Target,
    address_kind,
    is_blank,
    is_localhost,
    parse_url,
    plain,
    resolve,
    site_of,
)
from workhearth.agent.browser.visits import Visits
from workhearth.config import BrowserConfig
from workhearth.errors import UsageError

Outcome = Literal["ok", "ask", "refused"]
Action = Literal["submit", "download", "upload"]
# Why: the shared design names these here; they live beside it (.urls reads URLs,
# .allow reads [browser] allow, .finder finds the browser, .approvals words the card).
__all__ = [
    "BROWSER_TOOLS",
    "READ_ONLY_TOOLS",
    "SitePattern",
    "SitePolicy",
    "SiteVerdict",
    "address_kind",
    "find_browser",
    "mask",
    "parse_pattern",
    "parse_url",
    "site_of",
    "why_no_browser",
]

BROWSER_TOOLS: tuple[str, ...] = (
    "browser_open",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_select",
    "browser_press",
    "browser_scroll",
    "browser_wait",
    "browser_back",
    "browser_tabs",
    "browser_extract",
    "browser_screenshot",
    "browser_download",
    "browser_upload",
    "browser_close",
)
# Why: ask mode reads; clicking, typing, pressing and selecting can submit a form.
READ_ONLY_TOOLS = frozenset(
    {
        "browser_open",
        "browser_snapshot",
        "browser_extract",
        "browser_screenshot",
        "browser_tabs",
        "browser_wait",
        "browser_scroll",
        "browser_back",
        "browser_close",
    }
)
_RESOLVE_TTL = 30.0  # seconds a host's addresses are reused (subresources ask often)


# ------------------------------------------------------------------ the verdict


@dataclass(frozen=True)
class SiteVerdict:
    """What may happen with one URL: ``ok``, ``ask`` (the user first), or ``refused``.

    ``reason`` is words for the model (refused) or the approval card (ask).
    """

    outcome: Outcome
    site: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


def _refused(site: str, reason: str) -> SiteVerdict:
    return SiteVerdict("refused", site, reason)


@dataclass(frozen=True)
class _Endpoint:
    """An address hearth's server listens on; ``address`` None: every address (0.0.0.0)."""

    address: IPAddress | None
    port: int


@dataclass
class SitePolicy:
    """The browser rules of one agent session, and the sites its user already let it visit.

    Build it with :meth:`from_config`; one per session (first visits are remembered in
    ``visits``: give it :meth:`Visits.of_session` to keep them across a resume).
    """

    mode: Mode
    allow: tuple[SitePattern, ...] = ()
    quest_network: bool = True
    server_sites: frozenset[str] = frozenset()
    getaddrinfo: GetAddrInfo = socket.getaddrinfo
    clock: Callable[[], float] = time.monotonic
    _endpoints: tuple[_Endpoint, ...] = ()
    visits: Visits = field(default_factory=Visits)
    _cache: dict[str, tuple[float, tuple[IPAddress, ...]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_config(
        cls,
        browser: BrowserConfig,
        mode: Mode,
        *,
        quest_network: bool = True,
        server_urls: Iterable[str] = (),
        getaddrinfo: GetAddrInfo = socket.getaddrinfo,
    ) -> SitePolicy:
        """``browser`` is ``Config.browser``; ``quest_network`` is ``[quest] network``
        (``Policy.network``); ``server_urls`` are where hearth's own server answers
        (``hearth serve``'s URL, ``server.json``), refused in every mode."""
        allow = parse_allow(browser.allow)
        sites: set[str] = set()
        endpoints: list[_Endpoint] = []
        for url in server_urls:
            try:
                target = parse_url(url)
            except UsageError:
                continue  # not an http(s) address: the browser could not open it anyway
            sites.add(target.site)
            endpoints += _server_endpoints(target, getaddrinfo)
        return cls(
            mode,
            allow,
            quest_network,
            frozenset(sites),
            getaddrinfo,
            _endpoints=tuple(endpoints),
        )

    # -- which tools

    def offered_tools(self) -> tuple[str, ...]:
        """The browser tools this mode offers (none in a quest without network)."""
        if self.mode == "quest" and not self.quest_network:
            return ()
        if self.mode == "ask":
            return tuple(t for t in BROWSER_TOOLS if t in READ_ONLY_TOOLS)
        return BROWSER_TOOLS

    def offers(self, tool: str) -> bool:
        return tool in self.offered_tools()

    def asks(self, action: Action) -> bool:
        """Whether a form submission, download or upload asks the user first (agent mode)."""
        return self.mode == "agent"

    # -- where to

    def remember(self, site: str) -> None:
        """The user let the browser visit ``site``: later visits this session do not ask
        (nor after a resume, when ``visits`` is kept in the session folder)."""
        self.visits.add(site)

    def visited(self, site: str) -> bool:
        return site in self.visits

    def check_url(self, url: str) -> SiteVerdict:
        """May the browser navigate to ``url`` now: ``ok``, ``ask`` or ``refused``.

        On ``ask``, ask the user with :func:`visit_summary`; on yes, :meth:`remember`
        the site and check again (the address checks run then: not before the user
        agreed to send the name out).
        """
        if is_blank(url):
            return SiteVerdict("ok", "about:blank")
        try:
            target = parse_url(url)
        except UsageError as exc:
            return _refused("", exc.message)
        early = self._before_lookup(target)
        if early is not None:
            return early
        return self._after_lookup(target)

    def check_resource(self, url: str) -> SiteVerdict:
        """May a page fetch ``url`` (an image, a script, a frame): the address rules only.

        Modes and first visits apply to navigation; a page's own parts may come from any
        public site, never from a private address, hearth's server or a local file.
        """
        scheme = SCHEME.match(url.strip())
        if scheme and scheme.group(1).lower() in ("data", "blob"):
            return SiteVerdict("ok", "")  # made in the page: nothing leaves the machine
        try:
            target = parse_url(url)
        except UsageError as exc:
            return _refused("", exc.message)
        return self._after_lookup(target)

    def check_connection(self, url: str) -> tuple[SiteVerdict, tuple[IPAddress, ...]]:
        """:meth:`check_resource`'s rules for the browser's proxy, with the addresses judged.

        Why the addresses: the proxy connects to exactly these, so a name cannot resolve
        to a public address for the check and a private one for the connection.
        """
        try:
            target = parse_url(url)
        except UsageError as exc:
            return _refused("", exc.message), ()
        return self._checked(target)

    def _listed(self, target: Target) -> bool:
        return any(p.matches(target) for p in self.allow)

    def _private_refusal(
        self, target: Target, addresses: Iterable[IPAddress]
    ) -> SiteVerdict | None:
        """Refused when one of ``addresses`` is not public and no ``allow`` entry reaches it
        (a host pattern naming the host, or a block holding that address)."""
        for address in addresses:
            kind = address_kind(address)
            if kind is not None and not any(p.reaches(target, address) for p in self.allow):
                return _refused(target.site, _private_words(target.name, address, kind))
        return None

    def _before_lookup(self, target: Target) -> SiteVerdict | None:
        """What can be said without sending the name out: server, literal address, mode."""
        site = target.site
        if self._is_server(target, _literal_addresses(target)):
            return _refused(site, _SERVER_WORDS)
        private = self._private_refusal(target, _literal_addresses(target))
        if private is not None:
            return private
        if self._listed(target):
            return None
        if self.mode == "quest":
            return _refused(
                site, f"quest mode visits only the sites in [browser] allow, and {site} is not one"
            )
        if not self.visited(site):
            return SiteVerdict("ask", site, f"first visit to {site} in this session")
        return None

    def _after_lookup(self, target: Target) -> SiteVerdict:
        return self._checked(target)[0]

    def _checked(self, target: Target) -> tuple[SiteVerdict, tuple[IPAddress, ...]]:
        site = target.site
        literal = _literal_addresses(target)
        try:
            addresses = literal or self._resolve(target.name)
        except UsageError as exc:
            return _refused(site, exc.message), ()
        if self._is_server(target, addresses):
            return _refused(site, _SERVER_WORDS), addresses
        private = self._private_refusal(target, addresses)
        return private or SiteVerdict("ok", site), addresses

    def _resolve(self, host: str) -> tuple[IPAddress, ...]:
        now = self.clock()
        with self._lock:
            cached = self._cache.get(host)
        if cached is not None and now - cached[0] < _RESOLVE_TTL:
            return cached[1]
        addresses = resolve(host, self.getaddrinfo)
        with self._lock:
            self._cache[host] = (now, addresses)
        return addresses

    def _is_server(self, target: Target, addresses: Iterable[IPAddress]) -> bool:
        if target.site in self.server_sites:
            return True
        for end in self._endpoints:
            if end.port != target.port:
                continue
            for address in addresses:
                if end.address == plain(address):
                    return True
                # Why: a server on 0.0.0.0 answers on every address of this machine.
                if end.address is None and address_kind(address) is not None:
                    return True
        return False


_SERVER_WORDS = (
    "that is hearth's own server; the browser never opens it "
    "(it would act with the user's login to hearth)"
)


def _literal_addresses(target: Target) -> tuple[IPAddress, ...]:
    if target.literal is not None:
        return (target.literal,)
    if is_localhost(target.name):
        return (ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1"))
    return ()


def _server_endpoints(target: Target, getaddrinfo: GetAddrInfo) -> list[_Endpoint]:
    if target.literal is not None and address_kind(target.literal) == "unspecified":
        return [_Endpoint(None, target.port)]
    addresses = _literal_addresses(target)
    if not addresses:
        try:
            addresses = resolve(target.name, getaddrinfo)
        except UsageError:
            return []  # a name nobody can resolve: no address to guard
    return [_Endpoint(plain(a), target.port) for a in addresses]


def _private_words(host: str, address: IPAddress, kind: str) -> str:
    where = f"{host} is" if str(address) == host else f"{host} resolves to {address},"
    return (
        f"{where} a {kind} address; the browser does not visit loopback, private or "
        "link-local addresses unless [browser] allow names the host"
    )
