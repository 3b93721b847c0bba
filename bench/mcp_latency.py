"""Latency of ``memory_search`` through MCP, beside the library call, in one run.

A project memory of ``--entries`` saved sentences (English and Chinese) in a
temporary ``HEARTH_HOME``; then ``--calls`` searches (1,000 by default) each way,
rotating over a few queries (Latin words, a two-character Chinese word):

- ``library``: ``Workhearth(...).memory.search(q)`` in this process;
- ``stdio``: the Python SDK's client calling ``memory_search`` on a ``hearth mcp``
  subprocess (each call a full JSON-RPC round trip through pipes);
- ``stdio_raw``: the same server through bare JSON-RPC lines on its pipes (the
  server's own cost; the SDK client also checks each result against the schema);
- ``http``: the same client on ``/mcp`` of a ``hearth serve`` subprocess
  (streamable HTTP with the bearer token).

p50 / p99 / mean per call, after ``--warmup`` calls each. Target: stdio p50 within
3 ms of the library's p50.

Run ``.venv/bin/python bench/mcp_latency.py`` (about a minute) or ``--calls 20``.
Tables go to stdout, progress to stderr, raw numbers to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

import _runs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from workhearth.app import Workhearth  # noqa: E402
from workhearth.config import load_config  # noqa: E402

TARGET_MS = 3.0
QUERIES = ["port zone", "记忆", "alpha service", "崩溃恢复"]
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def hearth_command() -> list[str]:
    script = shutil.which("hearth", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "workhearth"]


def build_memory(wh: Workhearth, entries: int) -> None:
    for i in range(entries):
        if i % 4 == 0:
            text = f"记忆条目 {i}：系统在崩溃后可以恢复，服务 {i} 在第 {i % 7} 区。"
        else:
            text = f"Fact {i} about {WORDS[i % len(WORDS)]}: service {i} runs on port {8000 + i} in zone {i % 7}."
        wh.memory.save(text)


def stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]

    return {
        "calls": len(samples),
        "p50_ms": round(pct(50) * 1000, 3),
        "p99_ms": round(pct(99) * 1000, 3),
        "mean_ms": round(statistics.fmean(samples) * 1000, 3),
    }


def time_library(wh: Workhearth, calls: int, warmup: int) -> list[float]:
    for i in range(warmup):
        wh.memory.search(QUERIES[i % len(QUERIES)])
    samples = []
    for i in range(calls):
        start = time.perf_counter()
        wh.memory.search(QUERIES[i % len(QUERIES)])
        samples.append(time.perf_counter() - start)
    return samples


async def time_client(client: Any, calls: int, warmup: int) -> list[float]:
    async with client:
        for i in range(warmup):
            await client.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)]})
        samples = []
        for i in range(calls):
            start = time.perf_counter()
            result = await client.call_tool("memory_search", {"query": QUERIES[i % len(QUERIES)]})
            samples.append(time.perf_counter() - start)
            if result.is_error or not result.structured_content["results"]:
                raise SystemExit(f"memory_search failed or found nothing: {result}")
        return samples


def run_async(fn: Callable[[], Awaitable[list[float]]]) -> list[float]:
    return anyio.run(fn)


def time_stdio(env: dict[str, str], workspace: Path, calls: int, warmup: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    cmd = hearth_command()
    params = StdioServerParameters(
        command=cmd[0], args=[*cmd[1:], "mcp"], env=env, cwd=str(workspace)
    )
    return run_async(lambda: time_client(Client(params), calls, warmup))


def time_stdio_raw(env: dict[str, str], workspace: Path, calls: int, warmup: int) -> list[float]:
    """The same server through bare JSON-RPC lines on its pipes: the server's own cost,
    without the SDK client's (which checks every result against the output schema)."""
    proc = subprocess.Popen(
        [*hearth_command(), "mcp"],
        cwd=workspace,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    ids = iter(range(1, 1_000_000))

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        msg = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        proc.stdin.write(json.dumps(msg, ensure_ascii=False).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        return json.loads(proc.stdout.readline())  # type: ignore[union-attr]

    try:
        ask(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            },
        )
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        proc.stdin.flush()
        for i in range(warmup):
            ask(
                "tools/call",
                {"name": "memory_search", "arguments": {"query": QUERIES[i % len(QUERIES)]}},
            )
        samples = []
        for i in range(calls):
            start = time.perf_counter()
            reply = ask(
                "tools/call",
                {"name": "memory_search", "arguments": {"query": QUERIES[i % len(QUERIES)]}},
            )
            samples.append(time.perf_counter() - start)
            if "result" not in reply or reply["result"].get("isError"):
                raise SystemExit(f"memory_search failed: {reply}")
        return samples
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def time_http(
    env: dict[str, str], home: Path, workspace: Path, calls: int, warmup: int
) -> list[float]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mcp import Client

    proc = subprocess.Popen(
        [*hearth_command(), "serve", "--port", "0", "--no-open"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", proc.stdout.readline())
        if not found:
            raise SystemExit("hearth serve did not print its address")
        token = (home / "server.token").read_text(encoding="ascii").strip()
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        client = Client(streamable_http_client(f"{found.group(1)}/mcp", http_client=http))
        return run_async(lambda: time_client(client, calls, warmup))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--entries", type=int, default=300)
    ap.add_argument("--no-http", action="store_true", help="stdio and library only")
    ap.add_argument("--tmp", type=Path, default=None, help="where the temporary home goes")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "mcp_latency.json")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "workspace"
        workspace.mkdir()
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HEARTH_", "OPENAI_", "ANTHROPIC_"))
        }
        env["HEARTH_HOME"] = str(home)
        wh = Workhearth(config=load_config({"HEARTH_HOME": str(home)}), workspace=workspace)
        log(f"saving {args.entries} entries")
        build_memory(wh, args.entries)
        results: dict[str, dict[str, float]] = {}
        log(f"library: {args.calls} searches")
        results["library"] = stats(time_library(wh, args.calls, args.warmup))
        wh.memory.close()
        log(f"stdio (hearth mcp): {args.calls} searches")
        results["stdio"] = stats(time_stdio(env, workspace, args.calls, args.warmup))
        log(f"stdio, bare JSON-RPC client: {args.calls} searches")
        results["stdio_raw"] = stats(time_stdio_raw(env, workspace, args.calls, args.warmup))
        if not args.no_http:
            log(f"http (hearth serve /mcp): {args.calls} searches")
            results["http"] = stats(time_http(env, home, workspace, args.calls, args.warmup))

    lib = results["library"]["p50_ms"]
    gap = results["stdio"]["p50_ms"] - lib
    print(f"\n`memory_search`, {args.calls} calls each, {args.entries} entries:\n")
    print("| path | p50 | p99 | mean | p50 over library |")
    print("|---|---:|---:|---:|---:|")
    for name, row in results.items():
        over = "" if name == "library" else f"+{row['p50_ms'] - lib:.2f} ms"
        print(
            f"| {name} | {row['p50_ms']:.2f} ms | {row['p99_ms']:.2f} ms | {row['mean_ms']:.2f} ms | {over} |"
        )
    verdict = "meets" if gap <= TARGET_MS else "MISSES"
    print(
        f"\nstdio p50 is {gap:.2f} ms over the library call: {verdict} the {TARGET_MS:.0f} ms target."
    )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "when": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "calls": args.calls,
        "entries": args.entries,
        "queries": QUERIES,
        "target_stdio_over_library_ms": TARGET_MS,
        "stdio_over_library_p50_ms": round(gap, 3),
        "stdio_raw_over_library_p50_ms": round(results["stdio_raw"]["p50_ms"] - lib, 3),
        "meets_target": gap <= TARGET_MS,
        "results": results,
    }
    _runs.save(args.out, data)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
