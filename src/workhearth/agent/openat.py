"""The openat-style walk that confines file access to authorized roots (see :mod:`.safefs`).

Nothing here opens a path string: the root is opened with ``O_DIRECTORY`` and
each component is opened relative to its parent's descriptor with
``O_NOFOLLOW``. A link met on the way is read with ``readlink``, resolved
lexically against the real folders already walked, and walked again from a
root, so the kernel never follows a link for us.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workhearth.agent.fences import Access, Fences
from workhearth.errors import HearthError, NotFoundError, UsageError
from workhearth.fsutil import write_all

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MAX_LINKS = 40
# Why: a path 2,000 folders deep made write_file create 2,000 folders; nothing a
# person works on is this deep or this long (PATH_MAX on Linux is 4096 bytes too).
MAX_COMPONENTS = 64
MAX_PATH_BYTES = 4096


class PathDenied(HearthError):
    """A path outside the authorized folders, a link leading out, or a protected folder."""


@dataclass(frozen=True)
class Root:
    """An authorized folder: its absolute path as given and its real path at authorization."""

    path: Path
    real: Path


class Retry(Exception):
    """The final component changed into a link between resolving and opening it."""


def openat(dir_fd: int, name: str, flags: int, mode: int = 0o777) -> int:
    """One ``openat`` step; a seam for tests that simulate a swap between steps."""
    return os.open(name, flags, mode, dir_fd=dir_fd)


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "other"


def check_size(text: str, parts: Sequence[str]) -> None:
    """Refuse a path over :data:`MAX_PATH_BYTES` or :data:`MAX_COMPONENTS` below its root."""
    size = len(text.encode("utf-8", "surrogateescape"))
    if size > MAX_PATH_BYTES:
        raise UsageError(
            f"{text[:80]}…: the path is {size} bytes long; the limit is {MAX_PATH_BYTES} bytes"
        )
    if len(parts) > MAX_COMPONENTS:
        shown = text if len(text) <= 80 else text[:80] + "…"
        raise UsageError(
            f"{shown}: the path is {len(parts)} components deep below its folder; "
            f"the limit is {MAX_COMPONENTS}"
        )


def lexical(parts: Sequence[str], shown: str) -> list[str]:
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise PathDenied(f"{shown}: climbs out of the authorized folder")
            out.pop()
        else:
            out.append(part)
    return out


class Confinement:
    """Authorized roots, protected folders, the mode's fences, and the race-free walk."""

    def __init__(
        self,
        roots: Sequence[str | Path],
        *,
        protected: Sequence[str | Path] = (),
        fences: Fences | None = None,
    ) -> None:
        self.fences = fences if fences is not None else Fences()
        if not roots:
            raise UsageError("no authorized folder: add one with `hearth workspace add DIR`")
        self.roots = tuple(Root(Path(os.path.abspath(r)), Path(os.path.realpath(r))) for r in roots)
        self._ids: dict[Root, tuple[int, int]] = {}
        for root in self.roots:
            with contextlib.suppress(OSError):
                st = os.stat(root.path)
                self._ids[root] = (st.st_dev, st.st_ino)
        self._protected: set[tuple[int, int]] = set()
        for p in protected:
            with contextlib.suppress(OSError):
                st = os.stat(p)
                self._protected.add((st.st_dev, st.st_ino))

    # ------------------------------------------------------------- locating
    def _split(self, path: str | Path) -> tuple[Root, list[str]]:
        text = os.fspath(path)
        if "\0" in text:
            raise PathDenied("a path cannot contain a NUL character")
        if not text:
            raise UsageError("the path is empty")
        check_size(text, ())
        if not os.path.isabs(text):
            parts = lexical(text.split("/"), text)
            check_size(text, parts)
            return self.roots[0], parts
        parts = lexical(text.split("/"), text)
        best: tuple[int, Root] | None = None
        for root in self.roots:
            for base in (root.path, root.real):
                n = len(base.parts) - 1
                if parts[:n] == list(base.parts[1:]) and (best is None or n > best[0]):
                    best = (n, root)
        if best is None:
            raise PathDenied(f"{text} is outside the authorized folders")
        check_size(text, parts[best[0] :])
        return best[1], parts[best[0] :]

    def display(self, path: str | Path) -> str:
        """The absolute path a user would recognise (before any link is followed)."""
        root, parts = self._split(path)
        return str(root.path.joinpath(*parts))

    def _relink(
        self, root: Root, done: list[str], link: str, rest: Sequence[str], shown: str
    ) -> tuple[Root, list[str]]:
        if os.path.isabs(link):
            target = os.path.join(link, *rest)
            try:
                return self._split(target)
            except PathDenied:
                raise PathDenied(
                    f"{shown}: goes through a link to {link}, outside the authorized folders"
                ) from None
        try:
            parts = lexical([*done, *link.split("/"), *rest], shown)
            check_size(shown, parts)
            return root, parts
        except PathDenied:
            raise PathDenied(
                f"{shown}: goes through a link to {link}, outside the authorized folder"
            ) from None

    def _open_root(self, root: Root) -> int:
        try:
            fd = os.open(root.path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise NotFoundError(f"the authorized folder {root.path} is gone") from None
        st = os.fstat(fd)
        known = self._ids.setdefault(root, (st.st_dev, st.st_ino))
        if known != (st.st_dev, st.st_ino):
            os.close(fd)
            raise PathDenied(f"the authorized folder {root.path} was replaced since it was opened")
        return fd

    def _guard(self, fd: int, shown: str) -> None:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) in self._protected:
            raise PathDenied(f"{shown}: workhearth's own data folder is off limits")
        # Why: a second spelling (a bind mount) of a hidden folder is the same inode.
        fence = self.fences.by_id(st.st_dev, st.st_ino)
        if fence is not None and fence.kind == "hidden":
            self.fences.check(fence, shown, "meta", False)

    def spellings(self, root: Root, parts: Sequence[str]) -> list[tuple[str, ...]]:
        """``parts`` under ``root`` as absolute components, as given and as real."""
        given = (*root.path.parts[1:], *parts)
        real = (*root.real.parts[1:], *parts)
        return [given] if given == real else [given, real]

    def _fenced(
        self, root: Root, parts: Sequence[str], shown: str, access: Access, credentials_ok: bool
    ) -> None:
        if not self.fences:
            return
        where = self.spellings(root, parts)
        self.fences.check(self.fences.at(where), shown, access, credentials_ok)
        if access == "delete":
            inside = self.fences.below(where)
            if inside is not None and inside.kind != "credentials":
                raise PathDenied(f"{shown} holds {inside.path}, which quest mode protects")

    def _resolve(
        self,
        path: str | Path,
        *,
        follow_last: bool,
        make_parents: bool = False,
        access: Access = "meta",
        credentials_ok: bool = False,
    ) -> tuple[int, str | None, Root, list[str]]:
        """Walk to the parent of ``path``: ``(parent_fd, name, root, parts)``.

        ``name`` is None when the path is the root itself (then ``parent_fd`` is
        the root's). The caller owns ``parent_fd``. Every hop (each link followed)
        is checked against the fences for ``access`` before anything is walked or
        made, so a refused write creates no folder on the way.
        """
        shown = os.fspath(path)
        root, parts = self._split(path)
        for _hop in range(MAX_LINKS):
            self._fenced(root, parts, shown, access, credentials_ok)
            step = self._walk_parents(self._open_root(root), root, parts, shown, make_parents)
            if isinstance(step, tuple):
                root, parts = step
                continue
            fd = step
            if not parts:
                return fd, None, root, parts
            name = parts[-1]
            try:
                link = readlink(fd, name) if follow_last else None
                if link is None:
                    return fd, name, root, parts
                nxt = self._relink(root, parts[:-1], link, [], shown)
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
            root, parts = nxt
        raise PathDenied(f"{shown}: too many levels of links")

    def _walk_parents(
        self, fd: int, root: Root, parts: list[str], shown: str, make: bool
    ) -> int | tuple[Root, list[str]]:
        """Open each folder above the last component, owning ``fd``.

        Returns the parent's fd, or ``(root, parts)`` to walk again when a
        component is a link (its target, resolved lexically).
        """
        done: list[str] = []
        try:
            for i, name in enumerate(parts[:-1]):
                step = _step(fd, name, make, shown, "/".join([*done, name]))
                if isinstance(step, str):
                    return self._relink(root, done, step, parts[i + 1 :], shown)
                os.close(fd)
                fd = step
                self._guard(fd, shown)
                done.append(name)
            result, fd = fd, -1
            return result
        finally:
            if fd >= 0:
                os.close(fd)

    def locate(self, path: str | Path) -> Path:
        """The absolute path ``path`` leads to once in-root links are followed."""
        fd, _name, root, parts = self._resolve(path, follow_last=True)
        os.close(fd)
        return root.path.joinpath(*parts)

    def _credentials_by_id(self, fd: int, shown: str, credentials_ok: bool) -> None:
        """Refuse reading ``fd`` when it is (the inode of) a credential store."""
        st = os.fstat(fd)
        fence = self.fences.by_id(st.st_dev, st.st_ino)
        if fence is not None and fence.kind == "credentials":
            self.fences.check(fence, shown, "read", credentials_ok)

    # -------------------------------------------------------------- opening
    def _open_final(
        self, path: str | Path, flags: int, *, credentials_ok: bool = False
    ) -> tuple[int, str, Root, list[str]]:
        """Open the final component for reading (links followed inside the roots).

        ``(fd, shown, root, parts)``; ``credentials_ok`` lets a credential store be
        read (the user said yes).
        """
        shown = os.fspath(path)
        for _attempt in range(MAX_LINKS):
            pfd, name, root, parts = self._resolve(
                path, follow_last=True, access="read", credentials_ok=credentials_ok
            )
            try:
                self._credentials_by_id(pfd, shown, credentials_ok)
                if name is None:
                    fd = os.dup(pfd)
                else:
                    try:
                        fd = openat(pfd, name, flags | os.O_NOFOLLOW)
                    except FileNotFoundError:
                        raise NotFoundError(f"no such file: {shown}") from None
                    except OSError as exc:
                        if exc.errno == errno.ELOOP:
                            continue  # became a link after resolving: resolve again
                        raise
                try:
                    self._guard(fd, shown)
                    self._credentials_by_id(fd, shown, credentials_ok)
                except BaseException:
                    os.close(fd)
                    raise
                return fd, shown, root, parts
            finally:
                os.close(pfd)
        raise PathDenied(f"{shown}: too many levels of links")


def _step(fd: int, name: str, make: bool, shown: str, where: str) -> int | str:
    """Open folder ``name`` under ``fd``: its descriptor, or the text of the link it is."""
    for _attempt in range(MAX_LINKS):
        try:
            return openat(fd, name, DIR_FLAGS)
        except FileNotFoundError:
            if not make:
                raise NotFoundError(f"{shown}: no folder {where}") from None
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=fd)
            continue
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
        link = readlink(fd, name)
        if link is not None:
            return link
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise UsageError(f"{shown}: {where} is not a folder")
        # Why: the open saw a link, readlink a folder, and stat a folder or a link
        # again: a swap is in progress. Look again from the open, so the answer is
        # the folder's or the link rule's (or "keeps changing"), never "not a folder".
    raise PathDenied(f"{shown}: {where} keeps changing; try again")


def readlink(dir_fd: int, name: str) -> str | None:
    """The text of the link ``name``, or None when it is not a link (or is gone)."""
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ENOENT):
            return None
        raise


def read_existing(pfd: int, name: str, shown: str) -> tuple[bytes | None, int | None]:
    try:
        fd = openat(pfd, name, FILE_FLAGS)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Retry from None
        if exc.errno == errno.EISDIR:
            raise UsageError(f"{shown} is a folder") from None
        raise
    st = regular_file(fd, shown)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(), stat.S_IMODE(st.st_mode)


def regular_file(fd: int, shown: str) -> os.stat_result:
    """``fd``'s status when it is a regular file (set blocking for reading); else closed, refused."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise UsageError(f"{shown} is {what}")
    # Why: opened with O_NONBLOCK so that a FIFO could not hang the open; reads block.
    os.set_blocking(fd, True)
    return st


def replace_at(pfd: int, name: str, data: bytes, mode: int | None) -> None:
    """Temp file beside ``name`` (same folder fd), fsync, rename over it, fsync the folder."""
    tmp = f".{name[:200]}.{secrets.token_hex(4)}.tmp"
    fd = openat(
        pfd, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666
    )
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        write_all(fd, data)
        os.close(fd)
        fd = -1
        os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=pfd)
        raise
    os.fsync(pfd)
