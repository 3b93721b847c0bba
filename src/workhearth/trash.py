"""The protected trash: deleted files and folders wait here, restorable (DESIGN §2, §5).

``trash/<id>/`` holds ``manifest.json`` (original path, time, reason, session,
size, and the folder it was deleted under) and ``payload`` (the moved file or
folder). A move within one filesystem is a rename; across filesystems the
payload is copied, fsynced, then the source removed, so a crash in between
leaves a copy, never nothing.

A restore walks from the recorded folder down to the original's parent the
``openat`` way (DESIGN §5): each component opened relative to the one above it
with ``O_NOFOLLOW``. A component that is a link now (say ``sub/`` replaced by a
link to a folder elsewhere) is refused, and the item stays in the trash, so a
restore never writes through a link to somewhere else.
"""

from __future__ import annotations

import contextlib
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
    # Why: the folder a restore walks down from; None in manifests written before it
    # was recorded (their walk starts at "/", following no link at all).
    root: str | None = None


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


def _fsync_at(dir_fd: int, name: str) -> None:
    """fsync entry ``name`` of ``dir_fd`` and, for a folder, everything under it."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        return
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(fd) as it:
                names = [e.name for e in it]
            for child in names:
                _fsync_at(fd, child)
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


def _copy_at(dir_fd: int, name: str, dst_fd: int, dst: str) -> None:
    """Copy entry ``name`` of ``dir_fd`` to ``dst`` in ``dst_fd`` (links copied as links)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(name, dir_fd=dir_fd), dst, dir_fd=dst_fd)
    elif stat.S_ISDIR(st.st_mode):
        fd = os.open(name, _NOFOLLOW_DIR, dir_fd=dir_fd)
        try:
            os.mkdir(dst, 0o700, dir_fd=dst_fd)
            sub = os.open(dst, _NOFOLLOW_DIR, dir_fd=dst_fd)
            try:
                with os.scandir(fd) as it:
                    names = [e.name for e in it]
                for child in names:
                    _copy_at(fd, child, sub, child)
                os.fchmod(sub, stat.S_IMODE(st.st_mode) | 0o700)
            finally:
                os.close(sub)
        finally:
            os.close(fd)
    else:
        src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        out = os.open(dst, flags, 0o600, dir_fd=dst_fd)
        with os.fdopen(src, "rb") as fin, os.fdopen(out, "wb") as fout:
            shutil.copyfileobj(fin, fout)
            os.fchmod(fout.fileno(), stat.S_IMODE(st.st_mode))


def _open_parent(root: Path, parts: list[str], shown: str) -> int:
    """Open the folder ``root/parts…`` without following any link below ``root``.

    Missing folders are created (a restore may need them again). The caller
    owns the returned descriptor.
    """
    if not root.is_dir():
        make_private_dir(root)
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, name in enumerate(parts):
            try:
                nxt = os.open(name, _NOFOLLOW_DIR, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=fd)
                nxt = os.open(name, _NOFOLLOW_DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                where = root.joinpath(*parts[: i + 1])
                what = "a link" if os.path.islink(where) else "not a folder"
                raise UsageError(
                    f"cannot restore {shown}: {where} is {what} now; "
                    "a restore never goes through a link, so the item stays in the trash"
                ) from None
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _split_under(root: Path, dest: Path) -> list[str]:
    """The components of ``dest``'s parent below ``root`` (``dest`` must lie under it)."""
    parts = Path(os.path.normpath(dest)).parts
    base = Path(os.path.normpath(root)).parts
    if parts[: len(base)] != base or len(parts) <= len(base):
        raise UsageError(f"cannot restore {dest}: it is not inside {root}")
    return list(parts[len(base) : -1])


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
            root=str(path.absolute().parent),
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
        root: str | None = None,
    ) -> TrashItem:
        """Move entry ``name`` of the already-open folder ``dir_fd`` into the trash.

        Why a descriptor: the caller walked to the folder without following
        links (see ``agent/safefs``); re-spelling it as a path would reopen the
        race that walk closed. ``original`` is only recorded, for restore, and
        ``root`` (the authorized folder it lies in) is where a restore walks from.
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
            root=root,
        )
        atomic_write(slot / "manifest.json", orjson.dumps(asdict(item), option=orjson.OPT_INDENT_2))
        payload = slot / "payload"
        try:
            os.rename(name, payload, src_dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # Why: as in _move, the copy is durable before the source goes.
            slot_fd = os.open(slot, _NOFOLLOW_DIR)
            try:
                _copy_at(dir_fd, name, slot_fd, "payload")
            finally:
                os.close(slot_fd)
            _fsync_tree(payload)
            if is_dir:
                shutil.rmtree(name, dir_fd=dir_fd)
            else:
                os.unlink(name, dir_fd=dir_fd)
        fsync_dir(slot)
        os.fsync(dir_fd)
        return item

    def list(self) -> list[TrashItem]:
        items: list[TrashItem] = []
        if not self.root.is_dir():
            return items
        for slot in sorted(self.root.iterdir(), reverse=True):
            try:
                items.append(TrashItem(**orjson.loads((slot / "manifest.json").read_bytes())))
            except (OSError, ValueError, TypeError):
                continue
        return items

    def restore(self, item_id: str, overwrite: bool = False, to: Path | None = None) -> TrashItem:
        """Put an item back at its original path (or ``to``), walking there the openat way.

        Refused, with the item kept, when a folder on the way below the item's
        root is now a link or a file (see the module doc).
        """
        slot = self.root / item_id
        if "/" in item_id or item_id in (".", "..") or not (slot / "manifest.json").is_file():
            raise NotFoundError(f"no trash item {item_id!r}", code="trash_unknown")
        item = TrashItem(**orjson.loads((slot / "manifest.json").read_bytes()))
        dest = Path(os.path.abspath(to)) if to is not None else Path(item.original)
        root = dest.parent if to is not None else Path(item.root or "/")
        pfd = _open_parent(root, _split_under(root, dest), str(dest))
        try:
            name = dest.name
            try:
                os.stat(name, dir_fd=pfd, follow_symlinks=False)
                present = True
            except FileNotFoundError:
                present = False
            if present:
                if not overwrite:
                    raise UsageError(
                        "a file exists now where it was; restore with overwrite to replace it",
                        code="restore_exists",
                        cli_hint=str(dest),
                    )
                why = f"replaced by restore of {item_id}"
                self.put_at(pfd, name, str(dest), reason=why, root=str(root))
            self._move_in(slot, pfd, name)
        finally:
            os.close(pfd)
        shutil.rmtree(slot)
        return item

    def _move_in(self, slot: Path, pfd: int, name: str) -> None:
        """Move ``slot``'s payload to ``name`` in the open folder ``pfd``, durably."""
        try:
            os.rename(slot / "payload", name, dst_dir_fd=pfd)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # Why: as in _move, the copy is durable before the payload goes.
            slot_fd = os.open(slot, _NOFOLLOW_DIR)
            try:
                _copy_at(slot_fd, "payload", pfd, name)
            finally:
                os.close(slot_fd)
            _fsync_at(pfd, name)
        os.fsync(pfd)

    def empty(self, older_than: float | None = None) -> int:
        """Remove trash items for good (all, or those deleted before ``older_than``)."""
        count = 0
        for item in self.list():
            if older_than is not None and item.deleted_at >= older_than:
                continue
            shutil.rmtree(self.root / item.id)
            count += 1
        return count
