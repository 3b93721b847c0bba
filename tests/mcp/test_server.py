"""The MCP server in-process, through the Python SDK's client (DESIGN §6 tools and prompts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from mcp import Client
from tests.mcp.server_fixtures import add_skill, error_text, run
from workhearth.app import Workhearth
from workhearth.config import load_config
from workhearth.mcp.server.tools import build_server

TOOLS = {
    "memory_save",
    "memory_search",
    "memory_list",
    "memory_delete",
    "wiki_search",
    "wiki_read",
    "session_list",
    "session_read",
    "session_latest",
    "session_rewind",
    "team_start",
    "skill_list",
    "skill_get",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    add_skill(home)
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    return ws


def server(home: Path, workspace: Path):
    return build_server(load_config({"HEARTH_HOME": str(home)}), workspace)


def call(client: Client, name: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        return await client.call_tool(name, args)

    return go


def test_tools_have_schemas_annotations_and_output_schemas(home: Path, workspace: Path) -> None:
    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert "workspace" in tool.input_schema["properties"], tool.name
                assert tool.output_schema is not None, tool.name
                assert tool.annotations is not None, tool.name
            save = tools["memory_save"].input_schema
            assert save["required"] == ["content"]
            assert save["properties"]["level"]["enum"] == ["critical", "normal", "low"]
            assert tools["memory_search"].input_schema["required"] == ["query"]
            assert tools["memory_delete"].annotations.destructive_hint is True
            assert tools["memory_delete"].annotations.read_only_hint is False
            assert tools["memory_save"].annotations.read_only_hint is False
            assert tools["memory_save"].annotations.destructive_hint is False
            rewind = tools["session_rewind"]
            assert rewind.annotations.destructive_hint is True
            assert rewind.annotations.read_only_hint is False
            assert rewind.input_schema["required"] == ["id", "to"]
            assert tools["team_start"].input_schema["required"] == ["task"]
            for name in TOOLS - {"memory_save", "memory_delete", "session_rewind", "team_start"}:
                assert tools[name].annotations.read_only_hint is True, name

    run(go)


def test_save_search_chinese_list_delete(home: Path, workspace: Path) -> None:
    ids_seen: list[str] = []

    async def go() -> None:
        async with Client(server(home, workspace), mode="legacy") as client:
            saved = await client.call_tool(
                "memory_save",
                {"content": "记忆系统在崩溃后可以恢复", "level": "critical", "tags": ["设计"]},
            )
            assert not saved.is_error, saved
            entry = saved.structured_content
            assert entry["content"] == "记忆系统在崩溃后可以恢复"
            assert entry["level"] == "critical" and entry["tags"] == ["设计"]
            other = await client.call_tool("memory_save", {"content": "The build uses uv and ruff"})
            ids_seen.append(other.structured_content["id"])
            other_id = ids_seen[0]

            for query in ("记忆", "崩溃", "崩溃恢复"):
                found = await client.call_tool("memory_search", {"query": query})
                assert not found.is_error, found
                hits = found.structured_content["results"]
                assert hits and hits[0]["entry_id"] == entry["id"], (query, hits)
            assert "记忆系统" in found.content[0].text  # unstructured text mirrors it

            nothing = await client.call_tool("memory_search", {"query": "量子"})
            assert nothing.structured_content == {"results": []}

            page = await client.call_tool("memory_list", {"limit": 1})
            first = page.structured_content
            assert len(first["entries"]) == 1 and first["next_cursor"]
            rest = await client.call_tool(
                "memory_list", {"limit": 1, "cursor": first["next_cursor"]}
            )
            ids = {first["entries"][0]["id"], rest.structured_content["entries"][0]["id"]}
            assert ids == {entry["id"], other_id}

            gone = await client.call_tool("memory_delete", {"id": entry["id"]})
            assert gone.structured_content == {"deleted": entry["id"]}
            after = await client.call_tool("memory_search", {"query": "记忆"})
            assert after.structured_content == {"results": []}
            again = await client.call_tool("memory_delete", {"id": entry["id"]})
            assert "no such memory entry" in error_text(again)

    run(go)
    other_id = ids_seen[0]
    # The library sees what the MCP tools did (same files, same index).
    wh = Workhearth(config=load_config({"HEARTH_HOME": str(home)}), workspace=workspace)
    assert [h.entry_id for h in wh.memory.search("uv")] == [other_id]


BAD = [
    ("memory_save", {}, "content"),
    ("memory_save", {"content": "   "}, "memory content is empty"),
    ("memory_save", {"content": "x" * 8001}, "the limit is 8000"),
    ("memory_save", {"content": "ok", "level": "urgent"}, "level"),
    ("memory_save", {"content": "ok", "tags": ["t"] * 33}, "at most 32 tags"),
    ("memory_save", {"content": "key sk-ant-api03-" + "a" * 90}, "secret"),
    ("memory_save", {"content": "ok", "contexts": [{"snippet": "s", "bogus": 1}]}, ""),
    ("memory_search", {"query": "x", "limit": 0}, "between 1 and 50"),
    ("memory_search", {"query": "x", "limit": 51}, "between 1 and 50"),
    ("memory_search", {"query": "x", "limit": "many"}, "limit"),
    ("memory_search", {"query": "x" * 513}, "the limit is 512"),
    ("memory_list", {"limit": 101}, "between 1 and 100"),
    ("memory_list", {"cursor": "not-a-cursor"}, "cursor"),
    ("memory_delete", {"id": "../../etc/passwd"}, "no such memory entry"),
    ("memory_delete", {"id": "m-0000000000"}, "no such memory entry"),
    ("session_list", {"limit": 0}, "between 1 and 100"),
    ("session_read", {"id": "20990101-000000-0000000000000000"}, "session"),
    ("session_latest", {"id": "../x"}, "session"),
    ("skill_get", {"name": "nope"}, "no skill named 'nope'"),
    ("memory_search", {"query": "x", "workspace": "/no/such/folder"}, "must be an existing folder"),
    ("memory_list", {"workspace": "relative/dir"}, "must be an absolute path"),
    # issue #17 hole 8: control characters in every field, the query included
    ("memory_save", {"content": "harmless\u0000looking"}, "control character U+0000"),
    ("memory_save", {"content": "ok", "tags": ["t\u001b[2J"]}, "control character U+001B"),
    (
        "memory_save",
        {"content": "ok", "contexts": [{"snippet": "s", "origin": "o\u0085"}]},
        "control character U+0085",
    ),
    ("memory_save", {"content": "ok", "contexts": [{"snippet": "a\u0000"}]}, "control"),
    # a label (tag, id, origin) is one line: a newline there could forge an output line
    ("memory_save", {"content": "ok", "tags": ["a\nsaved m-fake to x"]}, "U+000A"),
    ("memory_search", {"query": "llamas\u0000"}, "control character U+0000"),
    ("memory_search", {"query": "x", "workspace": "/proc/self/root/tmp"}, "/proc"),
    ("memory_save", {"content": "x", "workspace": "/proc/self/cwd"}, "/proc"),
    # issue #17 hole 10: a password stated in a sentence
    ("memory_save", {"content": "数据库密码是hunter2hunter2"}, "refused"),
    ("memory_save", {"content": "password for the test VM is hunter2"}, "refused"),
]


@pytest.mark.parametrize(
    ("tool", "args", "says"), BAD, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(BAD)]
)
def test_bad_arguments_are_tool_errors(
    home: Path, workspace: Path, tool: str, args: dict[str, Any], says: str
) -> None:
    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            result = await client.call_tool(tool, args)
            text = error_text(result)
            assert says.casefold() in text.casefold(), text
            assert "Traceback" not in text
            # the server is still there afterwards
            ok = await client.call_tool("memory_search", {"query": "anything"})
            assert not ok.is_error

    run(go)


def test_sessions_read_latest_list(home: Path, workspace: Path) -> None:
    wh = Workhearth(config=load_config({"HEARTH_HOME": str(home)}), workspace=workspace)
    session = wh.sessions.create(model="openai:test-model")
    with session:
        for i in range(14):
            role = "user" if i % 2 == 0 else "assistant"
            session.append_message({"role": role, "content": [{"type": "text", "text": f"m{i}"}]})
        session.turn_end()

    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            listed = (await client.call_tool("session_list", {})).structured_content["sessions"]
            assert [s["session_id"] for s in listed] == [session.id]
            assert listed[0]["messages"] == 14
            read = await client.call_tool("session_read", {"id": session.id, "count": 3})
            data = read.structured_content
            assert (data["total"], data["returned"]) == (14, 3)
            assert [m["content"][0]["text"] for m in data["messages"]] == ["m11", "m12", "m13"]
            clamped = await client.call_tool("session_read", {"id": session.id, "count": 500})
            assert clamped.structured_content["returned"] == 14
            latest = await client.call_tool("session_latest", {"id": session.id})
            assert latest.structured_content["message"]["content"][0]["text"] == "m13"
            # another workspace has no sessions of its own, but reads this one by id
            other = workspace.parent / "other"
            other.mkdir()
            mine = await client.call_tool("session_list", {"workspace": str(other)})
            assert mine.structured_content == {"sessions": []}
            by_id = await client.call_tool(
                "session_latest", {"id": session.id, "workspace": str(other)}
            )
            assert not by_id.is_error

    run(go)


def test_workspace_argument_separates_project_memory(home: Path, workspace: Path) -> None:
    other = workspace.parent / "other"
    other.mkdir()

    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            await client.call_tool(
                "memory_save", {"content": "only in other", "workspace": str(other)}
            )
            here = await client.call_tool("memory_search", {"query": "only in other"})
            there = await client.call_tool(
                "memory_search", {"query": "only in other", "workspace": str(other)}
            )
            assert here.structured_content == {"results": []}
            assert "only in other" in there.structured_content["results"][0]["text"]

    run(go)


def test_skills_and_their_examples_as_prompts(home: Path, workspace: Path) -> None:
    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            skills = (await client.call_tool("skill_list", {})).structured_content["skills"]
            assert "greet" in {s["name"] for s in skills}
            got = (await client.call_tool("skill_get", {"name": "greet"})).structured_content
            assert "warm greeting card" in got["body"]
            assert [e["id"] for e in got["examples"]] == ["card"]

            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            card = prompts["greet__card"]
            assert card.title == "A card"
            args = {a.name: a for a in card.arguments}
            assert set(args) == {"who", "tone"}
            assert args["who"].required is True and args["tone"].required is False
            rendered = await client.get_prompt("greet__card", {"who": "Ana"})
            assert "greeting card for Ana in a warm tone" in rendered.messages[0].content.text
            with pytest.raises(MCPError, match="tone"):
                await client.get_prompt("greet__card", {"who": "Ana", "tone": "angry"})
            with pytest.raises(MCPError, match="who"):
                await client.get_prompt("greet__card", {})

    run(go)


@pytest.mark.parametrize("where", ["home", "inside"])
def test_hearth_home_is_refused_as_a_workspace(home: Path, workspace: Path, where: str) -> None:
    target = home if where == "home" else home / "skills"

    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            for tool, args in (
                ("memory_save", {"content": "planted"}),
                ("memory_search", {"query": "planted"}),
                ("memory_list", {}),
                ("session_list", {}),
            ):
                result = await client.call_tool(tool, {**args, "workspace": str(target)})
                text = error_text(result)
                assert "HEARTH_HOME" in text and str(home) not in text, text

    run(go)
    assert not list(home.glob("projects/*"))


def test_a_refused_nul_save_hides_nothing(home: Path, workspace: Path) -> None:
    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            kept = await client.call_tool("memory_save", {"content": "llamas", "tags": ["farm"]})
            bad = await client.call_tool("memory_save", {"content": "harmless\u0000looking"})
            assert bad.is_error
            listed = (await client.call_tool("memory_list", {})).structured_content["entries"]
            assert [(e["id"], e["tags"]) for e in listed] == [
                (kept.structured_content["id"], ["farm"])
            ]

    run(go)


def test_skill_get_does_not_serve_an_untrusted_folders_skill(home: Path, workspace: Path) -> None:
    """Issue #17 hole 2: the skills a folder brings reach no agent before the user trusts it."""
    from workhearth.paths import HearthPaths
    from workhearth.trust import TrustStore

    folder = workspace / ".claude" / "skills" / "cloned"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: cloned\ndescription: From the folder's author.\n---\nAUTHOR-BODY\n"
    )

    async def names_and_get(client: Client) -> tuple[set[str], Any]:
        listed = (await client.call_tool("skill_list", {})).structured_content["skills"]
        return {s["name"] for s in listed}, await client.call_tool("skill_get", {"name": "cloned"})

    async def go() -> None:
        async with Client(server(home, workspace)) as client:
            names, got = await names_and_get(client)
            assert "cloned" not in names and "greet" in names
            assert "no skill named 'cloned'" in error_text(got)
            TrustStore(HearthPaths(home)).trust(workspace)
            names, got = await names_and_get(client)
            assert "cloned" in names and "AUTHOR-BODY" in got.structured_content["body"]

    run(go)
