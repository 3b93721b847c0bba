"""File history: every overwrite keeps the previous version, restorable without losing newer work."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.agent.conftest import Tree
from workhearth.agent.checkpoints import ContentStore
from workhearth.agent.history import FileHistory
from workhearth.agent.safefs import SafeFS
from workhearth.config import load_config
from workhearth.errors import NotFoundError, UsageError
from workhearth.sessions.session import Session
from workhearth.sessions.store import SessionStore


def _write(fs: SafeFS, history: FileHistory, path: str, text: str, call_id: str) -> None:
    data = text.encode()
    shown = fs.display(path)

    def keep(previous: bytes | None) -> None:
        if previous is not None:
            history.save(shown, previous, call_id=call_id, replaced_by=data)

    fs.write_bytes(path, data, before_replace=keep)


def test_versions_are_kept_with_a_manifest(session: Session, fs: SafeFS, tree: Tree) -> None:
    history = FileHistory(session)
    _write(fs, history, "README.md", "v2\n", "call_1")
    _write(fs, history, "README.md", "v3\n", "call_2")
    items = history.list()
    assert [(i.n, i.call_id, i.size) for i in items] == [(1, "call_1", 9), (2, "call_2", 3)]
    assert items[0].original == str(tree.root / "README.md")
    assert history.read(1) == b"# readme\n" and history.read(2) == b"v2\n"
    # The bytes are in the workspace's content store, the one rewind uses, kept once.
    folder = session.folder / "file-history"
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.jsonl"]
    store = ContentStore(session.folder.parent.parent / "checkpoints-store")
    assert store.get(items[0].sha or "") == b"# readme\n"
    objects = set((session.folder.parent.parent / "checkpoints-store").glob("objects/*/*"))
    _write(fs, history, "README.md", "# readme\n", "call_3")  # keeps "v3": one new object
    _write(fs, history, "README.md", "v4\n", "call_4")  # keeps "# readme" again: none
    assert history.read(4) == b"# readme\n"
    now = set((session.folder.parent.parent / "checkpoints-store").glob("objects/*/*"))
    assert len(now - objects) == 1 and objects <= now
    with pytest.raises(NotFoundError):
        history.read(9)


def test_restore_puts_a_version_back_and_can_be_undone(
    session: Session, fs: SafeFS, tree: Tree
) -> None:
    history = FileHistory(session)
    _write(fs, history, "README.md", "agent wrote this\n", "call_1")
    history.restore(1, fs=fs)
    assert (tree.root / "README.md").read_text() == "# readme\n"
    # The version the restore replaced is kept too.
    last = history.list()[-1]
    assert history.read(last.n) == b"agent wrote this\n" and last.call_id == "restore-1"
    history.restore(last.n)  # without fs: the destination folder is the root
    assert (tree.root / "README.md").read_text() == "agent wrote this\n"


def test_restore_refuses_a_file_changed_since_unless_asked(
    session: Session, fs: SafeFS, tree: Tree
) -> None:
    history = FileHistory(session)
    _write(fs, history, "README.md", "agent\n", "call_1")
    (tree.root / "README.md").write_text("the user's newer work\n")
    with pytest.raises(UsageError, match="changed since"):
        history.restore(1, fs=fs)
    assert (tree.root / "README.md").read_text() == "the user's newer work\n"
    history.restore(1, fs=fs, overwrite=True)
    assert (tree.root / "README.md").read_text() == "# readme\n"
    kept = history.list()[-1]
    assert history.read(kept.n) == b"the user's newer work\n"


def test_restore_of_a_deleted_file_and_to_another_place(
    session: Session, fs: SafeFS, tree: Tree
) -> None:
    history = FileHistory(session)
    _write(fs, history, "src/app.py", "changed\n", "c1")
    (tree.root / "src" / "app.py").unlink()
    history.restore(1, fs=fs)
    assert (tree.root / "src" / "app.py").read_text() == "print('hi')\n"
    history.restore(1, to=tree.root / "copy" / "app.py")
    assert (tree.root / "copy" / "app.py").read_text() == "print('hi')\n"


def test_restore_of_the_same_content_is_a_no_op(session: Session, fs: SafeFS, tree: Tree) -> None:
    history = FileHistory(session)
    _write(fs, history, "README.md", "x\n", "c1")
    (tree.root / "README.md").write_text("# readme\n")
    history.restore(1, fs=fs)
    assert len(history.list()) == 1


def test_numbering_survives_an_orphan_version_file(session: Session) -> None:
    history = FileHistory(session)
    history.save("/w/a.txt", b"one")
    (history.folder / "2-a.txt").write_bytes(b"orphan from a crash")
    item = history.save("/w/a.txt", b"two")
    assert item.n == 3 and history.read(3) == b"two"
    with history.manifest.open("ab") as fh:
        fh.write(b'{"torn": ')
    assert [i.n for i in history.list()] == [1, 3]


def test_encrypted_sessions_keep_no_plaintext(tmp_path: Path, tree: Tree) -> None:
    cfg = load_config(
        {"HEARTH_HOME": str(tmp_path / "h"), "HEARTH_ENCRYPT": "1", "HEARTH_PASSPHRASE": "pw"}
    )
    s = SessionStore(cfg, tree.root).create()
    history = FileHistory(s)
    history.save("/w/SECRET-NAME.txt", b"SECRET-CONTENT", call_id="c1", replaced_by=b"new")
    store = s.folder.parent.parent / "checkpoints-store"
    for path in [*history.folder.iterdir(), *store.rglob("*")]:
        raw = path.read_bytes() if path.is_file() else b""
        assert b"SECRET" not in raw and "SECRET" not in path.name, path
    again = FileHistory(SessionStore(cfg, tree.root).open(s.id))
    assert again.read(1) == b"SECRET-CONTENT"
    assert again.list()[0].original == "/w/SECRET-NAME.txt"
    s.close()


def test_versions_kept_as_files_before_the_store_still_read(session: Session) -> None:
    history = FileHistory(session)
    history.folder.mkdir(parents=True)
    (history.folder / "1-notes.md").write_bytes(b"an old version\n")
    old = {"n": 1, "original": "/w/notes.md", "time": 1.0, "call_id": "c0", "size": 15,
           "file": "1-notes.md", "replaced_by": None}  # fmt: skip
    history.manifest.write_bytes(orjson.dumps(old) + b"\n")
    assert history.read(1) == b"an old version\n"
    assert history.save("/w/notes.md", b"newer").n == 2  # numbering goes on
    assert history.read(2) == b"newer"
