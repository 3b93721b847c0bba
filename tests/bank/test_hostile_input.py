"""Issue #17 hole 9: hostile cursors and text are a 4xx from the team server, never a 500,
and a save the server refuses never holds the client's queue.

All through the real ``hearth serve --store`` on a real PostgreSQL, and the real
``hearth`` client.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import orjson
import pytest
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from tests.bank.edge_proxy import EdgeProxy
from tests.bank.team_server import TeamServer
from tests.e2e.conftest import Hearth, make_hearth
from workhearth.bank.client.queue import Outbox
from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user

# Each refused by the text check: NUL, other C0 and C1 controls, lone surrogates.
BAD_TEXT = ["\x00", "\x07", "\x1b", "\x85", "\x9f", "\ud800", "\udfff"]


@pytest.fixture
def server(tmp_path: Path, pg_url: str) -> Iterator[TeamServer]:
    PgBank(pg_url).close()  # Why: creates the schema before a user is added
    srv = TeamServer(pg_url, tmp_path / "server-home", tmp_path / "server.log")
    srv.start()
    yield srv
    srv.stop()


def _token(store: str, name: str = "ann") -> dict[str, str]:
    with connect(store) as conn:
        return {"Authorization": f"Bearer {add_user(conn, name)}"}


def _cursor(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode("utf-8", "surrogatepass")).decode().rstrip("=")


def _json(body: Any) -> bytes:
    """JSON with ``\\uXXXX`` escapes, lone surrogates included (as a hostile client sends)."""
    import json

    return json.dumps(body, ensure_ascii=True).encode()


def _no_traceback(srv: TeamServer) -> None:
    log = srv.log.read_text(errors="replace")
    assert "Traceback" not in log and " 500 " not in log, log[-3000:]


def test_hostile_cursors_are_a_422_never_a_500(server: TeamServer) -> None:
    h = _token(server.store)
    with httpx.Client(base_url=server.url, timeout=30, headers=h) as c:
        for i in range(3):
            assert c.post("/v1/memory", json={"content": f"note {i}"}).status_code == 201
        page = c.get("/v1/memory", params={"limit": 1}).json()
        good = page["next_cursor"]
        assert c.get("/v1/memory", params={"cursor": good}).status_code == 200
        created, _, entry_id = base64.urlsafe_b64decode(good + "==").decode().partition("|")
        for raw in (
            f"inf|{entry_id}",
            f"-inf|{entry_id}",
            f"nan|{entry_id}",
            f"1e30|{entry_id}",
            f"-1e30|{entry_id}",
            f"9.3e18|{entry_id}",
            f"1e308|{entry_id}",
            f"{created}|m-\x00aaaaaaa",
            f"{created}|a\x07b",
            f"{created}|{'x' * 300}",
            f"{created}|\ud800",
            "no bar at all",
        ):
            r = c.get("/v1/memory", params={"cursor": _cursor(raw)})
            assert r.status_code == 422, (raw, r.status_code, r.text)
            assert "cursor" in r.json()["detail"], r.text
        # Not base64 or not UTF-8 inside: the same 422.
        for cursor in ("%%%", base64.urlsafe_b64encode(b"\xff\xfe|x").decode()):
            r = c.get("/v1/memory", params={"cursor": cursor})
            assert r.status_code == 422, (cursor, r.text)
    _no_traceback(server)


def _save(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"content": "a plain sentence", "tags": ["ok"]}
    body.update(over)
    return body


def _ctx(**over: Any) -> list[dict[str, Any]]:
    return [{"snippet": "said in a chat", "session_id": "s-1", "message_id": "m1", **over}]


def test_control_characters_and_lone_surrogates_are_a_422_in_every_text_field(
    server: TeamServer,
) -> None:
    h = _token(server.store)
    with httpx.Client(base_url=server.url, timeout=30, headers=h) as c:
        kept = c.post("/v1/memory", json={"content": "kept entry"}).json()["id"]
        for bad in BAD_TEXT:
            for where, body in (
                ("content", _save(content=f"harmless{bad}looking")),
                ("tag", _save(tags=[f"t{bad}g"])),
                ("snippet", _save(contexts=_ctx(snippet=f"sn{bad}ip"))),
                ("session id", _save(contexts=_ctx(session_id=f"s{bad}1"))),
                ("message id", _save(contexts=_ctx(message_id=f"m{bad}1"))),
                ("origin", _save(contexts=_ctx(origin=f"o{bad}r"))),
            ):
                r = c.post(
                    "/v1/memory", content=_json(body), headers={"Content-Type": "application/json"}
                )
                assert r.status_code == 422, (where, repr(bad), r.status_code, r.text)
            edit = c.patch(
                f"/v1/memory/{kept}",
                content=_json({"content": f"edited{bad}text"}),
                headers={"Content-Type": "application/json"},
            )
            assert edit.status_code == 422, (repr(bad), edit.text)
            if "\ud800" <= bad <= "\udfff":
                continue  # Why: a URL carries UTF-8, where a lone surrogate cannot be
            for path, name in (("/v1/memory/search", "q"), ("/v1/memory", "tag")):
                r = c.get(path, params={name: f"harm{bad}less"})
                assert r.status_code == 422, (path, repr(bad), r.status_code, r.text)
        # Tab and newline are ordinary text.
        ok = c.post("/v1/memory", json=_save(content="line one\n\tline two", tags=["a b"]))
        assert ok.status_code == 201, ok.text
        assert c.get("/v1/memory/search", params={"q": "line\ttwo"}).status_code == 200
        listed = c.get("/v1/memory").json()["entries"]
        assert sorted(e["content"] for e in listed) == ["kept entry", "line one\n\tline two"]
    _no_traceback(server)


def test_the_mcp_face_refuses_the_same_text_as_a_tool_error(server: TeamServer) -> None:
    h = _token(server.store)

    async def calls() -> list[Any]:
        http = httpx2.AsyncClient(headers=h, timeout=60)
        async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as c:
            return [
                await c.call_tool("memory_save", {"content": "harmless\x00looking"}),
                await c.call_tool("memory_save", {"content": "ok", "tags": ["\x1b[31m"]}),
                await c.call_tool("memory_search", {"query": "harm\x00less"}),
                await c.call_tool("memory_list", {"cursor": _cursor("inf|m-aaaaaaaa")}),
                await c.call_tool("memory_save", {"content": "still works"}),
            ]

    *refused, fine = asyncio.run(calls())
    for result in refused:
        assert result.is_error, result
        text = result.content[0].text
        assert "control character" in text or "cursor" in text, text
    assert not fine.is_error and fine.structured_content["content"] == "still works"
    assert server.contents() == ["still works"]
    _no_traceback(server)


def test_a_save_the_server_refuses_never_holds_the_queue(
    tmp_path: Path, server: TeamServer
) -> None:
    """A save an older client queued with a NUL in it: the server refuses it (422), it goes
    to the dead letters, and the saves behind it arrive."""
    h: Hearth = make_hearth(tmp_path / "client")
    h.home.mkdir()
    (h.home / "config.toml").write_text(f'[bank]\nurl = "{server.url}"\ntimeout = 10\n')
    with connect(server.store) as conn:
        h.env["HEARTH_BANK_TOKEN"] = add_user(conn, "ann")
    outbox = Outbox(h.home / "bank")
    for content, tags in (
        ("harmless\x00looking", []),
        ("a tag with an escape", ["\x1b[2J"]),
        ("queued fine", ["ok"]),
    ):
        outbox.add(server.url, {"content": content, "level": "normal", "tags": tags})
    outbox.close()
    saved = h.run("memory", "save", "written after them")
    assert saved.code == 0 and saved.out.startswith("saved m-"), saved.out + saved.err
    assert server.contents() == ["queued fine", "written after them"]
    dead = Outbox(h.home / "bank").dead()
    assert [(d["content"], d["status"]) for d in dead] == [
        ("harmless\x00looking", 422),
        ("a tag with an escape", 422),
    ]
    assert all("control character" in d["error"] for d in dead), dead
    status = h.json("memory", "status")["bank"]
    assert (status["queued"], status["dead_letters"]) == (0, 2)
    synced = h.run("memory", "sync", "--json")
    assert synced.code == 0 and orjson.loads(synced.out)["dead_total"] == 2, synced.err
    _no_traceback(server)


def test_a_4xx_about_the_save_is_final_and_one_about_the_client_keeps_it_queued(
    tmp_path: Path, server: TeamServer
) -> None:
    """A server of another version refuses a save with some 4xx: unless the status is
    about this client (its token, URL or Host), the save is a dead letter at once."""
    edge = EdgeProxy(server.port)
    edge.content_limit = 20
    try:
        for status, dead in ((409, True), (415, True), (403, False)):
            edge.refusal = status
            h: Hearth = make_hearth(tmp_path / f"client{status}")
            h.home.mkdir()
            (h.home / "config.toml").write_text(f'[bank]\nurl = "{edge.url}"\ntimeout = 10\n')
            with connect(server.store) as conn:
                h.env["HEARTH_BANK_TOKEN"] = add_user(conn, f"u{status}")
            first = h.run("memory", "save", "a sentence longer than this server takes")
            second = h.run("memory", "save", f"short one {status}")
            outbox = Outbox(h.home / "bank")
            if dead:
                assert first.code == 1 and first.err_lines == [
                    f"hearth: the team bank refused it ({status}): "
                    "content over this server's 20 characters"
                ]
                assert second.code == 0 and second.out.startswith("saved m-"), second.err
                assert server.contents(f"u{status}") == [f"short one {status}"]
                assert [d["status"] for d in outbox.dead()] == [status]
            else:
                assert first.code == 0 and first.out.startswith("queued "), first.err
                assert second.out.startswith("queued "), second.out + second.err
                assert server.contents(f"u{status}") == [] and outbox.dead() == []
                assert len(outbox.pending()) == 2
            outbox.close()
    finally:
        edge.close()


def test_a_value_postgresql_refuses_is_a_usage_error_not_a_crash(pg_url: str) -> None:
    """The fallback behind the checks: a value PostgreSQL refuses (here an owner name no
    server would pass, holding a NUL) is a UsageError — a 422, final for a queue."""
    from workhearth.errors import UsageError

    with PgBank(pg_url) as bank:
        with pytest.raises(UsageError, match="cannot hold this value"):
            bank.save("ann\x00", "a plain sentence")
        with pytest.raises(UsageError, match="cannot hold this value"):
            bank.list("ann\x00")
