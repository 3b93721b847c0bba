"""The meta skills (issue #10): create-skill, find-skills, install-skill-dependency,
plugin-creator, hearth-guidance, error-recovery.

Each script is run as the model runs it: ``python <skill>/scripts/<script>.py ARGS`` with
hearth's interpreter, in a subprocess. error-recovery is fed the real stderr of real
failing commands, captured here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.skills.builtin.helpers import BUILTIN, one_error_line, run_script

META = (
    "create-skill",
    "find-skills",
    "install-skill-dependency",
    "plugin-creator",
    "hearth-guidance",
    "error-recovery",
)


def script(
    skill: str,
    name: str,
    *args: str,
    cwd: Path | None = None,
    env: dict | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    return run_script(
        BUILTIN / skill / "scripts" / name, *args, cwd=cwd, env=env, input=stdin, timeout=120
    )


def failed(argv: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess[str]:
    """Run a command that must fail, and return what it really printed."""
    res = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=60, **kw)
    assert res.returncode != 0, res
    return res


def diagnose(
    tmp_path: Path, command: str, res: subprocess.CompletedProcess[str], *extra: str
) -> dict:
    err = tmp_path / "stderr.txt"
    err.write_text(res.stderr, encoding="utf-8")
    out = script(
        "error-recovery",
        "diagnose.py",
        "--command",
        command,
        "--exit-code",
        str(res.returncode),
        "--stderr",
        str(err),
        *extra,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# --------------------------------------------------------------------- error-recovery
def test_diagnose_missing_command(tmp_path: Path) -> None:
    res = failed(["bash", "-c", "nosuchcmd_wh_42 --version"], tmp_path)
    d = diagnose(tmp_path, "nosuchcmd_wh_42 --version", res)
    assert d["kind"] == "command-not-found"
    assert "nosuchcmd_wh_42" in d["cause"] and d["confidence"] >= 0.8


def test_diagnose_missing_command_names_its_package(tmp_path: Path) -> None:
    # Why: a real "command not found" for a program whose package name differs.
    bash = shutil.which("bash")
    assert bash
    res = failed([bash, "-c", "rg TODO"], tmp_path, env={"PATH": str(tmp_path)})
    d = diagnose(tmp_path, "rg TODO", res)
    assert d["kind"] == "command-not-found"
    assert "ripgrep" in d["fix"]


def test_diagnose_missing_python_module_names_the_interpreter(tmp_path: Path) -> None:
    res = failed([sys.executable, "-c", "import yaml_wh_missing.sub"], tmp_path)
    d = diagnose(tmp_path, f"{sys.executable} -c 'import yaml_wh_missing.sub'", res)
    assert d["kind"] == "module-not-found"
    assert f"{sys.executable} -m pip install yaml_wh_missing" in d["fix"]


def test_diagnose_module_whose_package_has_another_name(tmp_path: Path) -> None:
    # Why: the import name is not the PyPI name; the fix must name the package.
    res = failed([sys.executable, "-S", "-c", "import docx"], tmp_path)
    d = diagnose(tmp_path, "python3 -S -c 'import docx'", res)
    assert d["kind"] == "module-not-found"
    assert "python3 -m pip install python-docx" in d["fix"]


def test_diagnose_missing_file(tmp_path: Path) -> None:
    res = failed(["cat", "missing.txt"], tmp_path)
    d = diagnose(tmp_path, "cat missing.txt", res)
    assert d["kind"] == "no-such-file"
    assert "missing.txt" in d["cause"]


def test_diagnose_permission_denied(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("echo hi\n")
    (tmp_path / "run.sh").chmod(0o644)
    res = failed(["bash", "-c", "./run.sh"], tmp_path)
    d = diagnose(tmp_path, "./run.sh", res)
    assert d["kind"] == "permission-denied"
    assert "chmod +x ./run.sh" in d["fix"]


def test_diagnose_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        code = f"import socket; s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen()"
        res = failed([sys.executable, "-c", code], tmp_path)
    d = diagnose(tmp_path, "python3 server.py", res)
    assert d["kind"] == "port-in-use"
    assert d["frame"]["file"] == "<string>"


def test_diagnose_disk_full(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    res = failed(["bash", "-c", "echo data > /dev/full"], tmp_path)
    d = diagnose(tmp_path, "echo data > /dev/full", res)
    assert d["kind"] == "disk-full"
    assert "df -h" in d["fix"]


def test_diagnose_traceback_points_at_the_last_frame(tmp_path: Path) -> None:
    prog = tmp_path / "app.py"
    prog.write_text("def load(x):\n    return int(x)\n\n\nload('abc')\n", encoding="utf-8")
    res = failed([sys.executable, str(prog)], tmp_path)
    d = diagnose(tmp_path, "python3 app.py", res)
    assert d["kind"] == "python-exception"
    assert d["frame"] == {"file": str(prog), "line": 2, "function": "load"}
    assert d["exception"].startswith("ValueError: invalid literal for int()")


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=60
    )


def _repo(path: Path) -> Path:
    path.mkdir()
    assert _git(path, "init", "-q", "-b", "main").returncode == 0
    (path / "a.txt").write_text("one\n")
    _git(path, "add", "a.txt")
    assert _git(path, "commit", "-qm", "first").returncode == 0
    return path


def test_diagnose_git_rejected_push(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    assert _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin)).returncode == 0
    a = _repo(tmp_path / "a")
    _git(a, "push", "-q", str(origin), "main")
    b = tmp_path / "b"
    assert _git(tmp_path, "clone", "-q", str(origin), str(b)).returncode == 0
    for repo, text in ((a, "from a\n"), (b, "from b\n")):
        (repo / "a.txt").write_text(text)
        _git(repo, "commit", "-qam", text)
    assert _git(a, "push", "-q", str(origin), "main").returncode == 0
    res = _git(b, "push", str(origin), "main")
    assert res.returncode != 0
    d = diagnose(tmp_path, "git push origin main", res)
    assert d["kind"] == "git-non-fast-forward"
    assert "git pull --rebase" in d["fix"]


def test_diagnose_git_merge_conflict_printed_on_stdout(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    _git(repo, "checkout", "-qb", "other")
    (repo / "a.txt").write_text("other\n")
    _git(repo, "commit", "-qam", "other")
    _git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("main\n")
    _git(repo, "commit", "-qam", "main")
    res = _git(repo, "merge", "other")
    assert res.returncode != 0 and "CONFLICT" in res.stdout  # git reports it on stdout
    out = tmp_path / "stdout.txt"
    out.write_text(res.stdout)
    d = diagnose(tmp_path, "git merge other", res, "--stdout", str(out))
    assert d["kind"] == "git-merge-conflict"
    assert "a.txt" in d["cause"]


def test_diagnose_not_a_git_repository(tmp_path: Path) -> None:
    res = _git(tmp_path, "status")
    assert res.returncode != 0
    assert diagnose(tmp_path, "git status", res)["kind"] == "git-not-a-repository"


def test_diagnose_dns_failure_message() -> None:
    # Why: a real DNS failure needs the network; this is curl's exact wording.
    res = script(
        "error-recovery",
        "diagnose.py",
        "--command",
        "curl https://example.invalid",
        "--exit-code",
        "6",
        "--stderr",
        "-",
        stdin="curl: (6) Could not resolve host: example.invalid\n",
    )
    assert json.loads(res.stdout)["kind"] == "network-dns"


def test_diagnose_unknown_failure_quotes_the_error_line(tmp_path: Path) -> None:
    res = failed(
        [sys.executable, "-c", "import sys; sys.exit('frobnication failed: gear 3')"], tmp_path
    )
    d = diagnose(tmp_path, "frob", res)
    assert d["kind"] == "unknown" and d["confidence"] < 0.5
    assert "frobnication failed: gear 3" in d["cause"]


def test_diagnose_reads_stdin_and_keeps_chinese(tmp_path: Path) -> None:
    res = script(
        "error-recovery",
        "diagnose.py",
        "--command",
        "cat 报告.txt",
        "--exit-code",
        "1",
        "--stderr",
        "-",
        stdin=failed(["cat", "报告.txt"], tmp_path).stderr,
    )
    assert "报告.txt" in json.loads(res.stdout)["cause"]


@pytest.mark.parametrize(
    "args",
    [
        ["--command", "x", "--exit-code", "1", "--stderr", "no/such/file.txt"],
        ["--command", "x", "--exit-code", "0", "--stderr", "-"],
        ["--command", "x", "--exit-code", "one", "--stderr", "-"],
    ],
)
def test_diagnose_bad_input_is_one_line(args: list[str]) -> None:
    one_error_line(script("error-recovery", "diagnose.py", *args, stdin=""), "diagnose.py")


# --------------------------------------------------------------------- plugin-creator
def test_plugin_creator_scaffolds_a_project_that_parses_and_passes_its_test(tmp_path: Path) -> None:
    import ast
    import tomllib

    res = script(
        "plugin-creator",
        "new_mcp_server.py",
        "word-tools",
        "--dir",
        str(tmp_path),
        "--description",
        'Count "words" in 中文 text \\ fast',
    )
    assert res.returncode == 0, res.stderr
    root = tmp_path / "word-tools"
    assert res.stdout.startswith(f"wrote {root}")
    for rel in ("pyproject.toml", "README.md", "src/word_tools/server.py", "tests/test_tools.py"):
        assert (root / rel).is_file(), rel
    for py in root.rglob("*.py"):
        ast.parse(py.read_text(encoding="utf-8"), filename=str(py))
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["description"] == 'Count "words" in 中文 text \\ fast'
    assert project["dependencies"] == ["mcp>=2,<3"]
    assert project["scripts"] == {"word-tools": "word_tools.server:main"}
    server = (root / "src/word_tools/server.py").read_text(encoding="utf-8")
    assert "from mcp.server.mcpserver import MCPServer" in server
    # The generated test runs against the generated tools (no mcp needed for them).
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


@pytest.mark.parametrize(
    "name", ["Word-Tools", "-tools", "tools-", "a--b", "../evil", "1tools", "x" * 65]
)
def test_plugin_creator_refuses_a_bad_name(tmp_path: Path, name: str) -> None:
    res = script("plugin-creator", "new_mcp_server.py", "--dir", str(tmp_path), "--", name)
    assert "invalid name" in one_error_line(res, "new_mcp_server.py")
    assert list(tmp_path.iterdir()) == []


def test_plugin_creator_does_not_overwrite(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "mine.txt").write_text("keep")
    res = script("plugin-creator", "new_mcp_server.py", "tools", "--dir", str(tmp_path))
    assert "--force" in one_error_line(res, "new_mcp_server.py")
    assert [p.name for p in (tmp_path / "tools").iterdir()] == ["mine.txt"]


# ----------------------------------------------------------- install-skill-dependency
def make_skill(
    parent: Path, name: str, description: str, packages: str | None = None, body: str = ""
) -> Path:
    folder = parent / name
    folder.mkdir(parents=True)
    meta = f'metadata:\n  python-packages: "{packages}"\n' if packages is not None else ""
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{meta}---\n\n# {name}\n\n{body}\n",
        encoding="utf-8",
    )
    return folder


def clean_env(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HEARTH_", "OPENAI_", "ANTHROPIC_"))
    }
    return env | {"HEARTH_HOME": str(home)}


def test_install_dependency_dry_run_prints_the_pip_command(tmp_path: Path) -> None:
    folder = make_skill(
        tmp_path, "needs-things", "Needs packages.", "pyyaml>=5 nosuchpkg-wh-test>=1,<2"
    )
    res = script("install-skill-dependency", "install_deps.py", str(folder), "--dry-run")
    assert res.returncode == 0, res.stderr
    assert "already installed: pyyaml>=5" in res.stdout
    assert f"would run: {sys.executable} -m pip install 'nosuchpkg-wh-test>=1,<2'" in res.stdout
    plan = json.loads(
        script("install-skill-dependency", "install_deps.py", str(folder), "--json").stdout
    )
    assert plan["missing"] == ["nosuchpkg-wh-test>=1,<2"]
    assert plan["command"] == [sys.executable, "-m", "pip", "install", "nosuchpkg-wh-test>=1,<2"]


def test_install_dependency_finds_an_installed_skill_by_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_skill(home / "skills", "needs-things", "Needs packages.", "nosuchpkg-wh-test")
    res = script(
        "install-skill-dependency",
        "install_deps.py",
        "needs-things",
        "--dry-run",
        cwd=tmp_path,
        env=clean_env(home),
    )
    assert res.returncode == 0, res.stderr
    assert "-m pip install nosuchpkg-wh-test" in res.stdout
    missing = script(
        "install-skill-dependency",
        "install_deps.py",
        "no-such-skill",
        cwd=tmp_path,
        env=clean_env(home),
    )
    assert "no-such-skill" in one_error_line(missing, "install_deps.py")


@pytest.mark.parametrize(
    "bad",
    [
        "--index-url=https://evil.example/simple",
        "evil@https://evil.example/evil.whl",
        "https://evil.example/pkg.tar.gz",
        "./vendor/pkg",
        "/opt/pkg",
        "pkg-1.0-py3-none-any.whl",
        "bad!!name",
    ],
)
def test_install_dependency_refuses_what_is_not_a_package_name(tmp_path: Path, bad: str) -> None:
    folder = make_skill(tmp_path, "sneaky", "Sneaky.", f"pyyaml {bad}")
    res = script("install-skill-dependency", "install_deps.py", str(folder), "--dry-run")
    assert "refused" in one_error_line(res, "install_deps.py")
    assert "would run" not in res.stdout


def test_install_dependency_without_terminal_or_yes_refuses(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "needs-things", "Needs packages.", "nosuchpkg-wh-test")
    res = script("install-skill-dependency", "install_deps.py", str(folder), stdin="y\n")
    line = one_error_line(res, "install_deps.py")
    assert "without confirmation" in line and "--yes" in line


def test_install_dependency_nothing_declared(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "plain", "Plain.")
    res = script("install-skill-dependency", "install_deps.py", str(folder))
    assert res.returncode == 0 and "declares no Python packages" in res.stdout


# ---------------------------------------------------------------------- find-skills
def find(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return script("find-skills", "find_skills.py", *args, cwd=cwd, env=clean_env(home))


def test_find_skills_in_chinese_and_english_ranked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    make_skill(home / "skills", "report-writer", "把 Markdown 转换成 Word 文档，并加上目录。")
    make_skill(
        home / "skills", "sheet-helper", "Spreadsheet helper.", body="可以把表格导出成文档的附件。"
    )
    make_skill(home / "skills", "unrelated", "Nothing to do with it.")
    found = json.loads(find(home, tmp_path, "文档", "--json").stdout)
    mine = [r for r in found if r["source"] == "user"]  # built-in skills may say 文档 too
    assert [r["name"] for r in mine] == ["report-writer", "sheet-helper"]  # description beats body
    assert mine[0]["matched"] == ["文档"] and mine[0]["score"] > mine[1]["score"]
    # Chinese without spaces: 生成文档 matches through its pieces.
    assert "report-writer" in find(home, tmp_path, "生成文档").stdout
    text = find(home, tmp_path, "word", "目录")
    assert text.returncode == 0 and text.stdout.startswith("report-writer (user,")


def test_find_skills_honours_precedence_and_marks_broken(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # A user skill named like a built-in one wins over it.
    make_skill(home / "skills", "error-recovery", "My own failure helper.")
    broken = home / "skills" / "half-done"
    broken.mkdir(parents=True)
    # No description: nothing tells the model when to use it (a name unlike its folder would load).
    (broken / "SKILL.md").write_text("---\nname: half-done\n---\nfailure notes\n")
    found = json.loads(find(home, tmp_path, "failure", "--json").stdout)
    by_name = {r["name"]: r for r in found}
    assert by_name["error-recovery"]["source"] == "user"
    assert by_name["half-done"]["status"] == "broken" and by_name["half-done"]["problems"]
    assert [r["name"] for r in found].index("half-done") > [r["name"] for r in found].index(
        "error-recovery"
    )
    # Built-in skills are found too.
    assert "install-skill-dependency" in find(home, tmp_path, "ModuleNotFoundError").stdout


def test_find_skills_bad_input(tmp_path: Path) -> None:
    assert "nothing to search" in one_error_line(find(tmp_path, tmp_path, "!!"), "find_skills.py")
    assert "--limit" in one_error_line(
        find(tmp_path, tmp_path, "x", "--limit", "0"), "find_skills.py"
    )
    none = find(tmp_path, tmp_path, "zzzqqq-nothing")
    assert none.returncode == 0 and "no skill matches" in none.stdout


# --------------------------------------------------------------------- create-skill
def test_create_skill_from_description_validates_and_renders(tmp_path: Path) -> None:
    from workhearth.skills.metadata import read_examples, render
    from workhearth.skills.validate import validate

    res = script(
        "create-skill",
        "draft_skill.py",
        "weekly-report",
        "--description",
        'Write the weekly report: "done", next, 风险 — from the notes folder.',
        "--dir",
        str(tmp_path),
    )
    assert res.returncode == 0, res.stderr
    folder = tmp_path / "weekly-report"
    assert validate(folder) == []
    examples, problems = read_examples(folder)
    assert problems == [] and examples[0].id == "weekly-report"
    assert examples[0].title["zh"] and examples[0].description["zh"] == (
        'Write the weekly report: "done", next, 风险 — from the notes folder.'
    )
    assert "{{target}}" in examples[0].prompt
    assert "notes/2026-w48.md" in render(examples[0], {"target": "notes/2026-w48.md"})
    assert "python-packages" in (folder / "SKILL.md").read_text(encoding="utf-8")
    # No overwrite without --force; bad names refused.
    again = script(
        "create-skill",
        "draft_skill.py",
        "weekly-report",
        "--description",
        "x",
        "--dir",
        str(tmp_path),
    )
    assert "--force" in one_error_line(again, "draft_skill.py")
    bad = script(
        "create-skill",
        "draft_skill.py",
        "Weekly_Report",
        "--description",
        "x",
        "--dir",
        str(tmp_path),
    )
    assert "invalid name" in one_error_line(bad, "draft_skill.py")
    nodesc = script("create-skill", "draft_skill.py", "other", "--dir", str(tmp_path))
    assert "--description" in one_error_line(nodesc, "draft_skill.py")


def test_create_skill_from_session_keeps_what_worked(tmp_path: Path) -> None:
    from workhearth import Workhearth
    from workhearth.skills.validate import validate

    home = tmp_path / "home"
    wh = Workhearth(home=home, workspace=tmp_path)
    s = wh.sessions.create(model="openai:test")
    token = "sk-proj-" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"
    s.append_message(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": f"Turn notes.md into a Word report (key {token})"}
            ],
        }
    )
    s.append_message(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "c1",
                    "name": "shell",
                    "input": {"command": "pandoc notes.md -o r.docx"},
                },
                {
                    "type": "tool_use",
                    "id": "c2",
                    "name": "shell",
                    "input": {"command": "python md_to_docx.py notes.md -o 报告.docx"},
                },
            ],
        }
    )
    s.append_message(
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c1",
                    "content": "pandoc: command not found",
                    "is_error": True,
                },
                {"type": "tool_result", "tool_use_id": "c2", "content": "wrote 报告.docx"},
            ],
        }
    )
    s.append_message(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "c3",
                    "name": "write_file",
                    "input": {"path": "README.md", "content": "x"},
                }
            ],
        }
    )
    s.append_message(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c3", "content": "ok"}]}
    )
    # An interrupted call (no result) did not work either.
    s.append_message(
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "c4",
                    "name": "shell",
                    "input": {"command": "rm -rf build"},
                }
            ],
        }
    )
    s.close()

    res = script(
        "create-skill",
        "draft_skill.py",
        "--from-session",
        s.id[:15],
        cwd=tmp_path,
        env=clean_env(home),
    )
    assert res.returncode == 0, res.stderr
    folder = (
        home / "skills" / "turn-notes-md-word"
    )  # default --dir: $HEARTH_HOME/skills; name from the prompt
    assert validate(folder) == []
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    steps = text.split("## Steps")[1].split("##")[0]
    assert "1. Run `python md_to_docx.py notes.md -o 报告.docx`" in steps
    assert "2. Write `README.md`" in steps
    assert "pandoc" not in steps and "rm -rf" not in steps
    assert "Turn notes.md into a Word report" in text
    assert token not in text and token not in (folder / ".skill-metadata.yaml").read_text(
        encoding="utf-8"
    )
    # hearth itself lists it as a usable user skill.
    listed = json.loads(find(home, tmp_path, "notes", "--json").stdout)
    assert any(r["name"] == "turn-notes-md-word" and r["status"] == "ok" for r in listed)

    missing = script(
        "create-skill",
        "draft_skill.py",
        "--from-session",
        "20990101-000000-ffff",
        env=clean_env(home),
    )
    assert "no session" in one_error_line(missing, "draft_skill.py")


# ------------------------------------------------------------------- hearth-guidance
def test_guide_lists_topics_and_prints_one() -> None:
    listing = script("hearth-guidance", "guide.py")
    assert listing.returncode == 0
    for topic in ("modes", "sessions", "memory", "skills", "trash", "audit", "quest"):
        assert listing.stdout.count(f"\n{topic} ") + listing.stdout.startswith(f"{topic} ") == 1, (
            topic
        )
    quest = script("hearth-guidance", "guide.py", "quest")
    assert quest.returncode == 0 and "bubblewrap" in quest.stdout
    assert "no topic 'nope'" in one_error_line(
        script("hearth-guidance", "guide.py", "nope"), "guide.py"
    )


def test_every_hearth_command_the_guidance_mentions_exists() -> None:
    """Walk the real CLI's command tree for each `hearth …` the skill's files name."""
    import re

    import typer

    from workhearth.main import app

    root = typer.main.get_command(app)
    folder = BUILTIN / "hearth-guidance"
    texts = [(folder / "SKILL.md").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in sorted((folder / "references").glob("*.md"))]
    mentions = [m for text in texts for m in re.findall(r"`(hearth(?: [^`]*)?)`", text)]
    assert len(mentions) > 30
    wrong = []
    for mention in mentions:
        node, path = root, ["hearth"]
        words = mention.split()[1:]
        i = 0
        while i < len(words):
            word = words[i]
            if word.startswith("-"):
                option = word.split("=")[0]
                param = next((p for p in node.params if option in p.opts), None)
                if param is None:
                    wrong.append(f"{mention}: {' '.join(path)} has no {option}")
                    break
                if not getattr(param, "is_flag", False) and "=" not in word:
                    i += 1  # its value
            elif hasattr(node, "commands"):  # a group: the word must be one of its commands
                if word not in node.commands:
                    wrong.append(f"{mention}: no command {' '.join([*path, word])}")
                    break
                node = node.commands[word]
                path.append(word)
            i += 1  # otherwise an argument of the command
    assert not wrong, wrong


@pytest.mark.parametrize("name", META)
def test_meta_skill_validates_with_a_bilingual_example(name: str) -> None:
    from workhearth.skills.metadata import read_examples
    from workhearth.skills.validate import validate

    folder = BUILTIN / name
    assert validate(folder) == []
    examples, _ = read_examples(folder)
    assert name in [e.id for e in examples]
    for e in examples:
        assert e.title.keys() >= {"zh", "en"} and e.description.keys() >= {"zh", "en"}
        assert "{{" in e.prompt
    for py in (folder / "scripts").glob("*.py"):
        if "__main__" not in py.read_text(encoding="utf-8"):
            continue  # a data module (error-recovery's rules.py), not a command
        res = subprocess.run(
            [sys.executable, str(py), "--help"], capture_output=True, text=True, timeout=60
        )
        assert res.returncode == 0 and "usage:" in res.stdout, py
