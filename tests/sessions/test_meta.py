"""Typed session values: the meta line, the listing summary and an import's result."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.sessions.conftest import assistant, user
from workhearth.errors import CorruptDataError
from workhearth.sessions.codec import encode_line
from workhearth.sessions.meta import SessionMeta
from workhearth.sessions.snapshot import SessionSummary
from workhearth.sessions.store import SessionStore
from workhearth.sessions.transfer import ImportResult, export_bundle, import_path


def test_the_meta_line_reads_into_fields_and_keeps_the_whole_line(store: SessionStore) -> None:
    s = store.create(model="openai:m1", mode="quest", extra_meta={"future_key": [1, 2]})
    meta = store.open(s.id).meta
    assert (meta.session_id, meta.workspace, meta.model, meta.mode) == (
        s.id,
        store.workspace,
        "openai:m1",
        "quest",
    )
    assert not meta.encrypted and meta.encryption is None and not meta.rebuilt
    assert isinstance(meta.created, float) and meta.parent_session is None
    # Why: export writes the line back; a key this version does not know must survive.
    assert meta.event["future_key"] == [1, 2] and meta.event["type"] == "meta"


def test_odd_values_in_the_meta_line_read_as_absent() -> None:
    meta = SessionMeta.from_event(
        {
            "workspace": 5,
            "created": True,
            "model": ["x"],
            "mode": None,
            "parent_session": 7,
            "encryption": "not-a-record",
            "imported_from": {"updated": "yesterday"},
        },
        "sid-1",
    )
    assert meta.workspace == "" and meta.created is None and meta.model is None
    assert meta.parent_session is None and meta.source_updated is None
    # The line claims encryption: a malformed record must not make it read as clear text.
    assert meta.encrypted and meta.encryption is None


def test_a_malformed_encryption_record_is_reported_not_read_as_clear(store: SessionStore) -> None:
    s = store.create()
    with s:
        s.append_message(user("hello"))
    first, _, rest = s.transcript.read_bytes().partition(b"\n")
    event = orjson.loads(first)
    del event["crc"]
    s.transcript.write_bytes(encode_line({**event, "encryption": "nope"}) + rest)
    again = store.open(s.id)
    assert again.encrypted
    with pytest.raises(CorruptDataError, match="no encryption record"):
        again.load()
    (info,) = store.list()
    assert info.encrypted and info.title == "(damaged)"


def test_the_summary_comes_from_the_snapshot_or_a_load(store: SessionStore) -> None:
    s = store.create()
    with s:
        s.append_message(user("one"))
        s.append_message(assistant("two"))
        s.append("title", {"title": "a title"})
    summary = store.open(s.id).summary()
    assert summary == SessionSummary("a title", 2, s.load().updated)
    assert store.list()[0].title == "a title" and store.list()[0].messages == 2


CLAUDE_LINES = [
    {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "abc",
        "timestamp": "2026-01-01T10:00:00Z",
        "message": {"role": "user", "content": "hello there"},
    },
    {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "abc",
        "timestamp": "2026-01-01T10:00:01Z",
        "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]},
    },
]


def test_an_import_result_keeps_its_json_shape(store: SessionStore, tmp_path: Path) -> None:
    source = tmp_path / "cc.jsonl"
    lines = [orjson.dumps(line) for line in CLAUDE_LINES]
    source.write_bytes(b"\n".join([lines[0], b"not json", lines[1]]) + b"\n")
    result = import_path(store, source)
    assert isinstance(result, ImportResult) and result.messages == 2
    data = result.as_dict()
    # The contract of `hearth sessions import --json`: these keys, in this order.
    assert list(data) == ["session_id", "workspace", "path", "messages", "sidechains", "skipped"]
    assert data["skipped"] == [{"line": 2, "reason": "not valid JSON"}]
    # `--json` prints the dataclass itself; orjson must give the same bytes as the dict.
    assert orjson.dumps(result) == orjson.dumps(data)

    bundle = tmp_path / "b.zip"
    bundle.write_bytes(export_bundle(store.open(result.session_id)))
    other = SessionStore(store.config, tmp_path)
    store.delete(result.session_id)
    again = import_path(other, bundle)
    assert again.session_id == result.session_id and again.messages == 2
    assert again.sidechains == [] and again.skipped == []
