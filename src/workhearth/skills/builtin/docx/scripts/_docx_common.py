"""What the docx scripts share beyond workhearth.skills.scriptkit: their input and output
checks (in the docx skill's wording) and opening a Word file.

A script runs as ``PYTHON SKILL_DIR/scripts/NAME.py`` (hearth's interpreter, the script's
full path), which puts this folder first on ``sys.path``; that is how the scripts find
this module.
"""

from __future__ import annotations

from pathlib import Path

from workhearth.skills.scriptkit import UserError, check_output

# Why: the docx scripts name "output" first; users and the SKILL.md know these lines.
OUTPUT_MESSAGES = {
    "suffix": "output must end in {suffixes}: {path}",
    "input": "output would overwrite the input: {path}",
    "folder": "output is a folder: {path}",
    "exists": "output exists (use --force to overwrite): {path}",
    "parent": "output folder does not exist: {parent}",
}


def input_file(path: str, suffixes: tuple[str, ...], what: str) -> Path:
    """An existing, readable file with one of ``suffixes`` (lower case, with the dot)."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{what} not found: {path}")
    if not p.is_file():
        raise UserError(f"{what} is not a file: {path}")
    if suffixes and p.suffix.lower() not in suffixes:
        raise UserError(f"{what} must be {' or '.join(suffixes)}: {path}")
    return p


def output_file(
    path: str, suffixes: tuple[str, ...], *, force: bool, inputs: tuple[Path, ...]
) -> Path:
    """Where to write: refuses an input, an existing file without ``force``, a missing folder."""
    return check_output(
        Path(path), inputs=inputs, force=force, suffixes=suffixes, messages=OUTPUT_MESSAGES
    )


def open_docx(path: Path):  # type: ignore[no-untyped-def]
    """python-docx Document, or a UserError naming the file when it is not a Word file."""
    import zipfile

    import docx
    from docx.opc.exceptions import PackageNotFoundError

    try:
        return docx.Document(str(path))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UserError(f"not a readable .docx file: {path} ({exc.__class__.__name__})") from None
    except Exception as exc:  # lxml parse errors of a damaged part
        if exc.__class__.__module__.startswith("lxml"):
            raise UserError(f"damaged .docx file: {path} ({exc})") from None
        raise
