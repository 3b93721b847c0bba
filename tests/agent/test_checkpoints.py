"""The checkpoint store and capture (issue 22): content kept once, compressed when that
pays, sealed under keyed names in an encrypted session, damage and expiry said in words,
and a baseline that is read again only where a file's stat changed."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from workhearth.agent.changes import take_listing
from workhearth.agent.checkpoints import Capture, ContentStore, sha256
from workhearth.agent.retention import DAY, sweep
from workhearth.agent.safefs import SafeFS
from workhearth.config import RetentionConfig, load_config
from workhearth.errors import CorruptDataError, NotFoundError
from workhearth.sessions.crypto import SessionCipher
from workhearth.sessions.store import SessionStore


def test_content_is_kept_once_and_compressed_when_that_pays(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "store")
    text = b"the same line again\n" * 5000
    noise = os.urandom(50_000)
    a, b = store.put(text), store.put(noise)
    assert store.put(text) == a == sha256(text)
    assert store.get(a) == text and store.get(b) == noise
    assert store.path(a).stat().st_size < len(text) // 20
    assert store.path(b).stat().st_size == len(noise) + 1  # raw: compressing did not pay
    assert len(list((tmp_path / "store" / "objects").rglob("*"))) == 4  # 2 folders, 2 objects
    store.flush()


def test_missing_and_damaged_content_are_errors_in_words(tmp_path: Path) -> None:
    store = ContentStore(tmp_path / "store")
    with pytest.raises(NotFoundError, match="no longer kept"):
        store.get("0" * 64)
    digest = store.put(b"x" * 1000)
    path = store.path(digest)
    path.write_bytes(path.read_bytes()[:-3] + b"zzz")
    with pytest.raises(CorruptDataError, match="damaged"):
        store.get(digest)


def test_a_sealed_store_names_nothing_and_holds_no_plaintext(tmp_path: Path) -> None:
    cipher = SessionCipher("s1", os.urandom(32))
    store = ContentStore(tmp_path / "store", cipher)
    secret = b"SECRET-CONTENT " * 100
    digest = store.put(secret)
    path = store.path(digest)
    assert digest not in str(path) and secret[:14] not in path.read_bytes()
    assert store.get(digest) == secret
    other = ContentStore(tmp_path / "store", SessionCipher("s2", os.urandom(32)))
    assert not other.has(digest)


def test_retention_removes_content_no_run_used(tmp_path: Path) -> None:
    config = load_config({"HEARTH_HOME": str(tmp_path / "home")})
    store = ContentStore(config.paths.projects / "-ws" / "checkpoints-store")
    old, used = store.put(b"old content"), store.put(b"still in use")
    now = time.time()
    for digest in (old, used):
        os.utime(store.path(digest), (now - 40 * DAY, now - 40 * DAY))
    assert store.touch(used)
    report = sweep(config.paths, RetentionConfig(file_history_days=30), now)
    assert report.checkpoints == 1
    assert not store.has(old) and store.get(used) == b"still in use"


def test_the_baseline_reads_again_only_what_changed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(20):
        (ws / f"f{i}.txt").write_text(f"file {i:02}\n")
    config = load_config({"HEARTH_HOME": str(tmp_path / "home")})
    session = SessionStore(config, ws).create()
    fs = SafeFS([ws])
    first = Capture.for_session(session, fs)
    first.start(take_listing(fs))
    assert first.known["f3.txt"][1].sha == sha256(b"file 03\n")
    assert first.known["f3.txt"][1].mode == os.stat(ws / "f3.txt").st_mode & 0o777
    (ws / "f3.txt").write_text("changed\n")
    # Same size, same inode, same time: a stat cannot tell, so the index is trusted.
    st = os.stat(ws / "f5.txt")
    with open(ws / "f5.txt", "r+b") as fh:
        fh.write(b"FILE 05\n")
    os.utime(ws / "f5.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    second = Capture.for_session(session, fs)
    second.start(take_listing(fs))
    assert second.known["f3.txt"][1].sha == sha256(b"changed\n")
    assert second.known["f5.txt"][1].sha == sha256(b"file 05\n"), "not read again"
    session.close()
