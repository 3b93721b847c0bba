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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from workhearth.procgroups import signal_group

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
    profile.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(profile.parent / f".{profile.name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


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


def to_pdf(tools: Tools, source: Path, workdir: Path) -> Path:
    """LibreOffice's PDF export of ``source`` into ``workdir``; RenderError when it fails."""
    assert tools.soffice is not None
    # Why a copy under an ASCII name: LibreOffice names its output after the input, and
    # the user's file stays untouched whatever LibreOffice does.
    staged = workdir / f"in{source.suffix.lower()}"
    shutil.copyfile(source, staged)
    command = [
        tools.soffice,
        f"-env:UserInstallation={tools.profile.absolute().as_uri()}",
        "--headless",
        "--norestore",
        "--nologo",
        "--convert-to",
        "pdf",
        "--outdir",
        str(workdir),
        str(staged),
    ]
    with _profile_lock(tools.profile):
        proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=_soffice_env(tools.soffice, workdir),
        )
        try:
            out, err = proc.communicate(timeout=tools.timeout)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, signal.SIGKILL)  # soffice.bin and its helpers too
            proc.communicate()
            raise RenderError(f"LibreOffice did not finish within {tools.timeout:.0f} s") from None
    result = workdir / "in.pdf"
    if proc.returncode != 0 or not result.is_file() or result.stat().st_size == 0:
        said = (err or out).decode("utf-8", "replace").strip().splitlines()
        detail = f": {said[-1]}" if said else ""
        raise RenderError(
            f"LibreOffice could not open or convert it (exit {proc.returncode}){detail}"
        )
    return result


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
