"""What every pptx script shares: one-line errors, output checks, atomic saves."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path


class ScriptError(Exception):
    """A user mistake: reported as one stderr line and exit code 2."""


def run(name: str, main: Callable[[], int]) -> None:
    """Run ``main`` and turn expected errors into one line on stderr, exit 2."""
    try:
        code = main()
    except ScriptError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(code)


def existing_input(path: Path, suffixes: tuple[str, ...]) -> Path:
    if not path.is_file():
        raise ScriptError(f"no such file: {path}")
    if path.suffix.lower() not in suffixes:
        raise ScriptError(f"{path}: expected a {' or '.join(suffixes)} file")
    return path


def checked_output(path: Path, *, inputs: tuple[Path, ...], force: bool, suffix: str) -> Path:
    """Refuse an output that is an input, has the wrong suffix, or exists without --force."""
    if path.suffix.lower() != suffix:
        raise ScriptError(f"{path}: the output must end in {suffix}")
    for source in inputs:
        if path.resolve() == source.resolve():
            raise ScriptError(f"{path}: the output would overwrite the input")
    if path.exists() and not force:
        raise ScriptError(f"{path} exists (use --force to overwrite)")
    if not path.parent.is_dir():
        raise ScriptError(f"{path.parent}: no such folder")
    return path


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Write through a temp file in the same folder, then rename, so a failure leaves nothing."""
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        # Why: mkstemp makes the file private (0600); a written document should follow the umask.
        mask = os.umask(0)
        os.umask(mask)
        tmp.chmod(0o666 & ~mask)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
