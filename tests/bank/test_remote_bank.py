"""``wh.memory`` with ``[bank] url``: what goes to the team bank and what stays local,
and the ``[bank]`` section of ``config.toml``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bank.test_remote_queue import BankServer, client, server  # noqa: F401 (fixtures)
from workhearth.app import Workhearth
from workhearth.bank.client.facade import QUEUED, TeamBank
from workhearth.bank.client.remote import BankRefused
from workhearth.config import load_config
from workhearth.errors import ConfigError, NotFoundError


def _wh(home: Path, workspace: Path, token: str) -> Workhearth:
    return Workhearth(
        workspace=workspace, env={"HEARTH_HOME": str(home), "HEARTH_BANK_TOKEN": token}
    )


def test_the_bank_face_goes_to_the_server_and_the_rest_stays_local(
    server: BankServer,  # noqa: F811
    client,  # noqa: F811
) -> None:
    server.start()
    wh = _wh(client.home, client.workspace, client.env["HEARTH_BANK_TOKEN"])
    memory = wh.memory
    assert isinstance(memory.team_bank, TeamBank)
    try:
        saved = memory.save("the staging database is reset every Monday", tags=["ops"])
        assert saved.layer == "team" and not saved.existed
        again = memory.save("the staging database is reset every Monday")
        assert again.id == saved.id and again.existed
        # Pending (unconfirmed) saves stay in the local Markdown, for the user to confirm.
        pending = memory.save("maybe: the cache is warmed at boot", source="agent", pending=True)
        assert pending.layer == "project" and pending.pending
        assert server.contents() == ["the staging database is reset every Monday"]
        assert "maybe: the cache is warmed at boot" in memory.context()
        hits = memory.search("staging Monday cache")
        assert {h.layer for h in hits} == {"team", "project"}
        entries, cursor = memory.list()
        assert [e.id for e in entries] == [saved.id] and cursor is None
        assert [e.id for e in memory.list(layer="project")[0]] == [pending.id]
        edited = memory.edit(saved.id, "the staging database is reset every Sunday")
        assert edited.content.endswith("Sunday") and server.contents() == [edited.content]
        memory.delete(saved.id)
        assert server.contents() == []
        with pytest.raises(NotFoundError):
            memory.delete(saved.id)
        memory.delete(pending.id)  # the local one, by its id
        assert memory.list(layer="project")[0] == []
        with pytest.raises(BankRefused, match=r"refused it \(422\): level: must be one of") as info:
            memory.team_bank.remote.save({"content": "x", "level": "nope"}, "k1")
        assert info.value.dead
    finally:
        memory.close()


def test_an_unreachable_bank_queues_and_search_says_so(
    server: BankServer,  # noqa: F811
    client,  # noqa: F811
) -> None:
    wh = _wh(client.home, client.workspace, client.env["HEARTH_BANK_TOKEN"])
    memory = wh.memory
    team = memory.team_bank
    assert isinstance(team, TeamBank)
    try:
        queued = memory.save("the on-call rota is in the wiki")
        assert queued.layer == QUEUED and queued.id == team.outbox.pending()[0].key
        with pytest.raises(Exception, match=f"cannot reach the team bank {server.url}"):
            memory.search("rota")
        server.start()
        report = team.send_queued()
        assert list(report.sent) == [queued.id] and report.queued == []
        assert [h.text for h in memory.search("rota")] == ["the on-call rota is in the wiki"]
    finally:
        memory.close()


def test_bank_section(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    (tmp_path / "secret").write_text("hth_from_file\n")
    config.write_text('[bank]\nurl = "https://bank.example/"\ntoken_file = "secret"\n')
    bank = load_config({}, tmp_path).bank
    assert (bank.url, bank.token, bank.timeout) == ("https://bank.example", "hth_from_file", 10.0)
    assert "hth_" not in repr(bank)
    config.write_text('[bank]\nurl = "https://b"\n')
    assert load_config({"HEARTH_BANK_TOKEN": "hth_env"}, tmp_path).bank.token == "hth_env"
    assert load_config({}, tmp_path).bank.token is None
    assert load_config({}, tmp_path).bank.url == "https://b"
    config.write_text("")
    assert load_config({}, tmp_path).bank.url is None
    for body, message in (
        ('[bank]\nurl = "https://b"\ntoken_env = "A"\ntoken_file = "f"\n', "not both"),
        ('[bank]\nurl = "https://b"\ntimeout = 0\n', "timeout must be a positive number"),
        ('[bank]\nurl = "https://b"\ntoken_env = ""\n', "token_env must be a non-empty string"),
        ("bank = 3\n", "[bank] must be a table"),
    ):
        config.write_text(body)
        with pytest.raises(ConfigError, match=re.escape(message)) as info:
            load_config({}, tmp_path)
        assert str(config) in str(info.value)
