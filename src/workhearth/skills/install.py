"""``hearth skills install`` and ``hearth skills new``: putting a skill into a skills folder.

Install is all-or-nothing. Every name in an archive and every link in a folder
is checked before anything is written; the skill is then unpacked into a hidden
temporary folder next to its destination, validated there, and renamed into
place. A refused install leaves the skills folder exactly as it was.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from workhearth.errors import UsageError
from workhearth.fsutil import fsync_dir, make_private_dir
from workhearth.skills.model import SkillError
from workhearth.skills.validate import MAX_NAME, METADATA_FILE, NAME_RE, SKILL_FILE, validate

ARCHIVE_SUFFIXES = (".zip", ".skill")
MAX_FILES = 10_000
MAX_BYTES = 200 * 1024 * 1024


def _safe_member(name: str) -> PurePosixPath:
    """An archive member's relative path, or SkillError when it could land outside."""
    if "\\" in name or "\x00" in name:
        raise SkillError(f"archive entry {name!r}: backslashes and NUL are not allowed")
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and ":" in path.parts[0]):
        raise SkillError(f"archive entry {name!r} has an absolute path; refused")
    if ".." in path.parts:
        raise SkillError(f"archive entry {name!r} climbs out with '..'; refused")
    return path


def _link_target_ok(member: PurePosixPath, target: str) -> bool:
    """True when a link at ``member`` pointing to ``target`` stays inside the archive root."""
    if target.startswith("/") or "\\" in target:
        return False
    depth = len(member.parts) - 1
    for part in PurePosixPath(target).parts:
        depth = depth - 1 if part == ".." else depth + (part != ".")
        if depth < 0:
            return False
    return True


def _check_zip(zf: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    infos = zf.infolist()
    if len(infos) > MAX_FILES:
        raise SkillError(f"archive holds {len(infos)} entries (at most {MAX_FILES})")
    if sum(i.file_size for i in infos) > MAX_BYTES:
        raise SkillError(f"archive unpacks to more than {MAX_BYTES // 2**20} MB; refused")
    out = []
    for info in infos:
        path = _safe_member(info.filename)
        if not path.parts:
            continue
        if stat.S_ISLNK(info.external_attr >> 16):
            target = zf.read(info).decode("utf-8", "replace")
            if not _link_target_ok(path, target):
                raise SkillError(f"archive entry {info.filename!r} links out to {target!r}")
        out.append((info, path))
    return out


def _skill_root(paths: list[PurePosixPath]) -> PurePosixPath:
    """``SKILL.md`` at the top, or inside one top folder."""
    if PurePosixPath(SKILL_FILE) in paths:
        return PurePosixPath()
    tops = {p.parts[0] for p in paths}
    if len(tops) == 1:
        top = PurePosixPath(next(iter(tops)))
        if top / SKILL_FILE in paths:
            return top
    raise SkillError(f"no {SKILL_FILE} at the top of the archive or in its one top folder")


def _check_folder(folder: Path) -> None:
    real_root = Path(os.path.realpath(folder))
    count = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            count += 1
            path = Path(dirpath) / name
            if path.is_symlink():
                real = Path(os.path.realpath(path))
                if real != real_root and real_root not in real.parents:
                    raise SkillError(f"{path} links out of the skill folder (to {real}); refused")
    if count > MAX_FILES:
        raise SkillError(f"{folder} holds {count} entries (at most {MAX_FILES})")


def _private_tree(root: Path) -> None:
    """Files 0600 (0700 when executable), folders 0700, like the rest of the home."""
    for dirpath, _dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o700)
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            mode = path.stat().st_mode
            os.chmod(path, 0o700 if mode & 0o111 else 0o600)


def _unpack_zip(source: Path, dest: Path) -> str:
    """Unpack a checked archive into ``dest`` (a fresh folder); returns the suggested name."""
    with zipfile.ZipFile(source) as zf:
        members = _check_zip(zf)
        root = _skill_root([p for _, p in members])
        written = 0
        for info, path in members:
            if root.parts and path.parts[: len(root.parts)] != root.parts:
                continue
            rel = PurePosixPath(*path.parts[len(root.parts) :])
            if not rel.parts:
                continue
            target = dest.joinpath(*rel.parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            elif stat.S_ISLNK(info.external_attr >> 16):
                target.parent.mkdir(parents=True, exist_ok=True)
                os.symlink(zf.read(info).decode("utf-8"), target)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "xb") as out:
                    # Why: sizes in a zip's headers can lie; count what really comes out.
                    while chunk := src.read(1 << 20):
                        written += len(chunk)
                        if written > MAX_BYTES:
                            raise SkillError(
                                f"archive unpacks to more than {MAX_BYTES // 2**20} MB; refused"
                            )
                        out.write(chunk)
                if (info.external_attr >> 16) & 0o111:
                    os.chmod(target, 0o700)
    return root.name if root.parts else source.stem


def _declared_name(folder: Path) -> str | None:
    from workhearth.skills.validate import read_skill

    return read_skill(folder).name or None


def install(source: Path, skills_dir: Path, *, force: bool = False) -> Path:
    """Install the skill at ``source`` (folder, .zip or .skill) into ``skills_dir``; its folder."""
    if not source.exists():
        raise UsageError(f"{source} does not exist")
    is_archive = source.is_file()
    if is_archive:
        if source.suffix.lower() not in ARCHIVE_SUFFIXES:
            raise UsageError(f"{source}: give a skill folder or a .zip/.skill archive")
        try:
            with zipfile.ZipFile(source) as zf:
                # Why: refuse before the skills folder is even created.
                _skill_root([p for _, p in _check_zip(zf)])
        except zipfile.BadZipFile:
            raise UsageError(f"{source} is not a zip archive") from None
    else:
        if not (source / SKILL_FILE).is_file():
            raise SkillError(f"{source}: no {SKILL_FILE} in this folder")
        _check_folder(source)

    # Why: a refused install must leave no trace, not even the folders it made.
    created = skills_dir
    while not created.parent.exists():
        created = created.parent
    created_dir = not created.exists()
    make_private_dir(skills_dir)
    tmp = Path(tempfile.mkdtemp(prefix=".install-", dir=skills_dir))
    try:
        staged = tmp / "skill"
        if is_archive:
            staged.mkdir()
            guess = _unpack_zip(source, staged)
        else:
            # Why: every link was checked to stay inside; copying what it points to
            # leaves no link in the home that could be re-aimed later.
            shutil.copytree(source, staged, symlinks=False)
            guess = source.resolve().name
        name = _declared_name(staged) or guess
        if not NAME_RE.match(name) or len(name) > MAX_NAME:
            raise SkillError(f"{source}: {name!r} is not a valid skill name")
        final_stage = tmp / name
        staged.rename(final_stage)
        problems = validate(final_stage)
        if problems:
            more = f" (and {len(problems) - 1} more; see hearth skills validate)"
            raise SkillError(f"{source}: {problems[0]}{more if len(problems) > 1 else ''}")
        dest = skills_dir / name
        if dest.exists() and not force:
            raise SkillError(f"skill {name!r} is already installed at {dest} (use --force)")
        _private_tree(final_stage)
        aside = tmp / ".replaced"
        if dest.exists():
            dest.rename(aside)
        final_stage.rename(dest)
        fsync_dir(skills_dir)
        return dest
    except BaseException:
        if created_dir:
            shutil.rmtree(created, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_SKILL_TEMPLATE = """\
---
name: {name}
description: {description}
---

# {name}

Say here, for the agent, what this skill does and how to do it step by step.
Keep it short: put long material in `references/` and scripts in `scripts/`
(run them as `python scripts/NAME.py ARGS` from this folder).
"""

_METADATA_TEMPLATE = """\
examples:
  - id: example
    title:
      zh: 示例任务
      en: Example task
    description:
      zh: 用这个技能处理一个文件。
      en: Use this skill on one file.
    prompt: "Use the {name} skill on {{{{input}}}}."
    variables:
      - name: input
        type: file
        required: true
        description:
          zh: 要处理的文件
          en: The file to work on
"""


def scaffold(name: str, description: str, skills_dir: Path) -> Path:
    """Write a new, valid skill folder ``skills_dir/name``; refuses an existing one."""
    if not 1 <= len(name) <= MAX_NAME or not NAME_RE.match(name):
        raise UsageError(
            f"{name!r} is not a skill name: 1-{MAX_NAME} of a-z, 0-9 and '-', "
            "no leading, trailing or double '-'"
        )
    description = " ".join(description.split()) or f"Describe when to use {name}."
    if len(description) > 1024:
        raise UsageError("a description is at most 1024 characters")
    folder = skills_dir / name
    if folder.exists():
        raise UsageError(f"{folder} already exists")
    import yaml

    quoted = yaml.safe_dump(description, allow_unicode=True, width=10_000).strip()
    quoted = quoted.removesuffix("\n...").removesuffix("...").strip()
    make_private_dir(skills_dir)
    tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=skills_dir))
    try:
        (tmp / SKILL_FILE).write_text(
            _SKILL_TEMPLATE.format(name=name, description=quoted), encoding="utf-8"
        )
        (tmp / METADATA_FILE).write_text(_METADATA_TEMPLATE.format(name=name), encoding="utf-8")
        _private_tree(tmp)
        tmp.rename(folder)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
    fsync_dir(skills_dir)
    return folder
