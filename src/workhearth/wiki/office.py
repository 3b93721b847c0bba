"""Office files read through the office skills' own extractors, in this process.

Why in process: the skills' scripts (``skills/builtin/{docx,xlsx,pptx,pdf}/scripts/``) are
what the agent runs, so reading a document for the wiki the same way gives the model the
same text the agent would see; a subprocess per file would pay Python's start and the
libraries' imports (~0.3 s) for each of a folder's hundreds of documents. The scripts
import their siblings by bare name (``from _docx_common import …``), as they do when run
as ``python scripts/NAME.py``; so each script is loaded once under a private module name
with its folder appended to ``sys.path`` (appended, so it shadows nothing).

Each reader returns *units*: ``(label, text)`` pairs the model cites — ``p.N`` for a PDF
page or a slide of a deck, ``¶N`` for a Word block, ``Sheet!N`` for a row of a sheet —
and raises :class:`Unreadable` with a reason in words for a file it cannot read.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from workhearth.errors import HearthError
from workhearth.skills.library import BUILTIN_DIR

Unit = tuple[str, str]
# Why a cap: a sheet of 100,000 rows gives the model its first rows, not all of them.
MAX_ROWS = 400
MAX_PDF_PAGES = 40
_lock = threading.Lock()
_loaded: dict[str, ModuleType] = {}


class Unreadable(Exception):
    """A source whose content could not be read; ``str()`` is the reason in words."""


def _script(skill: str, name: str) -> ModuleType:
    """The skill's script ``name`` (without ``.py``) as a module, loaded once."""
    key = f"{skill}/{name}"
    with _lock:
        if key in _loaded:
            return _loaded[key]
        folder = BUILTIN_DIR / skill / "scripts"
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
        spec = importlib.util.spec_from_file_location(
            f"_hearth_skill_{skill}_{name}", folder / f"{name}.py"
        )
        if spec is None or spec.loader is None:
            raise Unreadable(f"the {skill} skill's reader is missing")
        module = importlib.util.module_from_spec(spec)
        # Why registered: the import system's contract (dataclasses, pickling and
        # tracebacks look a module up by its name).
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        # Why: a script may put its folder first on sys.path itself (the pdf ones do);
        # leave it last, where its bare names shadow nothing of the program.
        while sys.path.count(str(folder)) > 1:
            sys.path.remove(str(folder))
        _loaded[key] = module
        return module


def read_units(path: Path) -> list[Unit]:
    """The units of an office file, by its suffix."""
    readers = {".docx": _docx, ".xlsx": _xlsx, ".pptx": _pptx, ".pdf": _pdf}
    reader = readers[path.suffix.lower()]
    try:
        return reader(path)
    except Unreadable:
        raise
    except HearthError as exc:  # the scripts' UserError: already one line in words
        raise Unreadable(_without_path(str(exc), path)) from None
    except Exception as exc:
        # Why broad: a damaged file makes the parsing libraries raise anything (zip,
        # XML, struct errors); the wiki names the file and goes on, never crashes.
        raise Unreadable(f"could not be read ({exc.__class__.__name__}: {exc})"[:300]) from None


def _without_path(message: str, path: Path) -> str:
    """The scripts name the file; the page already does, so say only why."""
    cleaned = (
        message.replace(f"{path}: ", "").replace(f": {path}", "").replace(str(path), path.name)
    )
    return cleaned.strip() or "could not be read"


def _docx(path: Path) -> list[Unit]:
    common = _script("docx", "_docx_common")
    extract = _script("docx", "extract_content")
    result = extract.extract(common.open_docx(path), path)
    units: list[Unit] = []
    for n, block in enumerate(result["blocks"], 1):
        if block["type"] == "image":
            continue
        if "rows" in block:
            text = "\n".join(" | ".join(row) for row in block["rows"])
        else:
            text = block.get("text", "")
            if block["type"] == "heading":
                text = "#" * max(1, int(block.get("level") or 1)) + " " + text
        if text.strip():
            units.append((f"¶{n}", text))
    return units


def _xlsx(path: Path) -> list[Unit]:
    common = _script("xlsx", "xlsx_common")
    book: Any = common.load_workbook(path, data_only=True)
    units: list[Unit] = []
    try:
        for sheet in book.worksheets:
            for n, row in enumerate(sheet.iter_rows(values_only=True), 1):
                if n > MAX_ROWS:
                    units.append((f"{sheet.title}!{n}", f"… rows up to {sheet.max_row}"))
                    break
                cells = ["" if v is None else str(v) for v in row]
                if any(cells):
                    units.append((f"{sheet.title}!{n}", " | ".join(cells).rstrip(" |")))
    finally:
        book.close()
    return units


def _pptx(path: Path) -> list[Unit]:
    deck = _script("pptx", "extract_deck_text").extract(path)
    units: list[Unit] = []
    for slide in deck["slides"]:
        lines = [slide["title"], slide.get("subtitle", "")]
        lines += ["  " * p["level"] + "- " + p["text"] for p in slide["paragraphs"]]
        lines += [" | ".join(row) for table in slide["tables"] for row in table]
        if slide["notes"]:
            lines.append("notes: " + slide["notes"])
        units.append((f"p.{slide['index']}", "\n".join(x for x in lines if x)))
    return units


def _pdf(path: Path) -> list[Unit]:
    with path.open("rb") as fh:
        if not fh.read(1024).lstrip().startswith(b"%PDF"):
            raise Unreadable("not a PDF (no %PDF header)")
    extract = _script("pdf", "extract")
    count = len(extract.open_pdf(path).pages)  # the script's own check of the file
    if count == 0:
        return []
    # Why a range: laying out every page of a 900-page PDF takes minutes, and the page's
    # call shows the model a few thousand characters of it at most.
    result = extract.extract(path, f"1-{min(count, MAX_PDF_PAGES)}", False)
    units = [(f"p.{page['page']}", page["text"]) for page in result["pages"]]
    if count > MAX_PDF_PAGES:
        units.append((f"p.{MAX_PDF_PAGES + 1}", f"… pages up to {count} not read"))
    return units
