"""``hearth doctor``'s browser line (issue 25), through the real command."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD

CHROMIUM = Path("/usr/bin/chromium")


def doctor(
    tmp_path: Path, *args: str, config: str = "", **extra: str
) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    if config:
        (home / "config.toml").write_text(config)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "HEARTH_"))
    }
    env.update(HEARTH_HOME=str(home), **extra)
    return subprocess.run(
        [*HEARTH_CMD, "doctor", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip


def browser_line(done: subprocess.CompletedProcess) -> str:
    (line,) = [row for row in done.stdout.splitlines() if row.startswith("browser ")]
    return line


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_doctor_names_the_browser_it_found(tmp_path: Path) -> None:
    done = doctor(tmp_path, PATH="/usr/local/bin:/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    assert browser_line(done) == f"browser     {CHROMIUM} (on PATH), headless"
    report = json.loads(doctor(tmp_path, "--json", PATH="/usr/bin").stdout)["browser"]
    assert report["path"] == str(CHROMIUM) and report["found_by"] == "on PATH"


def test_doctor_names_the_configured_browser_and_says_when_it_cannot_run(tmp_path: Path) -> None:
    mine = tmp_path / "my-chrome"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)
    done = doctor(tmp_path, config=f'[browser]\nexecutable = "{mine}"\nheadless = false\n')
    assert done.returncode == 0, done.stderr
    assert f"{mine} ([browser] executable), on screen" in browser_line(done)
    gone = tmp_path / "gone"
    done = doctor(tmp_path, config=f'[browser]\nexecutable = "{gone}"\n')
    assert f"[browser] executable {str(gone)!r} is not a program that can run" in browser_line(done)


def test_a_wrong_browser_table_is_one_line_and_doctor_goes_on(tmp_path: Path) -> None:
    done = doctor(tmp_path, config="[browser]\nheadless = 3\n")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"hearth: the config is broken: {tmp_path / 'home' / 'config.toml'}: "
        "[browser] headless must be true or false"
    ]
    assert browser_line(done).startswith("browser ")


def test_a_bad_allow_entry_is_named_by_doctor_and_stops_a_run_before_its_session(
    tmp_path: Path,
) -> None:
    config = '[browser]\nallow = ["intranet.test", "10.0.0.0/33"]\n'
    words = "[browser] allow: '10.0.0.0/33' is not an address block"
    checked = doctor(tmp_path, "--json", config=config)
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["browser"]["allow_problem"].startswith(words)
    assert words in browser_line(doctor(tmp_path))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEARTH_"))}
    env.update(
        HEARTH_HOME=str(tmp_path / "home"),
        HEARTH_MODEL="openai:gpt-test",
        OPENAI_API_KEY="sk-test-dummy",
        OPENAI_BASE_URL="http://127.0.0.1:9/v1",  # never reached: the run stops first
    )
    ran = subprocess.run(
        [*HEARTH_CMD, "run", "hello", "--mode", "agent"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert ran.returncode == 1
    assert ran.stderr.strip().splitlines() == [f"hearth: {words}; write one as 10.0.0.0/8, "
                                               "192.168.1.0/24:8080 or fd00::/8"]  # fmt: skip
    assert not (tmp_path / "home" / "projects").exists()  # no session was made
