"""Cost of one ``wh.memory.save`` as the Markdown file it appends to grows.

For each size N (100, 1,000 and 5,000 entries by default) a fresh project layer holds N
entries in ``MEMORY.md``, written in one go as N saves would leave them (the file in
hearth's format, one ``memory_meta.json`` record each, the index built); the script checks
that hearth then finds a seeded entry by search and by id. Then ``--saves`` further
sentences (distinct; one untimed warm-up save first) are saved with
``wh.memory.save(text, tags=[...])``, each timed in CPU (``time.thread_time``) and wall
(``time.perf_counter``) time.

Side by side, in the same rounds (hearth, then each floor, sentence by sentence), the
floor any durable and searchable save must pay, each on its own copy of the same seeded
file at the same N:

- ``file_fsync``: open the file with ``O_APPEND``, write the same Markdown line, ``fsync``;
- ``file_fsync_fts5``: that, then insert the line into an SQLite FTS5 table
  (``porter unicode61``, ``journal_mode=WAL``, ``synchronous=FULL``) already holding the N
  earlier lines, in one transaction, and commit.

Afterwards every save must be there: hearth's entries counted through the library (and
the last sentence found by search), the floors' lines and rows counted.

Headline figures, each the median over ``--runs`` whole runs (fresh folders each run):
hearth's CPU per save at the largest N ÷ at the smallest (how much a save grows with
the file: what is left of that growth is rewriting ``memory_meta.json``, one JSON
document by DESIGN §4, and hashing and decoding the file, all in C), and hearth ÷
``file_fsync_fts5`` at each N (wall and CPU).

    python bench/memory_save.py [--sizes 100,1000,5000] [--saves 40] [--runs 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from workhearth.app import Workhearth  # noqa: E402
from workhearth.memory.entries import find_entries, format_entry, new_entry_id  # noqa: E402
from workhearth.memory.files import MEMORY_FILE  # noqa: E402
from workhearth.memory.meta import EntryMeta  # noqa: E402

WORDS = (
    "deploy pipeline staging database invoice budget meeting release office printer "
    "backup laptop vendor contract payroll roadmap sprint customer ticket migration"
).split()
PATHS = ("hearth", "file_fsync", "file_fsync_fts5")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def seed_text(i: int) -> str:
    a, b, c = WORDS[i % len(WORDS)], WORDS[(i * 3) % len(WORDS)], WORDS[(i * 11) % len(WORDS)]
    return f"Seed fact {i}: the {a} and the {b} belong to the {c} team"


def save_text(n: int, k: int) -> str:
    a, b, c = WORDS[(k * 7) % len(WORDS)], WORDS[(k * 13 + 5) % len(WORDS)], WORDS[k % 17]
    return f"Saved note {k} at size {n}: the {a} waits for the {b} before the {c} review"


def seed(home: Path, workspace: Path, n: int) -> tuple[Path, list[str], list[str]]:
    """A project layer of ``n`` entries as ``n`` saves leave it, written in one go.

    Returns the Markdown file, the ids and the lines (``- text ^m-id``), in order.
    """
    wh = Workhearth(home=home, workspace=workspace)
    store = wh.memory.store("project")
    now = time.time()
    ids: list[str] = []
    entry_lines: list[str] = []
    with store.locked():
        for i in range(n):
            entry_id = new_entry_id()
            while entry_id in store.meta.entries:
                entry_id = new_entry_id()
            (line,) = format_entry(seed_text(i), entry_id)
            ids.append(entry_id)
            entry_lines.append(line)
            at = now - n + i
            tags = [WORDS[i % len(WORDS)]]
            store.meta.put(entry_id, EntryMeta(tags=tags, created=at, updated=at, file=MEMORY_FILE))
        store.folder.mkdir(parents=True, exist_ok=True)
        path = store.folder / MEMORY_FILE
        path.write_text("\n".join(["# Memory", "", *entry_lines]) + "\n", encoding="utf-8")
        store.meta.save()
    wh.memory.index()
    # Why: the seeded file must be one hearth reads as its own, by id and by words.
    probe = n // 2
    assert wh.memory.get(ids[probe]).content == seed_text(probe), "seeded entry not found by id"
    hits = wh.memory.search(seed_text(probe), limit=5)
    assert ids[probe] in {h.entry_id for h in hits}, "seeded entry not found by search"
    wh.memory.close()
    return path, ids, entry_lines


class FileFloor:
    """Append a line with ``O_APPEND`` and ``fsync`` it (a fresh descriptor each time,
    as hearth opens the file at each save)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def save(self, line: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        try:
            os.write(fd, (line + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        pass


class FtsFloor(FileFloor):
    """The file append, then the line into an FTS5 table in one committed transaction."""

    def __init__(self, path: Path, db: Path, earlier: list[str]) -> None:
        super().__init__(path)
        self.con = sqlite3.connect(db, isolation_level=None)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=FULL")
        self.con.execute("CREATE VIRTUAL TABLE lines USING fts5(line, tokenize='porter unicode61')")
        self.con.execute("BEGIN")
        self.con.executemany("INSERT INTO lines(line) VALUES (?)", ((t,) for t in earlier))
        self.con.execute("COMMIT")

    def save(self, line: str) -> None:
        super().save(line)
        self.con.execute("BEGIN")
        self.con.execute("INSERT INTO lines(line) VALUES (?)", (line,))
        self.con.execute("COMMIT")

    def rows(self) -> int:
        return self.con.execute("SELECT count(*) FROM lines").fetchone()[0]

    def close(self) -> None:
        self.con.close()


def stats(cpu: list[float], wall: list[float]) -> dict[str, Any]:
    ordered = sorted(wall)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]  # nearest rank, low
    return {
        "cpu_ms": round(statistics.median(cpu) * 1000, 3),
        "wall_ms": round(statistics.median(wall) * 1000, 3),
        "p90_wall_ms": round(p90 * 1000, 3),
        "cpu_ms_each": [round(s * 1000, 3) for s in cpu],
        "wall_ms_each": [round(s * 1000, 3) for s in wall],
    }


def count_entries(home: Path, workspace: Path, last: str, last_id: str) -> dict[str, Any]:
    """What a fresh ``Workhearth`` sees: ids in the Markdown, index rows, the last save."""
    wh = Workhearth(home=home, workspace=workspace)
    store = wh.memory.store("project")
    wh.memory.index()
    in_file = len(find_entries(store.read_lines(MEMORY_FILE)))
    indexed = sum(1 for _ in store.index.entry_starts())
    found = last_id in {h.entry_id for h in wh.memory.search(last, limit=3)}
    wh.memory.close()
    return {"in_markdown": in_file, "indexed": indexed, "last_found_by_search": found}


def one_size(n: int, saves: int, base: Path, keep: bool) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"n{n}-", dir=base))
    try:
        home, workspace = root / "home", root / "workspace"
        workspace.mkdir(parents=True)
        t0 = time.perf_counter()
        path, _ids, earlier = seed(home, workspace, n)
        seed_s = time.perf_counter() - t0
        size_bytes = path.stat().st_size
        floors: dict[str, FileFloor] = {}
        for name in PATHS[1:]:
            copy = root / f"{name}.md"
            shutil.copyfile(path, copy)
            floors[name] = (
                FileFloor(copy)
                if name == "file_fsync"
                else FtsFloor(copy, root / "fts.db", earlier)
            )
        wh = Workhearth(home=home, workspace=workspace)
        # Why a warm-up: the first save opens the index and reads the meta, once per process.
        warm = f"Warm-up note at size {n}: the first save opens what later saves reuse"
        warm_entry = wh.memory.save(warm, tags=["bench"])
        for floor in floors.values():
            floor.save(f"- {warm} ^{new_entry_id()}")
        cpu: dict[str, list[float]] = {p: [] for p in PATHS}
        wall: dict[str, list[float]] = {p: [] for p in PATHS}
        saved_ids = [warm_entry.id]
        text = ""
        for k in range(saves):
            text = save_text(n, k)
            tags = [WORDS[k % len(WORDS)]]
            c0, w0 = time.thread_time(), time.perf_counter()
            entry = wh.memory.save(text, tags=tags)
            w1, c1 = time.perf_counter(), time.thread_time()
            cpu["hearth"].append(c1 - c0)
            wall["hearth"].append(w1 - w0)
            assert not entry.existed, f"save {k} found an earlier copy"
            saved_ids.append(entry.id)
            # Why hearth's own id: each floor appends the very line hearth just wrote.
            (line,) = format_entry(text, entry.id)
            for name, floor in floors.items():
                c0, w0 = time.thread_time(), time.perf_counter()
                floor.save(line)
                w1, c1 = time.perf_counter(), time.thread_time()
                cpu[name].append(c1 - c0)
                wall[name].append(w1 - w0)
        wh.memory.close()
        fts = floors["file_fsync_fts5"]
        assert isinstance(fts, FtsFloor)
        check = count_entries(home, workspace, text, saved_ids[-1])
        check["expected"] = n + 1 + saves
        check["floor_lines"] = {
            name: sum(1 for ln in f.path.read_text().splitlines() if ln.startswith("- "))
            for name, f in floors.items()
        }
        check["floor_fts_rows"] = fts.rows()
        check["ids_distinct"] = len(set(saved_ids)) == len(saved_ids)
        for floor in floors.values():
            floor.close()
        kept = {"home": str(home), "workspace": str(workspace)} if keep else {}
        return {
            **kept,
            "entries": n,
            "file_bytes_before": size_bytes,
            "file_bytes_after": path.stat().st_size,
            "seed_s": round(seed_s, 3),
            "paths": {p: stats(cpu[p], wall[p]) for p in PATHS},
            "check": check,
        }
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def ratio(a: float, b: float) -> float | None:
    return round(a / b, 3) if b > 0 else None


def one_run(args: argparse.Namespace) -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="hearth-bench-memory-save-", dir=args.tmp))
    try:
        sizes = {}
        for n in args.sizes:
            log(f"  size {n}: seeding, then {args.saves} saves")
            sizes[str(n)] = one_size(n, args.saves, base, args.keep)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    small, large = str(args.sizes[0]), str(args.sizes[-1])
    hearth = {n: s["paths"]["hearth"] for n, s in sizes.items()}
    fts = {n: s["paths"]["file_fsync_fts5"] for n, s in sizes.items()}
    plain = {n: s["paths"]["file_fsync"] for n, s in sizes.items()}
    figures: dict[str, Any] = {
        "cpu_growth": ratio(hearth[large]["cpu_ms"], hearth[small]["cpu_ms"]),
        "wall_growth": ratio(hearth[large]["wall_ms"], hearth[small]["wall_ms"]),
        "vs_floor_wall": {n: ratio(hearth[n]["wall_ms"], fts[n]["wall_ms"]) for n in sizes},
        "vs_floor_cpu": {n: ratio(hearth[n]["cpu_ms"], fts[n]["cpu_ms"]) for n in sizes},
        "vs_file_fsync_wall": {n: ratio(hearth[n]["wall_ms"], plain[n]["wall_ms"]) for n in sizes},
    }
    return {"sizes": sizes, "figures": figures, "load_average": os.getloadavg()}


def med(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(statistics.median(kept), 3) if kept else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,5000", help="entries already in MEMORY.md")
    ap.add_argument("--saves", type=int, default=40, help="timed saves at each size")
    ap.add_argument("--runs", type=int, default=3, help="whole runs; the table shows medians")
    ap.add_argument("--tmp", type=Path, default=None, help="where the temporary folders go")
    ap.add_argument(
        "--keep", action="store_true", help="keep the folders (their paths go in the JSON)"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "memory_save.json")
    args = ap.parse_args()
    try:
        args.sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        raise SystemExit(
            f"--sizes takes whole numbers separated by commas, not {args.sizes!r}"
        ) from None
    if len(args.sizes) < 2 or args.saves < 1 or args.runs < 1:
        raise SystemExit("need two sizes or more, one save or more, one run or more")

    runs = []
    for i in range(args.runs):
        log(f"run {i + 1} of {args.runs}")
        runs.append(one_run(args))
    keys = [str(n) for n in args.sizes]
    median: dict[str, Any] = {
        n: {
            p: {
                stat: med([r["sizes"][n]["paths"][p][stat] for r in runs])
                for stat in ("cpu_ms", "wall_ms", "p90_wall_ms")
            }
            for p in PATHS
        }
        for n in keys
    }
    # Why the median of each run's ratio: a run's rows share its moment on this shared
    # machine, so its ratio is steadier than a ratio of medians taken from different runs.
    figures: dict[str, Any] = {
        "cpu_growth": med([r["figures"]["cpu_growth"] for r in runs]),
        "wall_growth": med([r["figures"]["wall_growth"] for r in runs]),
        **{
            name: {n: med([r["figures"][name][n] for r in runs]) for n in keys}
            for name in ("vs_floor_wall", "vs_floor_cpu", "vs_file_fsync_wall")
        },
    }
    growth = figures["cpu_growth"]
    all_saved = all(
        c["in_markdown"] == c["indexed"] == c["expected"]
        and c["last_found_by_search"]
        and c["ids_distinct"]
        and set(c["floor_lines"].values()) == {c["expected"]}
        and c["floor_fts_rows"] == c["expected"]
        for r in runs
        for c in (s["check"] for s in r["sizes"].values())
    )

    print(
        f"## `wh.memory.save` per save vs entries in MEMORY.md ({args.saves} saves at each "
        f"size; medians of {args.runs} runs, ratios the median of each run's ratio)\n"
    )
    print("| entries | path | CPU ms | wall ms | p90 wall ms | hearth ÷ path, wall |")
    print("|---:|---|---:|---:|---:|---:|")
    for n in keys:
        for p in PATHS:
            row = median[n][p]
            name = {"file_fsync": "vs_file_fsync_wall", "file_fsync_fts5": "vs_floor_wall"}.get(p)
            vs = f"{figures[name][n]}×" if name else ""
            print(
                f"| {n} | {p} | {row['cpu_ms']} | {row['wall_ms']} | {row['p90_wall_ms']} | {vs} |"
            )
    print()
    each = ", ".join(str(r["figures"]["cpu_growth"]) for r in runs)
    print(f"hearth CPU per save, {keys[-1]} ÷ {keys[0]} entries: {growth} ({each})")
    print(f"hearth wall per save, {keys[-1]} ÷ {keys[0]} entries: {figures['wall_growth']}")
    for n in keys:
        print(
            f"hearth ÷ file_fsync_fts5 at {n}: wall {figures['vs_floor_wall'][n]}, "
            f"CPU {figures['vs_floor_cpu'][n]}"
        )
    print(f"every save made and found: {all_saved}")

    out = {
        **_runs.machine(args),
        "median": median,
        "figures": figures,
        "all_saved": all_saved,
        "runs": runs,
    }
    _runs.save(args.out, out)
    log(f"wrote {args.out}")
    if not all_saved:
        raise SystemExit("some save is missing: see runs[].sizes[].check in the JSON")


if __name__ == "__main__":
    main()
