"""Shell fixtures: a temporary HOME with rc files, and real bash and zsh."""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from workhearth.paths import HearthPaths

BASH = shutil.which("bash")
ZSH = shutil.which("zsh")
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass
class UserShell:
    """A user's account as the shell sees it: HOME, rc files, and the environment."""

    home: Path
    workspace: Path
    paths: HearthPaths
    shell: str

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home), "PATH": PLAIN_PATH, "SHELL": self.shell, "LANG": "C.UTF-8"}

    def rc(self, text: str) -> None:
        name = ".zshrc" if self.shell.endswith("zsh") else ".bashrc"
        (self.home / name).write_text(textwrap.dedent(text))


def _user(tmp_path: Path, shell: str | None) -> UserShell:
    if shell is None:
        pytest.skip("zsh is not installed (apt-get install zsh)")
    home = tmp_path / "home dir"  # a space, to catch quoting mistakes
    workspace = tmp_path / "work space"
    home.mkdir()
    workspace.mkdir()
    return UserShell(home, workspace, HearthPaths(tmp_path / "hearth"), shell)


@pytest.fixture
def bash_user(tmp_path: Path) -> UserShell:
    assert BASH is not None
    return _user(tmp_path, BASH)


@pytest.fixture
def zsh_user(tmp_path: Path) -> UserShell:
    return _user(tmp_path, ZSH)


@pytest.fixture(params=["bash", "zsh"])
def any_user(request: pytest.FixtureRequest, tmp_path: Path) -> UserShell:
    return _user(tmp_path, BASH if request.param == "bash" else ZSH)
