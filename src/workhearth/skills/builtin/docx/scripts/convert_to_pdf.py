"""Word (or any document LibreOffice opens) → PDF with LibreOffice headless.

Usage: PYTHON SKILL_DIR/scripts/convert_to_pdf.py INPUT.docx [-o OUTPUT.pdf] [--timeout 180] [--force]

Each run uses its own throw-away LibreOffice profile, so several conversions can run
at once and a running LibreOffice window is never disturbed.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from _docx_common import input_file, output_file

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_path, run

NAME = "convert_to_pdf.py"
SUFFIXES = (".docx", ".doc", ".odt", ".rtf", ".xlsx", ".xls", ".ods", ".pptx", ".ppt", ".odp")
MISSING = (
    "LibreOffice is not installed, so nothing was converted "
    "(Debian/Ubuntu: sudo apt-get install libreoffice-writer; "
    "or pass --soffice PATH to the soffice program)"
)


def find_soffice(explicit: str | None) -> str:
    if explicit:
        if not (Path(explicit).is_file() and os.access(explicit, os.X_OK)):
            raise UserError(f"not an executable soffice program: {explicit}")
        return explicit
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    raise UserError(MISSING)


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog=NAME, description="Convert a .docx (or .odt, .xlsx, .pptx…) to PDF with LibreOffice."
    )
    p.add_argument("input", help="document to convert, e.g. report.docx")
    p.add_argument("-o", "--output", help="PDF to write (default: INPUT with .pdf, same folder)")
    p.add_argument(
        "--timeout",
        type=float,
        default=180.0,
        help="seconds before LibreOffice is stopped (default 180)",
    )
    p.add_argument("--soffice", help="path of the soffice program (default: found on PATH)")
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    args = p.parse_args(argv)

    src = input_file(args.input, SUFFIXES, "input document")
    out = output_file(
        args.output or str(src.with_suffix(".pdf")), (".pdf",), force=args.force, inputs=(src,)
    )
    if args.timeout <= 0:
        raise UserError("--timeout must be a positive number of seconds")
    soffice = find_soffice(args.soffice)

    with tempfile.TemporaryDirectory(prefix="hearth-soffice-") as tmp:
        work = Path(tmp)
        # Why: a plain ASCII copy avoids any file-name quoting trouble in LibreOffice,
        # and the result's name is then known in advance.
        staged = work / f"document{src.suffix.lower()}"
        shutil.copyfile(src, staged)
        outdir = work / "out"
        outdir.mkdir()
        cmd = [
            soffice,
            f"-env:UserInstallation={(work / 'profile').as_uri()}",
            "--headless",
            "--norestore",
            "--nologo",
            "--convert-to",
            "pdf",
            "--outdir",
            str(outdir),
            str(staged),
        ]
        _convert(cmd, args.timeout)
        produced = outdir / "document.pdf"
        if not produced.is_file() or produced.stat().st_size == 0:
            raise UserError(f"LibreOffice produced no PDF for {src} (is it a valid document?)")
        with atomic_path(out) as target:
            shutil.copyfile(produced, target)
    print(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


def _convert(cmd: list[str], timeout: float) -> None:
    # Why: soffice starts soffice.bin as a child; a new session lets a timeout stop both.
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise UserError(
            f"LibreOffice did not finish within {timeout:g} s (raise --timeout)"
        ) from None
    if proc.returncode != 0:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        raise UserError(
            f"LibreOffice failed (exit {proc.returncode}){': ' + detail[-1] if detail else ''}"
        )


if __name__ == "__main__":
    sys.exit(run(NAME, main))
