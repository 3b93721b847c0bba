"""Shared fixtures for the ``hearth check`` tests.

Files are made once per test run (``made``); LibreOffice is launched only by the tests
about the round trip. Everything else calls ``check_file`` with a :class:`Tools` that has
no LibreOffice (``no_office``), which is what a machine without it gives.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.check import files as F
from workhearth.check import Tools

MAKERS: dict[str, Callable[[Path], Path]] = {
    "good.docx": F.docx,
    "dangling.docx": F.docx_dangling,
    "malformed.docx": F.docx_malformed,
    "untyped.docx": F.docx_untyped,
    "glyph.docx": F.docx_missing_glyph,
    "wide-table.docx": F.docx_wide_table,
    "not-a-zip.docx": F.not_a_zip,
    "good.xlsx": F.xlsx,
    "div0.xlsx": lambda p: F.xlsx_formula(p, "#DIV/0!"),
    "uncached.xlsx": lambda p: F.xlsx_formula(p, None),
    "wide.xlsx": lambda p: F.xlsx_wide(p, fit=False),
    "fit.xlsx": lambda p: F.xlsx_wide(p, fit=True),
    "good.pptx": F.pptx,
    "overflow.pptx": F.pptx_overflow,
    "good.pdf": F.pdf,
    "helvetica.pdf": F.pdf_helvetica,
    "question-marks.pdf": F.pdf_question_marks,
    "encrypted.pdf": F.pdf_encrypted,
}


@pytest.fixture(scope="session")
def made(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``made("dangling.docx")`` -> the path of that file, made once per run.

    Tests must not change these files; copy one first (``F.copy``) to edit it."""
    folder = tmp_path_factory.mktemp("made")
    cache: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in cache:
            cache[name] = MAKERS[name](folder / name)
        return cache[name]

    return get


@pytest.fixture
def no_office(tmp_path: Path) -> Tools:
    """The tools of a machine without LibreOffice (poppler kept when installed)."""
    return Tools(soffice=None, pdftoppm=shutil.which("pdftoppm"), profile=tmp_path / "profile")


@pytest.fixture(scope="session")
def office(tmp_path_factory: pytest.TempPathFactory) -> Tools:
    """The real tools, one kept profile for the whole run (a skip without LibreOffice)."""
    tools = Tools.find(tmp_path_factory.mktemp("office") / "profile")
    if tools.soffice is None or tools.pdftoppm is None:
        pytest.skip(
            "LibreOffice or poppler is not installed (Debian: libreoffice-writer"
            " libreoffice-calc libreoffice-impress poppler-utils); .ci/run installs them"
        )
    return tools
