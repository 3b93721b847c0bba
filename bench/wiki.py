"""Repowiki (issue 24): build, no-change update and one-change update of a 2,000-file repository.

Everything runs through hearth's real code (``Workhearth(...).wiki.build()`` /
``.update()``, a fresh ``Workhearth`` for each call as a new ``hearth`` process would
have) against ``tests/fake_providers.py``'s local OpenAI-compatible server, which answers
every request at once with the same short page text and counts the requests. Per run: a
fresh ``HEARTH_HOME`` and a fresh generated repository (``bench/_wiki_repo.py``: a git
repo of ``--files`` files — nested Python packages, Markdown docs, CSV / JSON data, 1–8 KB
each — the same bytes every run).

1. **build**: wall time and model calls (= pages + overview, checked against the pages on
   disk and the server's count); time per call beside the model's own time (a stopwatch
   around ``HttpChatModel.stream``, hearth's HTTP model client: the request, the scripted
   server, the streamed reply parsed).
2. **no-change update**, ``--reps`` times: wall time and model calls. Target: ≤ 1 s and 0.
   Then one more under cProfile: where its time goes.
3. **one-change update**: one Python module gets a function appended; the calls must be
   exactly the pages whose front matter lists it among their ``sources``, plus the
   overview when its ``links`` name one of them (read from the page files, not from the
   library's report); its wall time.
4. **the floor** of noticing changes among the files, on the same clean repository:
   ``git status --porcelain``, and in process a walk that stats every file, and one that
   reads and sha256-hashes every file; each ``--reps`` times.
5. **the command**: the real ``hearth wiki update`` (a no-change update, process start
   included) beside ``hearth --help`` (process start alone), once per run.

Medians of ``--runs`` runs (each figure the median over the runs of that run's own
median); ratios are taken inside each run first, because this 2-core machine is noisy.
Tables go to stdout, progress to stderr, every number to ``--out`` (JSON) and its
history (``bench/_runs.py``). ``--quick`` (200 files, 1 run) takes seconds
(tests/test_benches.py).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import hashlib
import io
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

import _runs
from _wiki_repo import Repo, git, make_repo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))  # the scripted model server of tests/fake_providers.py

from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text  # noqa: E402

from workhearth.app import Workhearth  # noqa: E402
from workhearth.config import load_config  # noqa: E402
from workhearth.models.http import HttpChatModel  # noqa: E402

SEED = 20261202
TARGET_NO_CHANGE_S = 1.0
PAGE_TEXT = (
    "This part of the project keeps its records in small modules; "
    "see `src/acme/__init__.py:1` for where it starts.\n"
)
NO_CALLS = 10**6  # the cap given to build: the whole wiki in one run
_script = shutil.which("hearth", path=Path(sys.executable).parent)
HEARTH_CMD = [_script] if _script else [sys.executable, "-m", "workhearth"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the model
class PageServer(FakeProvider):
    """Answers every request at once with the same short page; counts them."""

    def __init__(self) -> None:
        super().__init__([])
        self.reply = Reply(pieces=openai_sse(openai_text([PAGE_TEXT])))
        self.requests = 0
        self.request_bytes: list[int] = []
        self._count_lock = threading.Lock()

    def reply_for(self, raw: bytes) -> Reply:
        with self._count_lock:
            self.requests += 1
            self.request_bytes.append(len(raw))
        return self.reply


class ModelClock:
    """Seconds spent inside hearth's HTTP model client (every call, any thread)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._lock = threading.Lock()
        self._inner = HttpChatModel.stream

    def install(self) -> None:
        inner, clock = self._inner, self

        def stream(model: HttpChatModel, request: Any) -> Iterator[Any]:
            started = time.perf_counter()
            try:
                yield from inner(model, request)
            finally:
                with clock._lock:
                    clock.seconds += time.perf_counter() - started
                    clock.calls += 1

        HttpChatModel.stream = stream  # type: ignore[method-assign,assignment]

    def reset(self) -> None:
        with self._lock:
            self.seconds, self.calls = 0.0, 0


# --------------------------------------------------------------------------- one run
class Run:
    """One fresh home and repository; every measurement of one run."""

    def __init__(self, base: Path, args: argparse.Namespace, server: PageServer) -> None:
        self.args, self.server = args, server
        self.home = base / "home"
        self.home.mkdir(parents=True)
        # Why no retries: a request hearth sends once too often should fail, not back off.
        (self.home / "config.toml").write_text("[models]\nmax_retries = 0\n")
        self.env = {
            "HEARTH_HOME": str(self.home),
            "HEARTH_MODEL": "openai:bench-pages",
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "sk-bench",
        }
        self.config = load_config(self.env)
        log(f"  repository of {args.files:,} files")
        self.repo: Repo = make_repo(base / "repo", args.files, SEED)
        self.out: dict[str, Any] = {
            "repo": {"files": len(self.repo.files), "bytes": self.repo.bytes},
            "load_avg": os.getloadavg()[0],
        }

    def wh(self) -> Workhearth:
        return Workhearth(config=self.config, workspace=self.repo.path)

    def timed(self, call: Callable[[Workhearth], Any]) -> tuple[float, Any, int]:
        """Wall seconds of ``call`` on a fresh Workhearth, its result, the requests it made."""
        before = self.server.requests
        started = time.perf_counter()
        result = call(self.wh())
        return time.perf_counter() - started, result, self.server.requests - before

    def build(self, clock: ModelClock) -> None:
        log("  build")
        clock.reset()
        seconds, report, requests = self.timed(lambda wh: wh.wiki.build(max_calls=NO_CALLS))
        pages = self.pages_on_disk()
        self.out["build"] = {
            "wall_s": seconds,
            "calls": report.calls,
            "requests": requests,
            "pages": len(pages),
            "written": len(report.written),
            "left": len(report.left),
            "unreadable": len(report.unreadable),
            "model_s": clock.seconds,
            "model_calls": clock.calls,
            "median_request_kb": statistics.median(self.server.request_bytes[-requests:]) / 1024
            if requests
            else 0.0,
        }

    def no_change(self) -> None:
        log(f"  no-change update × {self.args.reps}")
        walls, calls = [], []
        for _ in range(self.args.reps):
            seconds, report, requests = self.timed(lambda wh: wh.wiki.update())
            walls.append(seconds)
            calls.append(max(report.calls, requests))
        self.out["no_change"] = {"wall_s": walls, "calls": calls}
        # Why apart from the timed ones: the profiler slows what it watches.
        profile = cProfile.Profile()
        wh = self.wh()
        profile.enable()
        wh.wiki.update()
        profile.disable()
        self.out["no_change"]["profile"] = top_functions(profile)

    def floors(self) -> None:
        log(f"  the floor: git status, stat walk, hash walk × {self.args.reps}")
        path = self.repo.path
        git(path, "status", "--porcelain")  # warm: git refreshes its index stat data once
        out: dict[str, list[float]] = {"git_status_s": [], "stat_walk_s": [], "hash_walk_s": []}
        for _ in range(self.args.reps):
            started = time.perf_counter()
            assert git(path, "status", "--porcelain") == ""
            out["git_status_s"].append(time.perf_counter() - started)
            started = time.perf_counter()
            seen = stat_walk(path)
            out["stat_walk_s"].append(time.perf_counter() - started)
            started = time.perf_counter()
            hashed = hash_walk(path)
            out["hash_walk_s"].append(time.perf_counter() - started)
            assert seen == hashed == len(self.repo.files), (seen, hashed)
        self.out["floor"] = out

    def command(self) -> None:
        log("  hearth wiki update (the command), hearth --help")
        env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED)} | self.env
        row: dict[str, Any] = {}
        for key, argv in (("help_s", ["--help"]), ("wiki_update_s", ["wiki", "update"])):
            before = self.server.requests
            started = time.perf_counter()
            proc = subprocess.run(
                [*HEARTH_CMD, *argv], cwd=self.repo.path, env=env, capture_output=True, text=True
            )
            row[key] = time.perf_counter() - started
            assert proc.returncode == 0, (argv, proc.stderr[-2000:])
            row[key.replace("_s", "_calls")] = self.server.requests - before
        self.out["command"] = row

    def one_change(self) -> None:
        changed = self.repo.modules[len(self.repo.modules) // 2]
        log(f"  one-change update ({changed})")
        deps, linked = self.dependents(changed)
        expected = sorted(deps | ({"overview"} if deps & linked else set()))
        with (self.repo.path / changed).open("a", encoding="utf-8") as fh:
            fh.write("\n\ndef added_by_the_bench() -> int:\n    return 1\n")
        seconds, report, requests = self.timed(lambda wh: wh.wiki.update())
        written = sorted(report.written)
        self.out["one_change"] = {
            "file": changed,
            "wall_s": seconds,
            "calls": report.calls,
            "requests": requests,
            "expected": expected,
            "written": written,
            "exact": written == expected and requests == report.calls == len(expected),
        }

    def pages_on_disk(self) -> dict[str, dict[str, Any]]:
        """Each page's front matter, read from its file (the on-disk contract)."""
        folder = self.wh().wiki.folder
        pages = {}
        for path in sorted(folder.glob("*.md")):
            if path.name.endswith(".update.md") or path.name.startswith("."):
                continue
            head = path.read_text(encoding="utf-8").split("---\n", 2)[1]
            pages[path.stem] = yaml.safe_load(head) or {}
        return pages

    def dependents(self, rel: str) -> tuple[set[str], set[str]]:
        """Pages listing ``rel`` among their sources; the pages the overview links."""
        pages = self.pages_on_disk()
        deps = {n for n, m in pages.items() if any(s["path"] == rel for s in m.get("sources", []))}
        return deps - {"overview"}, set(pages.get("overview", {}).get("links") or [])


SCRUBBED = ("OPENAI_", "ANTHROPIC_", "HEARTH_")


def top_functions(profile: cProfile.Profile, n: int = 12) -> list[dict[str, Any]]:
    """The costliest functions of a profile by cumulative time (the bench's own left out)."""
    stats = pstats.Stats(profile, stream=io.StringIO())
    rows = []
    for (file, line, func), (_cc, calls, own, cum, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if file == __file__ or func == "<lambda>":
            continue
        path = Path(file)
        where = f"{path.parent.name}/{path.name}:{line} {func}" if line else func
        rows.append({"function": where, "calls": calls, "own_s": own, "cum_s": cum})
    rows.sort(key=lambda r: r["cum_s"], reverse=True)
    return rows[:n]


def stat_walk(root: Path) -> int:
    """Stat every file under ``root`` (``.git`` left out); how many."""
    n = 0
    for folder, dirs, names in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in names:
            os.stat(os.path.join(folder, name))
            n += 1
    return n


def hash_walk(root: Path) -> int:
    """Read and sha256 every file under ``root`` (``.git`` left out); how many."""
    n = 0
    for folder, dirs, names in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in names:
            with open(os.path.join(folder, name), "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()
            n += 1
    return n


def one_run(base: Path, args: argparse.Namespace, server: PageServer, clock: ModelClock) -> dict:
    run = Run(base, args, server)
    run.build(clock)
    run.no_change()
    run.floors()
    run.command()
    run.one_change()
    return run.out


# --------------------------------------------------------------------------- summary
def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def per_run(r: dict[str, Any]) -> dict[str, float]:
    """One run's figures, ratios taken inside the run."""
    b, nc, fl, cmd, oc = r["build"], r["no_change"], r["floor"], r["command"], r["one_change"]
    no_change = median(nc["wall_s"])
    calls = max(b["calls"], 1)
    return {
        "build_s": b["wall_s"],
        "build_per_call_ms": b["wall_s"] / calls * 1000,
        "model_per_call_ms": b["model_s"] / max(b["model_calls"], 1) * 1000,
        "build_beyond_model_per_call_ms": (b["wall_s"] - b["model_s"]) / calls * 1000,
        "no_change_s": no_change,
        "no_change_max_s": max(nc["wall_s"]),
        "git_status_s": median(fl["git_status_s"]),
        "stat_walk_s": median(fl["stat_walk_s"]),
        "hash_walk_s": median(fl["hash_walk_s"]),
        "no_change_vs_git_status": no_change / median(fl["git_status_s"]),
        "no_change_vs_stat_walk": no_change / median(fl["stat_walk_s"]),
        "no_change_vs_hash_walk": no_change / median(fl["hash_walk_s"]),
        "command_s": cmd["wiki_update_s"],
        "help_s": cmd["help_s"],
        "command_vs_library": cmd["wiki_update_s"] / no_change,
        "command_beyond_help_s": cmd["wiki_update_s"] - cmd["help_s"],
        "one_change_s": oc["wall_s"],
        "one_change_vs_no_change": oc["wall_s"] / no_change,
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    figures = [per_run(r) for r in runs]
    med = {key: median([f[key] for f in figures]) for key in figures[0]}
    last = runs[-1]
    calls = {
        "build": [r["build"]["calls"] for r in runs],
        "build_pages": [r["build"]["pages"] for r in runs],
        "no_change": [c for r in runs for c in r["no_change"]["calls"]],
        "command": [r["command"]["wiki_update_calls"] for r in runs],
        "one_change": [r["one_change"]["calls"] for r in runs],
        "one_change_expected": [len(r["one_change"]["expected"]) for r in runs],
    }
    meets = {
        "no_change_time": med["no_change_s"] <= TARGET_NO_CHANGE_S,
        "no_change_calls": max(calls["no_change"] + calls["command"]) == 0,
        "one_change_exact": all(r["one_change"]["exact"] for r in runs),
        "build_calls_are_pages": all(
            r["build"]["calls"] == r["build"]["requests"] == r["build"]["pages"] for r in runs
        ),
    }
    return {
        "median": med,
        "calls": calls,
        "build": {key: last["build"][key] for key in ("calls", "pages", "unreadable", "left")},
        "one_change": {key: last["one_change"][key] for key in ("file", "expected", "written")},
        "meets": meets,
    }


def verdict(ok: bool) -> str:
    return "MEETS" if ok else "MISSES"


def print_tables(s: dict[str, Any], args: argparse.Namespace, last: dict[str, Any]) -> None:
    repo, profile = last["repo"], last["no_change"]["profile"]
    m, c, meets = s["median"], s["calls"], s["meets"]
    n = args.runs
    print(
        f"## Repowiki on a {repo['files']:,}-file repository ({repo['bytes'] / 2**20:.1f} MB), "
        f"scripted model (median of {n} run{'s' * (n > 1)})\n"
    )
    print("| measure | wall time | model calls | target |")
    print("|---|---:|---:|---|")
    print(
        f"| `build` | {m['build_s']:.2f} s | {c['build'][-1]:,} "
        f"(pages on disk: {c['build_pages'][-1]:,}) | calls = pages: "
        f"{verdict(meets['build_calls_are_pages'])} |"
    )
    print(
        f"| no-change `update` (library) | {m['no_change_s'] * 1000:.0f} ms "
        f"(slowest {m['no_change_max_s'] * 1000:.0f} ms) | {max(c['no_change'])} | "
        f"≤ {TARGET_NO_CHANGE_S:.0f} s, 0 calls: {verdict(meets['no_change_time'])}, "
        f"{verdict(meets['no_change_calls'])} |"
    )
    print(
        f"| no-change `hearth wiki update` (the command) | {m['command_s'] * 1000:.0f} ms | "
        f"{max(c['command'])} | |"
    )
    oc = s["one_change"]
    print(
        f"| `update` after one module changed | {m['one_change_s'] * 1000:.0f} ms | "
        f"{c['one_change'][-1]} (expected {c['one_change_expected'][-1]}) | exactly its pages: "
        f"{verdict(meets['one_change_exact'])} |"
    )
    print(f"\nChanged: `{oc['file']}`; pages rewritten: {', '.join(oc['written']) or 'none'}.\n")
    print("| per model call during `build` | ms |")
    print("|---|---:|")
    print(f"| whole build ÷ calls | {m['build_per_call_ms']:.1f} |")
    print(
        f"| the model's own time (hearth's HTTP client + scripted server) | "
        f"{m['model_per_call_ms']:.1f} |"
    )
    print(
        f"| the rest (sources read, hashed, prompts, pages written) | "
        f"{m['build_beyond_model_per_call_ms']:.1f} |"
    )
    print("\nNoticing that nothing changed, on the same clean repository:\n")
    print("| way | wall time | no-change `update` ÷ it |")
    print("|---|---:|---:|")
    print(f"| no-change `update` (library) | {m['no_change_s'] * 1000:.1f} ms | 1.00× |")
    for key, label in (
        ("git_status", "`git status --porcelain`"),
        ("stat_walk", "stat every file (Python `os.walk` + `os.stat`)"),
        ("hash_walk", "read and sha256 every file (Python)"),
    ):
        print(f"| {label} | {m[key + '_s'] * 1000:.1f} ms | {m['no_change_vs_' + key]:.2f}× |")
    print("\nWhere a no-change `update` goes (cProfile of one more, cumulative; last run):\n")
    print("| function | calls | cumulative ms | own ms |")
    print("|---|---:|---:|---:|")
    for row in profile:
        print(
            f"| `{row['function']}` | {row['calls']:,} | {row['cum_s'] * 1000:.1f} | "
            f"{row['own_s'] * 1000:.1f} |"
        )
    print(
        f"\nThe command: `hearth wiki update` {m['command_s'] * 1000:.0f} ms = "
        f"{m['command_vs_library']:.2f}× the library's; `hearth --help` (process start) "
        f"{m['help_s'] * 1000:.0f} ms, so {m['command_beyond_help_s'] * 1000:.0f} ms beyond it."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the repository")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5, help="no-change updates and floors per run")
    parser.add_argument("--quick", action="store_true", help="200 files, 1 run: seconds")
    parser.add_argument("--tmp", type=Path, default=None, help="where homes and repos go")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.quick:
        args.files, args.runs, args.reps = 200, 1, 2
    out = args.out or ROOT / "bench" / "results" / (
        "wiki-quick.json" if args.quick else "wiki.json"
    )
    base = Path(tempfile.mkdtemp(prefix="hearth-bench-wiki-", dir=args.tmp))
    started = time.perf_counter()
    clock = ModelClock()
    clock.install()
    runs: list[dict[str, Any]] = []
    try:
        server = PageServer()
        with server:
            for n in range(args.runs):
                log(f"run {n + 1}/{args.runs}")
                runs.append(one_run(base / f"run-{n}", args, server, clock))
                shutil.rmtree(base / f"run-{n}", ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    summary = summarize(runs)
    print_tables(summary, args, runs[-1])
    report = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "params": {
            "files": args.files,
            "runs": args.runs,
            "reps": args.reps,
            "seed": SEED,
            "dir": str(args.tmp or tempfile.gettempdir()),
        },
        "seconds": time.perf_counter() - started,
        "target_no_change_s": TARGET_NO_CHANGE_S,
        **summary,
        "runs": runs,
    }
    _runs.save(out, report)
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
