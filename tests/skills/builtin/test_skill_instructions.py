"""What the built-in skills tell the model (issue 21, defects 7 and 8).

7: every built-in skill carries Chinese and English keywords in SKILL.md's ``metadata``
map, and find_skills.py finds the office skills by their Chinese names.
8: one way to run a skill's script, the one that works: hearth's Python and the script's
full path, ``PYTHON SKILL_DIR/scripts/NAME.py``, as activate_skill defines both words.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import docx
import pytest
import yaml

from tests.skills.builtin.helpers import BUILTIN, run_script
from workhearth import Workhearth
from workhearth.agent.tools.skills import activation_text

SKILLS = sorted(p.parent.name for p in BUILTIN.glob("*/SKILL.md"))
CJK = re.compile(r"[\u4e00-\u9fff]")
BARE = re.compile(r"(?<![\w/.-])python3?\s+(?:\./)?scripts/")
FIND = BUILTIN / "find-skills" / "scripts" / "find_skills.py"


def clean_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
    return env | {"HEARTH_HOME": str(home)}


def hearth(home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("hearth")
    return subprocess.run(
        [str(exe), *args], capture_output=True, text=True, cwd=cwd, env=clean_env(home), timeout=120
    )


def front_matter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("\n---", 1)[0].removeprefix("---\n"))


def find(tmp_path: Path, *words: str) -> list[dict]:
    proc = run_script(FIND, *words, "--json", cwd=tmp_path, env=clean_env(tmp_path / "home"))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


# ------------------------------------------------------------------- 7: keywords, search
@pytest.mark.parametrize(
    ("words", "skill"),
    [
        (["表格"], "xlsx"),
        (["电子表格"], "xlsx"),
        (["幻灯片"], "pptx"),
        (["演示文稿"], "pptx"),
        (["合并"], "pdf"),
        (["合并", "PDF"], "pdf"),
        (["文档"], "docx"),
        (["Word文档"], "docx"),
        (["报错"], "error-recovery"),
        (["spreadsheets"], "xlsx"),
        (["slides"], "pptx"),
        (["merge"], "pdf"),
    ],
)
def test_find_skills_finds_built_in_skills_by_chinese_and_english_words(
    tmp_path: Path, words: list[str], skill: str
) -> None:
    found = find(tmp_path, *words)
    assert found, f"no skill matches {words}"
    assert found[0]["name"] == skill, [(r["name"], r["score"]) for r in found]


def test_every_built_in_skill_has_chinese_and_english_keywords(tmp_path: Path) -> None:
    assert len(SKILLS) >= 10
    for name in SKILLS:
        meta = front_matter(BUILTIN / name / "SKILL.md")["metadata"]
        assert all(isinstance(v, str) for v in meta.values()), name  # the spec: text values
        words = [w.strip() for w in meta["keywords"].split(",")]
        assert len(words) >= 5 and all(words), name
        assert any(CJK.search(w) for w in words), f"{name}: no Chinese keyword"
        assert any(re.fullmatch(r"[A-Za-z][\w .-]*", w) for w in words), f"{name}: no English"
    proc = hearth(tmp_path / "home", "skills", "list", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = {s["name"]: s for s in json.loads(proc.stdout) if s["source"] == "builtin"}
    assert sorted(listed) == SKILLS
    assert all(s["status"] == "ok" and s["problems"] == [] for s in listed.values()), listed


def test_find_skills_matches_keywords_cjk_as_substrings_latin_as_words(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "skills" / "claims"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: claims\ndescription: Restart the monthly paperwork.\n"
        'metadata:\n  keywords: "差旅报销单, Expense report, receipt"\n---\n\n# Claims\n',
        encoding="utf-8",
    )
    assert find(tmp_path, "报销")[0]["name"] == "claims"  # inside 差旅报销单
    assert find(tmp_path, "expenses")[0]["name"] == "claims"  # a word, any case, plural
    assert find(tmp_path, "RECEIPT")[0]["matched"] == ["receipt"]
    # Why: "art" is inside "Restart" and "port" inside "report"; neither is that word.
    assert "claims" not in [r["name"] for r in find(tmp_path, "art")]
    assert "claims" not in [r["name"] for r in find(tmp_path, "port")]


# ------------------------------------------------------------- 8: how to run a script
def instruction_texts(tmp_path: Path) -> dict[str, str]:
    """Every text that tells the model or a user how to run a built-in skill's script."""
    texts = {
        str(p.relative_to(BUILTIN)): p.read_text(encoding="utf-8")
        for pattern in ("*/SKILL.md", "*/references/*.md")
        for p in BUILTIN.glob(pattern)
    }
    proc = hearth(tmp_path / "home", "skills", "new", "my-report", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    texts["hearth skills new"] = (
        tmp_path / "home" / "skills" / "my-report" / "SKILL.md"
    ).read_text(encoding="utf-8")
    drafted = run_script(
        BUILTIN / "create-skill" / "scripts" / "draft_skill.py", "weekly-note",
        "--description", "Write the weekly note.", "--dir", tmp_path / "drafts",
        cwd=tmp_path, env=clean_env(tmp_path / "home"),
    )  # fmt: skip
    assert drafted.returncode == 0, drafted.stderr
    (draft,) = (tmp_path / "drafts").rglob("SKILL.md")
    texts["draft_skill.py"] = draft.read_text(encoding="utf-8")
    return texts


def test_no_text_says_run_a_script_with_a_bare_python(tmp_path: Path) -> None:
    texts = instruction_texts(tmp_path)
    bare = {where: BARE.findall(text) for where, text in texts.items() if BARE.search(text)}
    assert bare == {}
    for where in ("hearth skills new", "draft_skill.py", *(f"{n}/SKILL.md" for n in SKILLS)):
        assert "PYTHON SKILL_DIR/scripts/" in texts[where], where
    # Every script an instruction names is there.
    for name in SKILLS:
        text = texts[f"{name}/SKILL.md"]
        for script in re.findall(r"PYTHON SKILL_DIR/scripts/([a-z_][a-z0-9_]*\.py)", text):
            assert (BUILTIN / name / "scripts" / script).is_file(), (name, script)


def test_the_docx_instruction_runs_as_activate_skill_explains_it(tmp_path: Path) -> None:
    """The model's view: activate_skill's header, then the SKILL.md command, run from the
    workspace by a shell whose bare `python` cannot import python-docx."""
    (skill,) = [
        s for s in Workhearth(home=tmp_path / "home", workspace=tmp_path).skills.list()
        if s.name == "docx"
    ]  # fmt: skip
    body = (skill.path / "SKILL.md").read_text(encoding="utf-8")
    header = activation_text(skill, body, None).split("\n---\n")[0]
    said = re.search(r"PYTHON is (.+) and SKILL_DIR is (.+)\.$", header, re.M)
    assert said, header
    python, folder = said.group(1), said.group(2)
    (command,) = [
        line.strip() for line in body.splitlines() if "scripts/md_to_docx.py report.md" in line
    ]
    assert command.startswith("PYTHON SKILL_DIR/scripts/md_to_docx.py ")
    run = command.replace("PYTHON", python, 1).replace("SKILL_DIR", folder, 1)
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "report.md").write_text("# 周报\n\n本周完成了三件事。\n", encoding="utf-8")
    # Why: a `python` first on PATH that lacks python-docx, like the system one.
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c \"import sys; sys.modules['docx'] = None; "
        f'import runpy; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name=\'__main__\')" "$@"\n',
        encoding="utf-8",
    )
    (fake / "python").chmod(0o755)
    env = clean_env(tmp_path / "home") | {"PATH": f"{fake}:{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", run], cwd=workspace, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    document = docx.Document(str(workspace / "report.docx"))
    assert [p.text for p in document.paragraphs if p.text] == ["周报", "本周完成了三件事。"]
    # The old instruction, for contrast, fails from the workspace.
    old = subprocess.run(
        ["bash", "-c", "python scripts/md_to_docx.py report.md -o old.docx"],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert old.returncode != 0 and not (workspace / "old.docx").exists()
