"""``hearth check`` per format beside a bare LibreOffice conversion of the same file.

Made fresh each run: a 5-page .docx (python-docx), a .xlsx (a sales table, about 5
printed pages), a .pptx of 5 slides (python-pptx) and a 5-page PDF (fpdf2, embedded
font). Then, ``--runs`` times, alternating, for each file:

- ``hearth``: wall time of ``hearth check FILE --json`` in a fresh process, as a user or
  the agent runs it (its own kept LibreOffice profile, warm);
- ``bare``: wall time of ``soffice --headless --convert-to pdf`` of the same file on its
  own kept profile, also warm: the cheapest way to learn that LibreOffice opens a file;
- where hearth's time goes: process start (``hearth`` minus the receipt's ``seconds``),
  LibreOffice (``bare``), our checks (``check_file`` in process without LibreOffice or
  poppler: package, content, glyphs, fontconfig's cache cleared as in a fresh process)
  and what follows the render (``pdf_facts`` of the rendered PDF and the thumbnails).

Medians per format. Targets (issue #21): ≤ 3 s for a 5-page document and ≤ 1.3× the
bare conversion. A PDF needs no LibreOffice in ``hearth check``; its ``bare`` column is
LibreOffice's Draw import of it, for scale only.
Run ``.venv/bin/python bench/check.py``; tables to stdout, JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from workhearth.check import Tools, check_file, glyphs  # noqa: E402
from workhearth.check.pdf import pdf_facts  # noqa: E402
from workhearth.check.render import soffice_command, thumbnails  # noqa: E402

TARGET_DOC_S = 3.0
TARGET_RATIO = 1.3
FORMATS = ("docx", "xlsx", "pptx", "pdf")
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
BODY = "Revenue grew in every region this quarter, led by the east and the north. " * 10


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- inputs -------------------------------------------------------------------------


def make_docx(path: Path, pages: int) -> None:
    from docx import Document

    doc = Document()
    for page in range(pages):
        doc.add_heading(f"Section {page + 1}", level=1)
        for _ in range(3):
            doc.add_paragraph(BODY)
        table = doc.add_table(rows=4, cols=3)
        for r, row in enumerate(table.rows):
            for c, cell in enumerate(row.cells):
                cell.text = f"R{r}C{c}"
        if page < pages - 1:
            doc.add_page_break()
    doc.save(str(path))


def make_xlsx(path: Path, pages: int) -> None:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Region", "Product", "Units", "Price", "Amount"])
    rows = 45 * pages  # about 45 rows print on an A4 page
    for n in range(2, rows + 2):
        ws.append([f"Region {n % 7}", f"Product {n % 13}", n % 40 + 1, 9.5, f"=C{n}*D{n}"])
        ws[f"E{n}"].value = f"=C{n}*D{n}"
    ws.append(["Total", None, None, None, f"=SUM(E2:E{rows + 1})"])
    wb.save(path)
    # Why cached values: a workbook straight from openpyxl has none, and hearth check
    # would (rightly) fail it; a bench of a failing file measures the wrong thing.
    _cache_formulas(path)


def _cache_formulas(path: Path) -> None:
    import re
    import zipfile

    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.startswith("xl/worksheets/"):
                data = re.sub(
                    rb"<f>([^<]*)</f><v\s*/>|<f>([^<]*)</f><v></v>", rb"<f>\1\2</f><v>0</v>", data
                )
            dst.writestr(info, data)
    tmp.replace(path)


def make_pptx(path: Path, slides: int) -> None:
    from pptx import Presentation
    from pptx.util import Cm, Pt

    deck = Presentation()
    for n in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        title = slide.shapes.add_textbox(Cm(2), Cm(1.5), Cm(21), Cm(2.5))
        title.text_frame.text = f"Slide {n + 1}: quarterly results"
        title.text_frame.paragraphs[0].runs[0].font.size = Pt(32)
        body = slide.shapes.add_textbox(Cm(2), Cm(5), Cm(21), Cm(10))
        body.text_frame.word_wrap = True
        for point in ("Revenue up 12 %", "Costs flat", "Two new regions", "Hiring on plan"):
            para = body.text_frame.add_paragraph()
            para.text = point
            para.runs[0].font.size = Pt(20)
    deck.save(str(path))


def make_pdf(path: Path, pages: int) -> None:
    from fpdf import FPDF

    doc = FPDF()
    doc.add_font("DejaVu", fname=str(FONT))
    doc.set_font("DejaVu", size=11)
    for n in range(pages):
        doc.add_page()
        doc.multi_cell(0, 6, f"Page {n + 1}. " + BODY * 4)
    doc.output(str(path))


MAKERS: dict[str, Callable[[Path, int], None]] = {
    "docx": make_docx,
    "xlsx": make_xlsx,
    "pptx": make_pptx,
    "pdf": make_pdf,
}


# --- timings ------------------------------------------------------------------------


def hearth_cmd() -> list[str]:
    script = shutil.which("hearth", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "workhearth"]


def time_hearth(path: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    proc = subprocess.run(
        [*hearth_cmd(), "check", str(path), "--json"],
        env=env,
        cwd=path.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.perf_counter() - started
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        raise SystemExit(f"hearth check {path.name} failed: {proc.stderr.strip()[-500:]}")
    (receipt,) = json.loads(proc.stdout)
    return wall, receipt


def time_bare(soffice: str, profile: Path, path: Path, outdir: Path) -> tuple[float, Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    subprocess.run(
        soffice_command(soffice, profile, path, outdir),
        capture_output=True,
        check=True,
        timeout=600,
    )
    wall = time.perf_counter() - started
    result = outdir / (path.stem + ".pdf")
    if not result.is_file():
        raise SystemExit(f"bare soffice made no PDF of {path.name}")
    return wall, result


def time_checks_only(path: Path, profile: Path) -> float:
    """Our own checks in process: no LibreOffice, no poppler, fontconfig asked afresh."""
    glyphs._ranges.cache_clear()
    tools = Tools(soffice=None, pdftoppm=None, profile=profile)
    started = time.perf_counter()
    check_file(path, tools, None)
    return time.perf_counter() - started


def time_post_render(rendered: Path, tools: Tools, into: Path, text: bool) -> float:
    """What check_file does after LibreOffice: read the rendered PDF (its text only for a
    PDF checked as itself), make thumbnails."""
    started = time.perf_counter()
    facts = pdf_facts(rendered, what="rendered ", text=text)
    thumbnails(tools, rendered, into, "bench", min(3, facts.pages))
    return time.perf_counter() - started


def med(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5, help="pages (slides) per input")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per format (median)")
    parser.add_argument("--formats", default=",".join(FORMATS), help="comma-separated")
    parser.add_argument("--tmp", type=Path, default=None, help="parent of the temp folder")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/check.json")
    args = parser.parse_args()
    formats = [f for f in args.formats.split(",") if f]
    if unknown := set(formats) - set(FORMATS):
        parser.error(f"unknown formats: {', '.join(sorted(unknown))}")

    base = Path(tempfile.mkdtemp(prefix="check-bench-", dir=args.tmp))
    try:
        tools = Tools.find(base / "bare-profile")
        if tools.soffice is None or tools.pdftoppm is None:
            log("bench/check.py needs LibreOffice and poppler (Debian: libreoffice poppler-utils)")
            return 2
        files = {}
        for fmt in formats:
            files[fmt] = base / "in" / f"report.{fmt}"
            files[fmt].parent.mkdir(exist_ok=True)
            MAKERS[fmt](files[fmt], args.pages)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
        env["HEARTH_HOME"] = str(base / "home")

        load_before = list(os.getloadavg())
        # Warm-up: both profiles built, both page caches warm, one launch of each per format.
        log("warm-up: building both LibreOffice profiles")
        for fmt in formats:
            time_hearth(files[fmt], env)
            time_bare(tools.soffice, tools.profile, files[fmt], base / "warm")

        raw: dict[str, dict[str, list[float]]] = {
            fmt: {k: [] for k in ("hearth", "bare", "receipt", "checks_only", "post_render")}
            for fmt in formats
        }
        receipts: dict[str, dict[str, Any]] = {}
        for run in range(args.runs):
            for fmt in formats:
                # Why alternate the order: neither side always runs right after the other.
                pair = ["hearth", "bare"] if run % 2 == 0 else ["bare", "hearth"]
                for side in pair:
                    if side == "hearth":
                        wall, receipts[fmt] = time_hearth(files[fmt], env)
                        raw[fmt]["hearth"].append(wall)
                        raw[fmt]["receipt"].append(receipts[fmt]["seconds"])
                    else:
                        wall, rendered = time_bare(
                            tools.soffice, tools.profile, files[fmt], base / f"bare-{run}"
                        )
                        raw[fmt]["bare"].append(wall)
                raw[fmt]["checks_only"].append(time_checks_only(files[fmt], tools.profile))
                raw[fmt]["post_render"].append(
                    time_post_render(
                        files[fmt] if fmt == "pdf" else rendered,
                        tools,
                        base / f"thumbs-{run}",
                        text=fmt == "pdf",
                    )
                )
                log(
                    f"run {run + 1}/{args.runs} {fmt}: hearth {raw[fmt]['hearth'][-1]:.2f} s,"
                    f" bare {raw[fmt]['bare'][-1]:.2f} s"
                )

        results: dict[str, Any] = {}
        for fmt in formats:
            r = raw[fmt]
            hearth_s, bare_s, receipt_s = med(r["hearth"]), med(r["bare"]), med(r["receipt"])
            results[fmt] = {
                "hearth_check_s": hearth_s,
                "bare_soffice_s": bare_s,
                "ratio": round(hearth_s / bare_s, 2),
                "where": {
                    "process_start_s": round(hearth_s - receipt_s, 3),
                    "check_file_s": receipt_s,
                    "libreoffice_s": 0.0 if fmt == "pdf" else bare_s,
                    "our_checks_s": med(r["checks_only"]),
                    "after_render_s": med(r["post_render"]),
                },
                "pages": receipts[fmt]["pages"],
                "ok": receipts[fmt]["ok"],
                "problems": receipts[fmt]["problems"],
                "bytes": files[fmt].stat().st_size,
                "runs": {k: [round(x, 3) for x in v] for k, v in r.items()},
            }
        office = [f for f in formats if f != "pdf"]
        report = {
            "bench": "check",
            "date": datetime.date.today().isoformat(),
            "machine": {
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "libreoffice": libreoffice_version(tools.soffice),
                # Why: LibreOffice launches are CPU-bound; on a shared machine the load
                # says how far these numbers are from an idle one.
                "load_avg_before": load_before,
                "load_avg_after": list(os.getloadavg()),
            },
            "pages": args.pages,
            "runs": args.runs,
            "targets": {"five_page_document_s": TARGET_DOC_S, "ratio_to_bare": TARGET_RATIO},
            "results": results,
            "meets": {
                "docx_within_s": results["docx"]["hearth_check_s"] <= TARGET_DOC_S
                if "docx" in results
                else None,
                "ratio": all(results[f]["ratio"] <= TARGET_RATIO for f in office)
                if office
                else None,
            },
        }
        print_table(report)
        _runs.save(args.out, report)
        log(f"wrote {args.out}")
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


def libreoffice_version(soffice: str) -> str | None:
    try:
        out = subprocess.run(
            [soffice, "--version"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip() or None


def print_table(report: dict[str, Any]) -> None:
    print(
        f"\nhearth check vs bare soffice --convert-to pdf, {report['pages']} pages,"
        f" median of {report['runs']} runs (s)\n"
    )
    print(
        "| format | pages | ok | hearth check | bare soffice | ratio | start | LibreOffice"
        " | our checks | after render |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for fmt, r in report["results"].items():
        w = r["where"]
        print(
            f"| {fmt} | {r['pages']} | {'yes' if r['ok'] else 'NO'} | {r['hearth_check_s']:.2f}"
            f" | {r['bare_soffice_s']:.2f} | {r['ratio']:.2f}x | {w['process_start_s']:.2f}"
            f" | {w['libreoffice_s']:.2f} | {w['our_checks_s']:.3f} | {w['after_render_s']:.3f} |"
        )
    meets = report["meets"]
    print(
        f"\ntargets: 5-page docx ≤ {TARGET_DOC_S:.0f} s: "
        f"{'n/a' if meets['docx_within_s'] is None else 'met' if meets['docx_within_s'] else 'MISSED'};"
        f" ≤ {TARGET_RATIO}x bare (office formats): "
        f"{'n/a' if meets['ratio'] is None else 'met' if meets['ratio'] else 'MISSED'}"
    )


if __name__ == "__main__":
    sys.exit(main())
