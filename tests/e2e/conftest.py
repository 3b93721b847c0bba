"""Whole-program fixtures: the real ``hearth`` command in a temporary ``HEARTH_HOME``.

Sessions are seeded through the library (``load_config`` + ``SessionStore``), then
checked through the CLI, run as a subprocess exactly as a user runs it.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest

from workhearth.config import load_config
from workhearth.sessions.store import SessionStore

_SCRIPT = shutil.which("hearth", path=Path(sys.executable).parent)
HEARTH_CMD = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "workhearth"]
# Why: a model or key in the developer's shell must not leak into what we test.
_SCRUBBED_PREFIXES = ("OPENAI_", "ANTHROPIC_", "HEARTH_")
_mtimes = itertools.count(1)


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return [line for line in self.err.splitlines() if line.strip()]

    def json(self) -> Any:
        assert self.code == 0, f"exit {self.code}: {self.err}"
        return orjson.loads(self.out)


def text(role: str, body: str) -> dict[str, Any]:
    """A canonical message holding one text block."""
    return {"role": role, "content": [{"type": "text", "text": body}]}


def chat(n: int, tag: str = "msg") -> list[dict[str, Any]]:
    """``n`` alternating user/assistant messages whose text is ``{tag}-{i}``."""
    return [text("user" if i % 2 == 0 else "assistant", f"{tag}-{i}") for i in range(n)]


@dataclass
class Hearth:
    """One isolated home plus a workspace folder and a second, unrelated folder."""

    home: Path
    workspace: Path
    elsewhere: Path
    env: dict[str, str] = field(repr=False)

    def run(
        self,
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        input: str | None = None,
    ) -> Result:
        proc = subprocess.run(
            [*HEARTH_CMD, *args],
            cwd=cwd or self.workspace,
            env={**self.env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def json(self, *args: str, **kw: Any) -> Any:
        return self.run(*args, "--json", **kw).json()

    def store(self, workspace: Path | None = None, env: dict[str, str] | None = None):
        config = load_config({"HEARTH_HOME": str(self.home), **(env or {})})
        return SessionStore(config, workspace or self.workspace)

    def seed(
        self,
        messages: list[dict[str, Any]],
        *,
        title: str | None = None,
        workspace: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> str:
        """Write a session through the library; each seeded session is newer than the last."""
        session = self.store(workspace, env).create(model="openai:test-model")
        with session:
            for msg in messages:
                session.append_message(msg)
            if title:
                session.append("title", {"title": title})
            session.turn_end()
        # Why: "newest first" is by file time, whose clock ticks coarsely; make the order explicit.
        stamp = time.time() + next(_mtimes)
        os.utime(session.transcript, (stamp, stamp))
        return session.id

    def session_dir(self, session_id: str) -> Path:
        (folder,) = self.home.glob(f"projects/*/sessions/{session_id}")
        return folder

    def transcript(self, session_id: str) -> Path:
        return self.session_dir(session_id) / "transcript.jsonl"


def make_hearth(root: Path) -> Hearth:
    for name in ("workspace", "elsewhere"):
        (root / name).mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED_PREFIXES)}
    env["HEARTH_HOME"] = str(root / "home")
    return Hearth(root / "home", root / "workspace", root / "elsewhere", env)


def tree_digest(root: Path) -> dict[str, str]:
    """Every file (by content hash) and folder under ``root``, to prove nothing changed."""
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): "dir"
        if p.is_dir()
        else hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def hearth(tmp_path: Path) -> Hearth:
    return make_hearth(tmp_path / "one")


@pytest.fixture
def hearth2(tmp_path: Path) -> Hearth:
    """A second, separate install (another machine, for bundles)."""
    return make_hearth(tmp_path / "two")
