"""The live status line of ``hearth run`` in a terminal (#19 item 3, terminal half).

While the model is waited on and while a command runs, a real terminal (tmux) shows
what runs and for how long; it is erased before the task's own output and gone at the
end. Into a pipe nothing of it is written: the output stays exactly what it was.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth
from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text, openai_tool_calls

TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")
THINKING = re.compile(r"thinking… (\d+)s")
RUNNING = re.compile(r"running shell: sleep 3… (\d+)s")
TASK = "wait a little"


def script(model_delay: float, sleep: str = "sleep 3") -> list[Reply]:
    """A slow first reply asking for ``sleep``, then a short answer."""
    call = openai_tool_calls([("call_1", "shell", ['{"command": ', f'"{sleep}"', "}"])])
    return [
        Reply(pieces=openai_sse(call), delay=model_delay),
        Reply(pieces=openai_sse(openai_text(["All ", "done."]))),
    ]


def model_env(hearth: Hearth, fake: FakeProvider) -> dict[str, str]:
    hearth.home.mkdir(parents=True, exist_ok=True)
    (hearth.home / "config.toml").write_text("[models]\nmax_retries = 0\n")
    env = {
        **hearth.env,
        "OPENAI_BASE_URL": fake.url,
        "OPENAI_API_KEY": "sk-test-dummy",
        "HEARTH_MODEL": "openai:qwen-plus",
    }
    env.pop("COLUMNS", None)  # (pytest-xdist sets it; a terminal has its own width)
    return env


# --------------------------------------------------------------------------- a terminal


class Pane:
    """One tmux pane on a private server, running one command."""

    def __init__(self, command: str, env: dict[str, str], cwd: Path) -> None:
        # Why a folder of its own: a short socket path, removed with the server.
        self.folder = Path(tempfile.mkdtemp(prefix="hearth-tmux-"))
        self.socket = str(self.folder / "socket")
        self.env = {**env, "TERM": "xterm-256color"}
        self.env.pop("TMUX", None)
        self.tmux("new-session", "-d", "-s", "t", "-x", "120", "-y", "30", "-c", str(cwd), command)

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX or "tmux", "-S", self.socket, "-f", "/dev/null", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def wait_for(self, pattern: re.Pattern[str], timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.search(self.screen())
            if found:
                return found
            time.sleep(0.1)
        raise AssertionError(f"{pattern.pattern!r} never showed; the screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(
            [TMUX or "tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=10
        )
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def pane_for(hearth: Hearth) -> Iterator[object]:
    panes: list[Pane] = []

    def make(env: dict[str, str]) -> Pane:
        hearth_cmd = shlex.join([*HEARTH_CMD, "run", "--yes", TASK])
        # Why `read`: the pane stays open after hearth ends, so its last screen can be read.
        command = f"{hearth_cmd}; echo EXIT=$?; read -r _"
        pane = Pane(command, env, hearth.workspace)
        panes.append(pane)
        return pane

    yield make
    for pane in panes:
        pane.close()


@needs_tmux
def test_a_terminal_shows_what_runs_and_for_how_long(hearth: Hearth, pane_for) -> None:
    with FakeProvider(script(model_delay=3.0)) as fake:
        pane = pane_for(model_env(hearth, fake))
        first = pane.wait_for(THINKING, timeout=20)
        later = pane.wait_for(re.compile(r"thinking… ([2-9])s"), timeout=10)
        assert int(later.group(1)) > int(first.group(1))  # the elapsed time counts up
        running = pane.wait_for(RUNNING, timeout=20)
        again = pane.wait_for(re.compile(r"running shell: sleep 3… ([2-9])s"), timeout=10)
        assert int(again.group(1)) > int(running.group(1))
        end = pane.wait_for(re.compile(r"EXIT=(\d+)"), timeout=30)
        screen = pane.screen()
    assert end.group(1) == "0", screen
    assert "[shell sleep 3] ok" in screen and "All done." in screen
    # Erased, not left behind: no trace of the status line on the final screen.
    assert not THINKING.search(screen) and "running shell" not in screen, screen
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-3:] == ["[shell sleep 3] ok", "All done.", "EXIT=0"], screen


@needs_tmux
def test_the_status_line_gives_way_to_streamed_text(hearth: Hearth, pane_for) -> None:
    slow_text = openai_sse(openai_text(["First line.\n", "Second ", "line."]))
    # a pause mid-stream after a whole line: the status may show, then the text goes on
    pieces: list[bytes | float] = [*slow_text[:2], 2.5, *slow_text[2:]]
    with FakeProvider([Reply(pieces=pieces)]) as fake:
        pane = pane_for(model_env(hearth, fake))
        pane.wait_for(re.compile(r"First line\.\n.*thinking… \d+s", re.S), timeout=20)
        pane.wait_for(re.compile(r"EXIT=0"), timeout=30)
        screen = pane.screen()
    lines = [line for line in screen.splitlines() if line.strip()]
    assert lines[-3:] == ["First line.", "Second line.", "EXIT=0"], screen


# --------------------------------------------------------------------------- a pipe


def test_into_a_pipe_there_is_no_status_line(hearth: Hearth) -> None:
    with FakeProvider(script(model_delay=1.5, sleep="sleep 1")) as fake:
        env = model_env(hearth, fake)
        done = subprocess.run(
            [*HEARTH_CMD, "run", "--yes", TASK],
            cwd=hearth.workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    # Exactly what `hearth run` printed before the status line existed.
    assert done.stdout == b"[shell sleep 1] ok\nAll done.\n"
    for stream in (done.stdout, done.stderr):
        assert b"thinking" not in stream and b"running shell" not in stream
        assert b"\r" not in stream and b"\x1b" not in stream


def test_a_terminal_on_stderr_alone_gets_no_status_line(hearth: Hearth) -> None:
    """``hearth run … > out.txt`` in a terminal: stdout is a file, so no status line."""
    import pty

    with FakeProvider(script(model_delay=1.5, sleep="sleep 1")) as fake:
        env = model_env(hearth, fake)
        master, slave = pty.openpty()
        try:
            done = subprocess.run(
                [*HEARTH_CMD, "run", "--yes", TASK],
                cwd=hearth.workspace,
                env={**env, "TERM": "xterm"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=slave,
                timeout=60,
            )
            os.close(slave)
            seen = b""
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            os.close(master)
    assert done.returncode == 0, seen
    assert done.stdout == b"[shell sleep 1] ok\nAll done.\n"
    assert b"thinking" not in seen and b"\r\x1b" not in seen
