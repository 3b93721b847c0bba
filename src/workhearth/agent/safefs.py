"""File access confined to the authorized folders, without check-then-open races (DESIGN §5).

Resolving a path and then checking it is racy: a folder can be swapped for a
symlink between the check and the open. So nothing here opens a path string.
Every operation opens the authorized root (``O_DIRECTORY``) and walks the
remaining components one at a time with ``openat`` (``os.open(name,
O_NOFOLLOW | O_DIRECTORY, dir_fd=parent)``); the final file is opened with
``O_NOFOLLOW`` relative to its parent's descriptor. Whatever the tree looks like
at that instant, the walk can only reach what lies under the root.

Rules, in order:

* ``..`` is resolved lexically first; a path that climbs above its root, or an
  absolute path under no root, is refused (:class:`PathDenied`).
* A relative path is relative to the first root (the session's workspace).
* A symlink met during the walk is **followed only when its target, re-walked
  the same way from a root, stays inside the authorized folders**. Why not
  refuse every link: projects are full of harmless in-tree links
  (``current -> releases/v2``, ``node_modules/.bin``). Why this is still safe:
  the link is never followed by the kernel; its text is read with
  ``readlink`` and resolved lexically against the components already walked
  (which are real folders), and the result is walked again with
  ``O_NOFOLLOW``. A link swapped in mid-walk makes ``openat`` fail with
  ``ELOOP``, and the new link goes through the same rule.
* Deleting a link deletes the link, never its target; writing through a link
  writes its (in-root) target.
* Folders listed as *protected* (workhearth's own home: trash, audit, sessions)
  are refused even when they lie inside a root, by device and inode, so no
  spelling or link reaches them.
* Walks (``walk``, ``glob``) report links but never descend through them.
* The mode's *fences* (see :mod:`.fences`): in quest mode what quest hides is
  refused to every operation and left out of walks, and paths that run code
  later may be read but not changed or created; in ask and agent mode a
  credential store is read only with the user's yes (``credentials_ok``).

Known limits: a **hard link** inside a root to a file outside it is the same
inode, indistinguishable from a regular file, so reading it reads the outside
file. Writes replace the name by atomic rename (a new inode), so an outside hard
link is never modified through the root. Bind mounts inside a root are likewise
followed like folders. The shell tool is not confined by this module.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from workhearth.agent import openat as fdw
from workhearth.agent.fences import Fences
from workhearth.agent.openat import MAX_LINKS, PathDenied, Root
from workhearth.errors import HearthError, NotFoundError, UsageError
from workhearth.trash import Trash, TrashItem

__all__ = ["FileInfo", "PathDenied", "Root", "SafeFS", "WalkEntry", "glob_regex"]

MAX_DEPTH = 64
DEFAULT_MAX_READ = 16 * 1024 * 1024


@dataclass(frozen=True)
class FileInfo:
    path: str
    kind: str  # "file" | "dir" | "symlink" | "other"
    size: int
    mtime: float
    mode: int
    nlink: int
    link: str | None = None


@dataclass(frozen=True)
class WalkEntry:
    rel: str  # POSIX path relative to the walked folder
    kind: str  # "file" | "dir" | "symlink" | "other"
    size: int
    mtime: float
    # Why: the change detector (agent/changes.py) tells a rewrite from an untouched file.
    mtime_ns: int = 0
    inode: int = 0
    # Why: a rewind puts permission bits back too (issue 22); a chmod is a change.
    mode: int = 0


class SafeFS(fdw.Confinement):
    """The only way agent tools touch files. Roots are existing folders; the first is the default."""

    def __init__(
        self,
        roots: Sequence[str | Path],
        *,
        trash: Trash | None = None,
        protected: Sequence[str | Path] = (),
        fences: Fences | None = None,
        max_read: int = DEFAULT_MAX_READ,
    ) -> None:
        super().__init__(roots, protected=protected, fences=fences)
        self.trash = trash
        self.max_read = max_read

    # -------------------------------------------------------------- reading
    @contextlib.contextmanager
    def open_read(self, path: str | Path, *, credentials_ok: bool = False) -> Iterator[BinaryIO]:
        """A regular file opened for reading (streams, for files of any size).

        ``credentials_ok``: the user agreed to this read of a credential store.
        """
        fd, shown, _root, _parts = self._open_final(
            path, fdw.FILE_FLAGS, credentials_ok=credentials_ok
        )
        fdw.regular_file(fd, shown)
        with os.fdopen(fd, "rb") as fh:
            yield fh

    def read_bytes(self, path: str | Path, max_bytes: int | None = None) -> bytes:
        cap = self.max_read if max_bytes is None else max_bytes
        with self.open_read(path) as fh:
            data = fh.read(cap + 1)
        if len(data) > cap:
            raise UsageError(f"{path} is larger than {cap} bytes; read it in parts")
        return data

    def read_text(self, path: str | Path, max_bytes: int | None = None) -> str:
        try:
            return self.read_bytes(path, max_bytes).decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"{path} is not UTF-8 text") from None

    def stat(self, path: str | Path, follow: bool = True) -> FileInfo:
        pfd, name, root, parts = self._resolve(path, follow_last=follow)
        try:
            if name is None:
                st = os.fstat(pfd)
            else:
                try:
                    st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
                except FileNotFoundError:
                    raise NotFoundError(f"no such file: {path}") from None
            link = fdw.readlink(pfd, name) if name and stat.S_ISLNK(st.st_mode) else None
            return FileInfo(
                str(root.path.joinpath(*parts)),
                fdw.kind_of(st.st_mode),
                st.st_size,
                st.st_mtime,
                stat.S_IMODE(st.st_mode),
                st.st_nlink,
                link,
            )
        finally:
            os.close(pfd)

    def exists(self, path: str | Path) -> bool:
        try:
            self.stat(path)
        except NotFoundError:
            return False
        return True

    # -------------------------------------------------------------- writing
    def write_bytes(
        self,
        path: str | Path,
        data: bytes,
        *,
        before_replace: Callable[[bytes | None], None] | None = None,
        make_parents: bool = True,
    ) -> bytes | None:
        """Replace ``path`` atomically with ``data``; the previous bytes, or None if new.

        ``before_replace(previous)`` runs after the old content was read and
        before the rename, so a caller can keep the old version durably first
        (or raise to abort). The file keeps its permission bits.
        """
        shown = os.fspath(path)
        for _attempt in range(MAX_LINKS):
            pfd, name, _root, _parts = self._resolve(
                path, follow_last=True, make_parents=make_parents, access="write"
            )
            try:
                if name is None:
                    raise UsageError(f"{shown} is a folder")
                previous, mode = fdw.read_existing(pfd, name, shown)
                if before_replace is not None:
                    before_replace(previous)
                fdw.replace_at(pfd, name, data, mode)
                return previous
            except fdw.Retry:
                continue
            finally:
                os.close(pfd)
        raise PathDenied(f"{shown}: too many levels of links")

    def write_text(
        self,
        path: str | Path,
        text: str,
        *,
        before_replace: Callable[[bytes | None], None] | None = None,
        make_parents: bool = True,
    ) -> bytes | None:
        return self.write_bytes(
            path, text.encode("utf-8"), before_replace=before_replace, make_parents=make_parents
        )

    def put_file(self, path: str | Path, data: bytes, mode: int) -> None:
        """Make ``path`` a file holding ``data`` with permission bits ``mode``, atomically.

        Unlike :meth:`write_bytes`, a link at ``path`` is replaced, never written
        through (a rewind puts back what was there, issue 22).
        """
        pfd, name, _root, _parts = self._resolve(
            path, follow_last=False, make_parents=True, access="write"
        )
        try:
            if name is None:
                raise UsageError(f"{path} is a folder")
            fdw.replace_at(pfd, name, data, mode)
        finally:
            os.close(pfd)

    def stage_file(self, path: str | Path, data: bytes, mode: int, tmp: str) -> None:
        """Write ``data`` as ``tmp`` beside ``path`` (its folders made), not yet in place and
        not yet durable: many files staged, one :func:`~workhearth.fsutil.syncfs`, then
        :meth:`commit_file` each (a rewind of a thousand files, issue 22)."""
        pfd, name, _root, _parts = self._resolve(
            path, follow_last=False, make_parents=True, access="write"
        )
        try:
            if name is None:
                raise UsageError(f"{path} is a folder")
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=pfd)  # Why: left by an interrupted run of the same step
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = fdw.openat(pfd, tmp, flags, 0o600)
            try:
                os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
        finally:
            os.close(pfd)

    def commit_file(self, path: str | Path, tmp: str) -> bool:
        """Rename the staged ``tmp`` over ``path``; False when nothing was staged."""
        pfd, name, _root, _parts = self._resolve(path, follow_last=False, access="write")
        try:
            if name is None:
                raise UsageError(f"{path} is a folder")
            try:
                os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
            except FileNotFoundError:
                return False
            return True
        finally:
            os.close(pfd)

    def discard_staged(self, path: str | Path, tmp: str) -> None:
        """Remove a staged file that is no longer wanted (its path already holds the target)."""
        with contextlib.suppress(OSError, HearthError):
            pfd, _name, _root, _parts = self._resolve(path, follow_last=False, access="write")
            try:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=pfd)
            finally:
                os.close(pfd)

    def put_link(self, path: str | Path, target: str) -> None:
        """Make ``path`` a symbolic link to ``target`` (replacing a file or link there)."""
        pfd, name, _root, _parts = self._resolve(
            path, follow_last=False, make_parents=True, access="write"
        )
        try:
            if name is None:
                raise UsageError(f"{path} is a folder")
            tmp = f".{name[:200]}.{os.urandom(4).hex()}.tmp"
            os.symlink(target, tmp, dir_fd=pfd)
            try:
                os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp, dir_fd=pfd)
                raise
            os.fsync(pfd)
        finally:
            os.close(pfd)

    def put_dir(self, path: str | Path, mode: int) -> None:
        """Make ``path`` a folder (and its parents) with permission bits ``mode``."""
        self.mkdir(path)
        fd, _shown, _root, _parts = self._open_final(path, fdw.DIR_FLAGS)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def mkdir(self, path: str | Path) -> None:
        """Create a folder and its missing parents (no error when it exists)."""
        pfd, name, _root, _parts = self._resolve(
            path, follow_last=True, make_parents=True, access="write"
        )
        try:
            if name is not None:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=pfd)
                os.close(fdw.openat(pfd, name, fdw.DIR_FLAGS))  # refuses a file in the way
        finally:
            os.close(pfd)

    def delete(
        self, path: str | Path, *, reason: str = "delete", session: str | None = None
    ) -> TrashItem:
        """Move a file, folder or link (never a link's target) to the trash."""
        if self.trash is None:
            raise UsageError("deleting needs a trash folder")
        pfd, name, root, parts = self._resolve(path, follow_last=False, access="delete")
        try:
            if name is None:
                raise PathDenied(f"{path} is an authorized folder itself; it cannot be deleted")
            with contextlib.suppress(OSError):
                st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
                if (st.st_dev, st.st_ino) in self._protected:
                    raise PathDenied(f"{path}: workhearth's own data folder is off limits")
            original = str(root.path.joinpath(*parts))
            return self.trash.put_at(
                pfd, name, original, reason=reason, session=session, root=str(root.path)
            )
        finally:
            os.close(pfd)

    # ------------------------------------------------------------- listing
    def list_dir(self, path: str | Path = ".") -> list[WalkEntry]:
        return list(self.walk(path, max_depth=0))

    def walk(
        self,
        path: str | Path = ".",
        *,
        skip: frozenset[str] = frozenset(),
        max_depth: int = MAX_DEPTH,
    ) -> Iterator[WalkEntry]:
        """Everything under ``path``, sorted by name per folder; links are listed, not entered.

        What the mode fences off from reading (see :mod:`.fences`) is left out.
        """
        try:
            fd, _shown, root, parts = self._open_final(path, fdw.DIR_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise UsageError(f"{path} is not a folder") from None
            raise
        yield from self._walk_fd(fd, "", skip, min(max_depth, MAX_DEPTH), (root, parts))

    def _fenced_entry(self, at: tuple[Root, list[str]], rel: str, st: os.stat_result) -> bool:
        """True when a walk must leave this entry out (a hidden path or credential store)."""
        if not self.fences:
            return False
        root, parts = at
        fence = self.fences.exactly(self.spellings(root, [*parts, *rel.split("/")]))
        return self.fences.skipped(fence or self.fences.by_id(st.st_dev, st.st_ino))

    def _walk_fd(
        self,
        fd: int,
        prefix: str,
        skip: frozenset[str],
        depth: int,
        at: tuple[Root, list[str]],
    ) -> Iterator[WalkEntry]:
        try:
            with os.scandir(fd) as it:
                entries = sorted(it, key=lambda e: e.name)
            for e in entries:
                rel = prefix + e.name
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished while listing
                if self._fenced_entry(at, rel, st):
                    continue
                kind = fdw.kind_of(st.st_mode)
                yield WalkEntry(
                    rel,
                    kind,
                    st.st_size,
                    st.st_mtime,
                    st.st_mtime_ns,
                    st.st_ino,
                    stat.S_IMODE(st.st_mode),
                )
                if kind != "dir" or depth <= 0 or e.name in skip:
                    continue
                try:
                    sub = fdw.openat(fd, e.name, fdw.DIR_FLAGS)
                except OSError:
                    continue  # gone, or swapped for a link: never followed
                sub_st = os.fstat(sub)
                if (sub_st.st_dev, sub_st.st_ino) in self._protected:
                    os.close(sub)
                    continue
                yield from self._walk_fd(sub, rel + "/", skip, depth - 1, at)
        finally:
            os.close(fd)

    def glob(
        self,
        pattern: str,
        path: str | Path = ".",
        *,
        skip: frozenset[str] = frozenset(),
        limit: int = 1000,
    ) -> list[WalkEntry]:
        """Entries under ``path`` whose relative path matches ``pattern`` (``**``, ``*``, ``{a,b}``)."""
        regex = glob_regex(pattern)
        depth = MAX_DEPTH if "**" in pattern else pattern.strip("/").count("/")
        out = []
        for entry in self.walk(path, skip=skip, max_depth=depth):
            if regex.fullmatch(entry.rel):
                out.append(entry)
                if len(out) >= limit:
                    break
        return out


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate a glob to a regex over POSIX relative paths.

    ``**`` spans folders (``**/x`` also matches ``x``), ``*`` and ``?`` stay in
    one component, ``[abc]`` / ``[!abc]`` are classes, ``{a,b}`` alternatives.
    """
    segments = [s for s in pattern.strip("/").split("/") if s not in ("", ".")]
    out: list[str] = []
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            out.append(".*" if last else "(?:.*/)?")
        else:
            out.append(_segment(seg) + ("" if last else "/"))
    return re.compile("".join(out), re.DOTALL)


def _segment(seg: str) -> str:
    out, i, depth = [], 0, 0
    while i < len(seg):
        ch = seg[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and seg.find("]", i + 2) != -1:
            end = seg.find("]", i + 2)
            body = seg[i + 1 : end]
            neg = body.startswith("!")
            body = body[1:] if neg else body
            body = body.replace("\\", "\\\\")
            if body.startswith("^"):
                body = "\\" + body
            out.append("[" + ("^" if neg else "") + body + "]")
            i = end
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out) + ")" * depth
