"""`hearth mcp` as a real subprocess over stdio, through the Python SDK's client;
what it saves the CLI finds, and the reverse."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp import Client, StdioServerParameters
from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth, text
from tests.mcp.server_fixtures import add_skill, error_text, run


@pytest.fixture
def h(tmp_path: Path) -> Hearth:
    hearth = make_hearth(tmp_path)
    add_skill(hearth.home)
    return hearth


def stdio(h: Hearth) -> StdioServerParameters:
    return StdioServerParameters(
        command=HEARTH_CMD[0], args=[*HEARTH_CMD[1:], "mcp"], env=h.env, cwd=str(h.workspace)
    )


def test_stdio_server_tools_prompts_memory_and_sessions(h: Hearth) -> None:
    sid = h.seed([text("user", "怎么恢复？"), text("assistant", "从快照恢复。")], title="恢复")
    saved_ids: list[str] = []

    async def go() -> None:
        async with Client(stdio(h), read_timeout_seconds=60) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_save", "memory_search", "session_read", "skill_get"} <= names
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            assert "greet__card" in prompts

            saved = await client.call_tool("memory_save", {"content": "记忆系统在崩溃后可以恢复"})
            assert not saved.is_error, saved
            saved_ids.append(saved.structured_content["id"])
            found = await client.call_tool("memory_search", {"query": "记忆"})
            assert found.structured_content["results"][0]["entry_id"] == saved_ids[0]
            listed = await client.call_tool("memory_list", {})
            assert [e["id"] for e in listed.structured_content["entries"]] == saved_ids

            read = await client.call_tool("session_read", {"id": sid})
            assert read.structured_content["total"] == 2
            latest = await client.call_tool("session_latest", {"id": sid})
            assert latest.structured_content["message"]["content"][0]["text"] == "从快照恢复。"

            bad = await client.call_tool("memory_search", {"query": "记忆", "limit": 99})
            assert "between 1 and 50" in error_text(bad)

            # saved by the CLI while the server runs: the server finds it
            cli = h.run("memory", "save", "部署前先跑冒烟测试", "--json")
            assert cli.code == 0, cli.err
            from_cli = await client.call_tool("memory_search", {"query": "冒烟"})
            hits = from_cli.structured_content["results"]
            assert hits and hits[0]["entry_id"] == cli.json()["id"]

            gone = await client.call_tool("memory_delete", {"id": cli.json()["id"]})
            assert not gone.is_error

    run(go)
    # saved through MCP: the CLI finds it; deleted through MCP: the CLI no longer does
    hits = h.json("memory", "search", "记忆")
    assert [hit["entry_id"] for hit in hits] == saved_ids
    assert h.json("memory", "search", "冒烟") == []


def test_stdio_server_exits_when_the_client_closes(h: Hearth) -> None:
    import subprocess

    proc = subprocess.run(
        [*HEARTH_CMD, "mcp"], cwd=h.workspace, env=h.env, input="", capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
