"""The remote bank and its offline queue, through the real ``hearth`` command.

The server is the real ``hearth serve --store`` on a real PostgreSQL; rows are
counted in the database itself. Two tests put a fault at the network edge
(tests.bank.edge_proxy) between the client and that server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import orjson
import pytest

from tests.bank.edge_proxy import EdgeProxy
from tests.bank.team_server import TeamServer as BankServer
from tests.bank.team_server import free_port
from tests.e2e.conftest import HEARTH_CMD, Hearth, make_hearth
from workhearth.bank.client.queue import Outbox
from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user


@pytest.fixture
def server(tmp_path: Path, pg_url: str) -> Iterator[BankServer]:
    PgBank(pg_url).close()  # Why: creates the schema before a user is added
    srv = BankServer(pg_url, tmp_path / "server-home", tmp_path / "server.log")
    yield srv
    srv.stop()


def _bank_url(h: Hearth, url: str) -> None:
    (h.home / "config.toml").write_text(f'[bank]\nurl = "{url}"\ntimeout = 5\n')


@pytest.fixture
def client(tmp_path: Path, server: BankServer) -> Hearth:
    h = make_hearth(tmp_path / "client")
    h.home.mkdir()
    _bank_url(h, server.url)
    with connect(server.store) as conn:
        h.env["HEARTH_BANK_TOKEN"] = add_user(conn, "ann")
    return h


def _queued(h: Hearth) -> list[str]:
    outbox = Outbox(h.home / "bank")
    try:
        return [q.body["content"] for q in outbox.pending()]
    finally:
        outbox.close()


def _start_hearth(h: Hearth, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*HEARTH_CMD, *args],
        cwd=h.workspace,
        env=h.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_saves_while_the_server_is_down_are_queued_and_arrive_once_in_order(
    server: BankServer, client: Hearth
) -> None:
    server.start()
    first = client.run("memory", "save", "alpha: the build runs on Debian")
    assert first.code == 0 and first.out.startswith("saved m-"), first.err

    server.stop()  # the server goes away mid-run
    down = client.run("memory", "save", "bravo: releases are tagged on Fridays")
    assert down.code == 0, down.err
    assert down.out.startswith("queued ") and "cannot reach the team bank" in down.out
    # A client killed right after it said "queued": the save is on disk.
    proc = _start_hearth(client, "memory", "save", "charlie: the wiki moved to docs/")
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("queued "), line + proc.stderr.read()  # type: ignore[union-attr]
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert _queued(client) == [
        "bravo: releases are tagged on Fridays",
        "charlie: the wiki moved to docs/",
    ]
    status = client.json("memory", "status")["bank"]
    assert (status["url"], status["queued"], status["dead_letters"]) == (server.url, 2, 0)
    still = client.run("memory", "sync")
    assert still.code == 1 and len(still.err_lines) == 1, still.err
    assert still.err.startswith(
        f"hearth: 2 saves still queued: cannot reach the team bank {server.url}: "
    )
    assert server.contents() == ["alpha: the build runs on Debian"]

    server.start()
    # A new save goes behind the queued ones: they leave first, in order.
    back = client.run("memory", "save", "delta: code review needs two approvals")
    assert back.code == 0 and back.out.startswith("saved m-"), back.out + back.err
    synced = client.run("memory", "sync", "--json")
    assert synced.code == 0, synced.err
    assert orjson.loads(synced.out)["sent"] == [] and _queued(client) == []
    assert server.contents() == [
        "alpha: the build runs on Debian",
        "bravo: releases are tagged on Fridays",
        "charlie: the wiki moved to docs/",
        "delta: code review needs two approvals",
    ]
    with connect(server.store) as conn:
        assert conn.execute("SELECT count(*) FROM idempotency").fetchone()[0] == 4
    listed = client.json("memory", "list")
    assert [e["content"][:5] for e in listed["entries"]] == ["delta", "charl", "bravo", "alpha"]
    hits = client.json("memory", "search", "Fridays")
    assert hits[0]["text"] == "bravo: releases are tagged on Fridays"
    assert hits[0]["layer"] == "team"


def test_a_client_killed_after_the_server_committed_resends_and_the_server_keeps_one(
    server: BankServer, client: Hearth
) -> None:
    # Why the proxy takes the client's port: the outbox keeps saves per bank URL.
    client_port, server.port = server.port, free_port()
    server.start()
    edge = EdgeProxy(server.port, client_port)
    edge.hold = True
    proc = _start_hearth(client, "memory", "save", "echo: deploys need a change ticket")
    deadline = time.monotonic() + 60
    while not edge.committed and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    # The server committed and its answer is held back: the client dies before it
    # can mark the save sent.
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    edge.close()
    (key,) = edge.committed
    outbox = Outbox(client.home / "bank")
    assert [q.key for q in outbox.pending()] == [key]
    outbox.close()
    assert server.contents() == ["echo: deploys need a change ticket"]

    # Why delete it meanwhile: the resend must be recognised by its key, not by
    # its text (a deleted entry must not come back).
    with PgBank(server.store) as bank:
        (entry,) = bank.list("ann")[0]
        bank.delete("ann", entry.id)
    server.stop()
    server.port = client_port
    server.start()
    synced = client.run("memory", "sync", "--json")
    assert synced.code == 0, synced.err
    assert [(s["key"], s["id"], s["existed"]) for s in orjson.loads(synced.out)["sent"]] == [
        (key, entry.id, True)
    ]
    assert server.contents() == []
    assert server.contents(deleted=True) == ["echo: deploys need a change ticket"]
    assert _queued(client) == []


def test_a_save_the_server_refuses_goes_to_the_dead_letters_and_is_reported(
    server: BankServer, client: Hearth
) -> None:
    for text in ("short one", "a sentence longer than this server takes", "short two"):
        queued = client.run("memory", "save", text)
        assert queued.code == 0 and queued.out.startswith("queued "), queued.err
    # Why at the edge: the real server's limits are the client's own; a server of
    # another version with a stricter one is what refuses here. The proxy takes
    # the client's port (the outbox keeps saves per bank URL).
    client_port, server.port = server.port, free_port()
    server.start()
    edge = EdgeProxy(server.port, client_port)
    edge.content_limit = 20
    synced = client.run("memory", "sync")
    assert synced.code == 1
    assert synced.err_lines == [
        f"hearth: the team bank refused 1 saves: kept in {client.home / 'bank' / 'dead-letters.jsonl'}"
    ]
    assert "dead letter " in synced.out and "over this server's 20 characters" in synced.out
    assert server.contents() == ["short one", "short two"]
    (dead,) = Outbox(client.home / "bank").dead()
    assert dead["content"] == "a sentence longer than this server takes"
    assert dead["status"] == 422
    again = client.run("memory", "sync")
    assert again.code == 0, again.err
    assert "1 dead letters in" in again.out
    # A refused save made while the server is up is a clear error, and kept too.
    direct = client.run("memory", "save", "another sentence too long for it")
    assert direct.code == 1 and direct.err_lines == [
        "hearth: the team bank refused it (422): content over this server's 20 characters"
    ]
    assert len(Outbox(client.home / "bank").dead()) == 2
    edge.close()
    # The real server refuses what the library's limits refuse, with the same 422.
    with connect(server.store) as conn:
        token = add_user(conn, "bob")
    too_many = httpx.post(
        f"{server.url}/v1/memory",
        json={"content": "x", "tags": [f"t{i}" for i in range(50)]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert too_many.status_code == 422 and too_many.json()["detail"]


def test_bank_config_errors_name_the_file(client: Hearth) -> None:
    config = client.home / "config.toml"
    for body, expected in (
        ('[bank]\nurl = "http://x"\ntoken = "hth_abc"\n', "must not hold the token itself"),
        ('[bank]\nurl = "http://x"\ntokn_env = "T"\n', "[bank] has unknown keys: tokn_env"),
        ('[bank]\nurl = "ftp://x"\n', "[bank] url must be an http:// or https:// URL"),
    ):
        config.write_text(body)
        result = client.run("memory", "list")
        assert result.code != 0
        assert result.err_lines == [f"hearth: {config}: {expected}"] or (
            len(result.err_lines) == 1 and str(config) in result.err and expected in result.err
        ), result.err
    config.write_text("")
    no_bank = client.run("memory", "sync")
    assert no_bank.code == 2 and no_bank.err_lines == [
        "hearth: no team bank is configured: set [bank] url in config.toml"
    ]
    config.write_text('[bank]\nurl = "http://127.0.0.1:9"\ntoken_env = "MY_BANK_TOKEN"\n')
    missing = client.run("memory", "list")
    assert missing.code != 0 and missing.err_lines == [
        "hearth: no token for the team bank http://127.0.0.1:9: the variable MY_BANK_TOKEN "
        f"([bank] in {config}) is empty or missing (`hearth team user add NAME` prints one)"
    ]
    assert "hth_" not in missing.err and os.environ.get("MY_BANK_TOKEN") is None
