"""Rebuilding a damaged meta line (sessions/header.py) through the library."""

from __future__ import annotations

import calendar
import time
from pathlib import Path

import pytest

from tests.sessions.conftest import assistant, user
from workhearth.config import load_config
from workhearth.errors import EncryptionKeyError
from workhearth.sessions.session import SNAPSHOT_TAIL_BYTES, Session
from workhearth.sessions.store import SessionStore


def damage_first_line(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    end = data.index(b"\n")
    if how == "zeros":
        data[:end] = bytes(end)
    else:
        at = data.index(b'"model":"') + len(b'"model":"')
        data[at] ^= 0x01
    path.write_bytes(bytes(data))


def test_the_rebuilt_header_comes_from_the_folder_and_the_other_lines(store: SessionStore) -> None:
    session = store.create(model="openai:m1", mode="ask")
    with session:
        session.append_message(user("hello"))
        session.append_message(assistant("hi"))
    damage_first_line(session.transcript, "zeros")
    again = store.open(session.id)
    state = again.load()
    assert [m["content"][0]["text"] for m in state.messages] == ["hello", "hi"]
    meta = again.meta
    assert meta.rebuilt is True and again.header_rebuilt
    assert meta.session_id == session.id and meta.workspace == store.workspace
    assert meta.encryption is None and not meta.encrypted
    stamp = calendar.timegm(time.strptime(session.id[:15], "%Y%m%d-%H%M%S"))
    assert meta.created == stamp
    assert again.damage["nul"] == 1
    assert any("header" in w for w in again.warnings())


def test_appends_go_on_after_a_damaged_header(store: SessionStore) -> None:
    session = store.create(model="openai:m1")
    with session:
        session.append_message(user("one"))
    damage_first_line(session.transcript, "model")
    with store.open(session.id) as again:
        assert again.append_message(assistant("two")) == 3
    reread = store.open(session.id)
    assert [m["content"][0]["text"] for m in reread.messages()] == ["one", "two"]
    assert reread.load().last_seq == 3


def test_a_snapshot_written_before_the_damage_restores_the_header_exactly(
    store: SessionStore,
) -> None:
    session = store.create(model="openai:original-model", mode="quest")
    with session:
        big = "x" * 4096
        for n in range(SNAPSHOT_TAIL_BYTES // 4096 + 8):
            session.append_message(user(f"{n} {big}") if n % 2 == 0 else assistant(big))
    assert (session.folder / "snapshot.zst").exists()
    damage_first_line(session.transcript, "model")
    salvaged = Session(session.folder, store.config).meta.model
    assert salvaged != "openai:original-model"  # the damaged byte is in the model name
    again = store.open(session.id)
    state = again.load()
    assert state.meta["model"] == "openai:original-model" and state.meta["mode"] == "quest"
    assert again.meta.model == "openai:original-model" and again.header_rebuilt


def test_an_encrypted_key_file_session_opens_with_its_header_zeroed(tmp_path: Path) -> None:
    env = {"HEARTH_HOME": str(tmp_path / "home"), "HEARTH_KEY_FILE": str(tmp_path / "k.key")}
    (tmp_path / "ws").mkdir()
    store = SessionStore(load_config({**env, "HEARTH_ENCRYPT": "1"}), tmp_path / "ws")
    session = store.create(model="openai:m1")
    with session:
        session.append_message(user("sealed words"))
    damage_first_line(session.transcript, "zeros")
    reader = SessionStore(load_config(env), tmp_path / "ws").open(session.id)
    assert reader.messages()[0]["content"][0]["text"] == "sealed words"
    assert reader.encrypted and reader.meta.encryption["source"] == "key_file"
    (tmp_path / "k.key").write_bytes(b"\x01" * 32)  # another key: nothing opens
    wrong = SessionStore(load_config(env), tmp_path / "ws").open(session.id)
    with pytest.raises(EncryptionKeyError, match="does not open its other lines"):
        wrong.messages()
