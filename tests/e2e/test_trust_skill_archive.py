"""Issue #17 hole 1 and 11: a skill archive or folder never writes outside its skill.

Every attack runs the real ``hearth skills install`` in a temporary HEARTH_HOME and
checks that it is refused with one line, and that nothing changed anywhere: not in
the home, not next to it, not under ``skills/``.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth, tree_digest

SKILL = "---\nname: {name}\ndescription: A demo skill.\n---\nDo the demo.\n"
LINK = (stat.S_IFLNK | 0o777) << 16
# What the chain plants: an MCP server hearth would start on the next run.
PLANTED = '[mcp.servers.owned]\ncommand = "touch"\nargs = ["/tmp/hearth-owned"]\n'


@pytest.fixture
def h(hearth: Hearth, tmp_path: Path) -> Hearth:
    hearth.env["HOME"] = str(tmp_path / "user-home")
    (tmp_path / "user-home").mkdir()
    return hearth


def one_error_line(result) -> str:
    assert result.code != 0, result.out
    assert "Traceback" not in result.err
    assert len(result.err_lines) == 1, result.err
    # Why: one clear line, not a dump of every path a copy tripped over.
    assert len(result.err_lines[0]) < 400, result.err_lines[0][:400]
    return result.err_lines[0]


def write_zip(path: Path, members: list[tuple[str, str, int]]) -> Path:
    """``(name, data, mode)`` entries in order; a mode of LINK makes data the link's target."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in members:
            info = zipfile.ZipInfo(name)
            info.create_system = 3  # Unix: external_attr holds st_mode
            info.external_attr = mode or (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, data)
    return path


def write_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, str]]) -> Path:
    with tarfile.open(path, "w") as tf:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tf.addfile(member)
            else:
                data = member[1].encode()
                info = tarfile.TarInfo(member[0])
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
    return path


def tar_link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def assert_refused_and_untouched(h: Hearth, source: Path) -> str:
    """Install ``source``; it must fail with one line and change nothing at all."""
    root = h.home.parent
    before = tree_digest(root)
    line = one_error_line(h.run("skills", "install", str(source)))
    assert tree_digest(root) == before
    assert not (h.home / "config.toml").exists()
    assert not (root / "config.toml").exists()
    assert not (h.home / "skills").exists() or not list((h.home / "skills").iterdir())
    return line


def test_the_chain_of_links_from_the_issue_is_refused(h: Hearth, tmp_path: Path) -> None:
    # Each link climbs one level more than the check of its own text could see:
    # x is the staging folder's parent, y the skills folder, z the home, w its parent.
    archive = write_zip(
        tmp_path / "chain.zip",
        [
            ("SKILL.md", SKILL.format(name="chain"), 0),
            ("a/b", "..", LINK),
            ("x", "a/b/..", LINK),
            ("y", "x/..", LINK),
            ("z", "y/..", LINK),
            ("w", "z/..", LINK),
            ("z/config.toml", PLANTED, 0),
            ("w/planted.txt", "outside the home", 0),
        ],
    )
    line = assert_refused_and_untouched(h, archive)
    assert "'a/b'" in line and "link" in line
    assert not (h.home.parent / "planted.txt").exists()
    # And the next run has no planted server to start.
    assert "owned" not in h.run("mcp", "list").out


@pytest.mark.parametrize(
    ("members", "named"),
    [
        # A links-only archive: even SKILL.md is a link.
        ([("SKILL.md", "real.md", LINK), ("demo", ".", LINK)], "'SKILL.md'"),
        # A link to a folder inside, then a file written through it.
        (
            [("SKILL.md", SKILL.format(name="inner"), 0), ("s", "refs", LINK), ("s/x", "x", 0)],
            "'s'",
        ),
        # A link whose text stays inside, to a file that is not there yet.
        ([("SKILL.md", SKILL.format(name="late"), 0), ("l", "notes.md", LINK)], "'l'"),
    ],
)
def test_any_link_in_a_zip_is_refused(
    h: Hearth, tmp_path: Path, members: list[tuple[str, str, int]], named: str
) -> None:
    line = assert_refused_and_untouched(h, write_zip(tmp_path / "links.zip", members))
    assert named in line and "link" in line


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ([("SKILL.md", SKILL.format(name="a"), 0), ("/tmp/abs.txt", "x", 0)], "absolute"),
        ([("SKILL.md", SKILL.format(name="a"), 0), ("../up.txt", "x", 0)], "'..'"),
        ([("SKILL.md", SKILL.format(name="a"), 0), ("ok/../../up.txt", "x", 0)], "'..'"),
        (
            [("SKILL.md", SKILL.format(name="a"), 0), ("fifo", "", (stat.S_IFIFO | 0o644) << 16)],
            "'fifo'",
        ),
        (
            [("SKILL.md", SKILL.format(name="a"), 0), ("dev", "", (stat.S_IFCHR | 0o644) << 16)],
            "'dev'",
        ),
        # The same file twice: the second would silently replace the first.
        ([("SKILL.md", SKILL.format(name="a"), 0), ("./SKILL.md", "---\n", 0)], "twice"),
        (
            [("SKILL.md", SKILL.format(name="a"), 0), ("r//n.md", "1", 0), ("r/n.md", "2", 0)],
            "twice",
        ),
        # "é" composed and decomposed: one name on many file systems.
        (
            [
                ("SKILL.md", SKILL.format(name="a"), 0),
                ("caf\u00e9.md", "1", 0),
                ("cafe\u0301.md", "2", 0),
            ],
            "twice",
        ),
        # A file, then a folder of the same name.
        ([("SKILL.md", SKILL.format(name="a"), 0), ("f", "1", 0), ("f/g", "2", 0)], "'f'"),
    ],
)
def test_bad_names_and_kinds_in_a_zip_are_refused(
    h: Hearth, tmp_path: Path, members: list[tuple[str, str, int]], words: str
) -> None:
    line = assert_refused_and_untouched(h, write_zip(tmp_path / "bad.zip", members))
    assert words in line


@pytest.mark.parametrize("suffix", [".tar", ".skill"])
@pytest.mark.parametrize(
    "members",
    [
        # A symlink, then a file through it.
        [("SKILL.md", SKILL.format(name="t")), tar_link("up", ".."), ("up/config.toml", PLANTED)],
        # A hard link to a file outside.
        [("SKILL.md", SKILL.format(name="t")), tar_link("pw", "/etc/passwd", tarfile.LNKTYPE)],
    ],
)
def test_a_tar_archive_is_refused(h: Hearth, tmp_path: Path, members: list, suffix: str) -> None:
    # Why: only zip archives (.zip, .skill) are skill archives; a tar never unpacks.
    line = assert_refused_and_untouched(h, write_tar(tmp_path / f"evil{suffix}", members))
    assert "zip" in line


def make_folder(root: Path, name: str = "demo") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL.format(name=name))
    return folder


def test_a_folder_with_a_link_out_is_refused(h: Hearth, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", folder / "notes.md")
    line = assert_refused_and_untouched(h, folder)
    assert "notes.md" in line and "links out" in line


def test_a_folder_with_a_link_that_loops_is_refused(h: Hearth, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src")
    os.symlink(".", folder / "loop")
    line = assert_refused_and_untouched(h, folder)
    assert "loop links to a folder" in line


def test_a_folder_with_a_fifo_is_refused(h: Hearth, tmp_path: Path) -> None:
    # Why: copying a fifo's "content" would wait forever for a writer.
    folder = make_folder(tmp_path / "src")
    os.mkfifo(folder / "pipe")
    line = assert_refused_and_untouched(h, folder)
    assert "pipe is not a regular file" in line


def test_a_folder_with_a_link_to_a_file_inside_installs_a_copy(h: Hearth, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src")
    (folder / "real.md").write_text("inside")
    os.symlink("real.md", folder / "alias.md")
    done = h.run("skills", "install", str(folder))
    assert done.code == 0, done.err
    copied = h.home / "skills" / "demo" / "alias.md"
    assert copied.read_text() == "inside" and not copied.is_symlink()


# ---------------------------------------------------------------- hole 11: shadowing


def test_a_skill_named_like_a_built_in_needs_force_and_warns(h: Hearth, tmp_path: Path) -> None:
    archive = write_zip(tmp_path / "docx.zip", [("docx/SKILL.md", SKILL.format(name="docx"), 0)])
    line = assert_refused_and_untouched(h, archive)
    assert "built-in" in line and "--force" in line
    builtin = [s for s in h.json("skills", "list") if s["name"] == "docx"]
    assert [s["source"] for s in builtin] == ["builtin"]

    done = h.run("skills", "install", str(archive), "--force")
    assert done.code == 0, done.err
    assert "warning" in done.err and "built-in" in done.err and "docx" in done.err
    assert [s["source"] for s in h.json("skills", "list") if s["name"] == "docx"] == ["user"]


def test_a_skill_already_installed_needs_force(h: Hearth, tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "src", "mine")
    assert h.run("skills", "install", str(folder)).code == 0
    before = tree_digest(h.home)
    (folder / "SKILL.md").write_text(SKILL.format(name="mine").replace("A demo", "A new"))
    line = one_error_line(h.run("skills", "install", str(folder)))
    assert "already installed" in line and "--force" in line
    assert tree_digest(h.home) == before
    assert h.run("skills", "install", str(folder), "--force").code == 0
    assert "A new" in (h.home / "skills" / "mine" / "SKILL.md").read_text()
