"""Address blocks in ``[browser] allow`` (agent/browser/allow.py, policy.py): a block lists
the addresses written in a URL inside it, lets the browser reach those addresses whichever
name resolved to them, and never lists a name (the lookup would send the name out).

DNS is the network edge: names under ``.test`` resolve through the test's table
(test_policy.Dns), which also records every lookup.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.browser.test_policy import PUBLIC, Dns, policy
from workhearth.agent.browser.policy import SitePolicy, parse_pattern
from workhearth.agent.browser.urls import parse_url
from workhearth.config import load_config
from workhearth.errors import ConfigError

# ------------------------------------------------------------------ reading entries


@pytest.mark.parametrize(
    ("entry", "block", "port"),
    [
        ("10.0.0.0/8", "10.0.0.0/8", None),
        ("192.168.1.0/24", "192.168.1.0/24", None),
        ("10.1.2.0/24:8080", "10.1.2.0/24", 8080),
        ("10.1.2.0/24:*", "10.1.2.0/24", None),
        ("fd00::/8", "fd00::/8", None),
        ("FD00:0::/8", "fd00::/8", None),
        ("[fd00::/8]:8443", "fd00::/8", 8443),
        ("127.0.0.0/8", "127.0.0.0/8", None),
        ("http://10.0.0.0/8", "10.0.0.0/8", None),
        ("10.9.9.9/32", "10.9.9.9/32", None),
    ],
)
def test_block_entries_are_read(entry: str, block: str, port: int | None) -> None:
    pattern = parse_pattern(entry)
    assert (str(pattern.block), pattern.port) == (block, port)
    assert not pattern.broad


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ("0.0.0.0/0", "is too broad: it spans "),
        ("::/0", "is too broad: it spans "),
        ("0.0.0.0/1", "loopback, private, shared (carrier-grade NAT), unspecified addresses"),
        ("::/8", "loopback, unspecified addresses at once"),
        ("10.0.0.1/8", "has address bits set past its prefix; write the block as 10.0.0.0/8"),
        ("10.0.0.0/33", "is not an address block; write one as 10.0.0.0/8"),
        ("fd00::/129", "is not an address block"),
        ("10.0.0.0/8:0", "is not a site"),
        ("10.0.0.0/8:70000", "is not a site"),
        ("[fd00::/8", "is not a site"),
        ("::ffff:10.0.0.0/104", "write the IPv4 block instead"),
        ("2002:a00::/24", "write the IPv4 block instead"),
        ("ftp://10.0.0.0/8", "is not a site"),
    ],
)
def test_bad_or_broad_blocks_are_one_config_line_naming_the_entry(entry: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_pattern(entry)
    message = caught.value.message
    assert message.startswith(f"[browser] allow: {entry!r} ")
    assert words in message and "\n" not in message


def test_a_broad_block_in_config_toml_stops_the_policy_in_words(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[browser]\nallow = ["*.example.test", "::/0"]\n')
    browser = load_config({}, tmp_path).browser
    with pytest.raises(ConfigError, match=r"^\[browser\] allow: '::/0' is too broad"):
        SitePolicy.from_config(browser, "quest")


@pytest.mark.parametrize(
    ("entry", "url", "matches"),
    [
        ("10.0.0.0/8", "http://10.200.0.1/", True),
        ("10.0.0.0/8", "http://11.0.0.1/", False),
        ("10.0.0.0/8", "http://0xa.1/", True),  # read as a browser reads it: 10.0.0.1
        ("10.0.0.0/8", "http://[::ffff:10.0.0.1]/", True),  # the IPv4 address it carries
        ("10.1.2.0/24:8080", "http://10.1.2.3:8080/", True),
        ("10.1.2.0/24:8080", "http://10.1.2.3/", False),
        ("https://10.0.0.0/8", "http://10.0.0.1/", False),
        ("fd00::/8", "http://[fd12::1]/", True),
        ("fd00::/8", "http://[fe80::1]/", False),
        ("[fd00::/8]:8443", "https://[fd00::5]:8443/", True),
        ("[fd00::/8]:8443", "https://[fd00::5]/", False),
        ("10.0.0.0/8", "http://intranet.test/", False),  # a block names no host
    ],
)
def test_a_block_lists_the_addresses_written_in_it(entry: str, url: str, matches: bool) -> None:
    assert parse_pattern(entry).matches(parse_url(url)) is matches


# ------------------------------------------------------------------ the policy


def test_a_literal_address_in_a_private_block_is_visited_unasked_and_others_refused() -> None:
    rules = policy("quest", ["192.168.1.0/24"])
    assert rules.check_url("http://192.168.1.20/status").ok
    outside = rules.check_url("http://192.168.2.20/")
    assert outside.outcome == "refused" and "192.168.2.20 is a private address" in outside.reason
    assert policy("agent", ["10.0.0.0/8"]).check_url("http://10.9.8.7:9000/").ok  # no question


def test_a_block_with_a_port_lifts_only_that_port() -> None:
    rules = policy("quest", ["10.1.2.0/24:8080"])
    assert rules.check_url("http://10.1.2.3:8080/").ok
    assert rules.check_url("http://10.1.2.3:8081/").outcome == "refused"


def test_ipv6_blocks() -> None:
    rules = policy("quest", ["fd00::/8", "[fe80::/10]:80"])
    assert rules.check_url("http://[fd00::1:2]/").ok
    assert rules.check_url("http://[fe80::1]/").ok
    assert rules.check_url("http://[fe80::1]:81/").outcome == "refused"
    refused = rules.check_url("http://[fc00::1]/")  # unique-local, outside fd00::/8
    assert refused.outcome == "refused" and "unique-local" in refused.reason


def test_a_name_resolving_into_the_block_is_reached_once_it_may_be_looked_up() -> None:
    dns = Dns({"wiki.test": ["10.1.2.3"], "router.test": ["192.168.0.1"]})
    rules = policy("agent", ["10.0.0.0/8"], dns)
    # A block names no host: the first visit still asks, and nothing is looked up before it.
    assert rules.check_url("https://wiki.test/").outcome == "ask"
    assert dns.asked == []
    rules.remember("https://wiki.test")
    rules.remember("https://router.test")
    assert rules.check_url("https://wiki.test/").ok
    outside = rules.check_url("https://router.test/")
    assert outside.outcome == "refused"
    assert "router.test resolves to 192.168.0.1, a private address" in outside.reason


def test_with_a_star_a_quest_reaches_names_inside_the_block_and_no_other_private_one() -> None:
    dns = Dns({"wiki.test": ["10.1.2.3"], "router.test": ["192.168.0.1"], "pub.test": [PUBLIC]})
    rules = policy("quest", ["*", "10.0.0.0/8"], dns)
    assert rules.check_url("https://wiki.test/").ok
    assert rules.check_url("https://pub.test/").ok
    assert rules.check_url("https://router.test/").outcome == "refused"
    # Without the block, the star alone reaches no private address.
    assert policy("quest", ["*"], dns).check_url("https://wiki.test/").outcome == "refused"


def test_a_quest_never_looks_up_a_name_a_block_might_hold() -> None:
    dns = Dns({"wiki.test": ["10.1.2.3"]})
    refused = policy("quest", ["10.0.0.0/8"], dns).check_url("https://wiki.test/?q=secret")
    assert refused.outcome == "refused" and "quest mode visits only" in refused.reason
    assert dns.asked == []


def test_each_private_address_of_a_name_needs_a_block_that_holds_it() -> None:
    dns = Dns({"split.test": ["10.1.2.3", "fd00::5"], "both.test": ["10.1.2.3", PUBLIC]})
    rules = policy("agent", ["10.0.0.0/8"], dns)
    rules.remember("https://split.test")
    rules.remember("https://both.test")
    refused = rules.check_url("https://split.test/")
    assert refused.outcome == "refused" and "fd00::5, a unique-local address" in refused.reason
    assert rules.check_url("https://both.test/").ok
    assert (
        policy("agent", ["10.0.0.0/8", "fd00::/8"], dns)
        .check_resource("https://split.test/a.js")
        .ok
    )


def test_resources_and_the_proxy_follow_the_block_too() -> None:
    dns = Dns({"cdn.test": ["10.1.2.3"], "router.test": ["192.168.0.1"]})
    rules = policy("quest", ["docs.test", "10.0.0.0/8"], dns)
    assert rules.check_resource("https://cdn.test/app.js").ok
    assert rules.check_resource("http://192.168.0.1/").outcome == "refused"
    verdict, addresses = rules.check_connection("https://cdn.test/app.js")
    assert verdict.ok and [str(a) for a in addresses] == ["10.1.2.3"]
    assert not rules.check_connection("https://router.test/")[0].ok


def test_a_loopback_block_covers_localhost_only_with_both_its_addresses() -> None:
    half = policy("agent", ["127.0.0.0/8"])
    half.remember("http://localhost:8000")
    refused = half.check_url("http://localhost:8000/")
    assert refused.outcome == "refused" and "::1" in refused.reason
    both = policy("agent", ["127.0.0.0/8", "::1/128"])
    assert both.check_url("http://localhost:8000/").outcome == "ask"  # a name: asked first
    both.remember("http://localhost:8000")
    assert both.check_url("http://localhost:8000/").ok
    assert both.check_url("http://127.0.0.1:8000/").ok  # written in the block: unasked


def test_hearths_own_server_stays_refused_inside_an_allowed_block() -> None:
    rules = policy("quest", ["127.0.0.0/8"], servers=["http://127.0.0.1:8123"])
    assert "hearth's own server" in rules.check_url("http://127.0.0.1:8123/").reason
    assert rules.check_url("http://127.0.0.1:8124/").ok


def test_an_earlier_star_does_not_hide_a_later_named_host() -> None:
    rules = policy("agent", ["*", "intranet.test"], Dns({"intranet.test": ["10.1.2.3"]}))
    assert rules.check_url("https://intranet.test/").ok
