"""Session store: create, find from anywhere, list, lookup clamps, snapshots, delete to trash."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from tests.sessions.conftest import assistant, user
from workhearth.config import Config, load_config
from workhearth.errors import EncryptionKeyError, NotFoundError, SessionLockedError, UsageError
from workhearth.sessions.session import SNAPSHOT, Session
from workhearth.sessions.snapshot import load_snapshot
from workhearth.sessions.store import SessionStore
from workhearth.trash import Trash


def fill(session: Session, n: int, size: int = 10) -> None:
    for i in range(n):
        session.append_message(user(f"question {i} " + "x" * size))
        session.append_message(assistant(f"answer {i}"))


def test_create_writes_meta_and_private_files(store: SessionStore) -> None:
    s = store.create(model="m1", mode="ask")
    assert s.meta.session_id == s.id and s.meta.mode == "ask"
    assert stat.S_IMODE(s.folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(s.transcript.stat().st_mode) == 0o600
    assert s.load().business.model == "m1"


def test_found_from_any_workspace_and_by_prefix(
    store: SessionStore, config: Config, tmp_path: Path
) -> None:
    s = store.create()
    fill(s, 2)
    s.close()
    elsewhere = SessionStore(config, tmp_path / "other")
    assert elsewhere.open(s.id).load().messages[0]["content"][0]["text"].startswith("question 0")
    assert elsewhere.open(s.id[:20]).id == s.id
    with pytest.raises(NotFoundError):
        elsewhere.open("nope")
    with pytest.raises(NotFoundError):
        elsewhere.open("../../etc")


def test_list_newest_first_with_titles_and_counts(store: SessionStore) -> None:
    ids = []
    for i in range(3):
        s = store.create()
        fill(s, i + 1)
        s.append("title", {"title": f"t{i}"})
        s.close()
        ids.append(s.id)
    infos = store.list()
    assert [i.session_id for i in infos] == ids[::-1]
    assert [i.messages for i in infos] == [6, 4, 2]
    assert [i.title for i in infos] == ["t2", "t1", "t0"]
    assert len(store.list(limit=2)) == 2


def test_last_is_the_newest_of_this_workspace(
    store: SessionStore, config: Config, tmp_path: Path
) -> None:
    mine = store.create()
    mine.close()
    SessionStore(config, tmp_path / "other").create().close()
    assert store.last().id == mine.id
    with pytest.raises(NotFoundError):
        SessionStore(config, tmp_path / "empty").last()


def test_last_passes_over_linked_sessions(store: SessionStore) -> None:
    lead = store.create()
    lead.close()
    time.sleep(0.01)  # Why: --last goes by the transcript's mtime
    side = store.create(extra_meta={"parent_session": lead.id})
    side.close()
    assert store.last().id == lead.id  # a subagent's or specialist's session is not --last


def test_a_copy_of_the_project_keeps_its_sessions_with_the_project(
    config: Config, tmp_path: Path
) -> None:
    project, copy = tmp_path / "project", tmp_path / "scratch" / "copy"
    store = SessionStore(config, copy, project=project)
    s = store.create()
    s.close()
    assert s.folder.parent == config.paths.project(str(project)) / "sessions"
    assert s.workspace == str(copy)  # it works in the copy
    assert not config.paths.project(str(copy)).exists()


def test_read_transcript_clamps_count(store: SessionStore) -> None:
    s = store.create()
    fill(s, 20)
    s.close()
    assert store.read_transcript(s.id).returned == 10
    assert store.read_transcript(s.id, 0).returned == 1
    got = store.read_transcript(s.id, 500)
    assert got.returned == 30 and got.total == 40
    assert set(got.as_dict()) == {"session_id", "total", "returned", "messages"}  # DESIGN §3
    latest = store.latest_message(s.id)
    assert latest.message is not None
    assert latest.message["content"][0]["text"] == "answer 19"


def test_snapshot_is_written_used_and_rebuilt_when_stale(store: SessionStore) -> None:
    s = store.create()
    fill(s, 400, size=3000)  # > 1 MB, so close() snapshots
    s.close()
    snap_path = s.folder / SNAPSHOT
    assert snap_path.exists()
    snap = load_snapshot(snap_path, s.transcript, s.id)
    assert snap is not None and len(snap.state.messages) == 800
    # more events after the snapshot: loaded from snapshot + tail
    again = store.open(s.id)
    again.append_message(user("after the snapshot"))
    again.close()
    assert store.open(s.id).load().messages[-1]["content"][0]["text"] == "after the snapshot"
    # a corrupt snapshot is ignored, and the next load rewrites it
    snap_path.write_bytes(snap_path.read_bytes()[:200])
    state = store.open(s.id).load()
    assert len(state.messages) == 801
    assert load_snapshot(snap_path, s.transcript, s.id) is not None


def test_snapshot_pinned_to_a_line_that_changed_is_stale(store: SessionStore) -> None:
    s = store.create()
    fill(s, 400, size=3000)
    s.close()
    data = bytearray(s.transcript.read_bytes())
    data[-5] ^= 1  # the pinned line (the last one) no longer matches its checksum text
    s.transcript.write_bytes(bytes(data))
    assert load_snapshot(s.folder / SNAPSHOT, s.transcript, s.id) is None
    assert len(store.open(s.id).load().messages) == 799


def test_compact_and_rewind_fold(store: SessionStore) -> None:
    s = store.create()
    fill(s, 3)  # seqs 2..7
    s.append("compact", {"summary": "they talked", "upto_seq": 5})
    msgs = s.load().messages
    assert msgs[0]["content"][0]["text"].endswith("they talked")
    assert len(msgs) == 3
    s.append("rewind", {"to_seq": 6})
    assert [m["role"] for m in s.load().messages] == ["user", "user"]
    s.close()
    assert len(store.open(s.id).load().messages) == 2


def test_checkpoint_restores_business_state(store: SessionStore) -> None:
    s = store.create(model="light", mode="agent")
    assert s.load().business.mode == "agent"
    s.checkpoint(
        {"tasks": [{"title": "a", "done": False}], "mode": "quest", "model": "strong", "files": {}}
    )
    s.close()
    state = store.open(s.id).load().business
    assert state.mode == "quest" and state.model == "strong" and state.tasks[0]["title"] == "a"


def test_two_writers_on_one_session(store: SessionStore) -> None:
    s = store.create()
    s.append_message(user("a"))
    with pytest.raises(SessionLockedError):
        store.open(s.id).append_message(user("b"))
    s.close()


def test_delete_goes_to_trash_and_restores(store: SessionStore, config: Config) -> None:
    s = store.create()
    fill(s, 1)
    s.close()
    out = store.delete(s.id)
    with pytest.raises(NotFoundError):
        store.open(s.id)
    Trash(config.paths.trash).restore(out.trash_id)
    assert len(store.open(s.id).load().messages) == 2


def test_tool_outputs_stay_in_their_session(store: SessionStore) -> None:
    a, b = store.create(), store.create()
    path = a.write_tool_output("call_1", "full output")
    assert path.parent.parent == a.folder
    assert a.read_tool_output("call_1") == "full output"
    with pytest.raises(FileNotFoundError):
        b.read_tool_output("call_1")
    with pytest.raises(UsageError):
        a.tool_output_path("../escape")


def test_encrypted_session_round_trip_and_wrong_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    enc = SessionStore(
        load_config({"HEARTH_HOME": str(home), "HEARTH_ENCRYPT": "1", "HEARTH_PASSPHRASE": "pw"}),
        tmp_path,
    )
    s = enc.create()
    s.append_message(user("TOP-SECRET-PLAN " * 100_000))  # big enough for a snapshot
    s.append("title", {"title": "SECRET-TITLE"})
    s.write_tool_output("c1", "SECRET-OUTPUT")
    sha = "ab" * 32
    s.write_receipt_file(f"{sha}.json", b'{"text": "SECRET-RECEIPT"}')
    s.write_receipt_file(f"{sha}-1.png", b"\x89PNG SECRET-THUMB")
    s.close()
    for path in s.folder.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            assert (
                b"TOP-SECRET" not in raw
                and b"SECRET-TITLE" not in raw
                and b"SECRET-OUTPUT" not in raw
                and b"SECRET-RECEIPT" not in raw
                and b"SECRET-THUMB" not in raw
            ), path
    assert (s.folder / SNAPSHOT).exists()
    again = enc.open(s.id)
    assert again.load().title == "SECRET-TITLE" and again.read_tool_output("c1") == "SECRET-OUTPUT"
    # Issue #21: receipts and their thumbnails are sealed like the transcript (DESIGN §2).
    assert again.receipt_names() == [f"{sha}.json"]
    assert again.read_receipt_file(f"{sha}-1.png") == b"\x89PNG SECRET-THUMB"
    with pytest.raises(UsageError):
        again.read_receipt_file("../../transcript.jsonl")
    wrong = SessionStore(
        load_config({"HEARTH_HOME": str(home), "HEARTH_PASSPHRASE": "nope"}), tmp_path
    )
    with pytest.raises(EncryptionKeyError, match="wrong key"):
        wrong.open(s.id).load()
    assert wrong.list()[0].title == "(encrypted)"


def test_tampered_encrypted_line_is_rejected_not_trusted(tmp_path: Path) -> None:
    cfg = load_config(
        {"HEARTH_HOME": str(tmp_path / "h"), "HEARTH_ENCRYPT": "1", "HEARTH_PASSPHRASE": "pw"}
    )
    st = SessionStore(cfg, tmp_path)
    s = st.create()
    s.append_message(user("one"))
    s.append_message(user("two"))
    s.close()
    lines = s.transcript.read_bytes().splitlines(keepends=True)
    # swap the ciphertexts of lines 2 and 3 and fix the line checksums: AEAD must still refuse
    import orjson

    from workhearth.sessions.codec import encode_line

    e2, e3 = (orjson.loads(x) for x in lines[1:3])
    e2["ct"], e3["ct"] = e3["ct"], e2["ct"]
    e2["nonce"], e3["nonce"] = e3["nonce"], e2["nonce"]
    for e in (e2, e3):
        e.pop("crc")
    s.transcript.write_bytes(lines[0] + encode_line(e2) + encode_line(e3))
    fresh = st.open(s.id)
    assert fresh.load(use_snapshot=False).messages == []
    assert fresh.damage["undecodable"] == 2
