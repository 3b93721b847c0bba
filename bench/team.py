"""Team tasks (issue 23): what the lead and the board add per step, and wall time in parallel.

Everything runs in this process through hearth's real code, against a local HTTP server
that speaks the OpenAI streaming protocol (``tests/fake_providers.py``) and answers by who
asks: the lead's request (its system prompt, "You lead a small team") gets a
``write_plan`` call; a step's request ("Your step of the team's plan: …") a short text.
Fresh ``HEARTH_HOME`` and workspace (plain folder, not git) per run, quest mode (nobody
is asked anything), ``--yes`` (the plan is taken as written).

1. **Overhead per step.** A team task of ``--steps`` independent steps (``K``, each owned
   by the built-in ``writer`` and naming one small input file, so its scratch copy holds
   one file), ``parallel = 1``: ``TeamRun(wh, session, opts, TeamOptions(...)).run(task)``,
   as ``run_team`` (and so ``hearth run --team``) drives it, the terminal's board
   (``cli.team_task.Board``) writing to memory. Against it, the **plain run** of the same
   steps: ``K`` new sessions of the workspace, each continued by ``agent.runner.resume``
   with the same prompt the step's specialist gets, so the server gives the same reply.
   Team and plain alternate ``--reps`` times per run (the order swapped each time).
   ``(team − plain) / K`` is what the team machinery adds per step; the lead's own model
   call (one request, timed around ``router.complete``) is a model call, so the target
   (≤ 5 ms per step) is on ``(team − plain − lead call) / K``. Stopwatches around the
   run's own methods (on the instance; nothing in ``src/`` changes) say where it goes:
   the scratch copy, the specialist's session, its run beside a plain run, the merge
   back, the state writes and the board, the lead. A cProfile of one team run and one
   plain run (the worker thread's too) gives the functions whose time differs most.
2. **Wall time.** ``--wall-steps`` independent steps whose model reply waits ``--delay``
   seconds before answering (a scripted 1-second step), with ``parallel`` = each of
   ``--parallel`` (1, 3, 6): the whole task's wall time and the steps' span (first start
   to last end, from ``team/state.json``) against the ideal
   ``ceil(steps / parallel) × delay``.

Tables go to stdout, progress to stderr, every number to ``--out`` (JSON) and its
history (``bench/_runs.py``). ``--quick`` runs tiny inputs in a few seconds
(tests/test_benches.py).
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import io
import json
import math
import os
import platform
import pstats
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))  # the scripted model server of tests/fake_providers.py

from tests.fake_providers import (  # noqa: E402
    Reply,
    RoutedProvider,
    openai_sse,
    openai_text,
    openai_tool_calls,
)

from workhearth.agent.runner import RunOptions, resume  # noqa: E402
from workhearth.app import Workhearth  # noqa: E402
from workhearth.cli.team_task import Board  # noqa: E402
from workhearth.config import load_config  # noqa: E402
from workhearth.tasks.team.run import TEAM_META, TeamOptions, TeamRun  # noqa: E402

LEAD = "You lead a small team"
STEP = "Your step of the team's plan: "
TARGET_MS_PER_STEP = 5.0
GOAL = "Short notes, one per input file"
TASK = "write a short note on each input file"
REPLY_TEXT = "Wrote the note."
# The parts of a team step the stopwatches time, in the order a step goes through them.
PARTS = {
    "scratch": "scratch copy (`_scratch`: `Scratch.create`)",
    "session": "the specialist's session (`_new_session`)",
    "specialist": "the specialist's run (`_specialist`: `resume`)",
    "merge": "merge back (`_merge`: merge, state, scratch removed)",
    "updates": "state writes + board (`_update`, 2 per step)",
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the model server
class Scripted(RoutedProvider):
    """Answers every lead request with the plan and every step with a short text (after
    ``delay`` seconds); counts who asked. Not consumed: the same replies for every run."""

    def __init__(self, plan_reply: Reply, step_reply: Reply) -> None:
        super().__init__([])
        self.plan_reply = plan_reply
        self.step_reply = step_reply
        self.counts: dict[str, int] = defaultdict(int)

    def reply_for(self, raw: bytes) -> Reply:
        body = json.dumps(json.loads(raw), ensure_ascii=False)
        kind = "lead" if LEAD in body else "step" if STEP in body else "other"
        with self._lock:
            self.counts[kind] += 1
        if kind == "lead":
            return self.plan_reply
        if kind == "step":
            return self.step_reply
        return super().reply_for(raw)


def steps_of(k: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i:02d}",
            "title": f"Note on input {i:02d}",
            "owner": "writer",
            "files": [f"in/{i:02d}.txt"],
            "detail": f"Read in/{i:02d}.txt and write a two-line note on it.",
        }
        for i in range(k)
    ]


def plan_reply(steps: list[dict[str, Any]]) -> Reply:
    plan = {"goal": GOAL, "deliverables": [], "steps": steps}
    call = ("p1", "write_plan", [json.dumps(plan)])
    return Reply(pieces=openai_sse(openai_tool_calls([call])))


def step_prompt(step: dict[str, Any]) -> str:
    """What the plain run asks: the step's specialist prompt (``TeamRun._step_prompt``'s
    parts for a step without dependencies, checks or products)."""
    return "\n\n".join(
        (
            f"{STEP}{step['title']}",
            step["detail"],
            f"The team's goal: {GOAL}",
            "Files: " + ", ".join(step["files"]),
            "When you are done, reply with a short summary of what you produced and where.",
        )
    )


@contextmanager
def world(base: Path, k: int, delay: float) -> Iterator[tuple[Workhearth, Scripted, Path]]:
    """A fresh home and workspace wired to a fresh scripted server."""
    base.mkdir(parents=True)
    home, ws = base / "home", base / "ws"
    home.mkdir()
    (ws / "in").mkdir(parents=True)
    for i in range(k):
        (ws / "in" / f"{i:02d}.txt").write_text(f"input {i}: some figures, 1 2 3\n" * 20)
    # Why no retries: a request hearth sends once too often should fail, not back off.
    (home / "config.toml").write_text("[models]\nmax_retries = 0\n")
    step_reply = Reply(pieces=openai_sse(openai_text([REPLY_TEXT])), delay=delay)
    with Scripted(plan_reply(steps_of(k)), step_reply) as fake:
        env = {
            "HEARTH_HOME": str(home),
            "HEARTH_MODEL": "openai:bench",
            "OPENAI_BASE_URL": fake.url,
            "OPENAI_API_KEY": "sk-bench",
        }
        wh = Workhearth(config=load_config(env), workspace=ws)
        assert isinstance(fake, Scripted)
        yield wh, fake, base / "scratch"


def run_opts() -> RunOptions:
    return RunOptions(mode="quest", yes=True, env={"PATH": os.defpath})


# --------------------------------------------------------------------------- stopwatches
class Clock:
    """Seconds per named part, one entry per call (thread-safe)."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.lock = threading.Lock()

    def wrap(self, owner: Any, method: str, key: str) -> None:
        inner = getattr(owner, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                with self.lock:
                    self.times[key].append(time.perf_counter() - started)

        setattr(owner, method, timed)

    def total(self, key: str) -> float:
        return sum(self.times.get(key, ()))


def team_once(
    wh: Workhearth,
    scratch: Path,
    parallel: int,
    clock: Clock | None = None,
    profiles: list[cProfile.Profile] | None = None,
) -> tuple[float, dict[str, Any]]:
    """One team task from request to report; its wall seconds and final state."""
    board = Board(io.StringIO())
    on_step: Callable[[dict[str, Any]], None] = board
    started = time.perf_counter()
    session = wh.sessions.create(mode="quest", extra_meta={TEAM_META: True})
    team = TeamOptions(yes=True, parallel=parallel, on_step=on_step, scratch_root=scratch)
    run = TeamRun(wh, session, run_opts(), team)
    if clock is not None:
        clock.times["setup"].append(time.perf_counter() - started)
        clock.wrap(run, "_approve", "approve")
        clock.wrap(run, "_execute", "execute")
        clock.wrap(run.router, "complete", "lead_call")
        clock.wrap(run, "_lead_turn", "lead_turn")
        clock.wrap(run, "_report", "report")
        clock.wrap(run, "_scratch", "scratch")
        clock.wrap(run, "_new_session", "session")
        clock.wrap(run, "_specialist", "specialist")
        clock.wrap(run, "_merge", "merge")
        clock.wrap(run, "_update", "updates")
        clock.wrap(run, "_work", "work")
        clock.wrap(run.state, "save", "state_save")
        clock.wrap(board, "__call__", "board")  # not the callable the run holds: below
        team.on_step = board.__call__
    if profiles is not None:
        inner = run._run_step

        def profiled(*args: Any) -> Any:
            prof = cProfile.Profile()
            prof.enable()
            try:
                return inner(*args)
            finally:
                prof.disable()
                profiles.append(prof)

        run._run_step = profiled  # type: ignore[method-assign,assignment]
    try:
        result = run.run(TASK)
    finally:
        run.close()
        session.close()
    wall = time.perf_counter() - started
    assert result.status == "done", (result.status, result.reason)
    state = json.loads(session.read_file("team/state.json"))
    return wall, state


def plain_once(wh: Workhearth, steps: list[dict[str, Any]], clock: Clock | None = None) -> float:
    """The same steps as plain sessions, one after another; wall seconds."""
    started = time.perf_counter()
    for step in steps:
        t0 = time.perf_counter()
        session = wh.sessions.create(mode="quest")
        t1 = time.perf_counter()
        result = resume(wh, session, run_opts(), step_prompt(step))
        t2 = time.perf_counter()
        assert result.ok and REPLY_TEXT in result.text, (result.status, result.error)
        if clock is not None:
            clock.times["plain_session"].append(t1 - t0)
            clock.times["plain_run"].append(t2 - t1)
    return time.perf_counter() - started


def fsync_ms(folder: Path, n: int = 20) -> float:
    """The median time of one small write's fsync in ``folder`` (the disk's latency)."""
    probe = folder / "fsync-probe"
    times = []
    for _ in range(n):
        with probe.open("wb") as fh:
            fh.write(b"x" * 100)
            fh.flush()
            t0 = time.perf_counter()
            os.fsync(fh.fileno())
            times.append(time.perf_counter() - t0)
    probe.unlink()
    return median_ms(times)


# --------------------------------------------------------------------------- one run
def overhead_run(base: Path, k: int, reps: int) -> dict[str, Any]:
    steps = steps_of(k)
    out: dict[str, Any] = {"team_s": [], "plain_s": [], "lead_call_s": [], "parts": []}
    sides = ["team", "plain"]
    with world(base, k, 0.0) as (wh, fake, scratch):
        team_once(wh, scratch, 1)  # warm-up: imports, the first session of each project
        plain_once(wh, steps)
        for rep in range(reps):
            for side in sides[rep % len(sides) :] + sides[: rep % len(sides)]:
                clock = Clock()
                if side == "team":
                    before = dict(fake.counts)
                    wall, state = team_once(wh, scratch, 1, clock)
                    assert fake.counts["lead"] - before.get("lead", 0) == 1
                    assert fake.counts["step"] - before.get("step", 0) == k
                    assert all(s["status"] == "done" for s in state["steps"].values())
                    out["team_s"].append(wall)
                    out["lead_call_s"].append(clock.total("lead_call"))
                    out["parts"].append(team_parts(clock, wall, k))
                else:
                    wall = plain_once(wh, steps, clock)
                    out["plain_s"].append(wall)
                    out.setdefault("plain_parts", []).append(
                        {
                            "session_ms": median_ms(clock.times["plain_session"]),
                            "run_ms": median_ms(clock.times["plain_run"]),
                        }
                    )
        assert fake.unscripted == 0
        out["profile"] = profile_diff(wh, scratch, steps)
    return out


def team_parts(clock: Clock, wall: float, k: int) -> dict[str, float]:
    """Per step medians of each part (ms), and the lead's share spread over the steps."""
    parts = {key: median_ms(clock.times[key]) for key in PARTS}
    # Why the median of the pairs: the first and the second ``_update`` of a step differ.
    parts["updates"] = median_ms(clock.times["updates"]) * 2
    parts["state_save_ms_each"] = median_ms(clock.times["state_save"])
    parts["state_saves"] = len(clock.times["state_save"])
    parts["board_ms_each"] = median_ms(clock.times["board"])
    lead_turn = clock.total("lead_turn")
    parts["lead_call_per_step"] = clock.total("lead_call") / k * 1000
    parts["lead_other_per_step"] = (lead_turn - clock.total("lead_call")) / k * 1000
    parts["report_per_step"] = clock.total("report") / k * 1000
    # The lead's session and the run (its router, the roles) made; the plan approved
    # (parsed, roles checked, state written); the pool handing out steps and waiting.
    parts["setup_per_step"] = clock.total("setup") / k * 1000
    parts["approve_per_step"] = clock.total("approve") / k * 1000
    parts["pool_per_step"] = (clock.total("execute") - clock.total("work")) / k * 1000
    timed = ("setup", "lead_turn", "approve", "execute", "report")
    parts["rest_per_step"] = (wall - sum(clock.total(t) for t in timed)) / k * 1000
    return parts


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


# --------------------------------------------------------------------------- cProfile
# The waits of the lead's thread for its pool, and the bench's own wrappers.
SKIP = ("wait", "_execute", "run", "_run_step", "_work", "_specialist")


def profile_diff(wh: Workhearth, scratch: Path, steps: list[dict[str, Any]]) -> list[dict]:
    """Functions whose cumulative time per step grows most from plain to team."""
    profiles: list[cProfile.Profile] = []
    main = cProfile.Profile()
    main.enable()
    team_once(wh, scratch, 1, profiles=profiles)
    main.disable()
    team = pstats.Stats(main, stream=io.StringIO())
    for prof in profiles:
        team.add(prof)
    plain_prof = cProfile.Profile()
    plain_prof.enable()
    plain_once(wh, steps)
    plain_prof.disable()
    plain = pstats.Stats(plain_prof, stream=io.StringIO())
    k = len(steps)

    def by_function(stats: pstats.Stats) -> dict[str, tuple[float, float, int]]:
        rows: dict[str, tuple[float, float, int]] = {}
        for (file, line, func), (_cc, calls, own, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
            if func in SKIP or "acquire" in func or file == __file__:
                continue
            where = f"{Path(file).name}:{line} {func}" if line else func
            rows[where] = (cum, own, calls)
        return rows

    t, p = by_function(team), by_function(plain)
    rows: list[dict[str, Any]] = []
    for where, (cum, own, calls) in t.items():
        pc, po, pn = p.get(where, (0.0, 0.0, 0))
        rows.append(
            {
                "function": where,
                "team_calls": calls,
                "plain_calls": pn,
                "extra_cum_ms_per_step": (cum - pc) / k * 1000,
                "extra_own_ms_per_step": (own - po) / k * 1000,
            }
        )
    rows.sort(key=lambda r: r["extra_cum_ms_per_step"], reverse=True)
    return rows[:40]


# --------------------------------------------------------------------------- wall time
def wall_run(base: Path, k: int, delay: float, parallels: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with world(base, k, delay) as (wh, fake, scratch):
        team_once(wh, scratch, max(parallels))  # warm-up (its steps wait too)
        for parallel in parallels:
            wall, state = team_once(wh, scratch, parallel)
            spans = [(s["started"], s["ended"]) for s in state["steps"].values()]
            span = max(e for _s, e in spans) - min(s for s, _e in spans)
            ideal = math.ceil(k / parallel) * delay
            out[str(parallel)] = {"wall_s": wall, "steps_span_s": span, "ideal_s": ideal}
        assert fake.unscripted == 0
    return out


# --------------------------------------------------------------------------- summary
def summarize(runs: list[dict[str, Any]], k: int, parallels: list[int]) -> dict[str, Any]:
    def med(get: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(get(r) for r in runs)

    def run_med(r: dict[str, Any], key: str) -> float:
        return statistics.median(r["overhead"][key])

    team_ms = med(lambda r: run_med(r, "team_s") * 1000)
    plain_ms = med(lambda r: run_med(r, "plain_s") * 1000)
    # Each run's own difference of medians, then the median over the runs.
    per_step = med(lambda r: (run_med(r, "team_s") - run_med(r, "plain_s")) / k * 1000)
    beyond = med(
        lambda r: (
            (run_med(r, "team_s") - run_med(r, "plain_s") - run_med(r, "lead_call_s")) / k * 1000
        )
    )
    keys = [*PARTS, "lead_call_per_step", "lead_other_per_step", "report_per_step"]
    keys += ["setup_per_step", "approve_per_step", "pool_per_step"]
    keys += ["rest_per_step", "state_save_ms_each", "state_saves", "board_ms_each"]

    def part(side: str, key: str) -> float:
        return med(lambda r: statistics.median(p[key] for p in r["overhead"][side]))

    parts = {key: part("parts", key) for key in keys}
    plain_parts = {key: part("plain_parts", key) for key in ("session_ms", "run_ms")}
    wall: dict[str, dict[str, float]] = {}
    for parallel in parallels:
        p = str(parallel)
        w = med(lambda r: r["wall"][p]["wall_s"])  # noqa: B023 (called at once)
        span = med(lambda r: r["wall"][p]["steps_span_s"])  # noqa: B023
        ideal = runs[0]["wall"][p]["ideal_s"]
        wall[p] = {
            "wall_s": w,
            "steps_span_s": span,
            "ideal_s": ideal,
            "span_vs_ideal": span / ideal,
            "span_over_ideal_s": span - ideal,
        }
    return {
        "overhead": {
            "team_ms": team_ms,
            "plain_ms": plain_ms,
            "team_vs_plain": team_ms / plain_ms,
            "per_step_ms": per_step,
            "per_step_beyond_model_ms": beyond,
            "lead_call_ms": med(lambda r: run_med(r, "lead_call_s") * 1000),
            "parts_ms": parts,
            "plain_parts_ms": plain_parts,
            "specialist_vs_plain_run_ms": parts["specialist"] - plain_parts["run_ms"],
            "session_vs_plain_ms": parts["session"] - plain_parts["session_ms"],
        },
        "wall": wall,
        "load_avg": med(lambda r: r["load_avg"]),
        "fsync_ms": med(lambda r: r["fsync_ms"]),
    }


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def print_tables(s: dict[str, Any], args: argparse.Namespace, runs: list[dict]) -> dict:
    o, w = s["overhead"], s["wall"]
    meets = {"per_step": o["per_step_beyond_model_ms"] <= TARGET_MS_PER_STEP}
    n = len(runs)
    print(
        f"## Team overhead: {args.steps} independent steps, parallel 1 "
        f"(median of {n} run{'s' * (n > 1)} × {args.reps} rounds)\n"
    )
    print(
        f"Folder {args.tmp or tempfile.gettempdir()}: one fsync {s['fsync_ms']:.2f} ms; "
        f"load average {s['load_avg']:.1f} on {os.cpu_count()} CPUs.\n"
    )
    print("| measure | value | target |")
    print("|---|---:|---|")
    print(f"| team task, whole | {o['team_ms']:.0f} ms | |")
    print(f"| the same steps as plain sessions | {o['plain_ms']:.0f} ms | |")
    print(f"| team ÷ plain | {o['team_vs_plain']:.2f}× | |")
    print(f"| (team − plain) per step | {o['per_step_ms']:.1f} ms | |")
    print(f"| the lead's model call (whole) | {o['lead_call_ms']:.1f} ms | |")
    print(
        f"| (team − plain − lead call) per step | {o['per_step_beyond_model_ms']:.1f} ms | "
        f"≤ {TARGET_MS_PER_STEP:.0f} ms: {verdict(meets['per_step'])} |"
    )
    p, pp = o["parts_ms"], o["plain_parts_ms"]
    print("\nWhere a team step's time goes (median ms per step; stopwatches):\n")
    print("| part | team | plain | extra |")
    print("|---|---:|---:|---:|")
    print(f"| {PARTS['scratch']} | {p['scratch']:.1f} | — | {p['scratch']:.1f} |")
    print(
        f"| {PARTS['session']} | {p['session']:.1f} | {pp['session_ms']:.1f} | "
        f"{o['session_vs_plain_ms']:.1f} |"
    )
    print(
        f"| {PARTS['specialist']} | {p['specialist']:.1f} | {pp['run_ms']:.1f} | "
        f"{o['specialist_vs_plain_run_ms']:.1f} |"
    )
    print(f"| {PARTS['merge']} | {p['merge']:.1f} | — | {p['merge']:.1f} |")
    print(f"| {PARTS['updates']} | {p['updates']:.1f} | — | {p['updates']:.1f} |")
    print(f"| the lead's model call ÷ steps | {p['lead_call_per_step']:.1f} | — | |")
    print(
        f"| the lead's turn besides its call ÷ steps | {p['lead_other_per_step']:.1f} | — | "
        f"{p['lead_other_per_step']:.1f} |"
    )
    print(f"| the report ÷ steps | {p['report_per_step']:.1f} | — | {p['report_per_step']:.1f} |")
    for key, label in (
        ("setup_per_step", "the lead's session and the run made (router, roles) ÷ steps"),
        ("approve_per_step", "the plan approved (parsed, roles checked, state) ÷ steps"),
        ("pool_per_step", "the pool handing out steps ÷ steps"),
        ("rest_per_step", "the rest (plan parsed again, `run`'s own code) ÷ steps"),
    ):
        print(f"| {label} | {p[key]:.1f} | — | {p[key]:.1f} |")
    print(
        f"\nState: {p['state_saves']:.0f} writes of `team/state.json` per task, "
        f"{p['state_save_ms_each']:.2f} ms each; the board: {p['board_ms_each']:.3f} ms a line."
    )
    prof = runs[-1]["overhead"]["profile"]
    print("\nWhat the team adds per step, by function (cProfile of one team and one plain run):\n")
    print("| function | team calls | plain calls | extra cumulative ms/step | extra own ms/step |")
    print("|---|---:|---:|---:|---:|")
    for row in prof[:15]:
        print(
            f"| `{row['function']}` | {row['team_calls']:,} | {row['plain_calls']:,} | "
            f"{row['extra_cum_ms_per_step']:.1f} | {row['extra_own_ms_per_step']:.1f} |"
        )
    print(
        f"\n## Wall time: {args.wall_steps} independent steps, each model reply after "
        f"{args.delay:g} s\n"
    )
    print("| parallel | whole task | steps' span | ideal | span ÷ ideal |")
    print("|---:|---:|---:|---:|---:|")
    for parallel, row in w.items():
        print(
            f"| {parallel} | {row['wall_s']:.2f} s | {row['steps_span_s']:.2f} s | "
            f"{row['ideal_s']:.2f} s | {row['span_vs_ideal']:.2f}× |"
        )
    return meets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12, help="steps of the overhead task")
    parser.add_argument("--reps", type=int, default=4, help="rounds (team, plain) per run")
    parser.add_argument("--wall-steps", type=int, default=6)
    parser.add_argument("--parallel", default="1,3,6", help="pool sizes for the wall time")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds each step's reply waits")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="3 steps, 1 run: a few seconds")
    parser.add_argument("--tmp", type=Path, default=None, help="where homes and workspaces go")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.quick:
        args.steps, args.reps, args.wall_steps, args.runs = 3, 1, 3, 1
        args.parallel, args.delay = "1,3", 0.2
    parallels = [int(p) for p in args.parallel.split(",")]
    out = args.out or ROOT / "bench" / "results" / (
        "team-quick.json" if args.quick else "team.json"
    )
    base = Path(tempfile.mkdtemp(prefix="hearth-bench-team-", dir=args.tmp))
    started = time.perf_counter()
    runs: list[dict[str, Any]] = []
    try:
        for n in range(args.runs):
            log(f"run {n + 1}/{args.runs}: overhead ({args.steps} steps × {args.reps} rounds)")
            overhead = overhead_run(base / f"run-{n}" / "overhead", args.steps, args.reps)
            log(f"run {n + 1}/{args.runs}: wall time (parallel {args.parallel})")
            wall = wall_run(base / f"run-{n}" / "wall", args.wall_steps, args.delay, parallels)
            runs.append(
                {
                    "overhead": overhead,
                    "wall": wall,
                    "load_avg": os.getloadavg()[0],
                    "fsync_ms": fsync_ms(base),
                }
            )
            shutil.rmtree(base / f"run-{n}", ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    summary = summarize(runs, args.steps, parallels)
    meets = print_tables(summary, args, runs)
    report = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "params": {
            "steps": args.steps,
            "reps": args.reps,
            "wall_steps": args.wall_steps,
            "parallel": parallels,
            "delay_s": args.delay,
            "runs": args.runs,
            "dir": str(args.tmp or tempfile.gettempdir()),
        },
        "seconds": time.perf_counter() - started,
        "target_ms_per_step": TARGET_MS_PER_STEP,
        **summary,
        "meets": meets,
        "runs": runs,
    }
    _runs.save(out, report)
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
