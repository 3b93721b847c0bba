"""Listing skills: cold vs warm (the mtime cache) against parsing every SKILL.md each time.

N generated skills (200 by default; one in two with a ``.skill-metadata.yaml``
example) in a temporary ``$HEARTH_HOME/skills``; then the median of ``--runs``
timings of:

- ``ours_cold``: a new ``SkillLibrary(...).list()`` with no cache anywhere (first
  listing after an install or a boot: every SKILL.md parsed and validated);
- ``ours_warm_file``: a new library, in-memory cache dropped, ``cache/skills.json``
  on disk — what a fresh ``hearth`` process pays;
- ``ours_warm_memory``: a new library in the same process (a long-lived agent);
- ``naive``: the peer approach, ``yaml.safe_load`` of every frontmatter on every
  listing, with no validation at all;
- ``cli_list``: wall time of ``hearth skills list --json`` in a fresh process, beside
  ``hearth --help`` (``--cli-runs 0`` skips both).

The target is 50 ms for a warm listing of 200 skills.
Run ``.venv/bin/python bench/skills.py``; tables to stdout, JSON to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
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

from workhearth.paths import HearthPaths  # noqa: E402
from workhearth.skills import library as library_mod  # noqa: E402
from workhearth.skills.library import SkillLibrary  # noqa: E402

TARGET_MS = 50.0
META = """\
examples:
  - id: run
    title: {{zh: 运行 {name}, en: Run {name}}}
    description: {{zh: 示例, en: An example}}
    prompt: "Use {name} on {{{{input}}}}."
    variables:
      - {{name: input, type: text, required: true}}
"""


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def make_skills(root: Path, count: int) -> None:
    for i in range(count):
        name = f"skill-{i:04d}"
        folder = root / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Skill number {i} does thing {i} with files.\n"
            f"license: MIT\nallowed-tools: read_file shell\nmetadata:\n  n: '{i}'\n---\n"
            + f"# {name}\n\n"
            + "Step by step instructions.\n" * 40,
            encoding="utf-8",
        )
        if i % 2 == 0:
            (folder / ".skill-metadata.yaml").write_text(META.format(name=name), encoding="utf-8")


def naive_list(root: Path) -> list[dict[str, Any]]:
    import yaml

    out = []
    for folder in sorted(root.iterdir()):
        text = (folder / "SKILL.md").read_text(encoding="utf-8")
        front = text.split("---\n", 2)[1]
        data = yaml.safe_load(front)
        out.append({"name": data["name"], "description": data["description"]})
    return out


def median_ms(fn: Callable[[], Any], runs: int, before: Callable[[], None] = lambda: None) -> float:
    times = []
    for _ in range(runs):
        before()
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def hearth_command() -> list[str]:
    script = shutil.which("hearth", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "workhearth"]


def wall_ms(args: list[str], env: dict[str, str], cwd: Path, runs: int) -> float:
    def once() -> None:
        subprocess.run(
            [*hearth_command(), *args], env=env, cwd=cwd, check=True, capture_output=True
        )

    once()  # warm-up: page cache and the skills cache file
    return median_ms(once, runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=200, help="skills to generate")
    parser.add_argument("--runs", type=int, default=9, help="timed runs per mode (median)")
    parser.add_argument("--cli-runs", type=int, default=5, help="hearth runs (0 skips)")
    parser.add_argument("--tmp", type=Path, default=None, help="parent of the temp folder")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/skills.json")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="skills-bench-", dir=args.tmp))
    try:
        home, ws, empty = base / "home", base / "ws", base / "builtin"
        for p in (ws, empty):
            p.mkdir()
        log(f"generating {args.skills} skills in {home / 'skills'}")
        make_skills(home / "skills", args.skills)
        paths = HearthPaths(home)

        def lib() -> SkillLibrary:
            return SkillLibrary(
                paths, ws, user_home=None, workspace_authorized=True, builtin_dir=empty
            )

        def no_cache() -> None:
            library_mod._memory_cache.clear()
            (home / "cache" / "skills.json").unlink(missing_ok=True)

        listed = lib().list()
        assert len(listed) == args.skills and all(s.ok for s in listed), "generated skills broken"
        assert len(naive_list(home / "skills")) == args.skills
        results: dict[str, float] = {
            "ours_cold": median_ms(lambda: lib().list(), args.runs, no_cache),
            "ours_warm_file": median_ms(
                lambda: lib().list(), args.runs, library_mod._memory_cache.clear
            ),
            "ours_warm_memory": median_ms(lambda: lib().list(), args.runs),
            "naive": median_ms(lambda: naive_list(home / "skills"), args.runs),
        }
        cli: dict[str, float] = {}
        if args.cli_runs > 0:
            env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
            env.update(HEARTH_HOME=str(home), HOME=str(base))
            cli["hearth_skills_list_ms"] = wall_ms(
                ["skills", "list", "--json"], env, ws, args.cli_runs
            )
            cli["hearth_help_ms"] = wall_ms(["--help"], env, ws, args.cli_runs)
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"\nlisting {args.skills} skills, median of {args.runs} runs (ms)\n")
    print(f"{'mode':<20}{'ms':>10}{'vs naive':>10}")
    for mode, ms in results.items():
        print(f"{mode:<20}{ms:>10.2f}{results['naive'] / ms:>9.1f}x")
    warm = max(results["ours_warm_file"], results["ours_warm_memory"])
    print(f"\nwarm target {TARGET_MS:.0f} ms: {'met' if warm < TARGET_MS else 'MISSED'}")
    for key, ms in cli.items():
        print(f"{key:<24}{ms:>8.1f}")

    data = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "skills": args.skills,
        "runs": args.runs,
        "median_ms": results,
        "cli_ms": cli,
        "warm_target_ms": TARGET_MS,
        "warm_target_met": warm < TARGET_MS,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(args.out, data)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
