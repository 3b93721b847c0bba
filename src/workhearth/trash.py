"""The protected trash: deleted files and folders wait here, restorable (DESIGN §2, §5).

``trash/<id>/`` holds ``manifest.json`` (original path, time, reason, session,
size) and ``payload`` (the moved file or folder). A move within one filesystem
is a rename; across filesystems the payload is copied, fsynced, then the source
removed, so a crash in between leaves a copy, never nothing.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from workhearth.errors import NotFoundError, UsageError
from workhearth.fsutil import atomic_write, fsync_dir, make_private_dir


@dataclass
class TrashItem:
    id: str
    original: str
    deleted_at: float
    reason: str
    session: str | None
    size: int
    kind: str  # "file" | "dir"


def _size(path: Path) -> int:
    if path.is_dir() and not path.is_symlink():
        return sum(p.lstat().st_size for p in path.rglob("*"))
    return path.lstat().st_size


def _fsync_tree(path: Path) -> None:
    if path.is_dir():
        for root, _dirs, files in os.walk(path):
            for name in files:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            fsync_dir(Path(root))
    else:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _move(src: Path, dst: Path) -> None:
    try:
        os.rename(src, dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        # Why: across filesystems a rename is impossible; copy and make the copy
        # durable before removing the source, so a crash never loses both.
        if src.is_dir() and not src.is_symlink():
            shutil.copytree(src, dst, symlinks=True)
        else:
            shutil.copy2(src, dst, follow_symlinks=False)
        _fsync_tree(dst)
        fsync_dir(dst.parent)
        if src.is_dir() and not src.is_symlink():
            shutil.rmtree(src)
        else:
            src.unlink()
    fsync_dir(dst.parent)
    fsync_dir(src.parent)


_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _size_at(dir_fd: int, name: str) -> int:
    """Total size of the folder ``name`` under ``dir_fd``, never following links."""
    fd = os.open(name, _NOFOLLOW_DIR, dir_fd=dir_fd)
    total = 0
    try:
        with os.scandir(fd) as it:
            entries = list(it)
        for e in entries:
            total += e.stat(follow_symlinks=False).st_size
            if e.is_dir(follow_symlinks=False):
                total += _size_at(fd, e.name)
    finally:
        os.close(fd)
    return total


def _copy_at(dir_fd: int, name: str, dst: Path) -> None:
    """Copy entry ``name`` of ``dir_fd`` to ``dst`` (links copied as links)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=dir_fd), dst)
    elif stat.S_ISDIR(st.st_mode):
        fd = os.open(name, _NOFOLLOW_DIR, dir_fd=dir_fd)
        try:
            dst.mkdir(mode=stat.S_IMODE(st.st_mode) | 0o700)
            with os.scandir(fd) as it:
                names = [e.name for e in it]
            for child in names:
                _copy_at(fd, child, dst / child)
        finally:
            os.close(fd)
    else:
        src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        with os.fdopen(src, "rb") as fin, dst.open("xb") as fout:
            shutil.copyfileobj(fin, fout)
        os.chmod(dst, stat.S_IMODE(st.st_mode))


class Trash:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _slot(self) -> tuple[str, Path]:
        make_private_dir(self.root)
        item_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        slot = self.root / item_id
        slot.mkdir(mode=0o700)
        return item_id, slot

    def put(self, path: Path, reason: str = "delete", session: str | None = None) -> TrashItem:
        """Move ``path`` into the trash and return its manifest."""
        if not path.exists() and not path.is_symlink():
            raise NotFoundError(f"nothing to delete at {path}")
        item_id, slot = self._slot()
        item = TrashItem(
            id=item_id,
            original=str(path.absolute()),
            deleted_at=time.time(),
            reason=reason,
            session=session,
            size=_size(path),
            kind="dir" if path.is_dir() and not path.is_symlink() else "file",
        )
        # Why: manifest first, so a crash mid-move still says where the payload came from.
        atomic_write(slot / "manifest.json", orjson.dumps(asdict(item), option=orjson.OPT_INDENT_2))
        _move(path, slot / "payload")
        return item

    def put_at(
        self,
        dir_fd: int,
        name: str,
        original: str,
        reason: str = "delete",
        session: str | None = None,
    ) -> TrashItem:
        """Move entry ``name`` of the already-open folder ``dir_fd`` into the trash.

        Why a descriptor: the caller walked to the folder without following
        links (see ``agent/safefs``); re-spelling it as a path would reopen the
        race that walk closed. ``original`` is only recorded, for restore.
        """
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise NotFoundError(f"nothing to delete at {original}") from None
        is_dir = stat.S_ISDIR(st.st_mode)
        item_id, slot = self._slot()
        item = TrashItem(
            id=item_id,
            original=original,
            deleted_at=time.time(),
            reason=reason,
            session=session,
            size=_size_at(dir_fd, name) if is_dir else st.st_size,
            kind="dir" if is_dir else "file",
        )
        atomic_write(slot / "manifest.json", orjson.dumps(asdict(item), option=orjson.OPT_INDENT_2))
        payload = slot / "payload"
        try:
            os.rename(name, payload, src_dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # Why: as in _move, the copy is durable before the source goes.
            _copy_at(dir_fd, name, payload)
            _fsync_tree(payload)
            if is_dir:
                shutil.rmtree(name, dir_fd=dir_fd)
            else:
                os.unlink(name, dir_fd=dir_fd)
        fsync_dir(slot)
        os.fsync(dir_fd)
        return item

    def list(self) -> list[TrashItem]:
        items = []
        if not self.root.is_dir():
            return items
        for slot in sorted(self.root.iterdir(), reverse=True):
            try:
                items.append(TrashItem(**orjson.loads((slot / "manifest.json").read_bytes())))
            except (OSError, ValueError, TypeError):
                continue
        return items

    def restore(self, item_id: str, overwrite: bool = False, to: Path | None = None) -> TrashItem:
        slot = self.root / item_id
        if "/" in item_id or not (slot / "manifest.json").is_file():
            raise NotFoundError(f"no trash item {item_id!r}")
        item = TrashItem(**orjson.loads((slot / "manifest.json").read_bytes()))
        dest = to or Path(item.original)
        if dest.exists() or dest.is_symlink():
            if not overwrite:
                raise UsageError(f"{dest} exists now; restore with overwrite to replace it")
            self.put(dest, reason=f"replaced by restore of {item_id}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        _move(slot / "payload", dest)
        shutil.rmtree(slot)
        return item

    def empty(self, older_than: float | None = None) -> int:
        """Remove trash items for good (all, or those deleted before ``older_than``)."""
        count = 0
        for item in self.list():
            if older_than is not None and item.deleted_at >= older_than:
                continue
            shutil.rmtree(self.root / item.id)
            count += 1
        return count
