"""MCP tools through the real ``hearth``: agent runs with a scripted OpenAI-compatible server, and
``hearth mcp list|tools|test``. The MCP servers are the SDK servers of test_client.py, as subprocesses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.e2e.conftest import Hearth, make_hearth
from tests.e2e.test_agent_run import (
    Agent,
    by_tool,
    calls_reply,
    text_reply,
    tool_names,
    tool_results,
)
from tests.fake_providers import FakeProvider
from tests.mcp.test_client import BIG, SMALL

API = "openai"


@pytest.fixture
def hearth(tmp_path: Path) -> Hearth:
    return make_hearth(tmp_path / "one")


def add_servers(hearth: Hearth, where: str, extra: str = "", **scripts: str) -> None:
    """Write each server script and name it in config.toml (plus ``extra`` lines in each
    table: the user's trust / read_only_tools) or in the workspace's .mcp.json, which
    the user then trusts with ``hearth workspace trust``."""
    hearth.home.mkdir(parents=True, exist_ok=True)
    servers: dict[str, Any] = {}
    for name, text in scripts.items():
        path = hearth.home.parent / f"{name}_server.py"
        path.write_text(text, encoding="utf-8")
        servers[name] = {"command": sys.executable, "args": [str(path)]}
    config = "[models]\nmax_retries = 0\n\n[mcp]\nstart_budget = 30\n"
    if where == "toml":
        for name, table in servers.items():
            config += f"\n[mcp.servers.{name}]\ncommand = {json.dumps(table['command'])}\n"
            config += f"args = {json.dumps(table['args'])}\n{extra}"
    (hearth.home / "config.toml").write_text(config)
    if where == "json":
        (hearth.workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        trusted = hearth.run("workspace", "trust", str(hearth.workspace))
        assert trusted.code == 0, trusted.err


def agent(hearth: Hearth, replies: list) -> Agent:
    return Agent(hearth, API, FakeProvider(replies).__enter__())


def test_an_mcp_tool_is_called_from_an_agent_turn(hearth: Hearth) -> None:
    add_servers(hearth, "json", small=SMALL)
    run = agent(
        hearth,
        [
            calls_reply(API, ("call_1", "mcp__small__weather", {"city": "杭州"})),
            text_reply(API, "It is sunny."),
        ],
    )
    try:
        result = run.run("run", "weather in Hangzhou?", "--mode", "agent", "--yes", timeout=60)
    finally:
        run.fake.__exit__(None, None, None)
    assert result.code == 0, result.err
    offered = tool_names(run.fake.bodies[0])
    assert {"mcp__small__weather", "mcp__small__write_note", "read_file"} <= offered
    assert tool_results(API, run.fake.bodies[1])["call_1"][0] == "sunny in 杭州"
    # Why allowed-by-flag: the server's readOnlyHint is a hint; only --yes let it run.
    assert by_tool(run.audit()) == [("mcp__small__weather", "allowed-by-flag", "ok")]


def test_ask_mode_offers_no_mcp_write_and_refuses_one(hearth: Hearth) -> None:
    add_servers(hearth, "toml", 'read_only_tools = ["weather"]\n', small=SMALL)
    run = agent(
        hearth,
        [
            calls_reply(API, ("call_w", "mcp__small__write_note", {"text": "no"})),
            text_reply(API, "I only read here."),
        ],
    )
    try:
        result = run.run("run", "note it", "--mode", "ask", "--yes", timeout=60)
    finally:
        run.fake.__exit__(None, None, None)
    assert result.code == 0, result.err
    offered = tool_names(run.fake.bodies[0])
    assert "mcp__small__weather" in offered and "mcp__small__write_note" not in offered
    text, _ = tool_results(API, run.fake.bodies[1])["call_w"]
    assert "ask mode" in text
    assert not (hearth.workspace / "note.txt").exists()
    assert by_tool(run.audit()) == [("mcp__small__write_note", "denied-by-policy", "error")]


def test_agent_mode_asks_before_an_mcp_write(hearth: Hearth) -> None:
    add_servers(hearth, "json", small=SMALL)
    run = agent(
        hearth,
        [
            calls_reply(API, ("call_w", "mcp__small__write_note", {"text": "kept"})),
            text_reply(API, "Written."),
        ],
    )
    try:
        result = run.run("run", "note it", "--yes", timeout=60)
    finally:
        run.fake.__exit__(None, None, None)
    assert result.code == 0, result.err
    assert (hearth.workspace / "note.txt").read_text() == "kept\n"
    assert by_tool(run.audit()) == [("mcp__small__write_note", "allowed-by-flag", "ok")]


def test_a_crash_is_a_tool_error_and_the_next_call_restarts_the_server(hearth: Hearth) -> None:
    # Why trust = true: quest offers only servers the user's own config trusts.
    add_servers(hearth, "toml", "trust = true\n", small=SMALL)
    run = agent(
        hearth,
        [
            calls_reply(API, ("call_c", "mcp__small__crash", {})),
            calls_reply(API, ("call_p", "mcp__small__weather", {"city": "Oslo"})),
            text_reply(API, "Recovered."),
        ],
    )
    try:
        result = run.run("run", "crash it", "--mode", "quest", timeout=60)
    finally:
        run.fake.__exit__(None, None, None)
    assert result.code == 0, result.err
    crashed, _ = tool_results(API, run.fake.bodies[1])["call_c"]
    assert "failed during the call to crash" in crashed and "restarted" in crashed
    assert tool_results(API, run.fake.bodies[2])["call_p"][0] == "sunny in Oslo"


def test_500_tools_reach_the_model_as_two_meta_tools(hearth: Hearth) -> None:
    add_servers(hearth, "toml", 'read_only_tools = ["get_weather"]\n', big=BIG)
    run = agent(
        hearth,
        [
            calls_reply(API, ("call_s", "search_capabilities", {"query": "天气预报"})),
            calls_reply(
                API,
                (
                    "call_x",
                    "execute_capability",
                    {"name": "mcp__big__get_weather", "arguments": {"city": "北京"}},
                ),
            ),
            calls_reply(
                API,
                (
                    "call_e",
                    "execute_capability",
                    {"name": "mcp__big__send_email", "arguments": {"to": "a", "body": "b"}},
                ),
            ),
            text_reply(API, "Done."),
        ],
    )
    try:
        result = run.run("run", "weather in Beijing", "--mode", "ask", timeout=90)
    finally:
        run.fake.__exit__(None, None, None)
    assert result.code == 0, result.err
    offered = tool_names(run.fake.bodies[0])
    assert {"search_capabilities", "execute_capability"} <= offered
    assert not [n for n in offered if n.startswith("mcp__")]
    tools_bytes = len(orjson.dumps(run.fake.bodies[0]["tools"]))
    assert tools_bytes < 20_000  # the built-in tools plus two, not 500 schemas
    found, _ = tool_results(API, run.fake.bodies[1])["call_s"]
    assert found.splitlines()[0].startswith("- mcp__big__get_weather")
    assert tool_results(API, run.fake.bodies[2])["call_x"][0] == "北京: 晴, 25°C"
    refused, _ = tool_results(API, run.fake.bodies[3])["call_e"]
    assert "ask mode" in refused  # the same permission checks as a direct call
    assert by_tool(run.audit()) == [
        ("search_capabilities", "allowed-by-mode", "ok"),
        ("mcp__big__get_weather", "allowed-by-mode", "ok"),
        ("execute_capability", "allowed-by-mode", "ok"),
        ("mcp__big__send_email", "denied-by-policy", "error"),
        ("execute_capability", "allowed-by-mode", "error"),
    ]


def test_hearth_mcp_list_tools_and_test(hearth: Hearth) -> None:
    add_servers(hearth, "toml", 'read_only_tools = ["weather"]\n', small=SMALL)
    (hearth.workspace / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "small": {"command": "ignored"},
                    "gone": {"command": "/no/such/mcp-server"},
                    "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
                }
            }
        )
    )
    before = {r["name"]: r for r in hearth.json("mcp", "list")}
    assert before["small"]["loaded"] and not before["gone"]["loaded"]
    refused = hearth.run("mcp", "test", "gone")
    assert refused.code != 0 and "which you have not trusted" in refused.err
    assert hearth.run("workspace", "trust", str(hearth.workspace)).code == 0
    listed = hearth.run("mcp", "list", "--json")
    assert listed.code == 0, listed.err
    rows = {r["name"]: r for r in orjson.loads(listed.out)}
    assert rows["gone"]["loaded"]
    assert rows["small"]["source"] == str(hearth.home / "config.toml")
    assert rows["gone"]["source"] == str(hearth.workspace / ".mcp.json")
    assert rows["remote"]["transport"] == "http"
    assert "'small' is in both" in listed.err

    tools = hearth.json("mcp", "tools", "small")
    by_name = {t["exposed_name"]: t for t in tools}
    assert by_name["mcp__small__weather"]["read_only"] is True  # the user's read_only_tools
    assert by_name["mcp__small__weather"]["needs_approval"] is False
    assert by_name["mcp__small__whoami"]["read_only_hint"] is True  # the server's hint only
    assert by_name["mcp__small__whoami"]["read_only"] is False
    assert by_name["mcp__small__write_note"]["read_only"] is False

    tested = hearth.run("mcp", "test", "small")
    assert tested.code == 0 and "listed 5 tools in" in tested.out

    for args, words in [
        (("mcp", "test", "gone"), "command not found: /no/such/mcp-server"),
        (("mcp", "tools", "nope"), "no MCP server named 'nope'"),
        (("mcp", "test", "remote"), "could not start"),
    ]:
        bad = hearth.run(*args)
        assert bad.code != 0
        lines = [line for line in bad.err_lines if "is in both" not in line]
        assert len(lines) == 1 and words in lines[0], bad.err


def test_a_broken_mcp_json_is_one_line(hearth: Hearth, tmp_path: Path) -> None:
    hearth.home.mkdir(parents=True, exist_ok=True)
    (hearth.workspace / ".mcp.json").write_text("{not json")
    bad = hearth.run("mcp", "list")
    assert bad.code != 0
    assert len(bad.err_lines) == 1 and ".mcp.json: not a readable JSON file" in bad.err
