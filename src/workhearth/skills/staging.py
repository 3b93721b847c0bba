"""Writing a skill into a fresh, private staging folder, never through a link.

A skill is plain files and folders: the Agent Skills format needs no link, so a
link in an archive is refused outright, whatever it points to (a chain of links
each harmless on its own can climb anywhere). Devices, fifos and sockets are
refused too, as are absolute names, ``..``, and two names that are one file
after normalization (``a//b`` and ``a/b``, ``é`` composed and decomposed).

Every folder is made and every file created relative to its parent's descriptor,
opened with ``O_NOFOLLOW`` (files with ``O_EXCL`` too): even a link that got into
the staging folder somehow could not be written through.

A folder source may hold links to files inside it: their content is copied (the
copy holds no link that could be re-aimed later). Links to folders, links that
lead out, and links that lead nowhere are refused.
"""

from __future__ import annotations

import os
import stat
import unicodedata
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from workhearth.skills.model import SkillError
from workhearth.skills.validate import SKILL_FILE

MAX_FILES = 10_000
MAX_BYTES = 200 * 1024 * 1024
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TOO_BIG = f"unpacks to more than {MAX_BYTES // 2**20} MB; refused"

Parts = tuple[str, ...]


@dataclass(frozen=True)
class Member:
    """One archive entry that may be written: its checked path and whether it is a folder."""

    info: zipfile.ZipInfo
    parts: Parts
    is_dir: bool


# ---------------------------------------------------------------- writing
class Stager:
    """Makes folders and new files under ``root`` (a fresh folder) without following links."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.written = 0
        self._made: set[Parts] = {()}

    def _open_dir(self, parts: Parts) -> int:
        """A descriptor of folder ``parts`` (made 0700 when missing), walked with O_NOFOLLOW."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for i, name in enumerate(parts):
                if parts[: i + 1] not in self._made:
                    os.mkdir(name, 0o700, dir_fd=fd)
                    self._made.add(parts[: i + 1])
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def folder(self, parts: Parts) -> None:
        os.close(self._open_dir(parts))

    def file(self, parts: Parts, src: IO[bytes], *, executable: bool, what: str) -> None:
        """Create ``parts`` (it must not exist) with what ``src`` holds; 0700 or 0600."""
        parent = self._open_dir(parts[:-1])
        try:
            mode = 0o700 if executable else 0o600
            fd = os.open(parts[-1], _NEW_FILE_FLAGS, mode, dir_fd=parent)
        finally:
            os.close(parent)
        try:
            os.fchmod(fd, mode)
            # Why: sizes in a zip's headers can lie; count what really comes out.
            while chunk := src.read(1 << 20):
                self.written += len(chunk)
                if self.written > MAX_BYTES:
                    raise SkillError(f"{what} {_TOO_BIG}")
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


# ---------------------------------------------------------------- zip archives
def _member_parts(name: str) -> Parts:
    """An archive member's relative path parts, or SkillError when it could land outside."""
    if "\\" in name or "\x00" in name:
        raise SkillError(f"archive entry {name!r}: backslashes and NUL are not allowed")
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and ":" in path.parts[0]):
        raise SkillError(f"archive entry {name!r} has an absolute path; refused")
    if ".." in path.parts:
        raise SkillError(f"archive entry {name!r} climbs out with '..'; refused")
    return path.parts


def _member_kind(info: zipfile.ZipInfo) -> bool:
    """True for a folder, False for a file; SkillError for a link or anything else."""
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise SkillError(
            f"archive entry {info.filename!r} is a link; a skill archive may hold no links; refused"
        )
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise SkillError(
            f"archive entry {info.filename!r} is not a file or folder "
            "(a device, fifo or socket); refused"
        )
    return kind == stat.S_IFDIR or info.is_dir()


def _same_file_key(parts: Parts) -> Parts:
    # Why: many file systems (macOS, most of Windows) store "é" composed and
    # decomposed as one name; two such entries would silently overwrite each other.
    return tuple(unicodedata.normalize("NFC", p) for p in parts)


def check_zip(zf: zipfile.ZipFile) -> list[Member]:
    """Every entry checked, in archive order; the first bad one raises SkillError naming it."""
    infos = zf.infolist()
    if len(infos) > MAX_FILES:
        raise SkillError(f"archive holds {len(infos)} entries (at most {MAX_FILES})")
    if sum(i.file_size for i in infos) > MAX_BYTES:
        raise SkillError(f"archive {_TOO_BIG}")
    files: dict[Parts, str] = {}
    folders: set[Parts] = set()
    members = []
    for info in infos:
        parts = _member_parts(info.filename)
        is_dir = _member_kind(info)
        if not parts:
            if is_dir:
                continue
            raise SkillError(f"archive entry {info.filename!r} has no name; refused")
        key = _same_file_key(parts)
        folders.update(key[:i] for i in range(1, len(key)))
        if is_dir:
            folders.add(key)
        elif key in files:
            raise SkillError(
                f"archive entry {info.filename!r} appears twice (also as {files[key]!r}); refused"
            )
        else:
            files[key] = info.filename
        members.append(Member(info, parts, is_dir))
    for key, name in files.items():
        if key in folders:
            raise SkillError(f"archive entry {name!r} is both a file and a folder; refused")
    return members


def skill_root(members: list[Member]) -> Parts:
    """``SKILL.md`` at the top, or inside one top folder: the parts to strip."""
    files = {m.parts for m in members if not m.is_dir}
    if (SKILL_FILE,) in files:
        return ()
    tops = {m.parts[0] for m in members}
    if len(tops) == 1:
        top = next(iter(tops))
        if (top, SKILL_FILE) in files:
            return (top,)
    raise SkillError(f"no {SKILL_FILE} at the top of the archive or in its one top folder")


def stage_zip(zf: zipfile.ZipFile, members: list[Member], root: Parts, dest: Path) -> None:
    """Write the checked ``members`` under ``root`` into ``dest`` (a fresh, empty folder)."""
    stager = Stager(dest)
    for member in members:
        rel = member.parts[len(root) :]
        if not rel:
            continue
        if member.is_dir:
            stager.folder(rel)
            continue
        executable = bool((member.info.external_attr >> 16) & 0o111)
        try:
            with zf.open(member.info) as src:
                stager.file(rel, src, executable=executable, what="archive")
        except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError) as exc:
            # Why: a damaged, encrypted or oddly compressed entry is the archive's fault.
            raise SkillError(
                f"archive entry {member.info.filename!r} cannot be read: {exc}"
            ) from None


# ---------------------------------------------------------------- folders
def _entries(folder: Path, rel: Parts = ()) -> Iterator[tuple[Parts, os.DirEntry[str]]]:
    """Every entry under ``folder``, parents first, never descending through a link."""
    with os.scandir(folder.joinpath(*rel)) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        parts = (*rel, entry.name)
        yield parts, entry
        if entry.is_dir(follow_symlinks=False):
            yield from _entries(folder, parts)


def _link_source(entry: os.DirEntry[str], real_root: Path) -> Path:
    """The file inside ``real_root`` that the link ``entry`` leads to, or SkillError."""
    real = Path(os.path.realpath(entry.path))
    if real != real_root and real_root not in real.parents:
        raise SkillError(f"{entry.path} links out of the skill folder (to {real}); refused")
    if real.is_dir():
        raise SkillError(
            f"{entry.path} links to a folder; only links to files inside a skill are copied"
        )
    if not real.is_file():
        raise SkillError(f"{entry.path} is a link to nothing that can be copied; refused")
    return real


def check_folder(folder: Path) -> None:
    """Refuse a folder holding links out, links to folders, or devices/fifos/sockets."""
    real_root = Path(os.path.realpath(folder))
    for count, (_parts, entry) in enumerate(_entries(folder), 1):
        if count > MAX_FILES:
            raise SkillError(f"{folder} holds more than {MAX_FILES} entries; refused")
        if entry.is_symlink():
            _link_source(entry, real_root)
        elif not (entry.is_dir(follow_symlinks=False) or entry.is_file(follow_symlinks=False)):
            raise SkillError(
                f"{entry.path} is not a regular file or folder (a device, fifo or socket); refused"
            )


def stage_folder(folder: Path, dest: Path) -> None:
    """Copy the checked ``folder`` into ``dest`` (fresh, empty); links to files become copies."""
    real_root = Path(os.path.realpath(folder))
    stager = Stager(dest)
    for parts, entry in _entries(folder):
        if entry.is_dir(follow_symlinks=False):
            stager.folder(parts)
            continue
        # Why: re-checked here, so a link re-aimed since check_folder is still caught.
        path = _link_source(entry, real_root) if entry.is_symlink() else Path(entry.path)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as src:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise SkillError(f"{entry.path} is not a regular file; refused")
            stager.file(parts, src, executable=bool(st.st_mode & 0o111), what=str(folder))
