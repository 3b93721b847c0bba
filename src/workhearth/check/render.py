"""LibreOffice headless as the round trip and the renderer, and poppler for thumbnails.

One launch per file, converting it to PDF: if LibreOffice opens it, the file opens;
the PDF is what a reader sees (pages, glyphs) and what the thumbnails are made from.
The profile is kept between launches (the first one builds it), and one launch at a
time uses it (two LibreOffice processes on one profile refuse each other).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Why: a first launch builds the profile (a few seconds on a busy machine); a big
# workbook can take longer to lay out. A check that times out says so.
DEFAULT_TIMEOUT = 180.0
THUMBNAIL_DPI = 40


class RenderError(Exception):
    """LibreOffice or poppler failed on this file; the message says how, in words."""


@dataclass(frozen=True)
class Tools:
    """The programs a check may use, found once; None where this machine lacks one."""

    soffice: str | None
    pdftoppm: str | None
    profile: Path
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def find(cls, profile: Path, timeout: float = DEFAULT_TIMEOUT) -> Tools:
        return cls(
            soffice=shutil.which("soffice") or shutil.which("libreoffice"),
            pdftoppm=shutil.which("pdftoppm"),
            profile=profile,
            timeout=timeout,
        )


@contextlib.contextmanager
def _profile_lock(profile: Path) -> Iterator[None]:
    """The profile to one launch at a time, for as long as that LibreOffice runs.

    A ``.running`` mark is left while it runs; found when the lock is taken, it says the
    last holder was killed with its LibreOffice still running, unreaped. That one is
    stopped first: a second launch on its profile would hand it the file (LibreOffice's
    one-instance rule) and lose it when it quits."""
    profile.mkdir(parents=True, exist_ok=True, mode=0o700)
    running = profile.parent / f".{profile.name}.running"
    fd = os.open(profile.parent / f".{profile.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if running.exists():
            _stop_leftovers(profile)
        running.touch(mode=0o600)
        yield
        running.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _leftovers(profile: Path) -> list[int]:
    """Processes started on ``profile`` (soffice, oosplash, soffice.bin), by command line."""
    arg = f"-env:UserInstallation={profile.absolute().as_uri()}\0".encode()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                    if arg in fh.read():
                        found.append(int(entry.name))
            except OSError:
                continue
    return found


def _stop_leftovers(profile: Path, wait: float = 10.0) -> None:
    if not os.path.isdir("/proc"):
        return  # Why: no way to find them here; the next launch takes its chances
    deadline = time.monotonic() + wait
    while (left := _leftovers(profile)) and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


@contextlib.contextmanager
def work_dir(tools: Tools, prefix: str) -> Iterator[Path]:
    """A private folder for copies of the user's file and LibreOffice's output, under
    hearth's cache (not /tmp), removed after. Each holds a lock while in use; a folder
    whose lock nobody holds was left by a killed check, and the next one removes it."""
    base = tools.profile.parent / "check-work"
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    for old in base.iterdir():
        _remove_if_abandoned(old)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=base) as tmp:
        fd = os.open(Path(tmp) / ".in-use", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield Path(tmp)
        finally:
            os.close(fd)


def _remove_if_abandoned(folder: Path) -> None:
    try:
        fd = os.open(folder / ".in-use", os.O_RDWR)
    except FileNotFoundError:
        return  # being made this instant (or not ours): left alone
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # a live check holds it
    finally:
        os.close(fd)
    shutil.rmtree(folder, ignore_errors=True)


def _soffice_env(soffice: str, workdir: Path) -> dict[str, str]:
    """A small fixed environment: nothing of the user's (no keys, no tokens) reaches
    LibreOffice, and it writes nothing outside ``workdir`` and its profile."""
    path = os.pathsep.join(dict.fromkeys([str(Path(soffice).parent), "/usr/bin", "/bin"]))
    return {"PATH": path, "HOME": str(workdir), "LANG": "C.UTF-8", "SAL_USE_VCLPLUGIN": "svp"}


def soffice_command(soffice: str, profile: Path, source: Path, outdir: Path) -> list[str]:
    """LibreOffice's headless PDF export of ``source`` into ``outdir`` on the kept
    ``profile``: the one command line hearth check (and bench/) runs."""
    return [
        soffice,
        f"-env:UserInstallation={profile.absolute().as_uri()}",
        "--headless",
        "--norestore",
        "--nologo",
        "--convert-to",
        "pdf",
        "--outdir",
        str(outdir),
        str(source),
    ]


class Conversion:
    """LibreOffice converting ``source`` to PDF in ``workdir``, started when made (holding
    the profile's lock until it ends); :meth:`result` waits for the PDF.

    Why a process started here and not a thread: the launch must not wait behind this
    process's own reading of the file (imports and parsing hold the interpreter); once
    started, LibreOffice converts on its own while the caller reads."""

    def __init__(self, tools: Tools, source: Path, workdir: Path) -> None:
        assert tools.soffice is not None
        self.tools, self.workdir = tools, workdir
        self.proc: subprocess.Popen[bytes] | None = None
        self._failed: RenderError | None = None
        self._lock = contextlib.ExitStack()
        # Why a copy under an ASCII name: LibreOffice names its output after the input,
        # and the user's file stays untouched whatever LibreOffice does.
        staged = workdir / f"in{source.suffix.lower()}"
        shutil.copyfile(source, staged)
        self._lock.enter_context(_profile_lock(tools.profile))
        self._deadline = time.monotonic() + tools.timeout
        # Why a file, not a pipe: nobody reads a pipe while this process reads the content,
        # and a LibreOffice with much to say would block on a full one.
        self._said = workdir / "soffice.log"
        try:
            with self._said.open("wb") as said:
                self.proc = subprocess.Popen(
                    soffice_command(tools.soffice, tools.profile, staged, workdir),
                    stdout=said,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                    env=_soffice_env(tools.soffice, workdir),
                )
        except OSError as exc:
            self._lock.close()
            self._failed = RenderError(f"LibreOffice could not be started: {exc}")

    def result(self) -> Path:
        """The PDF; RenderError when LibreOffice failed or ran out of time."""
        if self._failed is not None or self.proc is None:
            raise self._failed or RenderError("LibreOffice was not started")
        # Why a watchdog and a plain wait: ``wait(timeout=…)`` polls with sleeps of up to
        # 50 ms, so it notices the end late; a blocking wait returns the moment it ends.
        timed_out = threading.Event()

        def time_out() -> None:
            timed_out.set()
            self._kill()

        watchdog = threading.Timer(max(0.1, self._deadline - time.monotonic()), time_out)
        watchdog.daemon = True
        watchdog.start()
        try:
            self.proc.wait()
        finally:
            watchdog.cancel()
            self._lock.close()
        if timed_out.is_set():
            self._failed = RenderError(
                f"LibreOffice did not finish within {self.tools.timeout:.0f} s"
            )
            raise self._failed
        result = self.workdir / "in.pdf"
        if self.proc.returncode != 0 or not result.is_file() or result.stat().st_size == 0:
            said = self._said.read_text("utf-8", "replace").strip().splitlines()
            detail = f": {said[-1]}" if said else ""
            self._failed = RenderError(
                f"LibreOffice could not open or convert it (exit {self.proc.returncode}){detail}"
            )
            raise self._failed
        return result

    def _kill(self) -> None:
        """SIGKILL LibreOffice's process group (soffice.bin and its helpers too)."""
        if self.proc is not None and self.proc.returncode is None:
            from workhearth.procgroups import signal_group

            signal_group(self.proc.pid, signal.SIGKILL)

    def cancel(self) -> None:
        """Stop LibreOffice (soffice.bin and its helpers too) if it still runs."""
        if self.proc is not None and self.proc.returncode is None:
            self._kill()
            self.proc.wait()
        self._lock.close()

    def __enter__(self) -> Conversion:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


def to_pdf(tools: Tools, source: Path, workdir: Path) -> Path:
    """LibreOffice's PDF export of ``source`` into ``workdir``; RenderError when it fails."""
    with Conversion(tools, source, workdir) as conversion:
        return conversion.result()


def thumbnails(tools: Tools, pdf: Path, into: Path, stem: str, pages: int = 3) -> list[Path]:
    """PNGs of the first ``pages`` pages (``<stem>-1.png`` ...) in ``into``."""
    assert tools.pdftoppm is not None
    into.mkdir(parents=True, exist_ok=True)
    with work_dir(tools, "thumbs-") as tmp:
        proc = subprocess.run(
            [
                tools.pdftoppm,
                "-png",
                "-r",
                str(THUMBNAIL_DPI),
                "-f",
                "1",
                "-l",
                str(pages),
                str(pdf),
                str(tmp / "p"),
            ],
            capture_output=True,
            timeout=tools.timeout,
            check=False,
        )
        made = sorted(tmp.glob("p-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
        if proc.returncode != 0 or not made:
            said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RenderError(f"poppler could not render it{': ' + said[-1] if said else ''}")
        out = []
        for n, png in enumerate(made, 1):
            target = into / f"{stem}-{n}.png"
            os.replace(png, target)
            out.append(target)
    return out
