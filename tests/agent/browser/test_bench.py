"""bench/browser.py still runs end to end (2 rounds) and writes its JSON; it measures nothing here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.browser.browsing import needs_chromium

pytest.importorskip("playwright.sync_api")
ROOT = Path(__file__).resolve().parents[3]


@needs_chromium
def test_browser_bench_runs(tmp_path: Path) -> None:
    out = tmp_path / "b.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "browser.py"), "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["snapshot_fresh"]["median_ms"] > 0 and report["aria_fresh"]["n"] == 2
    assert report["stop"]["call_returned_ms"] > 0
    assert "| browser_click (registry) |" in proc.stdout
    history = out.with_name("b.runs.jsonl").read_text().splitlines()
    assert json.loads(history[-1])["report"] == report
