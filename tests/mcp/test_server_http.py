"""`/mcp` over streamable HTTP from a real `hearth serve`, through the Python SDK's client:
refused without the token, and the same tools as stdio; REST sees what MCP saved and
the reverse."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth, text
from tests.mcp.server_fixtures import add_skill, error_text, run

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


class Served:
    def __init__(self, h: Hearth, base: str) -> None:
        self.h = h
        self.base = base
        self.token = (h.home / "server.token").read_text(encoding="ascii").strip()

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def client(self) -> Client:
        http = httpx2.AsyncClient(headers=self.auth, timeout=60)
        return Client(streamable_http_client(f"{self.base}/mcp", http_client=http))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    h = make_hearth(tmp_path)
    add_skill(h.home)
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", "0", "--no-open"],
        cwd=h.workspace,
        env=h.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", first)
        assert found, (first, proc.stderr.read() if proc.poll() is not None else "")
        yield Served(h, found.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_mcp_over_http_refused_without_the_token(served: Served) -> None:
    url = f"{served.base}/mcp"
    bare = httpx.post(url, json=INIT, headers=ACCEPT)
    assert bare.status_code == 401
    assert "not logged in" in bare.json()["detail"]
    wrong = httpx.post(url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    rebinding = httpx.post(
        url, json=INIT, headers={**ACCEPT, **served.auth, "Host": "evil.example"}
    )
    assert rebinding.status_code == 421
    ok = httpx.post(url, json=INIT, headers={**ACCEPT, **served.auth})
    assert ok.status_code == 200, ok.text


def test_mcp_over_http_tools_and_rest_round_trip(served: Served) -> None:
    sid = served.h.seed([text("user", "你好"), text("assistant", "你好！")])
    rest = httpx.Client(base_url=served.base, headers=served.auth)
    made = rest.post("/v1/memory", json={"content": "部署前先跑冒烟测试"})
    assert made.status_code == 201, made.text
    saved: list[str] = []

    async def go() -> None:
        async with served.client() as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_save", "memory_search", "memory_list", "memory_delete"} <= names
            assert "greet__card" in {p.name for p in (await client.list_prompts()).prompts}

            # saved through REST: found through MCP
            hits = (await client.call_tool("memory_search", {"query": "冒烟"})).structured_content
            assert hits["results"][0]["entry_id"] == made.json()["id"]

            entry = await client.call_tool("memory_save", {"content": "记忆系统在崩溃后可以恢复"})
            saved.append(entry.structured_content["id"])
            found = await client.call_tool("memory_search", {"query": "记忆"})
            assert found.structured_content["results"][0]["entry_id"] == saved[0]
            listed = await client.call_tool("memory_list", {"limit": 10})
            assert len(listed.structured_content["entries"]) == 2

            read = await client.call_tool("session_read", {"id": sid})
            assert read.structured_content["total"] == 2
            bad = await client.call_tool("memory_list", {"limit": 0})
            assert "between 1 and 100" in error_text(bad)
            gone = await client.call_tool("memory_delete", {"id": made.json()["id"]})
            assert not gone.is_error

    run(go)
    # saved through MCP: REST and the CLI find it; deleted through MCP: REST does not
    results = rest.get("/v1/memory/search", params={"q": "记忆"}).json()["results"]
    assert [r["entry_id"] for r in results] == saved
    assert rest.get("/v1/memory/search", params={"q": "冒烟"}).json()["results"] == []
    assert [hit["entry_id"] for hit in served.h.json("memory", "search", "记忆")] == saved
