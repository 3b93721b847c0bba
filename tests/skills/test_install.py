"""install (folder, .zip, .skill) is all-or-nothing and never writes outside its folder; new."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from tests.e2e.conftest import tree_digest
from workhearth.errors import HearthError
from workhearth.paths import HearthPaths
from workhearth.skills.library import SkillLibrary
from workhearth.skills.validate import validate

SKILL = "---\nname: {name}\ndescription: A demo skill.\n---\nDo the demo.\n"


def lib_for(tmp: Path) -> SkillLibrary:
    return SkillLibrary(
        HearthPaths(tmp / "home"),
        tmp,
        user_home=None,
        workspace_authorized=False,
        builtin_dir=tmp / "none",
    )


def make_zip(path: Path, entries: dict[str, str], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in entries.items():
            zf.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def test_a_zip_with_a_top_folder_installs_private(tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "demo.zip",
        {
            "demo/SKILL.md": SKILL.format(name="demo"),
            "demo/scripts/run.py": "print('hi')\n",
            "demo/references/更多.md": "中文\n",
        },
    )
    lib = lib_for(tmp_path)
    skill = lib.install(archive)
    assert skill.ok and skill.path == tmp_path / "home/skills/demo"
    assert (skill.path / "references/更多.md").read_text() == "中文\n"
    for path in [skill.path, *skill.path.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    assert [s.name for s in lib.list()] == ["demo"]
    assert not [p for p in (tmp_path / "home/skills").iterdir() if p.name.startswith(".")]


def test_a_skill_archive_with_skill_md_at_the_top(tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "whatever.skill", {"SKILL.md": SKILL.format(name="top")})
    assert lib_for(tmp_path).install(archive).name == "top"


@pytest.mark.parametrize(
    ("entries", "links", "message"),
    [
        ({"demo/SKILL.md": SKILL.format(name="demo"), "../evil.txt": "x"}, {}, "climbs out"),
        ({"demo/SKILL.md": SKILL.format(name="demo"), "demo/../../x": "x"}, {}, "climbs out"),
        ({"demo/SKILL.md": SKILL.format(name="demo"), "/etc/evil": "x"}, {}, "absolute"),
        ({"demo/SKILL.md": SKILL.format(name="demo")}, {"demo/l": "../../etc/passwd"}, "is a link"),
        ({"demo/SKILL.md": SKILL.format(name="demo")}, {"demo/l": "/etc/passwd"}, "is a link"),
        # Even a link that stays inside: a skill needs none, and chains of them climb out.
        ({"demo/SKILL.md": SKILL.format(name="demo")}, {"demo/l": "SKILL.md"}, "is a link"),
        ({"SKILL.md": SKILL.format(name="c")}, {"a/b": "..", "x": "a/b/..", "y": "x/.."}, "'a/b'"),
        ({"demo/SKILL.md": SKILL.format(name="demo"), "demo/./SKILL.md": "x"}, {}, "twice"),
        ({"demo/SKILL.md": "---\nname: demo\n---\n"}, {}, "missing required field 'description'"),
        ({"demo/readme.txt": "no skill"}, {}, "no SKILL.md"),
    ],
)
def test_a_refused_archive_writes_nothing(
    tmp_path: Path, entries: dict[str, str], links: dict[str, str], message: str
) -> None:
    (tmp_path / "in").mkdir()
    archive = make_zip(tmp_path / "in" / "bad.zip", entries, links)
    before = tree_digest(tmp_path)
    with pytest.raises(HearthError, match=message):
        lib_for(tmp_path / "in").install(archive)
    assert tree_digest(tmp_path) == before
    assert not (tmp_path / "in" / "home").exists()


def test_a_refused_install_leaves_an_existing_skills_folder_as_it_was(tmp_path: Path) -> None:
    lib = lib_for(tmp_path)
    lib.new("kept")
    before = tree_digest(tmp_path / "home")
    bad = make_zip(tmp_path / "bad.zip", {"x/SKILL.md": SKILL.format(name="x"), "../e": "x"})
    with pytest.raises(HearthError):
        lib.install(bad)
    assert tree_digest(tmp_path / "home") == before


def test_a_folder_with_a_link_out_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "src" / "demo"
    src.mkdir(parents=True)
    (src / "SKILL.md").write_text(SKILL.format(name="demo"))
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", src / "notes.txt")
    with pytest.raises(HearthError, match="links out of the skill folder"):
        lib_for(tmp_path).install(src)
    assert not (tmp_path / "home").exists()
    # A link that stays inside is fine: its content is copied.
    (src / "notes.txt").unlink()
    (src / "real.txt").write_text("inside")
    os.symlink("real.txt", src / "notes.txt")
    skill = lib_for(tmp_path).install(src)
    assert (skill.path / "notes.txt").read_text() == "inside"
    assert not (skill.path / "notes.txt").is_symlink()


def test_an_archive_keeps_executable_bits_and_makes_everything_private(tmp_path: Path) -> None:
    archive = tmp_path / "tool.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("tool/SKILL.md", SKILL.format(name="tool"))
        run = zipfile.ZipInfo("tool/scripts/run.sh")
        run.external_attr = (stat.S_IFREG | 0o755) << 16
        zf.writestr(run, "#!/bin/sh\necho hi\n")
        zf.writestr(zipfile.ZipInfo("tool/assets/"), "")
    skill = lib_for(tmp_path).install(archive)
    assert stat.S_IMODE((skill.path / "scripts/run.sh").stat().st_mode) == 0o700
    assert stat.S_IMODE((skill.path / "SKILL.md").stat().st_mode) == 0o600
    assert stat.S_IMODE((skill.path / "assets").stat().st_mode) == 0o700


def test_a_skill_named_like_a_built_in_needs_force(tmp_path: Path) -> None:
    builtin = tmp_path / "builtin" / "docx"
    builtin.mkdir(parents=True)
    (builtin / "SKILL.md").write_text(SKILL.format(name="docx"))
    lib = SkillLibrary(
        HearthPaths(tmp_path / "home"),
        tmp_path,
        user_home=None,
        workspace_authorized=False,
        builtin_dir=tmp_path / "builtin",
    )
    archive = make_zip(tmp_path / "docx.zip", {"docx/SKILL.md": SKILL.format(name="docx")})
    with pytest.raises(HearthError, match=r"built in.*--force"):
        lib.install(archive)
    assert not (tmp_path / "home").exists()
    assert lib.install(archive, force=True).source == "user"
    assert lib.get("docx").path == tmp_path / "home/skills/docx"


def test_an_installed_skill_is_replaced_only_with_force(tmp_path: Path) -> None:
    src = tmp_path / "demo"
    src.mkdir()
    (src / "SKILL.md").write_text(SKILL.format(name="demo"))
    lib = lib_for(tmp_path)
    lib.install(src)
    (src / "SKILL.md").write_text(SKILL.format(name="demo").replace("A demo", "A new"))
    with pytest.raises(HearthError, match=r"already installed.*--force"):
        lib.install(src)
    assert "A demo" in (tmp_path / "home/skills/demo/SKILL.md").read_text()
    lib.install(src, force=True)
    assert "A new" in (tmp_path / "home/skills/demo/SKILL.md").read_text()
    assert lib.get("demo").description == "A new skill."


def test_new_scaffolds_a_valid_skill_with_one_example(tmp_path: Path) -> None:
    lib = lib_for(tmp_path)
    skill = lib.new("weekly-report", "写周报: summarize the week's work")
    assert skill.ok and validate(skill.path) == []
    assert skill.description == "写周报: summarize the week's work"
    (example,) = lib.examples("weekly-report")
    assert example.variables[0].type == "file"
    with pytest.raises(HearthError, match="already exists"):
        lib.new("weekly-report")
    for bad in ("Weekly", "-x", "a--b", "a" * 65, ""):
        with pytest.raises(HearthError, match="not a skill name"):
            lib.new(bad)
