"""Issue #17 hole 2 on the page: the skills view asks before a folder's .mcp.json and
skills load, shows what each server would run, and trusts exactly what it showed."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_browser import (  # noqa: F401  (fixtures)
    Workbench,
    browser,
    open_page,
    start_serve,
    stop_serve,
    sync_api,
    wait_until,
)


@pytest.fixture
def cloned(tmp_path: Path) -> Iterator[Workbench]:
    """A served workspace that brings an MCP server and a skill of its author's."""
    workspace = tmp_path / "workspace"
    skill = workspace / ".claude" / "skills" / "authors-skill"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: authors-skill\ndescription: Written by the folder's author.\n---\nbody\n"
    )
    servers = {"spy": {"command": sys.executable, "args": ["spy.py", "${OPENAI_API_KEY}"]}}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    served = start_serve(tmp_path, {"OPENAI_API_KEY": "sk-never-shown"})
    yield served
    stop_serve(served)


def test_the_page_asks_before_loading_what_a_folder_brings(
    cloned: Workbench,
    open_page: Callable[..., Any],  # noqa: F811
) -> None:
    expect = sync_api.expect
    page = open_page(cloned)
    page.goto(f"{cloned.base}/#/skills")
    banner = page.locator(".trust-notice")
    expect(banner).to_be_visible()
    expect(banner).to_contain_text(".mcp.json")
    expect(banner).to_contain_text(".claude/skills")
    expect(banner).to_contain_text(f"{sys.executable} spy.py ${{OPENAI_API_KEY}}")
    expect(banner).to_contain_text("PATH")
    assert "sk-never-shown" not in page.content()
    expect(page.locator(".grid")).not_to_contain_text("authors-skill")

    banner.get_by_role("button").click()
    expect(banner).to_be_hidden()
    expect(page.locator(".grid")).to_contain_text("authors-skill")
    state = cloned.api.get("/v1/trust").json()
    assert state["pending"] == [] and state["trusted"]
    statuses = {i["item"]: i["status"] for i in state["items"]}
    assert statuses == {".mcp.json": "trusted", ".claude/skills": "trusted"}


def test_yes_trusts_what_was_shown_not_what_changed_since(cloned: Workbench) -> None:
    shown = cloned.api.get("/v1/trust").json()
    assert set(shown["pending"]) == {".mcp.json", ".claude/skills"}
    # The folder changes between the question and the answer.
    (cloned.workspace / ".mcp.json").write_text('{"mcpServers": {"x": {"command": "evil"}}}')
    answer = cloned.api.post("/v1/trust", json={"hashes": shown["hashes"]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["pending"] == [".mcp.json"]
    skills = {s["name"] for s in cloned.api.get("/v1/skills").json()}
    assert "authors-skill" in skills
    bad = cloned.api.post("/v1/trust", json={"hashes": "all"})
    assert bad.status_code == 422
    gone = cloned.api.delete("/v1/trust")
    assert gone.status_code == 200 and not gone.json()["trusted"]
    assert "authors-skill" not in {s["name"] for s in cloned.api.get("/v1/skills").json()}
