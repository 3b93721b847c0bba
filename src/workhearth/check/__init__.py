"""``hearth check``: does an office file (.docx .xlsx .pptx .pdf) hold up when opened?

:func:`check_file` returns a :class:`Receipt`: whether it opens (the OOXML package,
a LibreOffice round trip, the PDF parse), its formulas, its glyphs, its layout, and
thumbnails of its first pages. What cannot be checked on this machine (LibreOffice or
poppler absent) is a problem of kind ``skipped``, which does not fail the file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workhearth.check.checker import check_file, sha256_of
    from workhearth.check.receipt import FORMATS, FormulaError, Problem, Receipt
    from workhearth.check.render import Tools

__all__ = ["FORMATS", "FormulaError", "Problem", "Receipt", "Tools", "check_file", "sha256_of"]

# Why lazy: the readers (lxml, pypdf, openpyxl, python-pptx) cost ~100 ms to import;
# the agent loads this package with every run, and needs them only when a call
# produced an office file.
_WHERE = {
    "check_file": "checker",
    "sha256_of": "checker",
    "FORMATS": "receipt",
    "FormulaError": "receipt",
    "Problem": "receipt",
    "Receipt": "receipt",
    "Tools": "render",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'workhearth.check' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"workhearth.check.{_WHERE[name]}"), name)
