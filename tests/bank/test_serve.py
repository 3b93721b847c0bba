"""``hearth serve --store``: the team bank over HTTP, real processes on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client.streamable_http import streamable_http_client

from mcp import Client
from tests.bank.team_server import TeamServer
from workhearth.bank.server.crypto import KEY_LEN
from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user

NOT_FOUND = {"detail": "no such memory entry", "code": "not_found", "params": {}}
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


@pytest.fixture
def servers(tmp_path: Path, pg_url: str) -> Iterator[Callable[..., TeamServer]]:
    started: list[TeamServer] = []

    def start(*args: str, home: Path | None = None) -> TeamServer:
        n = len(started)
        srv = TeamServer(pg_url, home or tmp_path / f"home{n}", tmp_path / f"serve{n}.log")
        srv.start(*args)
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


def _users(store: str, *names: str) -> dict[str, dict[str, str]]:
    with connect(store) as conn:
        return {n: {"Authorization": f"Bearer {add_user(conn, n)}"} for n in names}


def test_two_users_are_isolated_and_the_server_decides_scope(
    servers: Callable[..., TeamServer],
) -> None:
    srv = servers()
    h = _users(srv.store, "ann", "bob")
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        made = c.post("/v1/memory", json={"content": "ann deploys on Tuesdays"}, headers=h["ann"])
        assert made.status_code == 201, made.text
        entry = made.json()
        assert entry["layer"] == "team" and entry["content"] == "ann deploys on Tuesdays"
        c.post("/v1/memory", json={"content": "bob deploys on Fridays"}, headers=h["bob"])
        ann_id = entry["id"]
        for method, path, body in (
            ("PATCH", f"/v1/memory/{ann_id}", {"content": "taken over"}),
            ("DELETE", f"/v1/memory/{ann_id}", None),
            ("POST", f"/v1/memory/{ann_id}/restore", None),
        ):
            theirs = c.request(method, path, json=body, headers=h["bob"])
            unknown = c.request(
                method, path.replace(ann_id, "m-zzzzzzzz"), json=body, headers=h["bob"]
            )
            malformed = c.request(method, path.replace(ann_id, "nope"), json=body, headers=h["bob"])
            for r in (theirs, unknown, malformed):
                assert (r.status_code, r.json()) == (404, NOT_FOUND), (method, r.text)
        hits = c.get("/v1/memory/search", params={"q": "deploys"}, headers=h["bob"]).json()
        assert [x["text"] for x in hits["results"]] == ["bob deploys on Fridays"]
        listed = c.get("/v1/memory", headers=h["bob"]).json()
        assert [e["content"] for e in listed["entries"]] == ["bob deploys on Fridays"]
        assert c.get("/v1/memory", headers=h["ann"]).json()["entries"] == [entry]
        # No token, a wrong one, or the local-mode kind: 401.
        for headers in ({}, {"Authorization": "Bearer hth_wrong"}, {"Authorization": "Basic x"}):
            r = c.get("/v1/memory", headers=headers)
            assert r.status_code == 401 and "team token" in r.json()["detail"]
        # Same limits as local mode.
        big = c.post("/v1/memory", json={"content": "x" * 70_000}, headers=h["ann"])
        assert big.status_code == 413
        bad = c.post("/v1/memory", json={"content": "a", "level": "huge"}, headers=h["ann"])
        assert bad.status_code == 422
        limit = c.get("/v1/memory", params={"limit": 0}, headers=h["ann"])
        assert limit.status_code == 422
    assert srv.contents("ann") == ["ann deploys on Tuesdays"]


def test_the_idempotency_key_makes_a_resend_land_once(servers: Callable[..., TeamServer]) -> None:
    srv = servers()
    h = _users(srv.store, "ann")["ann"]
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        key = {**h, "Idempotency-Key": "4f1c-save-1"}
        first = c.post("/v1/memory", json={"content": "the wiki moved"}, headers=key)
        again = c.post("/v1/memory", json={"content": "the wiki moved"}, headers=key)
        assert (first.status_code, again.status_code) == (201, 200)
        assert again.json()["id"] == first.json()["id"]
        # The key decides, not the text: a deleted entry does not come back.
        assert c.delete(f"/v1/memory/{first.json()['id']}", headers=h).status_code == 204
        resent = c.post("/v1/memory", json={"content": "the wiki moved"}, headers=key)
        assert resent.status_code == 200 and resent.json()["id"] == first.json()["id"]
        too_long = c.post(
            "/v1/memory", json={"content": "x"}, headers={**h, "Idempotency-Key": "k" * 129}
        )
        assert too_long.status_code == 422
    assert srv.contents() == [] and srv.contents(deleted=True) == ["the wiki moved"]


def test_allowed_hosts_are_answered_and_any_other_host_is_421(
    tmp_path: Path, servers: Callable[..., TeamServer]
) -> None:
    home = tmp_path / "cfg-home"
    home.mkdir()
    (home / "config.toml").write_text('[server]\nallowed_hosts = ["Bank.Example"]\n')
    srv = servers("--allowed-host", "memory.team.internal", home=home)
    h = _users(srv.store, "ann")["ann"]
    for host, status in (
        ("memory.team.internal", 200),
        ("memory.team.internal:443", 200),
        ("bank.example", 200),
        ("localhost:8765", 200),
        ("evil.example", 421),
        ("memory.team.internal.evil.example", 421),
    ):
        r = httpx.get(f"{srv.url}/v1/memory", headers={**h, "Host": host}, timeout=10)
        assert r.status_code == status, (host, r.text)


def test_team_mode_runs_no_agent_tasks_and_keeps_no_local_token(
    servers: Callable[..., TeamServer],
) -> None:
    srv = servers()
    h = _users(srv.store, "ann")["ann"]
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        for method, path in (
            ("POST", "/v1/tasks"),
            ("GET", "/v1/sessions"),
            ("GET", "/v1/skills"),
            ("GET", "/"),
            ("GET", "/login"),
        ):
            r = c.request(method, path, json={"task": "rm -rf"}, headers=h)
            assert r.status_code == 404, (path, r.text)
            assert "team bank server" in r.json()["detail"] and "agent tasks" in r.json()["detail"]
        paths = c.get("/openapi.json").json()["paths"]
        assert all(p.startswith(("/v1/memory", "/v1/info")) for p in paths), paths
        mcp = c.post("/mcp", json=INIT, headers={**ACCEPT, **h})
        assert mcp.status_code == 200 and mcp.json()["result"]["serverInfo"]["name"] == (
            "workhearth-team"
        )
    assert not (srv.home / "server.token").exists()


def test_two_servers_on_one_database_see_each_others_saves(
    servers: Callable[..., TeamServer],
) -> None:
    a = servers()
    b = servers()
    h = _users(a.store, "ann")["ann"]
    with httpx.Client(timeout=10) as c:
        saved = c.post(f"{a.url}/v1/memory", json={"content": "standup is at 9:30"}, headers=h)
        assert saved.status_code == 201
        entry_id = saved.json()["id"]
        hits = c.get(f"{b.url}/v1/memory/search", params={"q": "standup"}, headers=h).json()
        assert [x["entry_id"] for x in hits["results"]] == [entry_id]
        assert c.delete(f"{b.url}/v1/memory/{entry_id}", headers=h).status_code == 204
        assert c.get(f"{a.url}/v1/memory", headers=h).json()["entries"] == []
        back = c.post(f"{a.url}/v1/memory/{entry_id}/restore", headers=h)
        assert back.status_code == 200 and back.json()["id"] == entry_id
        # A user added after both started is known to both at once (no cache).
        bob = _users(a.store, "bob")["bob"]
        assert c.get(f"{b.url}/v1/memory", headers=bob).status_code == 200


def test_a_missing_search_index_stops_start_up_with_one_line(tmp_path: Path, pg_url: str) -> None:
    PgBank(pg_url).close()
    with connect(pg_url) as conn:
        conn.execute("DROP INDEX entries_content_trgm")
    srv = TeamServer(pg_url, tmp_path / "home", tmp_path / "log")
    srv.home.mkdir()
    done = subprocess.run(
        srv.command(), env=srv.env(), cwd=srv.home, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "missing its search index entries_content_trgm" in lines[0]
    assert lines[0].startswith("hearth: ") and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_keyed_server_stores_no_plaintext_and_a_keyless_one_refuses(
    tmp_path: Path, servers: Callable[..., TeamServer]
) -> None:
    key = tmp_path / "bank.key"
    key.write_bytes(b"\x07" * KEY_LEN)
    srv = servers("--store-key-file", str(key))
    h = _users(srv.store, "ann")["ann"]
    r = httpx.post(
        f"{srv.url}/v1/memory", json={"content": "the vault code is kept by Mei"}, headers=h
    )
    assert r.status_code == 201
    hits = httpx.get(f"{srv.url}/v1/memory/search", params={"q": "vault"}, headers=h).json()
    assert [x["entry_id"] for x in hits["results"]] == [r.json()["id"]]
    with connect(srv.store) as conn:
        row = conn.execute("SELECT content, content_enc FROM entries").fetchone()
    assert row[0] is None and b"vault" not in bytes(row[1])
    plain = TeamServer(srv.store, tmp_path / "h2", tmp_path / "log2")
    plain.home.mkdir()
    done = subprocess.run(
        plain.command(), env=plain.env(), cwd=plain.home, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "hearth: the team store is encrypted: configure its key"
    ]


def test_the_mcp_face_acts_for_the_token_s_user_on_either_server(
    servers: Callable[..., TeamServer],
) -> None:
    a = servers()
    b = servers()
    h = _users(a.store, "ann", "bob")
    url = f"{a.url}/mcp"
    for headers in ({}, {"Authorization": "Bearer hth_wrong"}):
        refused = httpx.post(url, json=INIT, headers={**ACCEPT, **headers})
        assert refused.status_code == 401 and "team token" in refused.json()["detail"]

    async def tools(base: str, who: str, *calls: tuple[str, dict]) -> list[Any]:
        http = httpx2.AsyncClient(headers=h[who], timeout=60)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    (saved,) = asyncio.run(tools(a.url, "ann", ("memory_save", {"content": "会议室在三楼"})))
    entry_id = saved.structured_content["id"]
    # Any server answers (stateless); only ann sees her entry; bob cannot delete it.
    ann_hits, ann_list = asyncio.run(
        tools(b.url, "ann", ("memory_search", {"query": "三楼"}), ("memory_list", {}))
    )
    assert [x["entry_id"] for x in ann_hits.structured_content["results"]] == [entry_id]
    assert [e["id"] for e in ann_list.structured_content["entries"]] == [entry_id]
    bob_hits, bob_list, bob_delete = asyncio.run(
        tools(
            b.url,
            "bob",
            ("memory_search", {"query": "三楼"}),
            ("memory_list", {}),
            ("memory_delete", {"id": entry_id}),
        )
    )
    assert bob_hits.structured_content["results"] == []
    assert bob_list.structured_content["entries"] == []
    assert bob_delete.is_error and "no such memory entry" in bob_delete.content[0].text
    rest = httpx.get(f"{a.url}/v1/memory", headers=h["ann"]).json()["entries"]
    assert [e["content"] for e in rest] == ["会议室在三楼"]


def test_the_team_server_keeps_what_it_built_out_of_collections(pg_url: str) -> None:
    """As the local server: a full collection over the loaded modules would stall every
    request; the team server freezes what exists once it is built, and lets go at stop."""
    import gc

    from fastapi.testclient import TestClient

    from workhearth.server.team import create_team_app

    # Why: a server another test left running (in a thread) may have frozen the heap.
    gc.unfreeze()
    with TestClient(create_team_app(PgBank(pg_url)), base_url="http://127.0.0.1:8765") as client:
        assert gc.get_freeze_count() > 10_000
        assert client.get("/v1/memory/search?q=x").status_code == 401
    assert gc.get_freeze_count() == 0
