"""Rewind (issue 22): what checkpoints cost per command, what they store, how fast a rewind is.

Everything runs through hearth's real code: each turn is a task run by the task service
(``TaskService.run_here`` on the session, agent mode, as ``hearth run`` / ``hearth resume``
drive it: ``build_agent`` wires the tool registry, the approvals gate, the audit log and
the change detector with its checkpoint capture); only the model is swapped, in
``RunOptions.on_agent``, for an instant scripted one whose replies are ``shell`` calls.
Each call's wall time is taken around the agent's own ``tools.call`` (the registry's
call: gate, audit, the detector's walks and capture, the command). Three homes share the
workspace: checkpoints **on** (``[checkpoints] enabled = true``), **off** (``false``; the
change detector still walks around each call, as it always does), and **none** (off, and
the run's change detector removed: the bare shell tool, for reference).

1. **Per command** on a workspace of ``--files`` files / ``--mb`` MB (default 10,000 /
   1,024: source, CSV and log text that compresses, and image/archive-like bytes that do
   not): turns of ``--commands`` ``sed -i`` calls, each on one source file, alternating
   none / off / on. A turn's first call also walks before the command (and, on, loads the
   index); it is reported apart from the calls after it (the steady state). The one-time
   baseline is the first call of the first "on" run (a ``true`` command), page cache
   emptied for the workspace's files before it (``posix_fadvise`` DONTNEED after a sync).
2. **``ls``** through the shell tool at ``--ls-files`` files, the same three ways.
3. **Storage**: the store's growth beyond the baseline (objects, index, the session's
   manifests) against the bytes changed: the sizes, after each command, of the files it
   created or modified (a stat walk by the bench itself, around every command of every
   home). The baseline against the workspace's bytes.
4. **Rewind** of a turn whose one command changed ``--rewind-files`` files:
   ``Rewinder.for_session(session).plan(to)`` then ``.apply(plan)`` (files and
   conversation, as ``hearth rewind ID --to N``); every file's bytes are checked after.
5. **Shadow git**, the peer (Gemini CLI, Cline): a git dir outside the workspace
   (``git --git-dir=G --work-tree=WS``), ``git add -A && git commit --allow-empty`` after
   every command of every home (its snapshot time), its size, and its restore of the same
   files as Gemini CLI does it (``git restore --source=C .`` then ``git clean -f -d``),
   after the bench has made the same change again outside hearth. ``gc.auto=0``: loose
   objects, zlib level 1 (git's defaults for them), no repack in the middle of a timing.

Tables go to stdout, progress to stderr, every number to ``--out`` (JSON) and its history.
``--quick`` runs tiny inputs in a few seconds (tests/test_benches.py).
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
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from workhearth.agent.approval import allow_all  # noqa: E402
from workhearth.agent.loop import Agent  # noqa: E402
from workhearth.agent.runner import RunOptions  # noqa: E402
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
from workhearth.sessions.session import Session  # noqa: E402
from workhearth.shell.snapshot import Snapshot  # noqa: E402
from workhearth.tasks.rewind import Rewinder  # noqa: E402
from workhearth.tasks.service import TaskService  # noqa: E402

MB = 1 << 20
SEED = 20261202
TARGETS = {
    "added_ms_per_command": 50.0,
    "ls_added_share": 0.25,
    "growth_vs_changed": 1.1,
    "baseline_vs_workspace": 1.0,
    "rewind_s": 2.0,
}
SIDES = {
    "none": "shell tool, no change detector (reference)",
    "off": "checkpoints off (the change detector still walks)",
    "on": "checkpoints on",
}
TEXT_SHARE = 0.65  # of the workspace's bytes: source, CSV, logs; the rest does not compress
BINARY_FILES = 0.08  # of the workspace's files
TEXT_MAX = 4 * MB
BINARY_MAX = 24 * MB


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the workspace
WORDS = (
    "self value result items index count name path data config error request response "
    "user session buffer offset length total parse render write read open close start "
    "stop update delete create table column row query cache token model report status"
).split()
KEYWORDS = ["def", "return", "if", "for", "while", "class", "import", "with", "else", "TODO"]


def _ident(rng: random.Random) -> str:
    return "_".join(rng.choices(WORDS, k=rng.randint(1, 3)))


def text_pool(rng: random.Random, size: int) -> dict[str, bytes]:
    """Source-like, CSV and log text to slice files from (compresses like real text)."""
    src: list[str] = []
    n = 0
    while n < size:
        depth = "    " * rng.randint(0, 3)
        kind = rng.random()
        if kind < 0.15:
            line = f"{depth}def {_ident(rng)}({_ident(rng)}, {_ident(rng)}={rng.randint(0, 99)}):"
        elif kind < 0.3:
            line = f"{depth}return {_ident(rng)}.{_ident(rng)}({_ident(rng)})"
        elif kind < 0.36:
            line = f"{depth}# TODO: {' '.join(rng.choices(WORDS, k=rng.randint(3, 9)))}"
        elif kind < 0.5:
            line = f"{depth}if {_ident(rng)} > {rng.randint(0, 9999)}:"
        else:
            line = (
                f"{depth}{_ident(rng)} = {_ident(rng)}[{rng.randint(0, 512)}] + {rng.random():.4f}"
            )
        src.append(line)
        n += len(line) + 1
    csv: list[str] = []
    n = 0
    while n < size:
        line = (
            f"{rng.randint(2019, 2026)}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02},"
            f"{rng.choice(WORDS)},{rng.randint(0, 10**6)},{rng.gauss(100, 30):.3f},"
            f"{rng.choice(('ok', 'late', 'TODO', 'failed'))}"
        )
        csv.append(line)
        n += len(line) + 1
    logs: list[str] = []
    n = 0
    while n < size:
        line = (
            f"2026-11-{rng.randint(1, 30):02}T{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:"
            f"{rng.randint(0, 59):02}Z {rng.choice(('INFO', 'WARN', 'DEBUG', 'ERROR'))} "
            f"{_ident(rng)}: {' '.join(rng.choices(WORDS, k=rng.randint(2, 8)))} "
            f"id={rng.getrandbits(40):x}"
        )
        logs.append(line)
        n += len(line) + 1
    return {
        "src": ("\n".join(src) + "\n").encode(),
        "csv": ("\n".join(csv) + "\n").encode(),
        "log": ("\n".join(logs) + "\n").encode(),
    }


def _sizes(rng: random.Random, count: int, total: int, cap: int) -> list[int]:
    """``count`` log-normal sizes scaled to about ``total`` bytes, none above ``cap``."""
    raw = [rng.lognormvariate(0, 1.4) for _ in range(count)]
    scale = total / sum(raw)
    return [max(64, min(cap, int(r * scale))) for r in raw]


TEXT_KINDS = (("src", ".py", 0.6), ("csv", ".csv", 0.2), ("log", ".log", 0.2))
BINARY_EXTS = (".png", ".jpg", ".zip", ".pdf")


@dataclass
class Workspace:
    """A generated workspace: its folder, what it holds, the files commands change."""

    path: Path
    files: int
    bytes: int
    text_bytes: int
    binary_bytes: int
    sources: list[str]  # source files, relative (the commands' targets)
    binaries: list[str]
    csvs: list[str]
    seconds: float


def make_workspace(path: Path, files: int, total: int, seed: int) -> Workspace:
    """``files`` files of about ``total`` bytes in nested folders: text and binary."""
    started = time.perf_counter()
    rng = random.Random(seed)
    pool = text_pool(rng, min(TEXT_MAX, max(total // 8, 64 * 1024)) + 1024)
    n_bin = max(1, int(files * BINARY_FILES))
    text_sizes = _sizes(rng, files - n_bin, int(total * TEXT_SHARE), min(TEXT_MAX, total // 8))
    bin_sizes = _sizes(rng, n_bin, int(total * (1 - TEXT_SHARE)), BINARY_MAX)
    folders = [
        f"{top}/{sub}"
        for top in ("src", "data", "docs", "assets", "reports", "lib")
        for sub in (f"part{i:02}" for i in range(max(1, files // 400)))
    ]
    ws = Workspace(path, 0, 0, 0, 0, [], [], [], 0.0)
    for folder in folders:
        (path / folder).mkdir(parents=True, exist_ok=True)
    for i, size in enumerate(text_sizes):
        kind, ext, _share = rng.choices(TEXT_KINDS, weights=[k[2] for k in TEXT_KINDS])[0]
        body = pool[kind]
        size = min(size, len(body) - 1)
        start = rng.randrange(0, len(body) - size)
        rel = f"{rng.choice(folders)}/{kind}_{i:05}{ext}"
        data = f"# file {i} of the bench workspace\n".encode() + body[start : start + size]
        (path / rel).write_bytes(data)
        ws.text_bytes += len(data)
        (ws.sources if kind == "src" else ws.csvs if kind == "csv" else []).append(rel)
    for i, size in enumerate(bin_sizes):
        rel = f"{rng.choice(folders)}/blob_{i:05}{rng.choice(BINARY_EXTS)}"
        (path / rel).write_bytes(rng.randbytes(size))
        ws.binary_bytes += size
        ws.binaries.append(rel)
    ws.files = len(text_sizes) + len(bin_sizes)
    ws.bytes = ws.text_bytes + ws.binary_bytes
    ws.seconds = time.perf_counter() - started
    return ws


def evict(path: Path) -> None:
    """Drop the page cache of the files under ``path`` (after a sync), so the next read is
    from disk: the first capture of a workspace nobody read lately."""
    os.sync()
    for folder, _dirs, names in os.walk(path):
        for name in names:
            try:
                fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def fsync_ms(folder: Path, n: int = 20) -> float:
    """The disk's fsync latency now (median of ``n`` small appends), in ms."""
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


def scan(path: Path) -> dict[str, tuple[int, int, int]]:
    """The bench's own stat walk: ``{path: (size, mtime_ns, inode)}`` of every file."""
    out: dict[str, tuple[int, int, int]] = {}
    stack = [path]
    base = len(str(path)) + 1
    while stack:
        with os.scandir(stack.pop()) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    stack.append(Path(e.path))
                elif e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    out[e.path[base:]] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return out


def changed_bytes(before: dict[str, tuple[int, int, int]], after: dict[str, Any]) -> int:
    """The sizes of the files created or modified between two scans."""
    return sum(st[0] for p, st in after.items() if before.get(p) != st)


def du(path: Path) -> int:
    """Bytes of the files under ``path`` (their sizes)."""
    total = 0
    for folder, _dirs, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except FileNotFoundError:
                continue
    return total


def digest_files(root: Path, rels: list[str]) -> dict[str, str]:
    return {rel: hashlib.sha256((root / rel).read_bytes()).hexdigest() for rel in rels}


# --------------------------------------------------------------------------- the peer
class ShadowGit:
    """A git dir outside the workspace, snapshotting it after every command."""

    def __init__(self, git_dir: Path, work_tree: Path) -> None:
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.commits: list[str] = []
        self.snapshot_s: list[float] = []

    def git(self, *args: str) -> str:
        cmd = [
            "git",
            *("-c", "gc.auto=0", "-c", "user.name=bench", "-c", "user.email=bench@localhost"),
            *("-c", "core.autocrlf=false", "-c", "commit.gpgsign=false"),
            f"--git-dir={self.git_dir}",
            f"--work-tree={self.work_tree}",
            *args,
        ]
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(self.git_dir.parent)}
        proc = subprocess.run(
            cmd, cwd=self.work_tree, capture_output=True, text=True, env=env, check=False
        )
        if proc.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {proc.stderr.strip()[:300]}")
        return proc.stdout.strip()

    def init(self) -> None:
        self.git("init", "-q")

    def snapshot(self, message: str) -> float:
        """``git add -A && git commit``, as the shadow-git peers do around a tool call."""
        started = time.perf_counter()
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--no-verify", "-m", message)
        seconds = time.perf_counter() - started
        self.commits.append(self.git("rev-parse", "HEAD"))
        return seconds

    def restore(self, commit: str) -> float:
        """Gemini CLI's restore: ``git restore --source C .`` then ``git clean -f -d``."""
        started = time.perf_counter()
        self.git("restore", f"--source={commit}", ".")
        self.git("clean", "-f", "-d", "-q")
        return time.perf_counter() - started

    def size(self) -> int:
        return du(self.git_dir)


# --------------------------------------------------------------------------- hearth
def tool_use(i: int, command: str) -> Message:
    block = {"type": "tool_use", "id": f"call_{i:06d}", "name": "shell", "input": {}}
    block["input"] = {"command": command}
    return {"role": "assistant", "content": [block]}  # type: ignore[list-item]


class ScriptedModel(StreamingChatModel):
    """Answers at once: one ``shell`` call per command of the turn, then "done"."""

    name = "bench:scripted"
    context_window = 1_000_000

    def __init__(self, commands: list[str], first_id: int) -> None:
        usage = Usage(input_tokens=10, output_tokens=5)
        final: Message = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
        self._replies = [
            Completion(tool_use(first_id + i, c), usage, "tool_use", self.name)
            for i, c in enumerate(commands)
        ]
        self._replies.append(Completion(final, usage, "end_turn", self.name))
        self._replies.reverse()

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        yield Done(self._replies.pop())


def stopwatch(owner: Any, method: str, clock: dict[str, float], key: str) -> None:
    """Time ``owner.method`` into ``clock[key]`` (the same call, a stopwatch around it)."""
    inner = getattr(owner, method)

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            clock[key] = clock.get(key, 0.0) + time.perf_counter() - started

    setattr(owner, method, timed)


def watch_detector(detector: Any, clock: dict[str, float]) -> None:
    """Stopwatches on a run's change detector: its walks and its checkpoint capture."""
    if detector is None:
        return
    stopwatch(detector, "_walk", clock, "walk")
    stopwatch(detector, "_prepare", clock, "detector")
    stopwatch(detector, "_finish", clock, "detector")
    capture = detector.capture
    if capture is not None:
        for method in ("start", "resync", "after_call"):
            stopwatch(capture, method, clock, "capture")


@dataclass
class Home:
    """One ``HEARTH_HOME`` on the workspace: its checkpoints setting and its session."""

    name: str  # a key of SIDES
    root: Path
    workspace: Path
    snapshot: Snapshot | None = None
    session_id: str = ""
    calls: int = 0
    turns: int = 0
    # Per call: seconds in the detector's walks ("walk") and in the capture ("capture").
    parts: list[dict[str, float]] = field(default_factory=list)
    wh: Workhearth = field(init=False)

    def __post_init__(self) -> None:
        home = self.root / f"home-{self.name}"
        home.mkdir(parents=True)
        enabled = "true" if self.name == "on" else "false"
        (home / "config.toml").write_text(f"[checkpoints]\nenabled = {enabled}\n")
        env = {
            "HEARTH_HOME": str(home),
            "HEARTH_MODEL": "openai:bench",
            "OPENAI_API_KEY": "unused",
            "OPENAI_BASE_URL": "http://127.0.0.1:9",  # never called: the model is swapped
            "HOME": os.environ.get("HOME", str(self.root)),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "SHELL": "/bin/bash",
        }
        self.wh = Workhearth(workspace=self.workspace, env=env)
        assert self.wh.config.checkpoints.enabled == (self.name == "on")
        with self.wh.sessions.create(mode="agent") as session:
            self.session_id = session.id

    def session(self) -> Session:
        return self.wh.sessions.open(self.session_id)

    def project(self) -> Path:
        with self.session() as session:
            return session.folder.parent.parent

    def turn(
        self,
        commands: list[str],
        after_each: Callable[[str], None] = lambda _c: None,
        profile: cProfile.Profile | None = None,
    ) -> list[float]:
        """One task turn of ``commands`` through the task service; each call's seconds.

        ``after_each`` runs after each call (outside its timing): the peer's snapshot.
        """
        times: list[float] = []
        clock: dict[str, float] = {}

        def attach(agent: Agent) -> None:
            # Why here: the service built the agent exactly as for a real task; only the
            # network edge (the model) is swapped, and a stopwatch put around the calls.
            agent.model.close()
            agent.model = Router([ScriptedModel(commands, self.calls)])
            tools = agent.tools
            if self.name == "none":
                tools.ctx.changes = None  # type: ignore[attr-defined]
            else:
                watch_detector(tools.ctx.changes, clock)  # type: ignore[attr-defined]
            call = tools.call

            def timed(name: str, arguments: Any, call_id: str) -> Any:
                if profile is not None:
                    profile.enable()
                clock.clear()
                started = time.perf_counter()
                result = call(name, arguments, call_id)
                times.append(time.perf_counter() - started)
                self.parts.append(dict(clock))
                if profile is not None:
                    profile.disable()
                if result.is_error:
                    raise RuntimeError(f"{arguments['command']!r} failed: {result.content[:300]}")
                after_each(arguments["command"])
                return result

            tools.call = timed  # type: ignore[method-assign]

        self.turns += 1
        opts = RunOptions(mode="agent", approver=allow_all, snapshot=self.snapshot, on_agent=attach)
        service = TaskService(self.wh.config, self.workspace)
        task = service.run_here(
            self.wh, self.session(), opts, f"turn {self.turns}: {commands[0][:60]}", lambda _e: None
        )
        assert task.status == "done", (task.status, task.reason, task.message)
        self.snapshot = opts.snapshot  # captured once, as one process would
        self.calls += len(commands)
        assert len(times) == len(commands), times
        return times

    def store_bytes(self) -> int:
        """The checkpoint store (objects and index) plus the session's manifests."""
        project = self.project()
        with self.session() as session:
            manifests = du(session.folder / "checkpoints")
        return du(project / "checkpoints-store") + manifests


def steady_parts(parts: list[dict[str, float]], per_turn: int) -> dict[str, list[float]]:
    """Each part's seconds per steady call: the calls of the per-command turns after their
    first (a home's first turn, one ``true`` call, comes before them)."""
    turns = parts[1:]
    steady = [p for i, p in enumerate(turns) if i % per_turn != 0]
    out = {key: [p.get(key, 0.0) for p in steady] for key in ("walk", "capture")}
    # The detector's own work besides its walks and the capture: the turn lookup, the
    # comparison of the walks, recording the changes in the session.
    out["detector_other"] = [
        p.get("detector", 0.0) - p.get("walk", 0.0) - p.get("capture", 0.0) for p in steady
    ]
    return out


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def top_functions(profile: cProfile.Profile, n: int = 14) -> list[dict[str, Any]]:
    """The costliest functions of a profile by cumulative time."""
    stats = pstats.Stats(profile, stream=io.StringIO())
    rows = []
    for (file, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = f"{Path(file).name}:{line} {func}" if line else func
        rows.append({"function": where, "calls": calls, "own_s": tottime, "cum_s": cumtime})
    rows.sort(key=lambda r: r["cum_s"], reverse=True)
    return rows[:n]


# --------------------------------------------------------------------------- one run
@dataclass
class Args:
    files: int
    mb: int
    ls_files: int
    commands: int
    rounds: int
    rewind_files: int
    ls_turns: int
    profile: bool


def sed(rel: str) -> str:
    return f"sed -i '1s/$/ (edited)/' '{rel}'"


REMOVED = "docs/part00"  # the folder the mixed series deletes


def mixed_series(ws: Workspace, rng: random.Random) -> tuple[list[str], list[str]]:
    """Commands an agent runs on a project (edits, appends, outputs, moves, deletions),
    and the source files they touch."""
    src = rng.sample([s for s in ws.sources if not s.startswith(REMOVED + "/")], 4)
    csv = max(ws.csvs, key=lambda p: (ws.path / p).stat().st_size)
    commands = [
        sed(src[0]),
        f"echo '2026-12-02,bench,42,1.000,ok' >> '{csv}'",
        "mkdir -p out && python3 -c \"import json; open('out/report.json', 'w')"
        ".write(json.dumps([{'n': i, 'sq': i * i} for i in range(20000)]))\"",
        "head -c 3000000 /dev/urandom > out/photo-new.jpg",
        f"mv '{src[1]}' '{src[1]}.moved'",
        f"sed -i '2d' '{csv}'",
        f"tar czf out/sources.tgz '{src[2]}' '{src[3]}'",
        f"rm -r '{REMOVED}'",
    ]
    return commands, src


class Run:
    """One run: a fresh workspace, its three homes and the shadow git, phase by phase."""

    def __init__(self, base: Path, args: Args, n: int) -> None:
        self.args = args
        self.n = n
        self.rng = random.Random(SEED + n)
        self.root = base / f"run-{n}"
        self.out: dict[str, Any] = {"load_avg": os.getloadavg()[0], "fsync_ms": fsync_ms(base)}
        self.ws_path = self.root / "ws"
        self.ws_path.mkdir(parents=True)
        log(f"run {n + 1}: workspace of {args.files:,} files / {args.mb:,} MB")
        self.ws = ws = make_workspace(self.ws_path, args.files, args.mb * MB, SEED + n)
        self.out["workspace"] = {
            "files": ws.files,
            "bytes": ws.bytes,
            "text_bytes": ws.text_bytes,
            "binary_bytes": ws.binary_bytes,
            "made_s": ws.seconds,
        }
        self.homes = {name: Home(name, self.root, self.ws_path) for name in SIDES}
        self.on = self.homes["on"]
        self.git = (
            ShadowGit(self.root / "shadow.git", self.ws_path) if shutil.which("git") else None
        )
        self.changed = {"per_command": 0, "mixed": 0, "rewind_turn": 0}
        self.scan = scan(self.ws_path)

    def after_each(self, phase: str) -> Callable[[str], None]:
        """After each command: the bytes it changed (the bench's own walk), the peer's snapshot."""

        def done(command: str) -> None:
            now = scan(self.ws_path)
            self.changed[phase] += changed_bytes(self.scan, now)
            self.scan = now
            if self.git is not None:
                self.git.snapshot_s.append(self.git.snapshot(command[:60]))

        return done

    def baselines(self) -> None:
        """The one-time baselines, each from a cold page cache."""
        out, git = self.out, self.git
        if git is not None:
            git.init()
            evict(self.ws_path)
            log("  shadow git: baseline commit")
            out["git_baseline_s"] = git.snapshot("baseline")
            out["git_baseline_bytes"] = git.size()
        evict(self.ws_path)
        log("  hearth: baseline capture (first call of a checkpointed run)")
        out["baseline_call_s"] = self.on.turn(["true"])[0]
        out["baseline_bytes"] = self.on.store_bytes()
        out["off_first_walk_call_s"] = self.homes["off"].turn(["true"])[0]
        out["none_first_call_s"] = self.homes["none"].turn(["true"])[0]

    def per_command(self) -> None:
        """One ``sed -i`` per call; the sides alternate turn by turn, "on" last in each round."""
        args = self.args
        targets = iter(self.rng.sample(self.ws.sources, args.rounds * 3 * args.commands))
        calls: dict[str, dict[str, list[float]]] = {s: {"first": [], "next": []} for s in SIDES}
        profile = cProfile.Profile() if args.profile else None
        log(f"  per command: {args.rounds} rounds of {args.commands} `sed -i` calls per side")
        for _round in range(args.rounds):
            for side in SIDES:
                commands = [sed(next(targets)) for _ in range(args.commands)]
                prof = profile if side == "on" else None
                times = self.homes[side].turn(commands, self.after_each("per_command"), prof)
                calls[side]["first"].append(times[0])
                calls[side]["next"].extend(times[1:])
        self.out["calls_s"] = calls
        # The steady calls' parts (a turn's first call left out, as in calls_s "next").
        self.out["parts_s"] = {
            side: steady_parts(self.homes[side].parts, args.commands) for side in ("off", "on")
        }
        if profile is not None:
            self.out["profile_on_calls"] = top_functions(profile)
        self.out["store_bytes_per_command"] = self.on.store_bytes()

    def mixed(self) -> list[str]:
        """A mixed series of commands (storage), on only; the sources it touched."""
        log("  storage: a mixed series of commands")
        series, touched = mixed_series(self.ws, self.rng)
        self.out["mixed_calls_s"] = self.on.turn(series, self.after_each("mixed"))
        self.out["mixed_commands"] = series
        return touched

    def rewind(self, touched: list[str]) -> None:
        """One turn changing --rewind-files files, its rewind, and the peer's restore."""
        out, ws_path = self.out, self.ws_path
        left = [s for s in self.ws.sources if s not in touched and not s.startswith(REMOVED + "/")]
        picked = self.rng.sample(left, self.args.rewind_files)
        listing = self.root / "rewind-files.txt"
        listing.write_text("".join(p + "\n" for p in picked))
        before = digest_files(ws_path, picked)
        big = f"xargs -d '\\n' -a '{listing}' sed -i '1s/$/ (edited)/'"
        log(f"  rewind: one command changing {len(picked):,} files")
        out["rewind_turn_call_s"] = self.on.turn([big], self.after_each("rewind_turn"))[0]
        after = digest_files(ws_path, picked)
        out["rewind_files_changed"] = sum(before[p] != after[p] for p in picked)
        out["store_bytes_end"] = self.on.store_bytes()
        out["changed_bytes"] = self.changed
        out["store_growth_bytes"] = {
            "per_command": out.pop("store_bytes_per_command") - out["baseline_bytes"],
            "total": out["store_bytes_end"] - out["baseline_bytes"],
        }
        out["rewind"] = self.rewind_ours()
        out["rewind"]["restored_exactly"] = digest_files(ws_path, picked) == before
        if self.git is not None:
            out["git_bytes_end"] = self.git.size()
            out["git_snapshot_s"] = self.git.snapshot_s
            # The same change again, outside hearth (same bytes as the peer's last snapshot).
            subprocess.run(["bash", "-c", big], cwd=ws_path, check=True)
            assert digest_files(ws_path, picked) == after
            log("  shadow git: restore")
            restore_s = self.git.restore(self.git.commits[-2])
            out["git_restore"] = {
                "total_s": restore_s,
                "restored_exactly": digest_files(ws_path, picked) == before,
            }

    def rewind_ours(self) -> dict[str, Any]:
        """``hearth rewind ID --to N`` of the last turn, through ``Rewinder``, timed."""
        profile = cProfile.Profile() if self.args.profile else None
        with self.on.session() as session:
            rewinder = Rewinder.for_session(session)
            rclock: dict[str, float] = {}
            stopwatch(rewinder, "_diff", rclock, "diff")
            stopwatch(rewinder.fs, "put_file", rclock, "put_file")
            to = self.on.turns  # the last turn: the big change
            started = time.perf_counter()
            if profile is not None:
                profile.enable()
            plan = rewinder.plan(to)
            planned = time.perf_counter()
            rewinder.apply(plan)
            if profile is not None:
                profile.disable()
            applied = time.perf_counter()
        if profile is not None:
            self.out["profile_rewind"] = top_functions(profile)
        return {
            "files_in_plan": len(plan.files),
            "plan_s": planned - started,
            "apply_s": applied - planned,
            "total_s": applied - started,
            "diff_s": rclock.get("diff", 0.0),
            "put_file_s": rclock.get("put_file", 0.0),
        }

    def ls(self) -> None:
        """``ls -la`` at --ls-files files, in a workspace of its own."""
        args = self.args
        ls_ws = self.root / "ls-ws"
        ls_ws.mkdir()
        size = max(args.ls_files * 20 * 1024, MB)
        make_workspace(ls_ws, args.ls_files, size, SEED + 100 + self.n)
        ls_homes = {name: Home(name, self.root / "ls", ls_ws) for name in SIDES}
        ls_calls: dict[str, list[float]] = {s: [] for s in SIDES}
        log(
            f"  ls: {args.ls_turns} turns of {args.commands} calls per side at {args.ls_files:,} files"
        )
        for home in ls_homes.values():
            home.turn(["true"])  # each home's first walk (and, on, its baseline) out of the way
        for _turn in range(args.ls_turns):
            for side, home in ls_homes.items():
                ls_calls[side].extend(home.turn(["ls -la"] * args.commands)[1:])
        self.out["ls_calls_s"] = ls_calls


def one_run(base: Path, args: Args, n: int) -> dict[str, Any]:
    run = Run(base, args, n)
    run.baselines()
    run.per_command()
    touched = run.mixed()
    run.rewind(touched)
    run.ls()
    return run.out


# --------------------------------------------------------------------------- report
def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians over the runs of each run's own medians and ratios."""

    def med(get: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(get(r) for r in runs)

    steady = {s: med(lambda r, s=s: median_ms(r["calls_s"][s]["next"])) for s in SIDES}
    first = {s: med(lambda r, s=s: median_ms(r["calls_s"][s]["first"])) for s in SIDES}
    added = med(
        lambda r: median_ms(r["calls_s"]["on"]["next"]) - median_ms(r["calls_s"]["off"]["next"])
    )
    ls = {s: med(lambda r, s=s: median_ms(r["ls_calls_s"][s])) for s in SIDES}
    ls_added = med(
        lambda r: median_ms(r["ls_calls_s"]["on"]) / median_ms(r["ls_calls_s"]["off"]) - 1
    )
    changed = med(lambda r: sum(r["changed_bytes"].values()))
    growth = med(lambda r: r["store_growth_bytes"]["total"])
    out: dict[str, Any] = {
        "load_avg": med(lambda r: r["load_avg"]),
        "fsync_ms": med(lambda r: r["fsync_ms"]),
        "per_command_ms": {
            "steady": steady,
            "first_of_turn": first,
            "added_by_checkpoints": added,
            "added_vs_no_tracking": med(
                lambda r: (
                    median_ms(r["calls_s"]["on"]["next"]) - median_ms(r["calls_s"]["none"]["next"])
                )
            ),
        },
        "parts_ms": {
            side: {
                key: med(lambda r, side=side, key=key: median_ms(r["parts_s"][side][key]))
                for key in ("walk", "capture", "detector_other")
            }
            for side in ("off", "on")
        },
        "baseline": {
            "call_s": med(lambda r: r["baseline_call_s"]),
            "off_first_call_s": med(lambda r: r["off_first_walk_call_s"]),
            "bytes": med(lambda r: r["baseline_bytes"]),
            "vs_workspace": med(lambda r: r["baseline_bytes"] / r["workspace"]["bytes"]),
        },
        "ls_ms": ls,
        "ls_added_share": ls_added,
        "storage": {
            "changed_bytes": changed,
            "growth_bytes": growth,
            "growth_vs_changed": med(
                lambda r: r["store_growth_bytes"]["total"] / sum(r["changed_bytes"].values())
            ),
        },
        "rewind": {
            "files": med(lambda r: r["rewind"]["files_in_plan"]),
            "plan_s": med(lambda r: r["rewind"]["plan_s"]),
            "apply_s": med(lambda r: r["rewind"]["apply_s"]),
            "total_s": med(lambda r: r["rewind"]["total_s"]),
            "diff_s": med(lambda r: r["rewind"]["diff_s"]),
            "put_file_s": med(lambda r: r["rewind"]["put_file_s"]),
            "all_restored": all(r["rewind"]["restored_exactly"] for r in runs),
        },
    }
    if all("git_baseline_s" in r for r in runs):
        out["git"] = {
            "baseline_s": med(lambda r: r["git_baseline_s"]),
            "baseline_bytes": med(lambda r: r["git_baseline_bytes"]),
            "baseline_vs_workspace": med(
                lambda r: r["git_baseline_bytes"] / r["workspace"]["bytes"]
            ),
            "snapshot_ms": med(lambda r: median_ms(r["git_snapshot_s"])),
            "growth_bytes": med(lambda r: r["git_bytes_end"] - r["git_baseline_bytes"]),
            "growth_vs_changed": med(
                lambda r: (
                    (r["git_bytes_end"] - r["git_baseline_bytes"])
                    / sum(r["changed_bytes"].values())
                )
            ),
            "restore_s": med(lambda r: r["git_restore"]["total_s"]),
            "all_restored": all(r["git_restore"]["restored_exactly"] for r in runs),
        }
    # The same figures in the units the tables print (MB, percent), for the README's check.
    out["baseline"]["mb"] = out["baseline"]["bytes"] / MB
    out["storage"]["changed_mb"] = changed / MB
    out["storage"]["growth_mb"] = growth / MB
    out["ls_added_percent"] = ls_added * 100
    if "git" in out:
        out["git"]["baseline_mb"] = out["git"]["baseline_bytes"] / MB
        out["git"]["growth_mb"] = out["git"]["growth_bytes"] / MB
    return out


def verdict(ok: bool) -> str:
    return "meets" if ok else "MISSES"


def print_tables(s: dict[str, Any], args: Args, runs: int, ws: dict[str, Any]) -> dict[str, bool]:
    pc, base, st, rw = s["per_command_ms"], s["baseline"], s["storage"], s["rewind"]
    g = s.get("git")
    meets = {
        "per_command": pc["added_by_checkpoints"] <= TARGETS["added_ms_per_command"],
        "ls": s["ls_added_share"] <= TARGETS["ls_added_share"],
        "growth": st["growth_vs_changed"] <= TARGETS["growth_vs_changed"],
        "baseline": base["vs_workspace"] <= TARGETS["baseline_vs_workspace"],
        "rewind": rw["total_s"] <= TARGETS["rewind_s"] and rw["all_restored"],
    }
    print(
        f"## Rewind checkpoints ({ws['files']:,} files, {ws['bytes'] / MB:,.0f} MB; "
        f"median of {runs} run{'s' * (runs > 1)})\n"
    )
    print("| measure | hearth | shadow git | target |")
    print("|---|---:|---:|---|")
    na = "n/a"
    print(
        f"| added to one `sed -i` call (on − off) | {pc['added_by_checkpoints']:.1f} ms | "
        f"{g['snapshot_ms']:.1f} ms per snapshot | ≤ 50 ms: {verdict(meets['per_command'])} |"
        if g
        else f"| added to one `sed -i` call | {pc['added_by_checkpoints']:.1f} ms | {na} | |"
    )
    print(
        f"| `ls` at {args.ls_files:,} files, on vs off | {s['ls_added_share']:+.1%} | | "
        f"≤ 25 %: {verdict(meets['ls'])} |"
    )
    print(
        f"| baseline (one time) | {base['call_s']:.2f} s, {base['bytes'] / MB:,.0f} MB "
        f"= {base['vs_workspace']:.2f}× | "
        + (
            f"{g['baseline_s']:.2f} s, {g['baseline_bytes'] / MB:,.0f} MB "
            f"= {g['baseline_vs_workspace']:.2f}×"
            if g
            else na
        )
        + f" | ≤ 1.0×: {verdict(meets['baseline'])} |"
    )
    print(
        f"| storage beyond baseline / bytes changed ({st['changed_bytes'] / MB:,.1f} MB) | "
        f"{st['growth_bytes'] / MB:,.1f} MB = {st['growth_vs_changed']:.2f}× | "
        + (f"{g['growth_bytes'] / MB:,.1f} MB = {g['growth_vs_changed']:.2f}×" if g else na)
        + f" | ≤ 1.1×: {verdict(meets['growth'])} |"
    )
    print(
        f"| rewind of {rw['files']:,.0f} changed files | {rw['total_s']:.2f} s "
        f"(plan {rw['plan_s']:.2f} + apply {rw['apply_s']:.2f}) | "
        + (f"{g['restore_s']:.2f} s" if g else na)
        + f" | ≤ 2 s: {verdict(meets['rewind'])} |"
    )
    print("\nPer call (median ms; a turn's first call walks before the command too):\n")
    print("| side | `sed -i`, steady | `sed -i`, first of a turn | `ls -la` |")
    print("|---|---:|---:|---:|")
    for side, label in SIDES.items():
        print(
            f"| {label} | {pc['steady'][side]:.1f} | {pc['first_of_turn'][side]:.1f} | "
            f"{s['ls_ms'][side]:.1f} |"
        )
    parts = s["parts_ms"]
    print(
        "\nWhere a steady `sed -i` call's time goes (median ms, stopwatches on the real objects):\n"
    )
    print(
        "| side | whole call | detector's walk | checkpoint capture | detector, other "
        "(turn lookup, comparing, recording) | the rest (gate, shell, audit) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for side in ("off", "on"):
        walk, cap, other = (parts[side][k] for k in ("walk", "capture", "detector_other"))
        rest = pc["steady"][side] - walk - cap - other
        print(
            f"| {SIDES[side]} | {pc['steady'][side]:.1f} | {walk:.1f} | {cap:.1f} | "
            f"{other:.1f} | {rest:.1f} |"
        )
    print(
        f"\nRewind: plan {rw['plan_s']:.2f} s, of which unified diffs {rw['diff_s']:.2f} s; "
        f"apply {rw['apply_s']:.2f} s, of which writing files (`put_file`) {rw['put_file_s']:.2f} s."
    )
    return meets


def print_profile(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n{title} (cProfile, cumulative):\n")
    print("| function | calls | cumulative s | own s |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print(
            f"| `{row['function']}` | {row['calls']:,} | {row['cum_s']:.3f} | {row['own_s']:.3f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=1024, help="the workspace's size in MB")
    parser.add_argument("--ls-files", type=int, default=1_000)
    parser.add_argument("--commands", type=int, default=6, help="calls per turn")
    parser.add_argument("--rounds", type=int, default=3, help="turns per side per run")
    parser.add_argument("--ls-turns", type=int, default=3)
    parser.add_argument("--rewind-files", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile the on calls, rewind")
    parser.add_argument(
        "--quick", action="store_true", help="300 files / 8 MB, 1 run: a few seconds"
    )
    parser.add_argument("--tmp", type=Path, default=None, help="where the workspaces go")
    parser.add_argument("--out", type=Path, default=None)
    ns = parser.parse_args()
    if ns.quick:
        ns.files, ns.mb, ns.ls_files, ns.commands, ns.rounds = 300, 8, 100, 3, 1
        ns.ls_turns, ns.rewind_files, ns.runs = 1, 40, 1
    out = ns.out or ROOT / "bench" / "results" / (
        "rewind-quick.json" if ns.quick else "rewind.json"
    )
    args = Args(
        ns.files,
        ns.mb,
        ns.ls_files,
        ns.commands,
        ns.rounds,
        ns.rewind_files,
        ns.ls_turns,
        ns.profile,
    )
    # Why: a stopped bench (SIGTERM) still removes its gigabyte of files.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    base = Path(tempfile.mkdtemp(prefix="hearth-bench-rewind-", dir=ns.tmp))
    runs: list[dict[str, Any]] = []
    started = time.perf_counter()
    try:
        for n in range(ns.runs):
            runs.append(one_run(base, args, n))
            shutil.rmtree(base / f"run-{n}", ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    summary = summarize(runs)
    meets = print_tables(summary, args, ns.runs, runs[0]["workspace"])
    if ns.profile:
        print_profile("Where a checkpointed call's time goes", runs[-1]["profile_on_calls"])
        print_profile("Where the rewind's time goes", runs[-1]["profile_rewind"])
    report = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_avg": os.getloadavg()[0],
        },
        "params": {**vars(args), "runs": ns.runs},
        "seconds": time.perf_counter() - started,
        "targets": TARGETS,
        "labels": SIDES,
        "workspace": {**runs[0]["workspace"], "mb": runs[0]["workspace"]["bytes"] / MB},
        **summary,
        "meets": meets,
        "runs": runs,
    }
    _runs.save(out, report)
    log(f"wrote {out}")


if __name__ == "__main__":
    main()
