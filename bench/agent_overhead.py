"""Agent runtime overhead per tool step, stop latency, and ``hearth --help`` start-up time.

1. **Per step.** An in-process :class:`StreamingChatModel` answers instantly with
   precomputed completions: N turns that each call ``read_file`` on a small file,
   then a final text. The task runs through the task service exactly as ``hearth run``
   drives it (``TaskService.run_here`` on a session made by ``wh.sessions.create``:
   router, real tool registry, approvals gate, audit log, compactor, durable session
   in a temporary ``HEARTH_HOME``, the task's listener publishing its events); only
   the model is swapped for the instant one, in ``RunOptions.on_agent``. The tool's
   own time (measured inside the tool function) and the model's own time are
   subtracted from ``agent.run``; what is left is what the runtime adds per step
   (the task's fixed cost — building the agent, recording its end — is reported
   apart as ``task_fixed_ms``). Compared in the same run with
   - a **bare loop**: append the reply to a list, call the same tool function,
     append the result (the least any loop can do), and
   - the **OpenAI Agents SDK** (peer, when installed): ``Runner.run`` with a model
     answering instantly and the same tool function, in memory and with its
     file-backed ``SQLiteSession``.
2. **Stop latency.** A task started in the background (``TaskService.start``) against a
   local OpenAI-compatible server (``tests/fake_providers.py``) that accepts the request
   and then stays silent; once the request is under way, ``service.stop()`` and the
   time until the task's ``done`` event. Baseline: the same while the model streams
   text (a word every 50 ms). Median of ``--stop-tries``.
3. **Start-up.** ``hearth --help`` as a subprocess, median of 10, against
   ``python -c pass`` with the same interpreter. When it misses the target,
   ``-X importtime`` names the modules that cost the most.

Run ``.venv/bin/python bench/agent_overhead.py`` (about 30-60 s) or ``--quick``.
``--against DIR`` (a checkout of an earlier commit, e.g. ``git worktree add DIR HEAD``)
runs DIR's bench on DIR's code and this one in turn, ``--rounds`` times, and reports
both medians. Tables go to stdout, progress to stderr, raw numbers to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import functools
import itertools
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from workhearth.agent.approval import allow_all  # noqa: E402
from workhearth.agent.loop import Agent, RunResult  # noqa: E402
from workhearth.agent.runner import RunOptions  # noqa: E402
from workhearth.agent.tools import BUILTIN_TOOLS, ToolContext, ToolRegistry  # noqa: E402
from workhearth.agent.tools.files import read_file  # noqa: E402
from workhearth.app import Workhearth  # noqa: E402
from workhearth.models.base import ModelRequest  # noqa: E402
from workhearth.models.messages import Message  # noqa: E402
from workhearth.models.router import Router  # noqa: E402
from workhearth.models.streaming import (  # noqa: E402
    Completion,
    Done,
    StreamEvent,
    StreamingChatModel,
    Usage,
)
from workhearth.sessions.reconstruct import repair  # noqa: E402
from workhearth.tasks.service import TaskService  # noqa: E402

TARGETS = {"step_overhead_ms": 15.0, "startup_ms": 300.0, "last_vs_first_quarter": 1.10}
SMALL_FILE = "".join(f"line {i}: the quick brown fox\n" for i in range(20))
ITEMS = {
    "ours": "workhearth task (TaskService.run_here, as `hearth run` drives it)",
    "bare": "bare loop: list.append + call the tool",
    "sdk": "OpenAI Agents SDK Runner, in memory",
    "sdk_sqlite": "OpenAI Agents SDK Runner + SQLiteSession (file)",
}


STOPS = {
    "silent": "request sent, server silent (30 s pause before its first event)",
    "streaming": "streaming text, a word every 50 ms (baseline)",
}


PARTS = {
    "specs_ms": "`tools.specs()`: 12 tool JSON schemas rebuilt by pydantic",
    # Why still timed: a run's first step repairs the whole transcript (a resume after a
    # crash); later steps extend it (GrowingRepair), so this is what a step no longer pays.
    "repair_end_ms": "`repair()` of the whole conversation, at a run's end (only the first step pays it)",
    "checkpoint_ms": "`checkpoint()` event (business state + system prompt)",
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- timing


class Clock:
    """Accumulates seconds spent inside the wrapped functions (tool, model)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def wrap(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        return timed


def tool_use(i: int) -> Message:
    block = {"type": "tool_use", "id": f"call_{i:05d}", "name": "read_file"}
    block["input"] = {"path": "small.txt"}
    return {"role": "assistant", "content": [block]}  # type: ignore[list-item]


class InstantModel(StreamingChatModel):
    """Answers from precomputed completions at once: the network edge, removed."""

    name = "bench:instant"
    context_window = 1_000_000  # Why: measure the compaction check, never a compaction.

    def __init__(self, steps: int, clock: Clock) -> None:
        usage = Usage(input_tokens=10, output_tokens=5)
        self._replies = [
            Completion(tool_use(i), usage, "tool_use", self.name) for i in range(steps)
        ]
        final: Message = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
        self._replies.append(Completion(final, usage, "end_turn", self.name))
        self._replies.reverse()
        self.clock = clock

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        started = time.perf_counter()
        done = Done(self._replies.pop())
        self.clock.seconds += time.perf_counter() - started
        yield done


def timed_registry(clock: Clock) -> ToolRegistry:
    """The built-in tools, with ``read_file`` timed from inside (its own time only)."""
    funcs = [clock.wrap(f) if f is read_file else f for f in BUILTIN_TOOLS]
    return ToolRegistry(funcs)


def fsync_latency_ms(folder: Path, n: int = 20) -> float:
    path = folder / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    samples = []
    try:
        for _ in range(n):
            os.write(fd, b"x" * 200)
            started = time.perf_counter()
            os.fsync(fd)
            samples.append(time.perf_counter() - started)
    finally:
        os.close(fd)
        path.unlink()
    return statistics.median(samples) * 1000


# --------------------------------------------------------------------------- runs


def setup(root: Path) -> tuple[Workhearth, Path]:
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    (workspace / "small.txt").write_text(SMALL_FILE)
    env = {
        "HEARTH_HOME": str(root / "home"),
        "HEARTH_MODEL": "openai:bench",
        "OPENAI_API_KEY": "unused",
        "OPENAI_BASE_URL": "http://127.0.0.1:9",  # never called: the model is swapped
    }
    return Workhearth(workspace=workspace, env=env), workspace


def rss_mb() -> float:
    """This process's resident memory now (Linux ``/proc/self/statm``), in MB."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return float("nan")
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def run_ours(root: Path, steps: int) -> dict[str, float]:
    """One task through the task service, in this thread, as ``hearth run`` drives it."""
    wh, workspace = setup(root)
    tool_clock, model_clock = Clock(), Clock()
    session = wh.sessions.create(mode="agent")
    stamps: list[float] = []
    rss: list[float] = []  # resident memory at 20 points through the run
    every = max(1, steps // 20)
    timing: dict[str, Any] = {}

    def swap_model(agent: Agent) -> None:
        # Why here: the service builds the agent exactly as for a real task; only the
        # network edge (the model) and the tool's stopwatch are swapped in.
        agent.model.close()
        agent.model = Router([InstantModel(steps, model_clock)])
        ctx: ToolContext = agent.tools.ctx  # type: ignore[attr-defined]
        agent.tools = timed_registry(tool_clock).bind(ctx)
        agent.limits.max_steps = steps + 1
        task_listener = agent.listener

        def listener(event: Any) -> None:
            if _is_start(event):
                stamps.append(time.perf_counter())
                if len(stamps) % every == 1 or every == 1:
                    rss.append(rss_mb())
            task_listener(event)  # the task's own: its events, its stop point

        agent.listener = listener
        run = agent.run

        def timed_run(prompt: str | None) -> RunResult:
            started = time.perf_counter()
            result = run(prompt)
            timing["run_s"] = time.perf_counter() - started
            timing["result"] = result
            # Why: the two per-step costs a profile shows on top; measured alone here.
            timing["parts"] = {
                "specs_ms": best_ms(agent.tools.specs),
                "repair_end_ms": best_ms(lambda: repair(session.load().messages)),
                "checkpoint_ms": best_ms(agent.checkpoint),
            }
            return result

        agent.run = timed_run  # type: ignore[method-assign,assignment]
        timing["agent_ready"] = time.perf_counter()

    service = TaskService(wh.config, workspace)
    opts = RunOptions(mode="agent", approver=allow_all, on_agent=swap_model)
    events: list[str] = []
    started = time.perf_counter()
    task = service.run_here(
        wh, session, opts, "read small.txt many times", lambda e: events.append(e.name)
    )
    task_total = time.perf_counter() - started
    result = timing["result"]
    assert task.status == "done" and result.status == "done", (task.reason, task.message)
    assert result.steps == steps + 1, result
    assert tool_clock.calls == steps, tool_clock.calls
    assert events.count("tool_result") == steps and events[-1] == "done", events[-3:]
    total = timing["run_s"]
    overhead = total - tool_clock.seconds - model_clock.seconds
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    quarter = max(1, len(gaps) // 4)
    tool_each = tool_clock.seconds / steps
    return {
        "total_s": total,
        "tool_s": tool_clock.seconds,
        "model_s": model_clock.seconds,
        "per_step_ms": overhead / (steps + 1) * 1000,
        # Once per task, outside the steps: build the agent (shell snapshot, tools,
        # prompt), housekeeping before, the recorded end and the events after.
        "task_total_s": task_total,
        "task_fixed_ms": (task_total - total) * 1000,
        "first_quarter_ms": (statistics.median(gaps[:quarter]) - tool_each) * 1000,
        "last_quarter_ms": (statistics.median(gaps[-quarter:]) - tool_each) * 1000,
        "transcript_bytes": session.transcript.stat().st_size,
        # Why from the first quarter: the first steps load modules and fill caches once;
        # a leak (issue #20: gc.freeze in every load) shows as growth after that.
        "rss_first_quarter_mb": rss[len(rss) // 4],
        "rss_end_mb": rss[-1],
        "rss_samples_mb": rss,
        "task_events": len(events),
        **timing["parts"],
    }


def best_ms(func: Callable[[], Any], n: int = 15) -> float:
    """Median wall time of ``func()`` over ``n`` calls, in ms."""
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        func()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def _is_start(event: Any) -> bool:
    return getattr(event, "phase", None) == "start"


def run_bare(root: Path, steps: int) -> dict[str, float]:
    wh, workspace = setup(root)
    from workhearth.agent.safefs import SafeFS

    session = wh.sessions.create(mode="agent")
    with session:
        ctx = ToolContext(session=session, fs=SafeFS([workspace]), mode="agent")
        clock = Clock()
        tool = clock.wrap(read_file)
        replies = [tool_use(i) for i in range(steps)]
        messages: list[Any] = [{"role": "user", "content": "read small.txt many times"}]
        started = time.perf_counter()
        for reply in replies:
            messages.append(reply)
            call = reply["content"][0]
            out = tool(ctx, path=call["input"]["path"], offset=1, limit=2000)  # type: ignore[typeddict-item]
            messages.append(
                {"role": "user", "content": [{"tool_use_id": call["id"], "content": out}]}
            )  # type: ignore[typeddict-item]
        total = time.perf_counter() - started
    return {
        "total_s": total,
        "tool_s": clock.seconds,
        "model_s": 0.0,
        "per_step_ms": (total - clock.seconds) / steps * 1000,
    }


def run_sdk(root: Path, steps: int, sqlite: bool) -> dict[str, float] | None:
    try:
        from agents import Agent as SdkAgent
        from agents import (
            ModelResponse,
            Runner,
            SQLiteSession,
            function_tool,
            set_tracing_disabled,
        )
        from agents import Usage as SdkUsage
        from agents.models.interface import Model
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )
    except ImportError:
        return None
    from workhearth.agent.safefs import SafeFS

    set_tracing_disabled(True)
    wh, workspace = setup(root)
    session = wh.sessions.create(mode="agent")
    ctx = ToolContext(session=session, fs=SafeFS([workspace]), mode="agent")
    tool_clock, model_clock = Clock(), Clock()
    timed_read = tool_clock.wrap(read_file)

    @function_tool(name_override="read_file")
    def sdk_read_file(path: str) -> str:
        """Read a text file."""
        return timed_read(ctx, path=path, offset=1, limit=2000)

    outputs: list[Any] = [
        [
            ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{i:05d}",
                name="read_file",
                arguments='{"path": "small.txt"}',
                status="completed",
            )
        ]
        for i in range(steps)
    ]
    outputs.append(
        [
            ResponseOutputMessage(
                id="msg_final",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
            )
        ]
    )
    outputs.reverse()

    class InstantSdkModel(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            started = time.perf_counter()
            response = ModelResponse(output=outputs.pop(), usage=SdkUsage(), response_id=None)
            model_clock.seconds += time.perf_counter() - started
            return response

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = SdkAgent(
        name="bench", instructions="bench", model=InstantSdkModel(), tools=[sdk_read_file]
    )
    store = SQLiteSession("bench", str(root / "sdk.sqlite")) if sqlite else None

    async def go() -> Any:
        return await Runner.run(
            agent, "read small.txt many times", max_turns=steps + 2, session=store
        )

    started = time.perf_counter()
    result = asyncio.run(go())
    total = time.perf_counter() - started
    session.close()
    assert result.final_output == "done", result.final_output
    assert tool_clock.calls == steps, tool_clock.calls
    overhead = total - tool_clock.seconds - model_clock.seconds
    return {
        "total_s": total,
        "tool_s": tool_clock.seconds,
        "model_s": model_clock.seconds,
        "per_step_ms": overhead / (steps + 1) * 1000,
    }


# --------------------------------------------------------------------------- stop


def stop_latencies(root: Path, tries: int) -> dict[str, list[float]] | None:
    """Milliseconds from ``service.stop()`` to the task's ``done`` event, per try.

    Each try is a task started in the background (``TaskService.start``) against a
    local OpenAI-compatible server (``tests/fake_providers.py``). ``silent``: the server
    accepts the request, sends its headers and then nothing for 30 s. ``streaming``
    (baseline): the server sends a word every 50 ms, and the stop arrives mid-text.
    """
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    try:
        from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text
    except ImportError:  # an installed copy of the bench without the tests folder
        return None
    from workhearth.config import load_config

    words = openai_sse(openai_text([f"word{i} " for i in range(600)]))
    shapes: dict[str, Reply] = {
        "silent": Reply(pieces=[b"data: ", 30.0, b"[DONE]\n\n"]),
        "streaming": Reply(pieces=[p for w in words for p in (w, 0.05)]),
    }
    latencies: dict[str, list[float]] = {}
    for shape, reply in shapes.items():
        home, workspace = root / shape / "home", root / shape / "ws"
        home.mkdir(parents=True)
        workspace.mkdir(parents=True)
        # Why no retries: a stopped request must end the task, not be tried again.
        (home / "config.toml").write_text("[models]\nmax_retries = 0\n")
        with FakeProvider([reply] * tries) as fake:
            env = {
                "HEARTH_HOME": str(home),
                "HEARTH_MODEL": "openai:bench",
                "OPENAI_BASE_URL": fake.url,
                "OPENAI_API_KEY": "sk-test",
            }
            service = TaskService(load_config(env), workspace, {"PATH": os.defpath})
            try:
                latencies[shape] = [
                    stop_once(service, fake, n, streaming=shape == "streaming")
                    for n in range(tries)
                ]
            finally:
                service.close()
    return latencies


def stop_once(service: TaskService, fake: Any, n: int, *, streaming: bool) -> float:
    """Start a task, wait until its model request is under way, stop it; ms to ``done``."""
    import threading

    task = service.start("write a long story", mode="agent")
    done = threading.Event()
    ended: list[float] = []

    def on_event(event: Any) -> None:
        if event.name == "done":
            ended.append(time.perf_counter())
            done.set()

    task.on_event = on_event
    names = lambda: {e.name for e in task.events}  # noqa: E731
    wait_until(lambda: len(fake.received) > n and task.status == "running")
    if streaming:
        wait_until(lambda: "text" in names())
    else:
        time.sleep(0.2)  # Why: the client is blocked reading the silent stream by now
    assert not task.finished, task.events
    started = time.perf_counter()
    service.stop(task.session_id)
    assert done.wait(60), "the task did not end within 60 s of its stop"
    assert task.status == "stopped", (task.reason, task.message)
    return (ended[0] - started) * 1000


def wait_until(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("the task did not reach the expected point")
        time.sleep(0.005)


# --------------------------------------------------------------------------- start-up


def median_ms(argv: list[str], runs: int, env: dict[str, str]) -> tuple[float, list[float]]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples), samples


def hearth_command() -> list[str]:
    script = shutil.which("hearth", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "workhearth"]


def import_costs(env: dict[str, str], top: int = 15) -> list[dict[str, Any]]:
    """The modules with the largest cumulative import time under ``hearth --help``."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workhearth", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, self_us, cumulative, name = (
            part.strip() for part in line.replace(":", "|", 1).split("|")
        )
        rows.append(
            {
                "module": name,
                "self_ms": int(self_us) / 1000,
                "cumulative_ms": int(cumulative) / 1000,
            }
        )
    rows.sort(key=lambda r: -r["cumulative_ms"])
    return rows[:top]


# --------------------------------------------------------------------------- report


def ratio(value: float, target: float) -> str:
    return f"{value / target:.2f}× target ({'meets' if value <= target else 'MISSES'})"


def back_to_back(args: argparse.Namespace, out: Path) -> None:
    """Run an earlier commit's bench (``--against``) and this one in turn, ``--rounds`` times.

    Each side runs as its own process with its own code (``PYTHONPATH`` = its ``src``),
    old first, then new, so both see the same load; the report is this bench's last
    run with the medians of both sides under ``before_service`` and ``back_to_back``.
    """
    old_root = args.against.resolve()
    commit = subprocess.run(
        ["git", "-C", str(old_root), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    common = ["--steps", str(args.steps), "--runs", str(args.runs)]
    common += ["--startup-runs", str(args.startup_runs)]
    if args.dir is not None:
        common += ["--dir", str(args.dir)]
    scratch_dir = Path(tempfile.mkdtemp(prefix="hearth-bench-b2b-"))
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    try:
        for n in range(args.rounds):
            for side, root, extra in (
                ("before", old_root, []),
                ("after", ROOT, ["--stop-tries", str(args.stop_tries)]),
            ):
                log(f"round {n + 1}/{args.rounds}: {side} ({root})")
                path = scratch_dir / f"{side}-{n}.json"
                env = {**os.environ, "PYTHONPATH": str(root / "src")}
                script = str(root / "bench" / "agent_overhead.py")
                argv = [sys.executable, script, *common, *extra, "--out", str(path)]
                subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
                (before if side == "before" else after).append(json.loads(path.read_text()))
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)

    def medians(reports: list[dict[str, Any]]) -> dict[str, float]:
        keys = set.intersection(*(set(r["step_overhead_ms"]) for r in reports))
        return {k: statistics.median(r["step_overhead_ms"][k] for r in reports) for k in keys}

    old, new = medians(before), medians(after)
    stops = {
        key: statistics.median(x for r in after for x in r["stop_samples_ms"].get(key, []))
        for key in STOPS
        if any(r["stop_samples_ms"].get(key) for r in after)
    }
    print(f"## Back to back: {commit[:7]} (the --against checkout) and this tree\n")
    print(f"{args.rounds} rounds, old then new; each figure the median of {args.runs} runs.\n")
    print(
        "| round | before: ours | after: ours | after − before | before: SDK ÷ ours | after: SDK ÷ ours |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    rows = [
        (str(n + 1), medians([b]), medians([a]))
        for n, (b, a) in enumerate(zip(before, after, strict=True))
    ]
    for label, b, a in [*rows, ("median", old, new)]:
        print(
            f"| {label} | {b['ours']:.3f} ms | {a['ours']:.3f} ms | {a['ours'] - b['ours']:+.3f} ms "
            f"| {sdk_ratio(b)} | {sdk_ratio(a)} |"
        )
    if stops:
        print(
            "\nStop latency, all tries of the new runs: "
            + ", ".join(f"{key} {value:.1f} ms" for key, value in stops.items())
        )
    report = after[-1]
    report["before_service"] = {
        "commit": commit,
        "step_overhead_ms": old,
        "rounds": [r["step_overhead_ms"] for r in before],
        "startup_ms": statistics.median(r["startup"]["hearth_help_ms"] for r in before),
    }
    report["back_to_back"] = {
        "rounds": args.rounds,
        "order": "before, after, before, after, ...",
        "after_step_overhead_ms": new,
        "after_rounds": [r["step_overhead_ms"] for r in after],
        "ours_difference_ms": new["ours"] - old["ours"],
        "ours_after_over_before": new["ours"] / old["ours"],
        "sdk_over_ours_before": {
            k: old[k] / old["ours"] for k in ("sdk", "sdk_sqlite") if k in old
        },
        "sdk_over_ours_after": {k: new[k] / new["ours"] for k in ("sdk", "sdk_sqlite") if k in new},
        "stop_latency_ms": stops,
        "after_startup_ms": statistics.median(r["startup"]["hearth_help_ms"] for r in after),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(out, report)
    log(f"wrote {out}")


def sdk_ratio(step: dict[str, float]) -> str:
    """How many times the SDK's per-step overhead ours is (in memory / with SQLite)."""
    parts = [f"{step[k] / step['ours']:.1f}×" for k in ("sdk", "sdk_sqlite") if k in step]
    return " / ".join(parts) or "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--startup-runs", type=int, default=10)
    parser.add_argument("--stop-tries", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="100 steps, 3 runs, 3 stops")
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary homes go")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="a checkout of an earlier commit: run its bench and this one in turn, --rounds times",
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.quick:
        args.steps, args.runs, args.stop_tries = 100, 3, 3
    out = args.out or ROOT / "bench" / "results" / (
        "agent_overhead-quick.json" if args.quick else "agent_overhead.json"
    )
    if args.against is not None:
        back_to_back(args, out)
        return

    base = Path(tempfile.mkdtemp(prefix="hearth-bench-", dir=args.dir))
    results: dict[str, list[dict[str, float]]] = {k: [] for k in ITEMS}
    try:
        fsync_ms = fsync_latency_ms(base)
        for n in range(args.runs):
            log(f"run {n + 1}/{args.runs}: {args.steps} steps")
            results["ours"].append(run_ours(base / f"ours-{n}", args.steps))
            results["bare"].append(run_bare(base / f"bare-{n}", args.steps))
            for key, sqlite in (("sdk", False), ("sdk_sqlite", True)):
                peer = run_sdk(base / f"{key}-{n}", args.steps, sqlite)
                if peer is not None:
                    results[key].append(peer)
        log(f"stop latency: {args.stop_tries} tries each against a silent and a streaming model")
        stops = stop_latencies(base / "stop", args.stop_tries) if args.stop_tries else None
    finally:
        shutil.rmtree(base, ignore_errors=True)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
    env["HEARTH_HOME"] = tempfile.mkdtemp(prefix="hearth-bench-home-")
    log("start-up: hearth --help")
    hearth_ms, hearth_samples = median_ms([*hearth_command(), "--help"], args.startup_runs, env)
    python_ms, python_samples = median_ms([sys.executable, "-c", "pass"], args.startup_runs, env)
    costs = import_costs(env)
    shutil.rmtree(env["HEARTH_HOME"], ignore_errors=True)

    step = {k: statistics.median(r["per_step_ms"] for r in v) for k, v in results.items() if v}
    tool_ms = statistics.median(r["tool_s"] / args.steps * 1000 for r in results["ours"])
    ours = results["ours"]

    print(f"## Agent overhead per tool step ({args.steps} steps × {args.runs} runs, median)\n")
    print(
        f"Tool `read_file` on a {len(SMALL_FILE)}-byte file: {tool_ms:.3f} ms of its own per call "
        f"(subtracted). fsync on the bench folder: {fsync_ms:.2f} ms.\n"
    )
    print("| loop | overhead / step | vs bare loop | vs target 15 ms |")
    print("|---|---:|---:|---|")
    for key, label in ITEMS.items():
        if key not in step:
            print(f"| {label} | not installed | | |")
            continue
        vs_bare = step[key] / step["bare"] if step["bare"] > 0 else float("inf")
        target = ratio(step[key], TARGETS["step_overhead_ms"]) if key == "ours" else ""
        print(f"| {label} | {step[key]:.3f} ms | {vs_bare:,.0f}× | {target} |")
    first = statistics.median(r["first_quarter_ms"] for r in ours)
    last = statistics.median(r["last_quarter_ms"] for r in ours)
    growth = last / first if first > 0 else float("inf")
    print(
        f"\nworkhearth per-step overhead, first vs last quarter of the run: "
        f"{first:.2f} ms → {last:.2f} ms (median step gap minus tool time): "
        f"{growth:.2f}× (target ≤ {TARGETS['last_vs_first_quarter']:.2f}×, "
        f"{'meets' if growth <= TARGETS['last_vs_first_quarter'] else 'MISSES'})."
    )
    rss_growth = statistics.median(r["rss_end_mb"] - r["rss_first_quarter_mb"] for r in ours)
    print(
        f"Resident memory from the first quarter to the end of the run: "
        f"{statistics.median(r['rss_first_quarter_mb'] for r in ours):.1f} MB → "
        f"{statistics.median(r['rss_end_mb'] for r in ours):.1f} MB ({rss_growth:+.1f} MB, median)."
    )
    print("\nWhere a step's time goes (each part timed alone, median):\n")
    print("| part | ms | share of overhead |")
    print("|---|---:|---:|")
    for key, label in PARTS.items():
        value = statistics.median(r[key] for r in ours)
        print(f"| {label} | {value:.2f} | {value / step['ours']:.0%} |")

    stop_ms = {k: statistics.median(v) for k, v in stops.items()} if stops else {}
    if stop_ms:
        print(
            f"\n## Stop latency (`TaskService.stop` → the task's `done`, median of {args.stop_tries})\n"
        )
        print("| the model when the stop arrives | median | worst |")
        print("|---|---:|---:|")
        for key, label in STOPS.items():
            print(f"| {label} | {stop_ms[key]:.1f} ms | {max(stops[key]):.1f} ms |")  # type: ignore[index]
    print(f"\n## Start-up (median of {args.startup_runs} runs)\n")
    print("| command | median | vs `python -c pass` | vs target 300 ms |")
    print("|---|---:|---:|---|")
    print(
        f"| `hearth --help` | {hearth_ms:.0f} ms | {hearth_ms / python_ms:.1f}× | "
        f"{ratio(hearth_ms, TARGETS['startup_ms'])} |"
    )
    print(f"| `python -c pass` | {python_ms:.0f} ms | 1.0× | |")
    print("\nLargest cumulative imports under `hearth --help` (`-X importtime`):\n")
    print("| module | cumulative | self |")
    print("|---|---:|---:|")
    for row in costs[:10]:
        print(f"| `{row['module']}` | {row['cumulative_ms']:.1f} ms | {row['self_ms']:.1f} ms |")

    report = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "fsync_ms": fsync_ms,
        },
        "params": {
            "steps": args.steps,
            "runs": args.runs,
            "startup_runs": args.startup_runs,
            "stop_tries": args.stop_tries,
        },
        "targets": TARGETS,
        "labels": ITEMS,
        "step_overhead_ms": step,
        "tool_ms": tool_ms,
        "ours_first_quarter_ms": first,
        "ours_last_quarter_ms": last,
        "ours_rss_growth_mb": rss_growth,
        "parts_ms": {k: statistics.median(r[k] for r in ours) for k in PARTS},
        "task_fixed_ms": statistics.median(r["task_fixed_ms"] for r in ours),
        "stop_latency_ms": stop_ms,
        "stop_labels": STOPS,
        "stop_samples_ms": stops or {},
        "runs": results,
        "startup": {
            "hearth_help_ms": hearth_ms,
            "python_pass_ms": python_ms,
            "hearth_samples_ms": hearth_samples,
            "python_samples_ms": python_samples,
            "imports": costs,
        },
        "meets": {
            "step_overhead": step["ours"] <= TARGETS["step_overhead_ms"],
            "startup": hearth_ms <= TARGETS["startup_ms"],
            # Why: a step must not cost more the longer a run goes (no whole-transcript work).
            "flat_steps": last <= first * TARGETS["last_vs_first_quarter"],
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(out, report)
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
