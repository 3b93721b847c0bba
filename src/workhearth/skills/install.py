"""``hearth skills install`` and ``hearth skills new``: putting a skill into a skills folder.

Install is all-or-nothing. Every entry of an archive and every link in a folder is
checked before anything is written; the skill is then written into a fresh private
staging folder next to its destination (see skills.staging: never through a link),
validated there, and renamed into place. A refused install leaves the skills folder
exactly as it was, and nothing anywhere else.

A skill that would hide a built-in one, or replace an installed one, needs ``force``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from workhearth.errors import UsageError
from workhearth.fsutil import fsync_dir, make_private_dir
from workhearth.skills.model import SkillError
from workhearth.skills.staging import check_folder, check_zip, skill_root, stage_folder, stage_zip
from workhearth.skills.validate import MAX_NAME, METADATA_FILE, NAME_RE, SKILL_FILE, validate

ARCHIVE_SUFFIXES = (".zip", ".skill")


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


def _open_archive(source: Path) -> zipfile.ZipFile:
    if source.suffix.lower() not in ARCHIVE_SUFFIXES:
        raise UsageError(f"{source}: give a skill folder or a .zip/.skill archive")
    try:
        return zipfile.ZipFile(source)
    except zipfile.BadZipFile:
        raise UsageError(f"{source} is not a zip archive") from None


def _check_source(source: Path) -> None:
    """Refuse a bad source before the skills folder is even created."""
    if not source.exists():
        raise UsageError(f"{source} does not exist")
    if source.is_file():
        with _open_archive(source) as zf:
            skill_root(check_zip(zf))
    elif not (source / SKILL_FILE).is_file():
        raise SkillError(f"{source}: no {SKILL_FILE} in this folder")
    else:
        check_folder(source)


def _stage(source: Path, staged: Path) -> str:
    """Write the skill at ``source`` into ``staged`` (made here); returns the suggested name."""
    os.mkdir(staged, 0o700)
    if not source.is_file():
        stage_folder(source, staged)
        return source.resolve().name
    with _open_archive(source) as zf:
        members = check_zip(zf)
        root = skill_root(members)
        stage_zip(zf, members, root, staged)
    return root[0] if root else source.stem


def _declared_name(folder: Path) -> str | None:
    from workhearth.skills.validate import read_skill

    return read_skill(folder).name or None


def is_builtin(name: str, builtin_dir: Path | None) -> bool:
    """True when ``builtin_dir`` holds a skill folder ``name`` (which an install would hide)."""
    return builtin_dir is not None and (builtin_dir / name / SKILL_FILE).is_file()


def _check_name(name: str, source: Path, dest: Path, builtin_dir: Path | None, force: bool) -> None:
    if not NAME_RE.match(name) or len(name) > MAX_NAME:
        raise SkillError(f"{source}: {name!r} is not a valid skill name")
    if force:
        return
    if os.path.lexists(dest):
        raise SkillError(f"skill {name!r} is already installed at {dest} (use --force)")
    if is_builtin(name, builtin_dir):
        raise SkillError(
            f"skill {name!r} is built in; installing it would hide the built-in one "
            "(pass --force to do so)"
        )


def _leftover_root(skills_dir: Path) -> Path | None:
    """The topmost folder ``make_private_dir(skills_dir)`` would create, or None."""
    if skills_dir.exists():
        return None
    created = skills_dir
    while not created.parent.exists():
        created = created.parent
    return created


def _move_into_place(staged: Path, dest: Path, aside: Path) -> None:
    if os.path.lexists(dest):
        dest.rename(aside)
    try:
        staged.rename(dest)
    except OSError as exc:
        # Why: someone made ``dest`` meanwhile; put back what was there, refuse.
        if os.path.lexists(aside):
            aside.rename(dest)
        raise SkillError(f"cannot install into {dest}: {exc.strerror}") from None


def install(
    source: Path,
    skills_dir: Path,
    *,
    force: bool = False,
    builtin_dir: Path | None = None,
) -> Path:
    """Install the skill at ``source`` (folder, .zip or .skill) into ``skills_dir``; its folder.

    A skill of the name of one already installed, or of a built-in in ``builtin_dir``,
    is refused unless ``force``.
    """
    _check_source(source)
    # Why: a refused install must leave no trace, not even the folders it made.
    created = _leftover_root(skills_dir)
    make_private_dir(skills_dir)
    tmp = Path(tempfile.mkdtemp(prefix=".install-", dir=skills_dir))
    try:
        staged = tmp / "skill"
        guess = _stage(source, staged)
        name = _declared_name(staged) or guess
        dest = skills_dir / name
        _check_name(name, source, dest, builtin_dir, force)
        final_stage = tmp / name
        staged.rename(final_stage)
        problems = validate(final_stage)
        if problems:
            more = f" (and {len(problems) - 1} more; see hearth skills validate)"
            raise SkillError(f"{source}: {problems[0]}{more if len(problems) > 1 else ''}")
        _move_into_place(final_stage, dest, tmp / ".replaced")
        fsync_dir(skills_dir)
        return dest
    except BaseException:
        if created is not None:
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
Keep it short: put long material in `references/` and scripts in `scripts/`.
Run a script with hearth's Python and its full path, from the user's workspace, as
`activate_skill` prints it: `PYTHON SKILL_DIR/scripts/NAME.py ARGS`, where PYTHON is
hearth's own interpreter (a bare `python` may lack the libraries the script needs)
and SKILL_DIR is this skill's folder.
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
