"""Issue #18 item 10: ``.ci/run`` takes LibreOffice's ``-nogui`` packages for the
ones it needs (apt refuses ``libreoffice-writer`` beside ``libreoffice-writer-nogui``).

The real script runs on a copy, in a temporary folder, with ``dpkg``, ``apt-get`` and
``python3`` stubbed on ``PATH``: the stub ``python3`` stops it right after the
package step, so nothing is installed and no virtualenv is touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OFFICE = ("libreoffice-writer", "libreoffice-calc", "libreoffice-impress")


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def apt_installs(tmp_path: Path, installed: set[str]) -> list[str]:
    """The packages ``.ci/run`` asks apt to install on a machine that has ``installed``
    (every package it needs that is not LibreOffice is taken as installed)."""
    clone = tmp_path / "clone"
    (clone / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "run", clone / ".ci" / "run")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "apt.log"
    known = " ".join(sorted(installed))
    _stub(
        stubs,
        "dpkg",
        f'case "$2" in libreoffice-*) case " {known} " in *" $2 "*) exit 0;; esac; exit 1;; esac',
    )
    _stub(stubs, "apt-get", f'echo "$@" >> "{log}"')
    _stub(stubs, "python3", "exit 97")  # Why: the step after the packages; stop there
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", str(clone / ".ci" / "run")], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 97, proc.stderr  # it reached the step after the packages
    lines = log.read_text().splitlines() if log.exists() else []
    return [word for line in lines if " install " in f" {line} " for word in line.split()[1:]]


@pytest.mark.parametrize(
    "installed",
    [set(OFFICE), {f"{p}-nogui" for p in OFFICE}, {OFFICE[0] + "-nogui", *OFFICE[1:]}],
    ids=["full", "nogui", "mixed"],
)
def test_either_variant_of_libreoffice_is_enough(tmp_path: Path, installed: set[str]) -> None:
    assert not set(apt_installs(tmp_path, installed)) & set(OFFICE)


def test_a_missing_libreoffice_is_still_installed(tmp_path: Path) -> None:
    wanted = apt_installs(tmp_path, {"libreoffice-calc-nogui"})
    assert "libreoffice-writer" in wanted and "libreoffice-impress" in wanted
    assert "libreoffice-calc" not in wanted
