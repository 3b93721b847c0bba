"""Where a bench's numbers go: the latest run as JSON, and every run kept beside it.

``save(out, report)`` writes ``out`` (the latest run, which the README tables are made
from) atomically, and appends the same report as one line to ``<out stem>.runs.jsonl``
with when, on which commit and with which arguments it ran. The history is what lets a
reader check a README number against the runs it came from, and see how noisy they were.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def machine(args: Any) -> dict[str, Any]:
    """The head of a report: the run's arguments, and the machine's cores and load."""
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    return {"config": config, "cpus": os.cpu_count(), "load_average": os.getloadavg()}


def history_path(out: Path) -> Path:
    """``bench/results/x.json`` -> ``bench/results/x.runs.jsonl``."""
    return out.with_name(out.stem + ".runs.jsonl")


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10
    ).stdout.strip()


def _commit() -> dict[str, Any]:
    try:
        rev = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": rev or None, "dirty": bool(dirty)}


def save(out: Path, report: dict[str, Any]) -> None:
    """Write the latest report to ``out`` and append it to the run history beside it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    record = {
        "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        **_commit(),
        "script": Path(sys.argv[0]).name,
        "argv": sys.argv[1:],
        "report": report,
    }
    with history_path(out).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def runs(out: Path) -> list[dict[str, Any]]:
    """Every run recorded beside ``out``, oldest first (an unreadable line is skipped)."""
    path = history_path(out)
    if not path.exists():
        return []
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            kept.append(json.loads(line))
        except ValueError:
            continue
    return kept
