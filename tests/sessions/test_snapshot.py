"""snapshot.zst: a cache that loads exactly what a full parse of the log gives, or nothing."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest
import zstandard

import workhearth.sessions.session as session_mod
from tests.sessions.conftest import user
from workhearth.config import load_config
from workhearth.errors import EncryptionKeyError
from workhearth.sessions import snapshot as snap_mod
from workhearth.sessions.session import SNAPSHOT, Session
from workhearth.sessions.snapshot import MAGIC, load_snapshot, read_summary, write_snapshot
from workhearth.sessions.state import SessionState
from workhearth.sessions.store import SessionStore

_WORDS = ["alpha", "béta", "γάμμα", "日本語", "emoji 🧪", 'quote " back \\ slash', "tab\tnl\n", ""]


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.choice(
            [0, 1, -1, 2**63 - 1, -(2**63), 2**64 - 1, rng.randrange(-(10**9), 10**9)]
        )
    if kind == 1:
        return rng.choice([0.0, -0.0, 1.0, 0.1, 1e308, -2.5e-300, rng.random()])
    if kind == 2:
        return rng.choice([True, False, None])
    if kind in (3, 4, 5):
        return " ".join(rng.choices(_WORDS, k=rng.randrange(0, 6)))
    if kind in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]
    return {rng.choice(_WORDS) + str(i): _value(rng, depth + 1) for i in range(rng.randrange(4))}


def _message(rng: random.Random, i: int) -> dict[str, Any]:
    if rng.random() < 0.5:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": f"ask {i} {_value(rng, 3)}"}]
        if rng.random() < 0.3:
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": f"t{i}",
                    "content": "x" * rng.randrange(5000),
                }
            )
        return {"role": "user", "id": f"m{i}", "content": blocks}
    blocks = [
        {"type": "thinking", "thinking": f"hmm {i}", "signature": "c2ln" * rng.randrange(1, 40)},
        {"type": "tool_use", "id": f"t{i}", "name": "bash", "input": _value(rng)},
    ]
    return {"role": "assistant", "id": f"m{i}", "model": "m", "content": blocks, "extra": 1.5}


def _random_events(session: Session, rng: random.Random, count: int) -> None:
    """Messages mixed with every other event type, at random."""
    for i in range(count):
        roll = rng.random()
        last = session.load().last_seq
        if roll < 0.75:
            session.append_message(_message(rng, i))  # type: ignore[arg-type]
        elif roll < 0.82:
            session.checkpoint({"tasks": [{"id": i, "done": False}], "files": {}, "v": _value(rng)})
        elif roll < 0.88:
            session.append("title", {"title": f"title {i} " + rng.choice(_WORDS)})
        elif roll < 0.94:
            upto = rng.randint(max(1, last - 30), last)
            session.append("compact", {"summary": f"summary {i}", "upto_seq": upto})
        else:
            session.append("rewind", {"to_seq": rng.randint(max(1, last - 4), last)})


def _dump(state: SessionState) -> bytes:
    """Byte-exact view of a state: orjson keeps 1 and 1.0, key order and -0.0 apart."""
    return orjson.dumps(state.to_dict())


def _full(store: SessionStore, sid: str) -> tuple[bytes, dict[str, int]]:
    session = store.open(sid)
    state = session.load(use_snapshot=False, save_snapshot=False)
    return _dump(state), session.damage


def _snapshot_now(monkeypatch: pytest.MonkeyPatch, session: Session) -> None:
    """Close the writer with the tail threshold at 0, so close() rewrites the snapshot."""
    monkeypatch.setattr(session_mod, "SNAPSHOT_TAIL_BYTES", 0)
    session.close()
    monkeypatch.setattr(session_mod, "SNAPSHOT_TAIL_BYTES", 1 << 40)


@pytest.mark.parametrize("seed", range(6))
def test_round_trip_equals_a_full_parse(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(snap_mod, "_BATCH", 1 + seed % 4)  # many records, short last batch
    s = store.create(model="m1")
    _random_events(s, rng, rng.randrange(1, 120))
    if seed % 2:  # a garbled line inside the snapshotted range: its damage count is cached too
        s.close()
        with s.transcript.open("ab") as fh:
            fh.write(b'{"seq":999,"garbled\n')
        s = store.open(s.id)
        _random_events(s, rng, 5)
    _snapshot_now(monkeypatch, s)
    path = s.folder / SNAPSHOT
    full, damage = _full(store, s.id)
    assert damage["checksum"] == seed % 2
    snap = load_snapshot(path, s.transcript, s.id)
    assert snap is not None
    assert snap.end_offset == s.transcript.stat().st_size
    assert _dump(snap.state) == full and snap.damage == damage
    loaded = store.open(s.id)
    assert _dump(loaded.load()) == full and loaded.damage == damage

    # more events after the snapshot, compact and rewind included: snapshot + tail == full parse
    more = store.open(s.id)
    _random_events(more, rng, 40)
    more.append("compact", {"summary": "late", "upto_seq": more.load().last_seq - 3})
    more.append("rewind", {"to_seq": more.load().last_seq - 1})
    more.close()
    tail_snap = load_snapshot(path, s.transcript, s.id)
    assert tail_snap is not None and tail_snap.end_offset < s.transcript.stat().st_size
    full, damage = _full(store, s.id)
    resumed = store.open(s.id)
    assert _dump(resumed.load(save_snapshot=False)) == full and resumed.damage == damage


def test_body_is_one_checksummed_zstd_frame(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store.create()
    _random_events(s, random.Random(7), 30)
    _snapshot_now(monkeypatch, s)
    data = (s.folder / SNAPSHOT).read_bytes()
    assert data.startswith(MAGIC)
    head_len = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 4], "big")
    header = orjson.loads(data[len(MAGIC) + 4 : len(MAGIC) + 4 + head_len])
    assert header["sid"] == s.id and header["messages"] == len(s.load().messages)
    body = data[len(MAGIC) + 4 + head_len :]
    params = zstandard.get_frame_parameters(body)
    assert params.has_checksum
    assert zstandard.ZstdDecompressor().stream_reader(body).read()


def _with_header(data: bytes, **changes: Any) -> bytes:
    """The same snapshot under a (plaintext) header with ``changes`` applied."""
    n = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 4], "big")
    header = orjson.loads(data[len(MAGIC) + 4 : len(MAGIC) + 4 + n])
    head = orjson.dumps({**header, **changes})
    return MAGIC + len(head).to_bytes(4, "big") + head + data[len(MAGIC) + 4 + n :]


def _damaged(data: bytes, rng: random.Random) -> list[bytes]:
    cut = len(data) - 1
    flips = []
    for at in (len(MAGIC) + 2, len(MAGIC) + 30, len(data) // 2, *range(len(data) - 6, len(data))):
        flipped = bytearray(data)
        flipped[at] ^= 0x41
        flips.append(bytes(flipped))
    return [
        b"",
        data[:5],
        data[: len(MAGIC) + 10],
        data[: len(data) // 2],
        data[:cut],
        data + b"\x00",
        rng.randbytes(len(data)),
        MAGIC + rng.randbytes(200),
        *flips,
        _with_header(data, raw=100),  # a record longer than the promised body
        _with_header(data, messages=1),
        _with_header(data, bytes=None),
    ]


def test_truncated_garbage_and_flipped_snapshots_are_ignored_and_rebuilt(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(3)
    s = store.create()
    _random_events(s, rng, 150)
    _snapshot_now(monkeypatch, s)
    path = s.folder / SNAPSHOT
    good = path.read_bytes()
    full, _ = _full(store, s.id)
    monkeypatch.setattr(session_mod, "SNAPSHOT_TAIL_BYTES", 0)
    path.write_bytes(_with_header(good))
    assert load_snapshot(path, s.transcript, s.id) is not None  # the re-header helper is sound
    for bad in _damaged(good, rng):
        path.write_bytes(bad)
        assert load_snapshot(path, s.transcript, s.id) is None
        assert _dump(store.open(s.id).load()) == full
        rebuilt = load_snapshot(path, s.transcript, s.id)
        assert rebuilt is not None and _dump(rebuilt.state) == full


def test_snapshot_of_another_session_or_version_is_ignored(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = store.create(), store.create()
    for session in (a, b):
        _random_events(session, random.Random(1), 40)  # same events: same line lengths
        _snapshot_now(monkeypatch, session)
    shutil.copy(a.folder / SNAPSHOT, b.folder / SNAPSHOT)
    assert load_snapshot(b.folder / SNAPSHOT, b.transcript, b.id) is None
    assert read_summary(b.folder / SNAPSHOT, b.transcript, b.id) is None
    full, _ = _full(store, b.id)
    monkeypatch.setattr(session_mod, "SNAPSHOT_TAIL_BYTES", 0)
    assert _dump(store.open(b.id).load()) == full
    assert load_snapshot(b.folder / SNAPSHOT, b.transcript, b.id) is not None

    # a snapshot written by another format version is stale, whatever it holds
    monkeypatch.setattr(snap_mod, "VERSION", snap_mod.VERSION + 1)
    state = store.open(b.id).load(use_snapshot=False, save_snapshot=False)
    crc = b.transcript.read_bytes()[-11:-3].decode()
    write_snapshot(b.folder / SNAPSHOT, state, b.transcript.stat().st_size, crc, {})
    monkeypatch.undo()
    assert load_snapshot(b.folder / SNAPSHOT, b.transcript, b.id) is None


def test_snapshot_pinned_to_a_line_that_changed_is_stale(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store.create()
    _random_events(s, random.Random(5), 30)
    s.append("title", {"title": "before"})
    s.append("title", {"title": "aaaa"})
    _snapshot_now(monkeypatch, s)
    path = s.folder / SNAPSHOT
    original = s.transcript.read_bytes()
    assert load_snapshot(path, s.transcript, s.id) is not None
    head = read_summary(path, s.transcript, s.id)
    assert head is not None and head.title == "aaaa"

    # the same event rewritten (same length, valid line, other checksum)
    from workhearth.sessions.codec import encode_line

    lines = original.splitlines(keepends=True)
    event = orjson.loads(lines[-1])
    event.pop("crc")
    event["title"] = "bbbb"
    changed = b"".join(lines[:-1]) + encode_line(event)
    assert len(changed) == len(original) and changed != original
    # a shorter transcript (the pinned offset is past its end)
    shorter = b"".join(lines[:-1])
    for transcript, title in ((changed, "bbbb"), (shorter, "before")):
        s.transcript.write_bytes(transcript)
        assert load_snapshot(path, s.transcript, s.id) is None
        assert read_summary(path, s.transcript, s.id) is None
        full, _ = _full(store, s.id)
        state = store.open(s.id).load(save_snapshot=False)
        assert _dump(state) == full and state.title == title  # from the log, not the cache


def test_summary_only_when_the_snapshot_covers_the_transcript(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = store.create()
    s.append_message(user("hello"))
    s.append("title", {"title": "greeting"})
    _snapshot_now(monkeypatch, s)
    path = s.folder / SNAPSHOT
    head = read_summary(path, s.transcript, s.id)
    assert head is not None and head.title == "greeting" and head.messages == 1
    again = store.open(s.id)
    again.append_message(user("more"))
    again.close()
    assert read_summary(path, s.transcript, s.id) is None
    assert store.open(s.id).summary().messages == 2  # from a load, since the cache is behind


def _encrypted_store(tmp_path: Path, passphrase: str) -> SessionStore:
    env = {
        "HEARTH_HOME": str(tmp_path / "h"),
        "HEARTH_ENCRYPT": "1",
        "HEARTH_PASSPHRASE": passphrase,
    }
    return SessionStore(load_config(env), tmp_path)


def test_encrypted_snapshot_has_no_plaintext_and_needs_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _encrypted_store(tmp_path, "pw")
    s = store.create()
    _random_events(s, random.Random(11), 30)
    s.append_message(user("TOP-SECRET-PLAN"))
    s.checkpoint({"tasks": [{"title": "SECRET-TASK"}]})
    s.append("title", {"title": "SECRET-TITLE"})
    _snapshot_now(monkeypatch, s)
    path = s.folder / SNAPSHOT
    raw = path.read_bytes()
    for secret in (b"SECRET", b"TOP-SECRET-PLAN", b"SECRET-TITLE", s.id.encode()):
        assert secret not in raw
    # neither the header nor the body is readable without the key
    assert load_snapshot(path, s.transcript, s.id) is None
    assert read_summary(path, s.transcript, s.id) is None
    head_len = int.from_bytes(raw[len(MAGIC) : len(MAGIC) + 4], "big")
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(raw[len(MAGIC) + 4 : len(MAGIC) + 4 + head_len])
    with pytest.raises(zstandard.ZstdError):
        zstandard.ZstdDecompressor().stream_reader(raw[len(MAGIC) + 4 + head_len :]).read()

    full, damage = _full(store, s.id)
    cipher = store.open(s.id).cipher
    assert cipher is not None
    snap = load_snapshot(path, s.transcript, s.id, cipher.open_blob)
    assert snap is not None and _dump(snap.state) == full and snap.damage == damage
    head = read_summary(path, s.transcript, s.id, cipher.open_blob)
    assert head is not None and head.title == "SECRET-TITLE"
    loaded = store.open(s.id)
    assert _dump(loaded.load()) == full

    # another session's key (same passphrase, other salt) opens nothing
    other = store.create()
    other.close()
    other_cipher = store.open(other.id).cipher
    assert other_cipher is not None
    assert load_snapshot(path, s.transcript, s.id, other_cipher.open_blob) is None
    # a wrong passphrase is a wrong key, never a silently empty session
    with pytest.raises(EncryptionKeyError):
        _encrypted_store(tmp_path, "nope").open(s.id).load()
