"""Session store benchmark: appends and resume, against the OpenAI Agents SDK and plain JSONL.

One run, one seeded conversation, every implementation fed the same data:

1. Append throughput (events/s) for our fsync policies ``always``, ``turn`` (a
   ``turn_end()`` every 10 events) and ``never``, for ``agents.SQLiteSession``
   (``add_items`` one item at a time, file-backed, its real PRAGMAs reported) and
   for a plain ``f.write(json.dumps(e) + "\\n")`` with and without fsync.
2. Resume of 1, 10 and 100 MB transcripts, each load in a fresh subprocess (page
   cache warm, Python heap cold): wall time and peak RSS growth.
3. Ratios against the targets of DESIGN §3.

The append table sets each row beside its like-for-like: the headline ``turn`` first,
then the rows that make every event durable before the next (``always``, the SDK's
commit per item, a plain fsync per line), then those that never fsync. The resume
table keeps a plain ``orjson.loads`` of every line beside the load without a snapshot:
the least any full parse of the file costs.

Run ``.venv/bin/python bench/sessions.py --quick`` (1 and 10 MB) or without
``--quick`` for 1, 10 and 100 MB. Tables go to stdout, progress to stderr, all raw
numbers to ``--out`` (JSON).

Peak memory: a child's ``ru_maxrss`` inherits the parent's high-water mark on
Linux (``exec`` folds the old mm into ``signal->maxrss``; with ``vfork`` the old
mm is the parent's), so the worker resets its high-water mark through
``/proc/self/clear_refs`` and reads ``VmHWM``. ``ru_maxrss`` growth is kept in the
JSON beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import gc
import json
import os
import platform
import random
import resource
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

MB = 1 << 20
SEED = 20240601
MODEL = "claude-bench-1"
WORKSPACE = "/tmp/workhearth-bench-ws"
TURN_EVERY = 10  # events per turn in the append bench
APPEND_POOL = 10_000  # distinct messages cycled through by the append bench
APPEND_COUNTS = {
    "ours_always": 2_000,
    "ours_turn": 20_000,
    "ours_turn_stream": 50_000,
    "ours_never": 50_000,
    "sqlite": 2_000,
    "plain_fsync": 2_000,
    "plain": 50_000,
}
APPEND_LABELS = {
    "ours_always": "workhearth fsync=always",
    "ours_turn": f"workhearth fsync=turn (turn_end every {TURN_EVERY})",
    "ours_turn_stream": "workhearth fsync=turn, no turn_end (200 ms rule only)",
    "ours_never": "workhearth fsync=never",
    "sqlite": "agents SQLiteSession.add_items (1 item/call)",
    "plain_fsync": "plain f.write(json.dumps)+fsync",
    "plain": "plain f.write(json.dumps), buffered",
}
RESUME_LABELS = {
    "ours_snapshot": "workhearth open+load (snapshot)",
    "ours_nosnap": "workhearth load (no snapshot)",
    "plain_orjson": "plain orjson.loads per line (baseline of the row above)",
    "ours_resume": "workhearth resume('anthropic')",
    "sqlite": "agents SQLiteSession.get_items()",
    "plain_json": "plain json.loads per line",
}
TARGETS = {
    "resume_snapshot_s": 0.5,
    "resume_nosnap_s": 2.0,
    "memory_ratio": 2.5,
    "append_turn_eps": 50_000,
}
SYNC_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
# Why: rows are compared with their like-for-like: the headline (turn), then every
# row durable per event (fsync or commit before the next), then the unsynced ones.
APPEND_ORDER = (
    "ours_turn",
    "ours_turn_stream",
    "ours_always",
    "sqlite",
    "plain_fsync",
    "ours_never",
    "plain",
)
# row → the row it is like-for-like with (the same durability per event)
LIKE_FOR_LIKE = {"ours_always": "sqlite", "plain_fsync": "sqlite", "ours_never": "plain"}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ data
_UNICODE = ["—", "→", "café", "naïve", "✓", "Größe", "日本語"]
_CODE_TEMPLATES = [
    '{i}{a} = {b}({c}, "{d}")',
    "{i}def {a}_{b}({c}, {d}=None):",
    "{i}return {a}.{b}[{n}] + {c}",
    "{i}# {a} {b} {c} {d}",
    'ERROR {a}.py:{n}: "{b}" is not defined in {c}',
    "{i}if {a} is not None and {b} > {n}:",
    "{a}/{b}/{c}.py:{n}:    {d}({a})",
    "{n}\t{a}\t{b}\t{c}",
    '{i}raise {a}Error(f"{b} {{{c}}} failed")',
    "PASSED tests/{a}/test_{b}.py::test_{c}_{d}",
]
_TOOLS = ("bash", "read_file", "edit_file", "grep", "list_dir")


class Corpus:
    """Deterministic prose and code-like text, sliced at random offsets (fast)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        letters = "etaoinshrdlucmfwypvbgkjqxz"
        vocab = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(5000)]
        self.names = vocab[:800]
        words = rng.choices(vocab, cum_weights=_zipf(len(vocab)), k=700_000)
        for _ in range(len(words) // 500):  # Why: models write "—" and "→"; it changes str width
            words[rng.randrange(len(words))] = rng.choice(_UNICODE)
        for i in range(0, len(words), 12):
            words[i] += "."
        for i in range(0, len(words), 90):
            words[i] += "\n\n"
        self.prose = " ".join(words)
        lines = []
        for _ in range(80_000):
            a, b, c, d = (rng.choice(self.names) for _ in range(4))
            line = rng.choice(_CODE_TEMPLATES).format(
                a=a, b=b, c=c, d=d, n=rng.randint(0, 999), i=" " * rng.choice((0, 4, 8, 12))
            )
            if rng.random() < 0.005:
                line += " ✓"
            lines.append(line)
        self.code = "\n".join(lines)

    def _slice(self, text: str, n: int) -> str:
        n = min(n, len(text) - 1)
        start = self.rng.randrange(len(text) - n)
        return text[start : start + n]

    def text(self, median: float, sigma: float, lo: int, hi: int) -> str:
        return self._slice(self.prose, _size(self.rng, median, sigma, lo, hi))

    def output(self, median: float, sigma: float, lo: int, hi: int) -> str:
        return self._slice(self.code, _size(self.rng, median, sigma, lo, hi))


def _zipf(n: int) -> list[float]:
    total, out = 0.0, []
    for i in range(n):
        total += 1.0 / (i + 1)
        out.append(total)
    return out


def _size(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    import math

    return max(lo, min(hi, int(rng.lognormvariate(math.log(median), sigma))))


def conversation(seed: int = SEED) -> Iterator[tuple[str, dict[str, Any]]]:
    """An endless agent conversation: (event type, payload) pairs, identical for one seed.

    A turn: a user prompt, 1–6 tool rounds (assistant thinking + optional text +
    1–2 tool_use; user tool_result with a multi-KB output), a final assistant
    answer with thinking, then a checkpoint. The first turn also sets a title.
    """
    rng = random.Random(seed)
    corpus = Corpus(rng)

    def hexid(prefix: str) -> str:
        return f"{prefix}{rng.getrandbits(96):024x}"

    def thinking() -> dict[str, Any]:
        sig = base64.b64encode(rng.randbytes(rng.randint(200, 600))).decode()
        return {"type": "thinking", "thinking": corpus.text(900, 0.7, 40, 9000), "signature": sig}

    def tool_use() -> dict[str, Any]:
        name = rng.choice(_TOOLS)
        path = f"src/{rng.choice(corpus.names)}/{rng.choice(corpus.names)}.py"
        if name == "bash":
            args: dict[str, Any] = {"command": corpus.output(60, 0.5, 5, 400), "timeout": 120}
        elif name == "edit_file":
            old = corpus.output(250, 0.8, 10, 3000)
            args = {"path": path, "old": old, "new": corpus.output(300, 0.8, 10, 3000)}
        elif name == "grep":
            args = {"pattern": rng.choice(corpus.names), "path": path.rsplit("/", 1)[0]}
        else:
            args = {"path": path, "offset": rng.randint(0, 2000), "limit": 400}
        return {"type": "tool_use", "id": hexid("toolu_"), "name": name, "input": args}

    turn = 0
    while True:
        turn += 1
        prompt = corpus.text(350, 0.9, 10, 6000)
        yield "message", {"role": "user", "id": hexid("msg_"), "content": [_text(prompt)]}
        if turn == 1:
            yield "title", {"title": prompt[:60]}
        for _ in range(rng.randint(1, 6)):
            calls = [tool_use() for _ in range(1 if rng.random() < 0.8 else 2)]
            blocks: list[dict[str, Any]] = [thinking()]
            if rng.random() < 0.4:
                blocks.append(_text(corpus.text(150, 0.6, 10, 1200)))
            blocks += calls
            yield "message", _assistant(hexid("msg_"), blocks)
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": corpus.output(2200, 0.9, 20, 60_000),
                    "is_error": rng.random() < 0.05,
                }
                for call in calls
            ]
            yield "message", {"role": "user", "id": hexid("msg_"), "content": results}
        final = [thinking(), _text(corpus.text(1000, 0.7, 20, 9000))]
        yield "message", _assistant(hexid("msg_"), final)
        yield (
            "checkpoint",
            {
                "tasks": [
                    {"id": i, "title": rng.choice(corpus.names), "done": i < turn % 5}
                    for i in range(5)
                ],
                "files": {f"src/{rng.choice(corpus.names)}.py": {"mtime": turn} for _ in range(3)},
                "mode": "agent",
                "model": MODEL,
            },
        )


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _assistant(msg_id: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "id": msg_id, "model": MODEL, "content": blocks}


def message_pool(count: int) -> list[dict[str, Any]]:
    """The first ``count`` messages of the conversation."""
    out = []
    for kind, payload in conversation():
        if kind == "message":
            out.append(payload)
            if len(out) == count:
                return out
    return out


# -------------------------------------------------------------- appends
def _store(home: Path, policy: str):  # -> SessionStore
    from workhearth.config import load_config
    from workhearth.sessions.store import SessionStore

    cfg = load_config({"HEARTH_HOME": str(home), "HEARTH_FSYNC": policy})
    return SessionStore(cfg, workspace=WORKSPACE)


def append_ours(
    policy: str, pool: list[dict[str, Any]], n: int, tmp: Path, turn_every: int | None
) -> float:
    """``turn_every`` events end a turn (``turn_end()``); ``None`` never does."""
    home = tmp / f"append-{policy}"
    session = _store(home, policy).create(model=MODEL)
    session.writer()  # opening the writer (lock, tail scan) is not an append
    count = len(pool)
    t0 = time.perf_counter()
    for i in range(n):
        session.append_message(pool[i % count])  # type: ignore[arg-type]
        if turn_every and i % turn_every == turn_every - 1:
            session.turn_end()
    session.turn_end()
    elapsed = time.perf_counter() - t0
    session.close()
    shutil.rmtree(home)
    return elapsed


def append_plain(pool: list[dict[str, Any]], n: int, tmp: Path, fsync: bool) -> float:
    path = tmp / "plain.jsonl"
    count = len(pool)
    with path.open("w", encoding="utf-8") as fh:
        t0 = time.perf_counter()
        for i in range(n):
            fh.write(json.dumps(pool[i % count]) + "\n")
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        fh.flush()
        elapsed = time.perf_counter() - t0
    path.unlink()
    return elapsed


def sqlite_pragmas(session: Any) -> list[dict[str, Any]]:
    """synchronous and journal_mode of every connection the SDK opened (one per worker thread)."""
    out = []
    for conn in list(session._connections):
        sync = conn.execute("PRAGMA synchronous").fetchone()[0]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
        out.append({"synchronous": SYNC_NAMES.get(sync, str(sync)), "journal_mode": journal})
    return out


def append_sqlite(
    pool: list[dict[str, Any]], n: int, tmp: Path
) -> tuple[float, list[dict[str, Any]]]:
    from agents import SQLiteSession

    path = tmp / "append.db"
    session = SQLiteSession("bench", path)
    loop = asyncio.new_event_loop()
    count = len(pool)

    async def run() -> None:
        for i in range(n):
            await session.add_items([pool[i % count]])  # type: ignore[list-item]

    try:
        t0 = time.perf_counter()
        loop.run_until_complete(run())
        elapsed = time.perf_counter() - t0
        pragmas = sqlite_pragmas(session)
    finally:
        session.close()
        loop.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return elapsed, pragmas


def fsync_latency(tmp: Path, count: int = 100) -> list[float]:
    """Seconds per fsync of one turn (``TURN_EVERY`` 3 KB appends): the floor of fsync=turn."""
    path = tmp / "fsync.probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    out = []
    try:
        for _ in range(count):
            for _ in range(TURN_EVERY):
                os.write(fd, b"x" * 3000 + b"\n")
            t0 = time.perf_counter()
            os.fsync(fd)
            out.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
        path.unlink()
    return out


def bench_appends(pool: list[dict[str, Any]], runs: int, tmp: Path) -> dict[str, Any]:
    times: dict[str, list[float]] = {k: [] for k in APPEND_COUNTS}
    pragmas: list[dict[str, Any]] = []
    fsyncs: list[float] = []
    for run in range(runs):
        log(f"append run {run + 1}/{runs}")
        fsyncs += fsync_latency(tmp)
        for key, policy, every in (
            ("ours_always", "always", TURN_EVERY),
            ("ours_turn", "turn", TURN_EVERY),
            ("ours_turn_stream", "turn", None),
            ("ours_never", "never", TURN_EVERY),
        ):
            times[key].append(append_ours(policy, pool, APPEND_COUNTS[key], tmp, every))
        elapsed, pragmas = append_sqlite(pool, APPEND_COUNTS["sqlite"], tmp)
        times["sqlite"].append(elapsed)
        times["plain_fsync"].append(append_plain(pool, APPEND_COUNTS["plain_fsync"], tmp, True))
        times["plain"].append(append_plain(pool, APPEND_COUNTS["plain"], tmp, False))
    out: dict[str, Any] = {}
    for key, runs_s in times.items():
        med = statistics.median(runs_s)
        out[key] = {
            "label": APPEND_LABELS[key],
            "events": APPEND_COUNTS[key],
            "runs_s": runs_s,
            "median_s": med,
            "events_per_s": APPEND_COUNTS[key] / med,
        }
    out["sqlite"]["pragmas"] = pragmas
    out["fsync_latency"] = {
        "samples": len(fsyncs),
        "median_s": statistics.median(fsyncs),
        "p90_s": sorted(fsyncs)[int(len(fsyncs) * 0.9)],
    }
    return out


# ------------------------------------------------------------ transcripts
def build_transcript(home: Path, target: int) -> dict[str, Any]:
    """Write the conversation through the real store (policy ``never``) up to ``target`` bytes."""
    t0 = time.perf_counter()
    store = _store(home, "never")
    session = store.create(model=MODEL)
    messages: list[dict[str, Any]] = []
    events = 1  # the meta line
    for kind, payload in conversation():
        if kind == "message":
            session.append_message(payload)  # type: ignore[arg-type]
            messages.append(payload)
        elif kind == "checkpoint":
            session.checkpoint(payload)
            session.turn_end()
        else:
            session.append(kind, payload)
        events += 1
        # Why: stop on a turn boundary so the transcript needs no repair on resume.
        if kind == "checkpoint" and session.writer().size >= target:
            break
    session.close()
    snapshot = session.folder / "snapshot.zst"
    if not snapshot.exists():  # close() snapshots only when the tail grew by >= 1 MB
        store.open(session.id).load()
    size = session.transcript.stat().st_size
    return {
        "home": str(home),
        "sid": session.id,
        "transcript": str(session.transcript),
        "snapshot": str(snapshot),
        "bytes": size,
        "events": events,
        "messages": len(messages),
        "avg_event_bytes": size / events,
        "snapshot_bytes": snapshot.stat().st_size,
        "build_s": time.perf_counter() - t0,
        "_messages": messages,
    }


def build_sqlite(path: Path, sid: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The same conversation in the SDK's store: one item per canonical message."""
    from agents import SQLiteSession

    t0 = time.perf_counter()
    session = SQLiteSession(sid, path)
    loop = asyncio.new_event_loop()

    async def fill() -> None:
        for i in range(0, len(messages), 500):
            await session.add_items(messages[i : i + 500])  # type: ignore[arg-type]

    try:
        loop.run_until_complete(fill())
    finally:
        session.close()
        loop.close()
    size = sum(os.path.getsize(p) for p in (f"{path}", f"{path}-wal") if os.path.exists(p))
    return {"db": str(path), "db_bytes": size, "build_s": time.perf_counter() - t0}


def warm(paths: list[str]) -> None:
    for p in paths:
        if os.path.exists(p):
            with open(p, "rb") as fh:
                while fh.read(8 * MB):
                    pass


# ---------------------------------------------------------------- worker
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * _PAGE


def _hwm() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


def _prepare(spec: dict[str, Any]) -> tuple[Callable[[], Any], dict[str, Any]]:
    """Import and set up everything, returning the load to time (and notes)."""
    impl = spec["impl"]
    notes: dict[str, Any] = {}
    if impl.startswith("ours"):
        # imported lazily by the snapshot: a one-time cost per process, not part of a load
        import msgspec.msgpack  # noqa: F401
        import zstandard  # noqa: F401

        store = _store(Path(spec["home"]), "turn")
        sid = spec["sid"]
        snapshot = Path(spec["snapshot"])
        if impl == "ours_snapshot":
            notes["snapshot_mtime"] = snapshot.stat().st_mtime_ns

            def run() -> Any:
                state = store.open(sid).load()
                return state, len(state.messages)

        elif impl == "ours_nosnap":
            notes["snapshot_present"] = snapshot.exists()

            def run() -> Any:
                state = store.open(sid).load(use_snapshot=False, save_snapshot=False)
                return state, len(state.messages)

        else:
            try:
                import importlib

                importlib.import_module("workhearth.models.adapters")
                importlib.import_module("workhearth.sessions.reconstruct")

                available = True
            except ImportError as exc:
                available = False
                notes["fallback"] = f"resume unavailable ({exc}); timed load()"

            def run() -> Any:
                session = store.open(sid)
                if not available:
                    state = session.load()
                    return state, len(state.messages)
                resumed = session.resume("anthropic")
                return resumed, len(resumed.messages)

        return run, notes
    if impl == "sqlite":
        from agents import SQLiteSession

        loop = asyncio.new_event_loop()

        def run() -> Any:
            session = SQLiteSession(spec["sid"], spec["db"])
            items = loop.run_until_complete(session.get_items())
            session.close()
            return items, len(items)

        return run, notes
    if impl == "plain_json":

        def run() -> Any:
            with open(spec["transcript"], encoding="utf-8") as fh:
                events = [json.loads(line) for line in fh]
            return events, sum(1 for e in events if e.get("type") == "message")

        return run, notes
    if impl == "plain_orjson":
        import orjson

        def run() -> Any:
            with open(spec["transcript"], "rb") as fh:
                events = [orjson.loads(line) for line in fh]
            return events, sum(1 for e in events if e.get("type") == "message")

        return run, notes
    raise SystemExit(f"unknown impl {impl}")


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    run, notes = _prepare(spec)
    gc_time = [0.0, 0.0]  # total, start of the current collection

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            gc_time[1] = time.perf_counter()
        else:
            gc_time[0] += time.perf_counter() - gc_time[1]

    gc.collect()
    gc.callbacks.append(on_gc)
    reset = _reset_hwm()
    baseline = _rss()
    t0 = time.perf_counter()
    result, count = run()
    elapsed = time.perf_counter() - t0
    gc.callbacks.remove(on_gc)
    peak = _hwm() if reset else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    ru_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    del result
    out = {
        "seconds": elapsed,
        "baseline_mb": baseline / MB,
        "growth_mb": (peak - baseline) / MB,
        "ru_maxrss_growth_mb": (ru_peak - baseline) / MB,
        "hwm_reset": reset,
        "gc_s": gc_time[0],
        "messages": count,
    }
    if spec["impl"] == "ours_snapshot":
        # Why: a stale snapshot would be rebuilt (new mtime): then this row measured a full parse.
        out["snapshot_used"] = Path(spec["snapshot"]).stat().st_mtime_ns == notes.pop(
            "snapshot_mtime"
        )
    out.update(notes)
    return out


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def bench_resume(
    builds: dict[int, dict[str, Any]], runs: int
) -> dict[str, dict[str, dict[str, Any]]]:
    raw: dict[str, dict[str, list[dict[str, Any]]]] = {
        impl: {str(s): [] for s in builds} for impl in RESUME_LABELS
    }
    for run in range(runs):
        for size, build in builds.items():
            log(f"resume run {run + 1}/{runs}, {size} MB")
            for impl in RESUME_LABELS:
                spec = {"impl": impl, **{k: v for k, v in build.items() if not k.startswith("_")}}
                snapshot = Path(build["snapshot"])
                aside = snapshot.with_name("snapshot.zst.aside")
                if impl == "ours_nosnap":
                    snapshot.rename(aside)  # the brief: no snapshot.zst on disk for this row
                try:
                    raw[impl][str(size)].append(measure(spec))
                finally:
                    if aside.exists():
                        aside.rename(snapshot)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for impl, by_size in raw.items():
        out[impl] = {}
        for size, results in by_size.items():
            ok = [r for r in results if "error" not in r]
            file_mb = builds[int(size)]["bytes"] / MB
            entry: dict[str, Any] = {"runs": results, "file_mb": file_mb}
            if ok:
                growth = statistics.median(r["growth_mb"] for r in ok)
                entry.update(
                    median_s=statistics.median(r["seconds"] for r in ok),
                    median_growth_mb=growth,
                    memory_ratio=growth / file_mb,
                    messages=ok[0]["messages"],
                )
            out[impl][size] = entry
    return out


# ----------------------------------------------------------------- report
def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def append_table(appends: dict[str, Any]) -> str:
    pragma = appends["sqlite"].get("pragmas") or [{}]
    p = pragma[0]
    durability = {
        "ours_always": "fsync per event",
        "ours_turn": "write() per event, fsync per turn",
        "ours_turn_stream": "write() per event, fsync every 200 ms",
        "ours_never": "write() per event (survives kill -9)",
        "sqlite": f"commit per call; synchronous={p.get('synchronous')}, journal_mode={p.get('journal_mode')}",
        "plain_fsync": "fsync per event",
        "plain": "Python buffer (lost on kill -9)",
    }
    rows = []
    for key in APPEND_ORDER:
        entry = appends[key]
        peer = LIKE_FOR_LIKE.get(key)
        versus = (
            f"{entry['events_per_s'] / appends[peer]['events_per_s']:.2f}× {APPEND_LABELS[peer]}"
            if peer
            else ""
        )
        rows.append(
            [
                entry["label"],
                f"{entry['events']:,}",
                f"{entry['events_per_s']:,.0f}",
                f"{1e6 / entry['events_per_s']:.1f}",
                durability[key],
                versus,
            ]
        )
    lat = appends["fsync_latency"]["median_s"]
    note = (
        f"\n\nfsync of one turn ({TURN_EVERY} × 3 KB) on this disk: median {lat * 1e3:.2f} ms,"
        f" p90 {appends['fsync_latency']['p90_s'] * 1e3:.2f} ms, so fsync=turn with a turn_end"
        f" every {TURN_EVERY} events is bounded near {TURN_EVERY / lat:,.0f} events/s."
    )
    head = ["implementation", "events", "events/s", "µs/event", "durability", "like-for-like"]
    return table(head, rows) + note


def like_for_like(appends: dict[str, Any]) -> dict[str, float]:
    """events/s of each row ÷ its like-for-like's (see ``LIKE_FOR_LIKE``)."""
    return {
        f"{key}/{peer}": appends[key]["events_per_s"] / appends[peer]["events_per_s"]
        for key, peer in LIKE_FOR_LIKE.items()
    }


def resume_table(resume: dict[str, Any], builds: dict[int, dict[str, Any]]) -> str:
    head = ["implementation"] + [
        f"{s} MB ({builds[s]['bytes'] / MB:.1f} MB file): s / mem× (MB)" for s in builds
    ]
    rows = []
    for impl, by_size in resume.items():
        cells = [RESUME_LABELS[impl]]
        for s in builds:
            e = by_size[str(s)]
            if "median_s" not in e:
                cells.append("error: " + e["runs"][0].get("error", "?")[:60])
                continue
            cell = f"{e['median_s']:.3f} s / {e['memory_ratio']:.2f}× ({e['median_growth_mb']:.0f})"
            if any(r.get("fallback") for r in e["runs"]):
                cell += " †load"
            if any(r.get("snapshot_used") is False for r in e["runs"]):
                cell += " ‡stale"
            cells.append(cell)
        rows.append(cells)
    return table(head, rows)


def targets(resume: dict[str, Any], appends: dict[str, Any], largest: int) -> list[dict[str, Any]]:
    """Each DESIGN §3 target at the largest size measured (the targets are for 100 MB)."""
    at = str(largest)

    def got(impl: str, key: str) -> float | None:
        return resume.get(impl, {}).get(at, {}).get(key)

    checks = [
        (f"open+load {at} MB with snapshot ≤ 0.5 s", got("ours_snapshot", "median_s"), "s"),
        (f"resume() {at} MB with snapshot ≤ 0.5 s", got("ours_resume", "median_s"), "s"),
        (f"load {at} MB without snapshot ≤ 2 s", got("ours_nosnap", "median_s"), "n"),
    ]
    checks += [
        (f"memory: {RESUME_LABELS[i]} {at} MB ≤ 2.5× file", got(i, "memory_ratio"), "m")
        for i in ("ours_snapshot", "ours_nosnap", "ours_resume")
    ]
    checks.append(
        ("appends fsync=turn ≥ 50,000 events/s", appends["ours_turn"]["events_per_s"], "a")
    )
    limits = {"s": "resume_snapshot_s", "n": "resume_nosnap_s", "m": "memory_ratio"}
    out = []
    for name, measured, kind in checks:
        limit = TARGETS[limits.get(kind, "append_turn_eps")]
        ok = measured is not None and (measured >= limit if kind == "a" else measured <= limit)
        ratio = None if measured is None else measured / limit
        out.append(
            {"target": name, "measured": measured, "limit": limit, "ratio": ratio, "pass": ok}
        )
    return out


def targets_table(rows: list[dict[str, Any]]) -> str:
    body = []
    for r in rows:
        m = r["measured"]
        body.append(
            [
                r["target"],
                "n/a" if m is None else f"{m:,.3f}" if m < 100 else f"{m:,.0f}",
                "n/a" if m is None else f"{r['ratio']:.2f}",
                "PASS" if r["pass"] else "MISS",
            ]
        )
    return table(["target", "measured", "measured ÷ target", "result"], body)


def machine_info() -> dict[str, Any]:
    import sqlite3

    info: dict[str, Any] = {
        "nproc": os.cpu_count(),
        "python": sys.version,
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "sqlite": sqlite3.sqlite_version,
        # Why: the machine is shared; the load average tells a quiet run from a busy one.
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
    }
    try:
        from importlib.metadata import version

        info["openai_agents"] = version("openai-agents")
        info["orjson"] = version("orjson")
        info["zstandard"] = version("zstandard")
        info["msgspec"] = version("msgspec")
    except Exception:  # pragma: no cover - metadata missing
        pass
    return info


# ------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--sizes", default="1,10,100", help="transcript sizes in MB")
    ap.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    ap.add_argument("--quick", action="store_true", help="1 and 10 MB only")
    ap.add_argument("--out", default="bench/results/sessions.json")
    ap.add_argument("--tmp", default=None, help="scratch folder (default: system temp)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0

    sizes = [1, 10] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    started = time.perf_counter()
    load_start = [round(x, 2) for x in os.getloadavg()]
    with tempfile.TemporaryDirectory(prefix="hearth-bench-", dir=args.tmp) as tmpdir:
        tmp = Path(tmpdir)
        log("generating the conversation")
        pool = message_pool(APPEND_POOL)
        pool_bytes = sum(len(json.dumps(m)) for m in pool) / len(pool)
        appends = bench_appends(pool, args.runs, tmp)
        del pool
        builds: dict[int, dict[str, Any]] = {}
        for size in sizes:
            log(f"building {size} MB transcript + SQLite db")
            build = build_transcript(tmp / f"home-{size}", size * MB)
            build.update(build_sqlite(tmp / f"sdk-{size}.db", build["sid"], build.pop("_messages")))
            builds[size] = build
            warm([build["transcript"], build["snapshot"], build["db"], build["db"] + "-wal"])
        gc.collect()
        resume = bench_resume(builds, args.runs)
    goals = targets(resume, appends, max(sizes))

    print(f"## Appends (median of {args.runs} runs; avg message {pool_bytes:.0f} B)\n")
    print(append_table(appends))
    print(
        "\n## Resume: wall time / peak RSS growth ÷ file size (growth MB), fresh process,"
        f" median of {args.runs}\n"
    )
    print(resume_table(resume, builds))
    if any(r.get("fallback") for e in resume["ours_resume"].values() for r in e["runs"]):
        print("\n† resume() unavailable (reconstruct/adapters missing): load() timed instead")
    print("\n## Targets (DESIGN §3)\n")
    print(targets_table(goals))
    total = time.perf_counter() - started
    print(f"\nwall time {total:.0f} s")

    report = {
        "machine": {**machine_info(), "loadavg_start": load_start},
        "config": {
            "sizes_mb": sizes,
            "runs": args.runs,
            "seed": SEED,
            "append_counts": APPEND_COUNTS,
            "append_pool": APPEND_POOL,
            "append_avg_message_bytes": pool_bytes,
            "turn_every": TURN_EVERY,
            "memory_metric": "VmHWM after clear_refs=5 minus statm RSS before the load",
        },
        "appends": appends,
        "like_for_like": like_for_like(appends),
        "builds": {str(s): b for s, b in builds.items()},
        "resume": resume,
        "targets": goals,
        "wall_s": total,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(out, report)
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
