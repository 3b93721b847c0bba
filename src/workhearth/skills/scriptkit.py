"""What every built-in skill script shares: one-line errors, output checks, atomic writes.

A script runs as ``python <skill>/scripts/NAME.py`` with hearth's own interpreter, so it
imports this module as ``workhearth.skills.scriptkit``. Standard library only (plus the
light ``workhearth.errors``), so a script's ``--help`` stays fast. Format-specific
helpers (python-docx runs, pptx fonts, xlsx cell ranges, pdf page ranges) stay in
each skill's own scripts folder.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NoReturn

from workhearth.errors import UsageError

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

# How the xlsx and pptx scripts word a refused output; other skills pass their own wording.
# Keys are the problems output_problem() finds, in the order it checks them; a skill that
# leaves out "folder" does not check for it (an existing folder then counts as "exists").
OUTPUT_MESSAGES: Mapping[str, str] = {
    "suffix": "{path}: the output must end in {suffixes}",
    "input": "{path}: the output would overwrite the input",
    "exists": "{path} exists (use --force to overwrite)",
    "parent": "{parent}: no such folder",
}


class UserError(UsageError):
    """A mistake the user can fix: one line on stderr naming the script, exit 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line, ``PROG: message``, and exit 2."""

    # Why: argparse prints its usage too; a user mistake is one line on stderr.
    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def run(prog: str, main: Callable[[], int]) -> int:
    """Call ``main`` and turn a UserError or Ctrl-C into one line on stderr; the exit code."""
    try:
        return main()
    except UserError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def warn(prog: str, message: str) -> None:
    """A warning line on stderr; the script goes on."""
    print(f"{prog}: warning: {message}", file=sys.stderr)


def existing_input(path: Path, suffixes: tuple[str, ...]) -> Path:
    """An existing file with one of ``suffixes`` (lower case, with the dot)."""
    if not path.is_file():
        raise UserError(f"no such file: {path}")
    if path.suffix.lower() not in suffixes:
        raise UserError(f"{path}: expected a {' or '.join(suffixes)} file")
    return path


def output_problem(
    path: Path,
    *,
    inputs: tuple[Path, ...] | list[Path],
    force: bool,
    suffixes: tuple[str, ...] = (),
    check_folder: bool = False,
) -> str | None:
    """The first reason not to write ``path``, or None.

    One of "suffix" (not one of ``suffixes``), "input" (it is one of ``inputs``),
    "folder" (it is a folder; only with ``check_folder``), "exists" (without ``force``),
    "parent" (its folder does not exist).
    """
    if suffixes and path.suffix.lower() not in suffixes:
        return "suffix"
    if any(path.resolve() == source.resolve() for source in inputs):
        return "input"
    if check_folder and path.is_dir():
        return "folder"
    if path.exists() and not force:
        return "exists"
    if not path.parent.is_dir():
        return "parent"
    return None


def check_output(
    path: Path,
    *,
    inputs: tuple[Path, ...] | list[Path],
    force: bool,
    suffixes: tuple[str, ...] = (),
    messages: Mapping[str, str] = OUTPUT_MESSAGES,
) -> Path:
    """``path`` if it may be written; a UserError worded by ``messages`` otherwise.

    A message may use ``{path}``, ``{parent}`` and ``{suffixes}`` ("a or b").
    """
    problem = output_problem(
        path, inputs=inputs, force=force, suffixes=suffixes, check_folder="folder" in messages
    )
    if problem is None:
        return path
    raise UserError(
        messages[problem].format(path=path, parent=path.parent, suffixes=" or ".join(suffixes))
    )


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path next to ``target``, renamed over it only if the block succeeds."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=target.suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # Why: mkstemp makes 0600; a file the user asked for gets the usual permissions.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp_path, 0o666 & ~mask)
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def atomic_write(target: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a temporary path next to ``target``, then rename it into place."""
    with atomic_path(target) as tmp:
        write(tmp)
