"""Restores (trash and file history) walk the openat way: never through a link out (DESIGN §5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.conftest import Tree
from workhearth.agent.history import FileHistory
from workhearth.agent.safefs import PathDenied, SafeFS
from workhearth.config import Config
from workhearth.errors import HearthError
from workhearth.sessions.session import Session
from workhearth.trash import Trash


def _plant(tree: Tree) -> Path:
    sub = tree.root / "sub"
    sub.mkdir()
    (sub / "plant.txt").write_text("fern\n")
    return sub


def _swap_for_link_out(sub: Path, tree: Tree) -> None:
    """What an agent's shell could do: ``sub/`` becomes a link to a folder outside."""
    sub.rename(sub.with_name("sub.real"))
    sub.symlink_to(tree.outside)


def test_trash_restore_refuses_a_parent_now_a_link_out(
    fs: SafeFS, tree: Tree, config: Config
) -> None:
    sub = _plant(tree)
    item = fs.delete("sub/plant.txt")
    _swap_for_link_out(sub, tree)
    trash = Trash(config.paths.trash)
    with pytest.raises(HearthError, match=r"sub is a link now.*stays in the trash"):
        trash.restore(item.id)
    assert sorted(p.name for p in tree.outside.iterdir()) == ["secret.txt"]
    assert [i.id for i in trash.list()] == [item.id]
    # Put back as it was, the same item restores where it came from.
    sub.unlink()
    sub.with_name("sub.real").rename(sub)
    trash.restore(item.id)
    assert (sub / "plant.txt").read_text() == "fern\n"
    assert trash.list() == []


def test_trash_restore_recreates_missing_folders_and_replaces_through_the_trash(
    fs: SafeFS, tree: Tree, config: Config
) -> None:
    sub = _plant(tree)
    item = fs.delete("sub")
    trash = Trash(config.paths.trash)
    trash.restore(item.id)
    assert (sub / "plant.txt").read_text() == "fern\n"
    item = fs.delete("sub/plant.txt")
    (sub / "plant.txt").write_text("newer\n")
    with pytest.raises(HearthError, match="exists now"):
        trash.restore(item.id)
    trash.restore(item.id, overwrite=True)
    assert (sub / "plant.txt").read_text() == "fern\n"
    (kept,) = trash.list()
    assert kept.original == str(sub / "plant.txt") and kept.root == str(tree.root)


def test_trash_restore_across_filesystems_copies_into_the_walked_folder(
    fs: SafeFS, tree: Tree, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    import workhearth.trash as trash_mod

    sub = _plant(tree)
    (sub / "inner").mkdir()
    (sub / "inner" / "ln").symlink_to("../plant.txt")
    item = fs.delete("sub")
    real_rename = os.rename

    def no_cross_device(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
        if dst_dir_fd is not None:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)

    monkeypatch.setattr(trash_mod.os, "rename", no_cross_device)
    Trash(config.paths.trash).restore(item.id)
    monkeypatch.undo()
    assert (sub / "plant.txt").read_text() == "fern\n"
    assert os.readlink(sub / "inner" / "ln") == "../plant.txt"
    assert not (config.paths.trash / item.id).exists()


def test_file_history_restore_refuses_a_parent_now_a_link_out(
    session: Session, fs: SafeFS, tree: Tree
) -> None:
    sub = _plant(tree)
    history = FileHistory(session)
    shown = fs.display("sub/plant.txt")

    def keep(previous: bytes | None) -> None:
        assert previous is not None
        history.save(shown, previous, call_id="c1", replaced_by=b"palm\n")

    fs.write_bytes("sub/plant.txt", b"palm\n", before_replace=keep)
    _swap_for_link_out(sub, tree)
    for restore_fs in (None, fs):  # the session's own folders, or the caller's
        with pytest.raises(PathDenied, match="link"):
            history.restore(1, fs=restore_fs)
        assert sorted(p.name for p in tree.outside.iterdir()) == ["secret.txt"]
    with pytest.raises(PathDenied):
        history.restore(1, to=tree.outside / "plant.txt")
    assert sorted(p.name for p in tree.outside.iterdir()) == ["secret.txt"]
