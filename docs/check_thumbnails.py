"""Make the README's row of `hearth check` thumbnails: one file per format, made by the
built-in skills' own scripts from a small bilingual report, checked by the real
``hearth check`` in a temporary HEARTH_HOME; the first thumbnail of each is copied here.

    .venv/bin/python docs/check_thumbnails.py            # into docs/
    .venv/bin/python docs/check_thumbnails.py --out /tmp/thumbs
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ROOT / "src" / "workhearth" / "skills" / "builtin"
REPORT = """# 季度报告 Quarterly report

Sales grew **12 %** in the third quarter; costs held steady. 华东地区增长最快。

| 地区 Region | 销售额 Sales | 增长 Growth |
|---|---:|---:|
| 华东 East | 1,240 | +14 % |
| 华南 South | 980 | +9 % |

> 下季度重点：新客户与续约。
"""
SALES = "地区,产品,单价,数量\n华东,苹果,1.5,10\n华南,香蕉,0.8,25\nNorth,Cherry,12,3\nWest,Durian,2.25,8\n"
DECK = """# 2026 年第三季度 Q3 review

## 亮点 Highlights
- 销售额增长 12 %
- Costs held steady
- 华东 East grew fastest (+14 %)

## 下一步 Next steps
- 新客户 New customers
- 续约 Renewals
"""


def make(work: Path) -> dict[str, Path]:
    (work / "report.md").write_text(REPORT, encoding="utf-8")
    (work / "sales.csv").write_text(SALES, encoding="utf-8")
    (work / "deck.md").write_text(DECK, encoding="utf-8")
    files = {
        "docx": (SKILLS / "docx/scripts/md_to_docx.py", ["report.md", "-o", "report.docx"]),
        "xlsx": (
            SKILLS / "xlsx/scripts/create_from_data.py",
            ["sales.csv", "-o", "sales.xlsx", "--formula", "金额=[单价]*[数量]"],
        ),
        "pptx": (SKILLS / "pptx/scripts/outline_to_deck.py", ["deck.md", "-o", "deck.pptx"]),
        "pdf": (SKILLS / "pdf/scripts/md_to_pdf.py", ["report.md", "-o", "report.pdf"]),
    }
    out = {}
    for fmt, (script, args) in files.items():
        subprocess.run([sys.executable, str(script), *args], cwd=work, check=True)
        out[fmt] = work / args[args.index("-o") + 1]
    recalc = SKILLS / "xlsx/scripts/recalculate.py"
    subprocess.run(
        [sys.executable, str(recalc), "sales.xlsx", "-o", "sales-ok.xlsx"], cwd=work, check=True
    )
    out["xlsx"] = work / "sales-ok.xlsx"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        made = make(work)
        env = {**os.environ, "HEARTH_HOME": str(work / "home")}
        hearth = [sys.executable, "-m", "workhearth", "check", "--json"]
        done = subprocess.run(
            [*hearth, *map(str, made.values())], cwd=work, env=env, capture_output=True, text=True
        )
        for receipt in json.loads(done.stdout):
            fmt = receipt["format"]
            verdict = "ok" if receipt["ok"] else receipt["problems"]
            print(f"{fmt}: {verdict} · {receipt['pages']} pages")
            shutil.copyfile(receipt["thumbnails"][0], out / f"check-{fmt}.png")
    print(f"wrote check-docx/xlsx/pptx/pdf.png into {out}")


if __name__ == "__main__":
    main()
