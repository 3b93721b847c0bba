"""The pdf skill's ``md_to_pdf.py`` beside md_to_docx + LibreOffice's PDF export.

One Chinese one-page report (headings, paragraphs with bold, a block quote, a table with
right/centre-aligned columns and bold cells, a list, a code block) made fresh each run.
Each path runs in a fresh process, as the agent runs it:

- ``md_to_pdf_first``: md_to_pdf.py with an empty font cache (the first report on a machine);
- ``md_to_pdf``: md_to_pdf.py with its font cache kept (every report after that);
- ``md_to_docx``: the docx skill's md_to_docx.py, then ``soffice_pdf``: LibreOffice's
  ``--convert-to pdf`` of that .docx on a kept, warm profile; ``docx_then_pdf`` is their sum.

``--runs`` times each, alternating; medians. Target (issue #21): md_to_pdf ≤ 1.5 s.
Run ``.venv/bin/python bench/md_to_pdf.py``; a table to stdout, JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

# Why from hearth check: one definition of LibreOffice's command line for both.
from workhearth.check.render import soffice_command  # noqa: E402

SKILLS = ROOT / "src" / "workhearth" / "skills" / "builtin"
MD_TO_PDF = SKILLS / "pdf" / "scripts" / "md_to_pdf.py"
MD_TO_DOCX = SKILLS / "docx" / "scripts" / "md_to_docx.py"
TARGET_S = 1.5

REPORT = """# 2026 年第三季度经营报告

本季度**营业收入**同比增长 12.4%，各区域均完成目标。华东与华北贡献了主要增量，
新产品线的毛利率高于预期。The quarter closed *ahead of plan* in every region.

> 注意：本报告仅供内部使用，数据未经审计。

## 区域业绩

| 区域 | 收入（万元） | 同比 | 负责人 |
| --- | ---: | :---: | --- |
| **华东** | 12,480 | +15.2% | 张三 |
| 华北 | 9,360 | +11.8% | 李四 |
| 华南 | 7,215 | +9.6% | 王五 |
| **合计** | **29,055** | **+12.4%** | — |

## 下季度重点

1. 扩大华南渠道覆盖，目标新增 40 家经销商。
2. 完成 ERP 系统升级（`v3.2`），上线新的报表模块。
3. 控制差旅与营销费用，费用率降至 18% 以内。

```
收入 = 单价 × 数量
```
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def timed(cmd: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{Path(cmd[1]).name if len(cmd) > 1 else cmd[0]} failed: {done.stderr}")
    return wall


def md_to_pdf(source: Path, out: Path, cache: Path) -> float:
    cmd = [sys.executable, str(MD_TO_PDF), str(source), "-o", str(out), "--force"]
    return timed([*cmd, "--font-cache", str(cache)])


def docx_then_pdf(source: Path, folder: Path, soffice: str, profile: Path) -> tuple[float, float]:
    docx = folder / "report.docx"
    to_docx = timed([sys.executable, str(MD_TO_DOCX), str(source), "-o", str(docx), "--force"])
    export = timed(soffice_command(soffice, profile, docx, folder / "lo"))
    if not (folder / "lo" / "report.pdf").is_file():
        raise SystemExit("LibreOffice made no PDF of report.docx")
    return to_docx, export


def pages(path: Path) -> int:
    from pypdf import PdfReader

    return len(PdfReader(path).pages)


def measure(base: Path, runs: int, soffice: str | None) -> dict[str, Any]:
    source = base / "report.md"
    source.write_text(REPORT, encoding="utf-8")
    cache = base / "fonts"
    profile = base / "lo-profile"
    raw: dict[str, list[float]] = {
        k: [] for k in ("md_to_pdf_first", "md_to_pdf", "md_to_docx", "soffice_pdf")
    }
    log("warm-up: one run of each path (page cache, LibreOffice profile)")
    md_to_pdf(source, base / "warm.pdf", base / "warm-fonts")
    if soffice:
        docx_then_pdf(source, base, soffice, profile)
    md_to_pdf(source, base / "report.pdf", cache)
    for run in range(runs):
        log(f"run {run + 1}/{runs}")
        first = base / f"fresh-fonts-{run}"
        raw["md_to_pdf_first"].append(md_to_pdf(source, base / "first.pdf", first))
        shutil.rmtree(first, ignore_errors=True)
        raw["md_to_pdf"].append(md_to_pdf(source, base / "report.pdf", cache))
        if soffice:
            to_docx, export = docx_then_pdf(source, base, soffice, profile)
            raw["md_to_docx"].append(to_docx)
            raw["soffice_pdf"].append(export)
    med = {k: round(statistics.median(v), 3) for k, v in raw.items() if v}
    if soffice:
        med["docx_then_pdf"] = round(med["md_to_docx"] + med["soffice_pdf"], 3)
    return {
        "median_s": med,
        "raw_s": {k: [round(x, 3) for x in v] for k, v in raw.items()},
        "pages": {
            "md_to_pdf": pages(base / "report.pdf"),
            **({"libreoffice": pages(base / "lo" / "report.pdf")} if soffice else {}),
        },
    }


def table(result: dict[str, Any]) -> str:
    med = result["median_s"]
    rows = [
        ("md_to_pdf.py, font cache kept", "md_to_pdf"),
        ("md_to_pdf.py, empty font cache (first report)", "md_to_pdf_first"),
        ("md_to_docx.py", "md_to_docx"),
        ("LibreOffice --convert-to pdf (warm profile)", "soffice_pdf"),
        ("md_to_docx + LibreOffice export", "docx_then_pdf"),
    ]
    lines = ["| path | median s |", "| --- | ---: |"]
    lines += [f"| {label} | {med[key]:.2f} |" for label, key in rows if key in med]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "md_to_pdf.json"))
    parser.add_argument("--tmp", help="work folder (default: a temporary one)")
    parser.add_argument(
        "--no-libreoffice", action="store_true", help="time md_to_pdf only (no peer)"
    )
    args = parser.parse_args(argv)
    soffice = None if args.no_libreoffice else shutil.which("soffice")
    if not args.no_libreoffice and soffice is None:
        raise SystemExit("LibreOffice (soffice) is not installed; pass --no-libreoffice")
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        result = measure(Path(tmp), max(args.runs, 1), soffice)
    report = {
        "bench": "md_to_pdf",
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "runs": args.runs,
        **result,
        "target_s": TARGET_S,
        "meets": {"md_to_pdf_within_s": result["median_s"]["md_to_pdf"] <= TARGET_S},
    }
    _runs.save(Path(args.out), report)
    print(table(result))
    print(f"\nmd_to_pdf ≤ {TARGET_S} s: {report['meets']['md_to_pdf_within_s']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
