"""Issue #18 item 8 through the real ``hearth run --mode quest``: skill scripts run confined.

Quest mounts a private ``/tmp``; when hearth's home (and so the user's installed
skills) or hearth's own interpreter lie under the host's ``/tmp`` — pytest's
``tmp_path`` does — the command the activation header tells the model to run
(hearth's Python on the skill's script) must still find both, read-only.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, Result
from tests.e2e.test_agent_run import Agent, calls_reply, text_reply, tool_results, write_config
from tests.e2e.test_agent_skills import SHOUT_MD, SHOUT_SCRIPT
from tests.fake_providers import FakeProvider
from workhearth.shell.sandbox import sandbox_status

API = "openai"
STATUS = sandbox_status()
needs_bwrap = pytest.mark.skipif(not STATUS.available, reason=STATUS.message)


@pytest.fixture
def hearth_in_tmp(hearth: Hearth) -> Hearth:
    if not str(hearth.home).startswith("/tmp/"):
        pytest.skip("pytest's tmp_path is not under /tmp here (TMPDIR is set elsewhere)")
    write_config(hearth)
    (hearth.workspace / "note.txt").write_text("quiet words\n")
    return hearth


def user_skill(hearth: Hearth) -> Path:
    """The ``shout`` skill installed for the user, in ``$HEARTH_HOME/skills`` (under /tmp)."""
    folder = hearth.home / "skills" / "shout"
    (folder / "scripts").mkdir(parents=True)
    (folder / "SKILL.md").write_text(SHOUT_MD)
    (folder / "scripts" / "shout.py").write_text(SHOUT_SCRIPT)
    return folder


def quest(
    hearth: Hearth, python: str, folder: Path, command: list[str] | None = None
) -> tuple[Result, dict[str, tuple[str, bool | None]]]:
    """A quest whose model activates ``shout``, runs its script with ``python``, then
    tries to change the skill; ``command`` is how hearth itself is started."""
    script = shlex.join(
        [python, str(folder / "scripts" / "shout.py"), "note.txt", "-o", "loud.txt"]
    )
    replies = [
        calls_reply(API, ("call_a", "activate_skill", {"name": "shout"})),
        calls_reply(API, ("call_s", "shell", {"command": script})),
        calls_reply(API, ("call_w", "shell", {"command": f"echo x >> '{folder}/SKILL.md'"})),
        text_reply(API, "Done."),
    ]
    with FakeProvider(replies) as fake:
        agent = Agent(hearth, API, fake)
        proc = subprocess.run(
            [*(command or HEARTH_CMD), "run", "--mode", "quest", "shout note.txt"],
            cwd=hearth.workspace,
            env=agent.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
    result = Result(proc.returncode, proc.stdout, proc.stderr)
    return result, tool_results(API, fake.bodies[-1]) if fake.bodies else {}


def assert_script_ran(hearth: Hearth, folder: Path, result: Result, texts: dict) -> None:
    assert result.code == 0, result.err
    assert "bubblewrap" not in result.err  # it was confined, not let through unconfined
    activated, _ = texts["call_a"]
    assert f"Folder: {folder}" in activated
    out, _ = texts["call_s"]
    assert out.startswith("exit code 0"), out
    assert "wrote loud.txt" in out
    assert (hearth.workspace / "loud.txt").read_text() == "QUIET WORDS\n"
    # Bound back read-only: the skill cannot be changed from a quest.
    changed, _ = texts["call_w"]
    assert not changed.startswith("exit code 0"), changed
    assert (folder / "SKILL.md").read_text() == SHOUT_MD


@needs_bwrap
def test_a_quest_runs_a_user_skill_script_when_hearth_home_is_under_tmp(
    hearth_in_tmp: Hearth,
) -> None:
    folder = user_skill(hearth_in_tmp)
    result, texts = quest(hearth_in_tmp, sys.executable, folder)
    assert_script_ran(hearth_in_tmp, folder, result, texts)


@pytest.fixture
def venv_in_tmp(tmp_path: Path) -> Path:
    """A venv under /tmp that sees this checkout's packages: hearth's interpreter in /tmp."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    ours = sysconfig.get_paths()["purelib"]
    (site / "_hearth_checkout.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return venv


@needs_bwrap
def test_a_quest_runs_skill_scripts_with_hearths_own_interpreter_under_tmp(
    hearth_in_tmp: Hearth, venv_in_tmp: Path
) -> None:
    folder = user_skill(hearth_in_tmp)
    python = str(venv_in_tmp / "bin" / "python")
    hearth_cmd = [python, "-m", "workhearth"]
    result, texts = quest(hearth_in_tmp, python, folder, hearth_cmd)
    # The activation header names this interpreter: it is hearth's own.
    assert f"{python} " in texts["call_a"][0] or shlex.quote(python) in texts["call_a"][0]
    assert_script_ran(hearth_in_tmp, folder, result, texts)
