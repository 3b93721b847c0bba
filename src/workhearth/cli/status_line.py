"""A live status line under a task in the terminal: what runs, and for how long.

``⠹ thinking… 3s`` while the model is waited on, ``⠹ running shell: make test… 12s``
while a tool runs. It is drawn on stderr, only when stdout and stderr are both terminals,
redrawn a few times a second, erased before anything else is written (the task's text,
a notice, an approval question) and gone at the end. Into a pipe nothing changes.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TextIO

from workhearth.cli.tables import cut

if TYPE_CHECKING:
    from workhearth.agent.runner import RunOptions
    from workhearth.tasks.task import TaskEvent

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
INTERVAL = 0.2  # seconds between redraws
# Why: quick steps (a fast reply, a file read) would only flicker; show what lasts.
QUIET = 0.5


def wanted(stdout: Any, stderr: Any, env: Mapping[str, str]) -> bool:
    """A status line only when a person watches both streams on a terminal that can erase."""
    try:
        both = stdout.isatty() and stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False
    return bool(both) and env.get("TERM", "") not in ("", "dumb")


def elapsed(seconds: float) -> str:
    """``7s``, ``2m 05s``."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


class StatusLine:
    """The line's state (from the task's events) and its drawing, behind one lock.

    ``out`` and ``err`` are the real streams; :meth:`guard` wraps them so that every
    write erases the line first and records where the cursor is left.
    """

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        color: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.out, self.err, self.color, self.clock = out, err, color, clock
        self.lock = threading.RLock()
        self.thinking_since: float | None = None
        self.running: dict[str, tuple[str, float]] = {}  # call id -> (what, since)
        self.paused = False  # a question waits for its answer
        self.shown = False
        self.at_line_start = True
        self.last_output = clock()
        self.frame = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ what runs
    def on_event(self, event: TaskEvent) -> None:
        with self.lock:
            now, data = self.clock(), event.data
            if event.name == "tool_call":
                what = " ".join(str(data.get("summary") or "").split())
                label = f"running {data.get('name', 'a tool')}" + (f": {what}" if what else "")
                self.running[str(data.get("id"))] = (label, now)
            elif event.name == "tool_result":
                self.running.pop(str(data.get("id")), None)
                if not self.running:
                    self.thinking_since = now  # the results go back to the model
            elif event.name == "status":
                self.paused = data.get("status") == "waiting"
                if data.get("status") == "running" and self.thinking_since is None:
                    self.thinking_since = now
            elif event.name == "done":
                self.thinking_since, self.running = None, {}
                self._erase()

    def text(self) -> str | None:
        """The line as it reads now, or None when nothing is to be shown."""
        now = self.clock()
        if self.running:
            label, since = min(self.running.values(), key=lambda item: item[1])
            more = f" (+{len(self.running) - 1} more)" if len(self.running) > 1 else ""
            return f"{label}… {elapsed(now - since)}{more}"
        if self.thinking_since is not None:
            return f"thinking… {elapsed(now - self.thinking_since)}"
        return None

    def answered(self) -> None:
        """A question on the terminal got its answer: the tool starts only now."""
        with self.lock:
            now = self.clock()
            self.running = {k: (label, now) for k, (label, _) in self.running.items()}
            self.at_line_start = True  # the person's Enter ended the line
            self.last_output = now

    # ------------------------------------------------------------- drawing
    def draw(self) -> None:
        with self.lock:
            line = self.text()
            quiet = self.clock() - self.last_output >= QUIET
            if line is None or self.paused or not self.at_line_start or not quiet:
                return
            self.frame = (self.frame + 1) % len(SPINNER)
            width = shutil.get_terminal_size().columns
            # Why width - 1: a line that reaches the last column wraps, and \r can
            # then only erase its second half.
            line = cut(f"{SPINNER[self.frame]} {line}", max(1, width - 1))
            if self.color:
                line = f"\033[2m{line}\033[0m"
            self.out.flush()
            self.err.write(f"\r{line}\033[K")
            self.err.flush()
            self.shown = True

    def _erase(self) -> None:
        if self.shown:
            self.err.write("\r\033[K")
            self.err.flush()
            self.shown = False

    def wrote(self, stream: TextIO, text: str) -> int:
        """Write ``text`` to ``stream`` with the line out of its way."""
        with self.lock:
            self._erase()
            count = stream.write(text)
            if text:
                self.at_line_start = text.endswith("\n")
                self.last_output = self.clock()
            return count

    def guard(self, stream: TextIO) -> TextIO:
        return _Guarded(self, stream)  # type: ignore[return-value]

    # -------------------------------------------------------------- living
    def start(self) -> None:
        def loop() -> None:
            while not self._stop.wait(INTERVAL):
                self.draw()

        self._thread = threading.Thread(target=loop, name="hearth-status", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        with self.lock:
            self._erase()


class _Guarded:
    """A text stream whose writes first erase the status line."""

    def __init__(self, status: StatusLine, stream: TextIO) -> None:
        self._status = status
        self._stream = stream

    def write(self, text: str) -> int:
        return self._status.wrote(self._stream, text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Answering:
    """The terminal's input, telling the status line when a question was answered."""

    def __init__(self, status: StatusLine, stream: TextIO) -> None:
        self._status = status
        self._stream = stream

    def readline(self, *args: Any) -> str:
        line = self._stream.readline(*args)
        self._status.answered()
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def watching(
    render: Callable[[TaskEvent], None], opts: RunOptions, live: bool
) -> Iterator[Callable[[TaskEvent], None]]:
    """``render`` for a task's events, with the status line when ``live`` (see :func:`wanted`).

    While it lasts, ``sys.stdout`` and ``sys.stderr`` (and the run's question stream)
    erase the line before each write, so nothing interleaves with it.
    """
    if not live:
        yield render
        return
    status = StatusLine(sys.stdout, sys.stderr, color="NO_COLOR" not in os.environ)
    saved = (sys.stdout, sys.stderr, opts.stdin, opts.stderr)
    sys.stdout, sys.stderr = status.guard(sys.stdout), status.guard(sys.stderr)
    opts.stderr = sys.stderr
    if opts.stdin is not None:
        opts.stdin = _Answering(status, opts.stdin)  # type: ignore[assignment]

    def both(event: TaskEvent) -> None:
        status.on_event(event)
        render(event)

    status.start()
    try:
        yield both
    finally:
        status.close()
        sys.stdout, sys.stderr, opts.stdin, opts.stderr = saved
