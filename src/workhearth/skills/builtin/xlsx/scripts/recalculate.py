"""Recalculate every formula of an .xlsx workbook and report the cells that hold errors.

openpyxl writes formulas without results; a reader that does not calculate (a preview, pandas,
another script) then sees empty cells. This stores a computed value in every formula cell:
with LibreOffice headless when it is installed, otherwise with the pycel formula engine
(``pip install 'workhearth[office]'``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from xlsx_common import is_error_value, load_workbook

from workhearth.skills.scriptkit import (
    OneLineParser,
    UserError,
    atomic_write,
    check_output,
    existing_input,
    run,
)

NAME = "recalculate"
MISSING_ENGINE = (
    "no formula engine: install LibreOffice (Debian: apt-get install libreoffice-calc) "
    "or the Python engine (pip install 'workhearth[office]')"
)
# Why: a private profile must not inherit a user's "never recalculate on load" setting, so it
# is seeded with "always recalculate" for both OOXML and ODF files.
_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def parse_args() -> argparse.Namespace:
    parser = OneLineParser(
        prog="recalculate.py",
        description="Recalculate the formulas of an .xlsx workbook, store the results, "
        "and list cells holding errors (#DIV/0!, #REF!, #NAME?, #VALUE!, ...). "
        "Exit 0 when no cell holds an error, 1 when some do, 2 on bad input.",
    )
    parser.add_argument("input", type=Path, help="the .xlsx workbook")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="the recalculated .xlsx to write"
    )
    parser.add_argument(
        "--engine",
        choices=("auto", "libreoffice", "python"),
        default="auto",
        help="auto (default): LibreOffice when installed, else the Python engine (pycel)",
    )
    parser.add_argument(
        "--timeout", type=float, default=180, help="seconds LibreOffice may take (default 180)"
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    return parser.parse_args()


def find_soffice() -> str | None:
    return shutil.which("soffice") or shutil.which("libreoffice")


def have_pycel() -> bool:
    import importlib.util

    return importlib.util.find_spec("pycel") is not None


def libreoffice_values(source: Path, soffice: str, timeout: float) -> dict[str, dict[str, Any]]:
    """The value of every formula cell, computed by LibreOffice headless in a private profile."""
    with tempfile.TemporaryDirectory(prefix="hearth-recalc-") as tmp:
        work = Path(tmp)
        profile = work / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(_PROFILE, encoding="utf-8")
        # Why: an ASCII name in a private folder; LibreOffice names its output after the input.
        (work / "in").mkdir()
        staged = work / "in" / "book.xlsx"
        shutil.copyfile(source, staged)
        command = [
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--convert-to",
            "xlsx:Calc MS Excel 2007 XML",
            "--outdir",
            str(work / "out"),
            str(staged),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise UserError(f"LibreOffice took longer than {timeout:g}s") from exc
        produced = work / "out" / "book.xlsx"
        if not produced.is_file():
            detail = (done.stderr or done.stdout).strip().splitlines()
            raise UserError(
                "LibreOffice could not convert the workbook"
                + (f" ({detail[-1]})" if detail else f" (exit {done.returncode})")
            )
        computed = load_workbook(produced, data_only=True)
    from openpyxl.utils.datetime import to_excel

    results: dict[str, dict[str, Any]] = {}
    for ws in load_workbook(source).worksheets:
        if ws.title not in computed.sheetnames:
            continue
        other = computed[ws.title]
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    value = other[cell.coordinate].value
                    if hasattr(value, "year") or hasattr(value, "seconds"):
                        value = to_excel(value)  # Why: the XML stores dates as serial numbers
                    results.setdefault(ws.title, {})[cell.coordinate] = value
    return results


def pycel_values(source: Path) -> dict[str, dict[str, Any]]:
    """The value of every formula cell, computed by the pycel formula engine."""
    import logging

    from openpyxl.utils import quote_sheetname
    from pycel import ExcelCompiler

    workbook = load_workbook(source)
    logging.getLogger("pycel").setLevel(logging.CRITICAL)
    results: dict[str, dict[str, Any]] = {}
    # Why: pycel prints its evaluation traces on stdout for some errors; our stdout is the report.
    with contextlib.redirect_stdout(io.StringIO()):
        compiler = ExcelCompiler(filename=str(source))
        for ws in workbook.worksheets:
            for row in ws.iter_rows():
                for cell in row:
                    if cell.data_type == "f":
                        address = f"{quote_sheetname(ws.title)}!{cell.coordinate}"
                        try:
                            value = compiler.evaluate(address)
                        except Exception as exc:  # Why: an engine gap is a #NAME?, not a crash
                            value = "#NAME?" if "not implemented" in str(exc).lower() else "#VALUE!"
                        results.setdefault(ws.title, {})[cell.coordinate] = value
    return results


def store_values(source: Path, target: Path, results: dict[str, dict[str, Any]]) -> None:
    """Copy the workbook, writing each formula's result into its cell as the cached value.

    Why not keep LibreOffice's own output: its export drops what it does not model (freeze
    panes in headless mode, some charts and styles); patching the values keeps the file as made.
    """
    sheet_files = _sheet_files(source)
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            title = sheet_files.get(item.filename)
            if title in results:
                data = _store_values(data.decode("utf-8"), results[title]).encode("utf-8")
            zout.writestr(item, data)


def _sheet_files(source: Path) -> dict[str, str]:
    """Zip member name of each worksheet → its title."""
    import xml.etree.ElementTree as ET

    ns = {
        "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
        "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
        "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
    }
    with zipfile.ZipFile(source) as zf:
        book = ET.fromstring(zf.read("xl/workbook.xml"))
        rels = ET.fromstring(zf.read("xl/_rels/workbook.xml.rels"))
    targets = {r.get("Id"): r.get("Target", "") for r in rels.findall("rel:Relationship", ns)}
    files = {}
    for sheet in book.findall("m:sheets/m:sheet", ns):
        target = targets.get(sheet.get(f"{{{ns['r']}}}id"), "")
        path = target.lstrip("/") if target.startswith("/") else "xl/" + target
        files[path] = sheet.get("name", "")
    return files


_CELL = re.compile(
    r'<c r="([A-Z]+\d+)"([^>]*)>(<f>.*?</f>|<f [^>]*>.*?</f>|<f[^>]*/>)<v>[^<]*</v></c>'
)
_CELL_NO_V = re.compile(r'<c r="([A-Z]+\d+)"([^>]*)>(<f>.*?</f>|<f [^>]*>.*?</f>|<f[^>]*/>)</c>')


def _store_values(xml: str, values: dict[str, Any]) -> str:
    from xml.sax.saxutils import escape

    def cell(match: re.Match[str]) -> str:
        ref, attrs, formula = match.groups()
        if ref not in values:
            return match.group(0)
        attrs = re.sub(r'\s+t="[^"]*"', "", attrs)
        value = values[ref]
        if isinstance(value, bool):
            kind, text = "b", "1" if value else "0"
        elif isinstance(value, int | float):
            kind, text = "n", repr(float(value)) if isinstance(value, float) else str(value)
        elif value is None or value == "":
            kind, text = "str", ""
        elif is_error_value(value):
            kind, text = "e", str(value)
        else:
            kind, text = "str", str(value)
        return f'<c r="{ref}"{attrs} t="{kind}">{formula}<v>{escape(text)}</v></c>'

    return _CELL_NO_V.sub(cell, _CELL.sub(cell, xml))


def report(path: Path) -> dict[str, Any]:
    formulas = load_workbook(path)
    values = load_workbook(path, data_only=True)
    errors, missing, count = [], [], 0
    for ws in formulas.worksheets:
        cached = values[ws.title]
        for row in ws.iter_rows():
            for cell in row:
                value = cached[cell.coordinate].value
                if cell.data_type == "f":
                    count += 1
                    if value is None:
                        missing.append(f"{ws.title}!{cell.coordinate}")
                if is_error_value(value):
                    errors.append(
                        {
                            "sheet": ws.title,
                            "cell": cell.coordinate,
                            "error": value,
                            "formula": cell.value if cell.data_type == "f" else None,
                        }
                    )
    return {"formulas": count, "errors": errors, "uncalculated": missing}


def main() -> int:
    args = parse_args()
    source = existing_input(args.input, (".xlsx", ".xlsm"))
    check_output(args.output, inputs=(source,), force=args.force, suffixes=(source.suffix.lower(),))
    if args.timeout <= 0:
        raise UserError("--timeout must be positive")
    load_workbook(source)  # Why: a broken input is a user error, reported before any engine runs
    soffice = find_soffice() if args.engine in ("auto", "libreoffice") else None
    if args.engine == "libreoffice" and soffice is None:
        raise UserError("LibreOffice is not installed (Debian: apt-get install libreoffice-calc)")
    if soffice is None and not have_pycel():
        raise UserError(MISSING_ENGINE)
    if soffice is not None:
        engine, results = "libreoffice", libreoffice_values(source, soffice, args.timeout)
    else:
        engine, results = "python", pycel_values(source)
    atomic_write(args.output, lambda tmp: store_values(source, tmp, results))
    result = {"output": str(args.output), "engine": engine, **report(args.output)}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(
            f"wrote {args.output} ({result['formulas']} formulas recalculated with {engine}, "
            f"{len(result['errors'])} error cells)"
        )
        for error in result["errors"]:
            print(f"  {error['sheet']}!{error['cell']}: {error['error']}  {error['formula'] or ''}")
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(run(NAME, main))
