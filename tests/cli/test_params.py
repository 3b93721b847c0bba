"""Plain options are read without pydantic; everything else keeps Typer's own checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD
from workhearth.cli.params import _plain_value

_PROBE = """
import sys
from workhearth.main import run
code = run(sys.argv[1:])
print("pydantic" in sys.modules, code)
"""


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
    return {**env, "HEARTH_HOME": str(tmp_path / "home")}


@pytest.mark.parametrize(
    "argv",
    [
        ["memory", "search", "gecko", "--limit", "3"],
        ["memory", "save", "A gecko lives here.", "--tag", "a", "--tag", "b", "--level", "low"],
        ["--model", "openai:x", "memory", "list", "--limit", "5"],
    ],
)
def test_memory_commands_do_not_import_pydantic(tmp_path: Path, argv: list[str]) -> None:
    # Why: Typer's pydantic checks cost ~70 ms of a 0.25 s budget (bench/memory_cli.py).
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.splitlines()[-1] == "False 0", proc.stderr


@pytest.mark.parametrize(
    "argv,message",
    [
        (["memory", "search", "x", "--limit", "abc"], "Input should be a valid integer"),
        (["memory", "search", "x", "--limit", "1.5"], "Input should be a valid integer"),
        (["audit", "--limit", "0"], "greater than or equal to 1"),
    ],
)
def test_values_that_are_not_plain_get_typers_own_message(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    proc = subprocess.run(
        [*HEARTH_CMD, *argv],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_saved_tags_and_limits_read_as_before(tmp_path: Path) -> None:
    env = _env(tmp_path)
    run = [*HEARTH_CMD, "memory"]
    kw = {"cwd": tmp_path, "env": env, "capture_output": True, "text": True, "timeout": 60}
    saved = subprocess.run([*run, "save", "The gecko naps.", "--tag", "x", "--tag", "y"], **kw)
    assert saved.returncode == 0, saved.stderr
    listed = subprocess.run([*run, "list", "--tag", "y", "--limit", "007"], **kw)
    assert listed.returncode == 0 and "gecko" in listed.stdout and "x y" in listed.stdout


@pytest.mark.parametrize(
    "annotation,value,expected",
    [
        (str, "text", (True, "text")),
        (int, "42", (True, 42)),
        (int, "-3", (True, -3)),
        (int, 6, (True, 6)),
        (bool, True, (True, True)),
        (list[str], ("a", "b"), (True, ["a", "b"])),
        # not plainly valid: left to Typer (and pydantic)
        (int, "007", (False, None)),
        (int, "+5", (False, None)),
        (int, "٣", (False, None)),
        (int, "1" * 19, (False, None)),
        (int, True, (False, None)),
        (str, b"bytes", (False, None)),
        (list[str], ("a", 1), (False, None)),
    ],
)
def test_only_plainly_valid_values_skip_typers_check(
    annotation: object, value: object, expected: tuple[bool, object]
) -> None:
    assert _plain_value(annotation, value) == expected


def test_a_bound_of_zero_is_still_checked(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*HEARTH_CMD, "trash", "empty", "--older-than", "-1", "--yes"],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "greater than or equal to 0" in proc.stderr
