"""What every docx script shares: one-line errors, output checks, atomic saves.

Standard library only, so each script stays fast to start and runs with any Python
that has python-docx. A script runs as ``python scripts/NAME.py``, which puts this
folder first on ``sys.path``; that is how the scripts find this module.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

EXIT_BAD_INPUT = 2


class ScriptError(Exception):
    """A mistake the user can fix: reported as one stderr line, exit 2, nothing written."""


def run(name: str, main: Callable[[list[str] | None], int], argv: list[str] | None = None) -> int:
    """Call ``main`` and turn expected failures into one line on stderr."""
    try:
        return main(argv)
    except ScriptError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130


class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with the script name, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise ScriptError(message)


def input_file(path: str, suffixes: tuple[str, ...], what: str) -> Path:
    """An existing, readable file with one of ``suffixes`` (lower case, with the dot)."""
    p = Path(path)
    if not p.exists():
        raise ScriptError(f"{what} not found: {path}")
    if not p.is_file():
        raise ScriptError(f"{what} is not a file: {path}")
    if suffixes and p.suffix.lower() not in suffixes:
        raise ScriptError(f"{what} must be {' or '.join(suffixes)}: {path}")
    return p


def output_file(
    path: str, suffixes: tuple[str, ...], *, force: bool, inputs: tuple[Path, ...]
) -> Path:
    """Where to write: refuses an input, an existing file without ``force``, a missing folder."""
    p = Path(path)
    if suffixes and p.suffix.lower() not in suffixes:
        raise ScriptError(f"output must end in {' or '.join(suffixes)}: {path}")
    for src in inputs:
        if p.exists() and src.exists() and p.resolve() == src.resolve():
            raise ScriptError(f"output would overwrite the input: {path}")
    if p.is_dir():
        raise ScriptError(f"output is a folder: {path}")
    if p.exists() and not force:
        raise ScriptError(f"output exists (use --force to overwrite): {path}")
    if not p.parent.is_dir():
        raise ScriptError(f"output folder does not exist: {p.parent}")
    return p


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path next to ``target``, renamed over it only if the block succeeds."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # Why: mkstemp makes 0600; a document the user asked for gets the usual permissions.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp_path, 0o666 & ~mask)
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def open_docx(path: Path):  # type: ignore[no-untyped-def]
    """python-docx Document, or a ScriptError naming the file when it is not a Word file."""
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        return docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ScriptError(f"not a readable .docx file: {path} ({exc.__class__.__name__})") from None
    except Exception as exc:  # lxml parse errors of a damaged part
        if exc.__class__.__module__.startswith("lxml"):
            raise ScriptError(f"damaged .docx file: {path} ({exc})") from None
        raise


def warn(name: str, message: str) -> None:
    print(f"{name}: warning: {message}", file=sys.stderr)
