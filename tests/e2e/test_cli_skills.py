"""``hearth skills …`` run as a user runs it, in a temporary HEARTH_HOME and HOME."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.e2e.conftest import Hearth, tree_digest

FIXTURE = Path(__file__).parents[1] / "skills" / "fixtures" / "pdf-notes"


@pytest.fixture
def h(hearth: Hearth, tmp_path: Path) -> Hearth:
    # Why: the developer's own ~/.claude/skills must not leak into what we test.
    hearth.env["HOME"] = str(tmp_path / "user-home")
    (tmp_path / "user-home").mkdir()
    return hearth


def one_error_line(result) -> str:
    assert result.code != 0
    assert "Traceback" not in result.err
    assert len(result.err_lines) == 1, result.err
    return result.err_lines[0]


def test_list_shows_another_agents_skill_and_its_body(h: Hearth) -> None:
    shutil.copytree(FIXTURE, h.workspace / ".claude" / "skills" / "pdf-notes")
    # A cloned folder's skills are its author's words: none load before the user trusts it.
    untrusted = h.run("skills", "list", "--json")
    assert "pdf-notes" not in untrusted.out
    assert f"`hearth workspace trust {h.workspace}`" in untrusted.err
    assert h.run("workspace", "trust", str(h.workspace)).code == 0
    listed = {s["name"]: s for s in h.json("skills", "list")}
    assert listed["pdf-notes"] == {
        "name": "pdf-notes",
        "description": "Summarize a PDF into short notes. Use when the user asks for notes on a PDF.",
        "source": "claude-workspace",
        "path": str(h.workspace / ".claude" / "skills" / "pdf-notes"),
        "status": "ok",
        "problems": [],
    }
    shown = h.run("skills", "show", "pdf-notes")
    assert shown.code == 0 and "# PDF notes" in shown.out
    # Run from a folder inside the home (never authorized): workspace skills are not loaded.
    inside = h.home / "skills"
    inside.mkdir(parents=True)
    moved = h.workspace.rename(inside / "ws")
    names = [s["name"] for s in h.json("skills", "list", cwd=moved)]
    assert "pdf-notes" not in names


def test_new_examples_render_and_their_errors(h: Hearth) -> None:
    made = h.run("skills", "new", "weekly-report", "--description", "写周报")
    assert made.code == 0, made.err
    assert (h.home / "skills" / "weekly-report" / "SKILL.md").is_file()
    (example,) = h.json("skills", "examples", "weekly-report")
    assert set(example) == {"id", "title", "description", "variables"}
    assert set(example["title"]) == {"zh", "en"}
    assert example["variables"][0]["name"] == "input"
    (h.workspace / "周报.md").write_text("本周", encoding="utf-8")
    done = h.run("skills", "render", "weekly-report", "example", "--set", "input=周报.md")
    assert done.code == 0 and done.out == "Use the weekly-report skill on 周报.md.\n"
    missing = one_error_line(h.run("skills", "render", "weekly-report", "example"))
    assert "'input'" in missing and "--set input=" in missing  # the terminal keeps its hint
    outside = h.elsewhere / "x.md"
    outside.write_text("x")
    line = one_error_line(
        h.run("skills", "render", "weekly-report", "example", "--set", f"input={outside}")
    )
    assert "outside the authorized workspace" in line
    line = one_error_line(
        h.run(
            "skills", "render", "weekly-report", "example", "--set", "input=周报.md", "--set", "x=1"
        )
    )
    assert "unknown variable 'x'" in line
    assert "NAME=VALUE" in one_error_line(
        h.run("skills", "render", "weekly-report", "example", "--set", "input")
    )
    assert "no skill named" in one_error_line(h.run("skills", "examples", "nope"))
    titles = h.run("skills", "examples", "weekly-report", env={"LANG": "zh_CN.UTF-8"})
    assert "示例任务" in titles.out


def test_install_of_a_zip_with_dotdot_entries_writes_nothing(h: Hearth, tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("evil/SKILL.md", "---\nname: evil\ndescription: d\n---\n")
        zf.writestr("../../escaped.txt", "gotcha")
    before = tree_digest(tmp_path)
    line = one_error_line(h.run("skills", "install", str(archive)))
    assert "climbs out" in line
    assert tree_digest(tmp_path) == before
    assert not (h.home / "skills").exists()


def test_install_then_list_and_refuse_a_second_time(h: Hearth, tmp_path: Path) -> None:
    archive = tmp_path / "pdf-notes.skill"
    with zipfile.ZipFile(archive, "w") as zf:
        for f in FIXTURE.rglob("*"):
            zf.write(f, f"pdf-notes/{f.relative_to(FIXTURE)}")
    done = h.run("skills", "install", str(archive))
    assert done.code == 0, done.err
    assert [s["source"] for s in h.json("skills", "list") if s["name"] == "pdf-notes"] == ["user"]
    assert "--force" in one_error_line(h.run("skills", "install", str(archive)))
    assert h.run("skills", "install", str(archive), "--force").code == 0


def test_validate_prints_problems_and_fails(h: Hearth, tmp_path: Path) -> None:
    bad = tmp_path / "bad-skill"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: Bad\ndescription: d\nmodel: x\n---\n")
    result = h.run("skills", "validate", str(bad))
    assert result.code == 1
    assert f"{bad}/SKILL.md:4: unknown field 'model'" in result.out
    assert "SKILL.md:2: name 'Bad'" in result.out
    assert "problem" in one_error_line(result)
    good = h.run("skills", "validate", str(FIXTURE))
    assert good.code == 0 and good.out.strip().endswith(": ok")
    assert "not a folder" in one_error_line(h.run("skills", "validate", str(tmp_path / "no")))


def test_a_broken_skill_is_listed_broken(h: Hearth) -> None:
    folder = h.workspace / ".hearth" / "skills" / "half"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: half\n---\n")
    assert h.run("workspace", "trust", ".").code == 0
    (half,) = [s for s in h.json("skills", "list") if s["name"] == "half"]
    assert half["status"] == "broken"
    assert half["problems"] == ["SKILL.md:2: missing required field 'description'"]
    shown = h.json("skills", "show", "half")
    assert shown["status"] == "broken" and shown["body"] is None
    assert "broken" in one_error_line(h.run("skills", "examples", "half"))


def test_help_does_not_import_the_skills_package_or_yaml() -> None:
    # Why run it: commands are imported when they run, or when --help lists them all.
    code = (
        "import contextlib, io, sys\nfrom workhearth.main import run\n"
        "with contextlib.redirect_stdout(io.StringIO()): run(['--help'])\n"
        "print(sorted(m for m in sys.modules if m == 'yaml' or m.startswith('workhearth.skills')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
