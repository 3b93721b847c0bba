"""The MCP tools ``wiki_search`` and ``wiki_read`` (DESIGN §6, issue 24), through the SDK's client.

The pages are files in the spec's format, as ``hearth wiki build`` writes them
(tests/server/wiki_pages.py); the tools answer what REST answers (same library calls).
"""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from mcp import Client
from tests.mcp.server_fixtures import error_text, run
from tests.server.wiki_pages import small_wiki, write_page
from workhearth.config import Config, load_config
from workhearth.mcp.server.tools import build_server
from workhearth.server.app import create_app
from workhearth.server.security import load_or_create_token


def _setup(tmp_path: Path) -> tuple[Config, Path]:
    config = load_config({"HEARTH_HOME": str(tmp_path / "home")})
    workspace = tmp_path / "project"
    workspace.mkdir()
    small_wiki(config, workspace)
    return config, workspace


def test_wiki_search_finds_a_page_and_wiki_read_reads_it(tmp_path: Path) -> None:
    config, workspace = _setup(tmp_path)

    async def go() -> None:
        async with Client(build_server(config, workspace)) as client:
            found = await client.call_tool("wiki_search", {"query": "refunds", "limit": 3})
            assert not found.is_error, found
            hits = found.structured_content["results"]
            assert "wiki/docs.md" in [h["path"] for h in hits]
            assert all(h["layer"] == "wiki" for h in hits) and len(hits) <= 3

            read = await client.call_tool("wiki_read", {"page": "docs"})
            assert not read.is_error, read
            page = read.structured_content
            assert page["title"] == "docs" and page["update_waiting"] is True
            assert page["text"].startswith("# docs\n\nThe guide explains how refunds work")
            assert page["unreadable"] == [
                {"path": "docs/scan.pdf", "reason": "not a PDF (no %PDF header)"}
            ]
            overview = (
                await client.call_tool("wiki_read", {"page": "overview"})
            ).structured_content
            assert overview["name"] == "overview" and "billing service" in overview["text"]

            nothing = await client.call_tool("wiki_search", {"query": "量子"})
            assert nothing.structured_content == {"results": []}

    run(go)


def test_a_page_that_does_not_exist_is_a_tool_error_in_words(tmp_path: Path) -> None:
    config, workspace = _setup(tmp_path)

    async def go() -> None:
        async with Client(build_server(config, workspace)) as client:
            unknown = await client.call_tool("wiki_read", {"page": "payroll"})
            assert error_text(unknown).endswith(": no wiki page 'payroll'")
            for name in ("../../secrets", "/etc/passwd", "Docs", "docs.update"):
                bad = await client.call_tool("wiki_read", {"page": name})
                text = error_text(bad)
                assert "no wiki page by that name" in text, (name, text)
                assert "/" not in text and str(config.home) not in text, text
            wrong = await client.call_tool("wiki_search", {"query": "x", "limit": 0})
            assert "limit" in error_text(wrong)

    run(go)


def test_the_workspace_argument_picks_that_projects_wiki(tmp_path: Path) -> None:
    config, workspace = _setup(tmp_path)
    other = tmp_path / "bakery"
    other.mkdir()
    write_page(config, other, "overview", "Bakery", "# Bakery\n\nSourdough recipes, 烘焙配方.\n")

    async def go() -> None:
        async with Client(build_server(config, workspace)) as client:
            there = await client.call_tool(
                "wiki_search", {"query": "sourdough", "workspace": str(other)}
            )
            assert [h["path"] for h in there.structured_content["results"]] == ["wiki/overview.md"]
            here = await client.call_tool("wiki_search", {"query": "sourdough"})
            assert here.structured_content == {"results": []}
            read = await client.call_tool(
                "wiki_read", {"page": "overview", "workspace": str(other)}
            )
            assert read.structured_content["title"] == "Bakery"
            home = await client.call_tool(
                "wiki_read", {"page": "overview", "workspace": str(config.home)}
            )
            assert "HEARTH_HOME" in error_text(home)

    run(go)


def test_rest_and_mcp_give_the_same_page_and_hits(tmp_path: Path) -> None:
    config, workspace = _setup(tmp_path)
    token = load_or_create_token(config.home)
    app = create_app(config, token=token, workspace=workspace)
    with TestClient(app, base_url="http://127.0.0.1:8765") as rest:
        rest.headers["Authorization"] = f"Bearer {token}"
        page = rest.get("/v1/wiki/docs").json()
        hits = rest.get("/v1/wiki/search", params={"q": "refunds", "limit": 6}).json()

    async def go() -> tuple[object, object]:
        async with Client(build_server(config, workspace)) as client:
            read = await client.call_tool("wiki_read", {"page": "docs"})
            found = await client.call_tool("wiki_search", {"query": "refunds", "limit": 6})
            return read.structured_content, found.structured_content

    assert run(go) == (page, hits)
