"""REST and MCP give the same JSON for the same question, over one home and workspace.

test_wire_shapes.py compares the schemas; this compares the answers themselves: the
REST API in-process (TestClient over ``create_app``) and the MCP server in-process (the
SDK's client over ``build_server``), asked about the same sessions, skills and memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import pytest
from fastapi.testclient import TestClient

from mcp import Client
from tests.mcp.server_fixtures import add_skill
from workhearth.app import Workhearth
from workhearth.config import load_config
from workhearth.mcp.server.tools import build_server
from workhearth.server.app import create_app
from workhearth.server.security import load_or_create_token

BASE = "http://127.0.0.1:8765"


@dataclass
class Both:
    rest: TestClient
    mcp_server: Any
    sessions: dict[str, str]  # how each session ended -> its id
    entry: dict[str, Any]

    def tool(self, name: str, args: dict[str, Any]) -> Any:
        async def go() -> Any:
            async with Client(self.mcp_server) as client:
                result = await client.call_tool(name, args)
                assert not result.is_error, result
                return result.structured_content

        return anyio.run(go)

    def get(self, url: str) -> Any:
        response = self.rest.get(url)
        assert response.status_code == 200, response.text
        return response.json()


def _session(wh: Workhearth, texts: list[str]) -> str:
    session = wh.sessions.create(model="openai:test-model")
    with session:
        for i, text in enumerate(texts):
            role: Literal["user", "assistant"] = "user" if i % 2 == 0 else "assistant"
            session.append_message({"role": role, "content": [{"type": "text", "text": text}]})
        session.turn_end()
    return session.id


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Both]:
    root = tmp_path_factory.mktemp("same")
    home, workspace = root / "home", root / "workspace"
    workspace.mkdir()
    add_skill(home)
    config = load_config({"HEARTH_HOME": str(home)})
    wh = Workhearth(config=config, workspace=workspace)
    sessions = {
        # a run that answered, and one whose last word is the user's (a turn to continue)
        "done": _session(wh, ["hello", "hi there", "say more", "done saying"]),
        "stopped": _session(wh, ["first", "answer", "a question left open"]),
    }
    # Why only a snippet: provenance the MCP tools used to pass on as free objects.
    entry = wh.memory.save("The build uses uv and ruff", "normal", ["tools"], [{"snippet": "s"}])
    wh.memory.close()
    token = load_or_create_token(home)
    app = create_app(config, token=token, workspace=workspace)
    with TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {token}"}) as rest:
        yield Both(rest, build_server(config, workspace), sessions, entry.as_dict())


def test_session_list_is_the_same_with_its_status(both: Both) -> None:
    rest = both.get("/v1/sessions?here=true")
    assert both.tool("session_list", {}) == rest
    status = {s["session_id"]: s["status"] for s in rest["sessions"]}
    assert status == {both.sessions["done"]: "done", both.sessions["stopped"]: "stopped"}


@pytest.mark.parametrize("ended", ["done", "stopped"])
def test_session_read_and_latest_are_the_same(both: Both, ended: str) -> None:
    sid = both.sessions[ended]
    rest = both.get(f"/v1/sessions/{sid}/messages?count=2")
    assert both.tool("session_read", {"id": sid, "count": 2}) == rest
    assert rest["returned"] == 2 and rest["warnings"] is None
    assert both.tool("session_latest", {"id": sid}) == both.get(f"/v1/sessions/{sid}/latest")


def test_skills_are_the_same(both: Both) -> None:
    listed = both.tool("skill_list", {})
    assert listed["skills"] == both.get("/v1/skills")
    got = both.tool("skill_get", {"name": "greet"})
    assert got == both.get("/v1/skills/greet")
    assert got["descriptions"] == {"en": "Write a greeting card for someone."}
    assert [e["id"] for e in got["examples"]] == ["card"]


def test_memory_is_the_same(both: Both) -> None:
    listed = both.tool("memory_list", {"limit": 5})
    assert listed == both.get("/v1/memory?limit=5")
    (entry,) = listed["entries"]
    assert entry["id"] == both.entry["id"]
    assert entry["provenance"] == [
        {"snippet": "s", "session_id": None, "message_id": None, "origin": None}
    ]
    found = both.tool("memory_search", {"query": "ruff", "limit": 3})
    assert found == both.get("/v1/memory/search?q=ruff&limit=3")
    assert found["results"][0]["entry_id"] == entry["id"]
