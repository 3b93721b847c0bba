"""Wall time of everyday ``hearth memory`` commands, each in a fresh process.

A project memory of N entries (1,000 by default: ``MEMORY.md`` with N id-carrying
entries, their meta and a built index, made through the library) in a temporary
``HEARTH_HOME``; then, each in a new process and timed from ``exec`` to exit:

- ``hearth memory search WORD`` (a word in about one entry in ten),
- ``hearth memory save TEXT`` (a new sentence every run: each run really appends),
- ``hearth memory list``,
- baselines: ``hearth --help`` and ``python -c pass`` with the same interpreter.

Median of ``--runs`` runs (after one warm-up run each, so the page cache is warm).
The target for search and save is 0.25 s. ``-X importtime`` of one search names
the modules that cost the most.

Run ``.venv/bin/python bench/memory_cli.py`` (about 30 s) or ``--quick``.
Tables go to stdout, progress to stderr, raw numbers to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
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

from workhearth.app import Workhearth  # noqa: E402
from workhearth.memory.entries import format_entry, new_entry_id  # noqa: E402
from workhearth.memory.files import MEMORY_FILE  # noqa: E402
from workhearth.memory.meta import EntryMeta  # noqa: E402

TARGET_S = 0.25
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
_saves = itertools.count()


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def hearth_command() -> list[str]:
    script = shutil.which("hearth", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "workhearth"]


def build_memory(home: Path, workspace: Path, entries: int) -> Path:
    """A project layer of ``entries`` saved entries, written in one go (as N saves would)."""
    wh = Workhearth(home=home, workspace=workspace)
    store = wh.memory.store("project")
    now = time.time()
    lines = ["# Memory", ""]
    with store.locked():
        for i in range(entries):
            entry_id = new_entry_id()
            while entry_id in store.meta.entries:
                entry_id = new_entry_id()
            topic = WORDS[i % len(WORDS)]
            content = (
                f"Fact {i} about {topic}: the service {i} runs on port {8000 + i} in zone {i % 7}."
            )
            lines += format_entry(content, entry_id)
            at = now - entries + i
            store.meta.put(
                entry_id, EntryMeta(tags=[topic], created=at, updated=at, file=MEMORY_FILE)
            )
        (store.folder / MEMORY_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
        store.meta.save()
    wh.memory.index()
    wh.memory.close()
    return store.folder


def time_once(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[-3:])} failed: {proc.stderr.strip()[-500:]}")
    return took


def median_s(make_argv: Any, runs: int, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    time_once(make_argv(), env, cwd)  # warm-up: page cache, .pyc files
    samples = [time_once(make_argv(), env, cwd) for _ in range(runs)]
    return {"median_s": statistics.median(samples), "samples_s": samples}


def import_costs(env: dict[str, str], cwd: Path, top: int = 12) -> list[dict[str, Any]]:
    """The modules with the largest cumulative import time in one ``memory search``."""
    argv = [sys.executable, "-X", "importtime", "-m", "workhearth"]
    proc = subprocess.run(
        [*argv, "memory", "search", WORDS[3]], env=env, cwd=cwd, capture_output=True, text=True
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        self_us, cum_us, name = line[len("import time:") :].split("|", 2)
        rows.append(
            {
                "module": name.rstrip(),
                "self_ms": int(self_us) / 1000,
                "cumulative_ms": int(cum_us) / 1000,
            }
        )
    # Why: a top-level import is indented by one space; deeper ones by more.
    tops = [r for r in rows if not r["module"].startswith("  ")]
    for r in tops:
        r["module"] = r["module"].strip()
    return sorted(tops, key=lambda r: -r["cumulative_ms"])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--quick", action="store_true", help="5 runs each")
    parser.add_argument("--tmp", type=Path, default=None, help="where the temporary home goes")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.quick:
        args.runs = 5
    out = args.out or ROOT / "bench" / "results" / (
        "memory_cli-quick.json" if args.quick else "memory_cli.json"
    )

    base = Path(tempfile.mkdtemp(prefix="hearth-bench-memory-cli-", dir=args.tmp))
    try:
        home, workspace = base / "home", base / "workspace"
        workspace.mkdir(parents=True)
        log(f"building a memory of {args.entries} entries")
        folder = build_memory(home, workspace, args.entries)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
        env["HEARTH_HOME"] = str(home)
        hearth = hearth_command()
        commands = {
            "memory search": lambda: [*hearth, "memory", "search", WORDS[3]],
            "memory save": lambda: [
                *hearth,
                "memory",
                "save",
                f"Bench sentence number {next(_saves)} is new.",
            ],
            "memory list": lambda: [*hearth, "memory", "list"],
            "hearth --help": lambda: [*hearth, "--help"],
            "python -c pass": lambda: [sys.executable, "-c", "pass"],
        }
        results: dict[str, Any] = {}
        for name, make in commands.items():
            log(f"timing {name} ({args.runs} runs)")
            results[name] = median_s(make, args.runs, env, workspace)
        costs = import_costs(env, workspace)
        entries_after = sum(
            1 for line in (folder / MEMORY_FILE).read_text().splitlines() if " ^m-" in line
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"## `hearth memory` wall time, {args.entries} entries ({args.runs} runs, median)\n")
    print("| command | median | vs `hearth --help` | vs target 0.25 s |")
    print("|---|---:|---:|---|")
    help_s = results["hearth --help"]["median_s"]
    for name, row in results.items():
        t = row["median_s"]
        target = ""
        if name in ("memory search", "memory save"):
            target = f"{t / TARGET_S:.2f}× ({'meets' if t <= TARGET_S else 'MISSES'})"
        print(f"| `{name}` | {t:.3f} s | {t / help_s:.2f}× | {target} |")
    print("\nLargest imports of one `memory search` (cumulative):\n")
    print("| module | cumulative | self |")
    print("|---|---:|---:|")
    for row in costs:
        print(f"| `{row['module']}` | {row['cumulative_ms']:.1f} ms | {row['self_ms']:.1f} ms |")

    out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "entries": args.entries,
        "entries_after_saves": entries_after,
        "runs": args.runs,
        "target_s": TARGET_S,
        "results": results,
        "import_costs": costs,
    }
    _runs.save(out, data)
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
