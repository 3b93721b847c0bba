"""Load on ``hearth serve`` over loopback: searches and saves, fixed rate then saturation.

The server is the real ``hearth serve`` in its own process; this script is the
second process sending requests over 32 connections. Side by side, in the same
run: a bare FastAPI route (no work; ``async def``, as hearth's search route is)
served by uvicorn the same way, hearth's own no-work route (``/v1/info``: its Host
check, token and routing, nothing else), datasette serving the same entries from
an SQLite FTS5 table (its full-text search through the table JSON API, served by
uvicorn the same way, offline), and the library's own search (``wh.memory.search``)
in-process. Afterwards every save the server acknowledged (201) must be in memory.

Open loop at a fixed rate: latency counts from the moment a request was due, so a
server that falls behind shows it (no coordinated omission). The client is plain
asyncio over keep-alive connections; each row says how much of a core it used
(``client_cpu``), so a generator at its limit would show.

    python bench/server_load.py [--runs 3] [--duration 10] [--rate 200] [--connections 32] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

import _runs

ROOT = Path(__file__).resolve().parent.parent
WORDS = (
    "deploy pipeline staging database invoice budget meeting release office printer "
    "backup laptop vendor contract payroll roadmap sprint customer ticket migration"
).split()
# Why IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets made with it; without it
# every reply waits out a 40 ms delayed ACK on a busy keep-alive connection.
SERVE_APP = """
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
sock.bind(("127.0.0.1", 0)); sock.listen(128)
print(sock.getsockname()[1], flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
"""
# Why async: hearth's routes are ``async def``; a plain ``def`` route runs in the
# threadpool and is a slower baseline than hearth's own no-work route.
BARE_APP = (
    """
import socket
import uvicorn
from fastapi import FastAPI
app = FastAPI()
@app.get("/bare")
async def bare() -> dict:
    return {"ok": True}
"""
    + SERVE_APP
)
# Why datasette: an async Python server doing the same job (full-text search over the
# same entries in SQLite FTS5, JSON out), run as it comes; its own ``datasette serve``
# is ``uvicorn.run(ds.app())``, served here on the same kind of socket.
PEER_APP = (
    """
import socket, sys
import uvicorn
from datasette.app import Datasette
app = Datasette([sys.argv[1]]).app()
"""
    + SERVE_APP
)
# The peer's two ways to search, each with the words of hearth's query OR'd as hearth's
# word search does. ``peer``: the table JSON API (``_search``), lean as a client
# wanting the top hits asks it (no total count, facets or facet suggestions; it
# orders by rowid, it does not rank). ``peer_ranked``: its SQL JSON API, BM25-ranked.
PEER_QUERIES = {
    "peer": "/memory/entries.json?_search={q}&_searchmode=raw&_size={limit}"
    "&_nocount=1&_nofacet=1&_nosuggest=1",
    "peer_ranked": "/memory.json?sql={sql}&q={q}&_shape=array",
}
PEER_SQL = (
    "select rowid, content from entries_fts where entries_fts match :q order by rank limit {limit}"
)


LIMIT = 6  # hits per search
# Where a search request's time goes, at saturation: ``blank``, hearth's search route
# answering a blank query (all of hearth's HTTP path: the Host and token checks, the
# security headers, the query read; no memory opened), and ``miss``, two words no entry
# holds (the route's whole path and every query, finding nothing to rank).
PROBES = {
    "blank": f"/v1/memory/search?q=%20&limit={LIMIT}",
    "miss": f"/v1/memory/search?q=zyxt%20qwvk&limit={LIMIT}",
}


def query_words(n: int) -> str:
    """The ``n``-th search: two of the seeded words."""
    return f"{WORDS[n % len(WORDS)]} {WORDS[(n * 7) % len(WORDS)]}"


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def summary(
    latencies: list[float], errors: int, elapsed: float, cpu: float | None = None
) -> dict[str, Any]:
    """``client_cpu``: the share of one core this load generator used (near 1.0: it is the limit)."""
    out = {
        "requests": len(latencies) + errors,
        "errors": errors,
        "rps": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        "p50_ms": round(pct(latencies, 50) * 1000, 2),
        "p99_ms": round(pct(latencies, 99) * 1000, 2),
    }
    if cpu is not None and elapsed:
        out["client_cpu"] = round(cpu / elapsed, 2)
    return out


class Conn:
    """One keep-alive HTTP/1.1 connection: a request written whole, its reply read by length.

    Why not httpx: its AsyncClient spends ~2 ms of CPU per request, more than the
    bare route costs the server, so it measured itself (p50 44 ms at 200/s).
    """

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host, port
        self.head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(
        self, method: str, target: str, body: bytes | None = None
    ) -> tuple[int, bytes]:
        if self.reader is not None and self.reader.at_eof():
            self.close()  # Why: the server closed it while idle (keep-alive timeout)
        if self.writer is None:
            await self.open()
        assert self.reader is not None and self.writer is not None
        extra = (
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            if body is not None
            else ""
        )
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{self.head}{extra}\r\n"
        )
        self.writer.write(head.encode() + (body or b""))
        try:
            async with asyncio.timeout(30):
                raw = await self.reader.readuntil(b"\r\n\r\n")
                status = int(raw[9:12])
                fields = {}
                for line in raw.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    fields[name.strip().lower()] = value.strip().lower()
                if fields.get(b"transfer-encoding") == b"chunked":
                    data = b""
                    while size := int((await self.reader.readuntil(b"\r\n"))[:-2], 16):
                        data += (await self.reader.readexactly(size + 2))[:-2]
                    await self.reader.readuntil(b"\r\n")
                else:
                    data = await self.reader.readexactly(int(fields.get(b"content-length", 0)))
        except BaseException:
            self.close()  # Why: a reply half read leaves the connection out of step
            raise
        if fields.get(b"connection") == b"close":
            self.close()
        return status, data


def server_cpu(pid: int | None) -> float | None:
    """CPU seconds (user + system) the server process has used so far (Linux; else None)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Target:
    def __init__(self, base: str, token: str | None, pid: int | None = None) -> None:
        self.base = base
        self.pid = pid  # the server's process, whose CPU time per request is reported
        host, port = base.removeprefix("http://").rsplit(":", 1)
        self.host, self.port = host, int(port)
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.saved: list[str] = []
        self.counter = 0
        self.failures: Counter[str] = Counter()  # why requests failed: "search 500: ..."

    def conn(self) -> Conn:
        return Conn(self.host, self.port, self.headers)

    async def call(self, conn: Conn, kind: str) -> bool:
        self.counter += 1
        n = self.counter
        if kind == "bare":
            status, data = await conn.request("GET", "/bare")
            return self._ok(kind, status, data)
        if kind == "info":
            status, data = await conn.request("GET", "/v1/info")
            return self._ok(kind, status, data)
        if kind in PROBES:
            status, data = await conn.request("GET", PROBES[kind])
            return self._ok(kind, status, data)
        if kind == "search":
            q = quote(query_words(n))
            status, data = await conn.request("GET", f"/v1/memory/search?q={q}&limit={LIMIT}")
            return self._ok(kind, status, data)
        if kind in PEER_QUERIES:
            q = quote(" OR ".join(f'"{w}"' for w in query_words(n).split()))
            sql = quote(PEER_SQL.format(limit=LIMIT))
            status, data = await conn.request(
                "GET", PEER_QUERIES[kind].format(q=q, sql=sql, limit=LIMIT)
            )
            return self._ok(kind, status, data)
        content = f"load note {n}: the {WORDS[n % len(WORDS)]} owner is person {n}"
        body = json.dumps({"content": content, "tags": ["load"]}).encode()
        status, data = await conn.request("POST", "/v1/memory", body)
        if status == 201:
            self.saved.append(json.loads(data)["id"])
            return True
        return self._ok(kind, status, data)

    def _ok(self, kind: str, status: int, data: bytes) -> bool:
        if status == 200:
            return True
        self.failures[f"{kind} {status}: {data[:200].decode(errors='replace')}"] += 1
        return False

    def failed(self, kind: str, exc: BaseException) -> bool:
        self.failures[f"{kind}: {type(exc).__name__} {exc}"[:200]] += 1
        return False


async def _pool(target: Target, connections: int) -> list[Conn]:
    conns = [target.conn() for _ in range(connections)]
    await asyncio.gather(*(c.open() for c in conns))
    return conns


async def fixed_rate(
    target: Target, mix: list[tuple[str, float]], duration: float, connections: int
) -> dict[str, dict[str, Any]]:
    """Open loop: each kind at its own rate; latency from when a request was due.

    Requests are sent when due whatever the replies do; one waiting for a free
    connection (all ``connections`` busy) counts that wait in its latency.
    """
    lat: dict[str, list[float]] = {k: [] for k, _ in mix}
    errs: dict[str, int] = dict.fromkeys(lat, 0)
    # Why first-in first-out: every connection stays in use, as with 32 clients; a
    # stack would leave some idle past the server's keep-alive timeout.
    free: asyncio.Queue[Conn] = asyncio.Queue()
    for c in await _pool(target, connections):
        free.put_nowait(c)
    cpu0 = time.process_time()
    start = time.perf_counter() + 0.05
    schedule = sorted(
        (start + i / rate, kind) for kind, rate in mix for i in range(int(rate * duration))
    )

    async def one(due: float, kind: str) -> None:
        conn = await free.get()
        try:
            ok = await target.call(conn, kind)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
            ok = target.failed(kind, exc)
        finally:
            free.put_nowait(conn)
        if ok:
            lat[kind].append(time.perf_counter() - due)
        else:
            errs[kind] += 1

    running = set()
    for due, kind in schedule:
        wait = due - time.perf_counter()
        if wait > 0:
            await asyncio.sleep(wait)
        task = asyncio.create_task(one(due, kind))
        running.add(task)
        task.add_done_callback(running.discard)
    await asyncio.gather(*running)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu0
    while not free.empty():
        free.get_nowait().close()
    return {k: summary(lat[k], errs[k], elapsed, cpu) for k in lat}


async def saturate(target: Target, kind: str, duration: float, connections: int) -> dict[str, Any]:
    """Closed loop: ``connections`` clients, each sending its next request at once."""
    latencies: list[float] = []
    errors = 0
    conns = await _pool(target, connections)
    cpu0 = time.process_time()
    served = server_cpu(target.pid)
    start = time.perf_counter()
    end = start + duration

    async def worker(conn: Conn) -> None:
        nonlocal errors
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            try:
                ok = await target.call(conn, kind)
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
                ok = target.failed(kind, exc)
            if ok:
                latencies.append(time.perf_counter() - t0)
            else:
                errors += 1
        conn.close()

    await asyncio.gather(*(worker(c) for c in conns))
    elapsed = time.perf_counter() - start
    out = summary(latencies, errors, elapsed, time.process_time() - cpu0)
    used = server_cpu(target.pid)
    if used is not None and served is not None and latencies:
        # Why: on a shared machine req/s moves with the neighbours; the server's own CPU
        # time per request moves much less, so a ratio of these checks a ratio of req/s.
        out["server_cpu_ms"] = round((used - served) / len(latencies) * 1000, 3)
    return out


def start_hearth(home: Path, workspace: Path) -> tuple[subprocess.Popen[str], str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
    env["HEARTH_HOME"] = str(home)
    hearth = Path(sys.executable).parent / "hearth"
    cmd = [str(hearth)] if hearth.exists() else [sys.executable, "-m", "workhearth"]
    proc = subprocess.Popen(
        [*cmd, "serve", "--port", "0", "--no-open"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for _ in range(5):
        m = re.fullmatch(
            r"(http://127\.0\.0\.1:\d+)/login\?token=\S+", proc.stdout.readline().strip()
        )
        if m:
            token = (home / "server.token").read_text().strip()
            return proc, m.group(1), token
    proc.kill()
    raise SystemExit(f"hearth serve did not print its login URL: {proc.stderr.read()}")  # type: ignore[union-attr]


def start_app(source: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Run one of the side-by-side servers (``BARE_APP``, ``PEER_APP``); returns it and its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-c", source, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.strip().isdigit():
        proc.kill()
        raise SystemExit(f"a side-by-side server did not start: {proc.communicate()[1][-2000:]}")
    return proc, f"http://127.0.0.1:{int(line)}"


def wait_ready(base: str, path: str, headers: dict[str, str]) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(base + path, headers=headers, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{base} did not answer")
        time.sleep(0.1)


def library_search(home: Path, workspace: Path, seconds: float) -> dict[str, Any]:
    from workhearth.app import Workhearth

    wh = Workhearth(home=home, workspace=workspace)
    wh.memory.search("warm up")
    latencies: list[float] = []
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        n += 1
        q = query_words(n)
        t0 = time.perf_counter()
        wh.memory.search(q, limit=LIMIT)
        latencies.append(time.perf_counter() - t0)
    wh.memory.close()
    return summary(latencies, 0, time.perf_counter() - start)


def seed(home: Path, workspace: Path, entries: int) -> list[str]:
    """Save ``entries`` memory entries; returns their texts."""
    from workhearth.app import Workhearth

    wh = Workhearth(home=home, workspace=workspace)
    texts = []
    for i in range(entries):
        a, b, c = WORDS[i % len(WORDS)], WORDS[(i * 3) % len(WORDS)], WORDS[(i * 11) % len(WORDS)]
        texts.append(f"Seed fact {i}: the {a} and the {b} belong to the {c} team")
        wh.memory.save(texts[-1])
    wh.memory.index()
    wh.memory.close()
    return texts


def memory_texts(home: Path, workspace: Path) -> list[str]:
    """The text of every entry in this memory, oldest first."""
    from workhearth.app import Workhearth

    wh = Workhearth(home=home, workspace=workspace)
    texts: list[str] = []
    cursor = None
    while True:
        entries, cursor = wh.memory.list(limit=100, cursor=cursor)
        texts += (e.content for e in entries)
        if cursor is None:
            break
    wh.memory.close()
    return texts[::-1]


def seed_peer(db: Path, texts: list[str]) -> None:
    """The same entries in an SQLite table with an external-content FTS5 index, as
    datasette (and ``sqlite-utils enable-fts``) expect: ``<table>_fts``, porter stemming."""
    con = sqlite3.connect(db)
    with con:
        con.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, content TEXT NOT NULL)")
        con.execute(
            'CREATE VIRTUAL TABLE entries_fts USING fts5(content, content="entries",'
            ' content_rowid="id", tokenize="porter unicode61")'
        )
        con.executemany("INSERT INTO entries(content) VALUES (?)", ((t,) for t in texts))
        con.execute("INSERT INTO entries_fts(entries_fts) VALUES ('rebuild')")
    con.close()


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def one_run(args: argparse.Namespace) -> dict[str, Any]:
    """Seed a fresh home, run every phase against a fresh server, check the saves."""
    root = Path(tempfile.mkdtemp(prefix="hearth-load-"))
    home, workspace = root / "home", root / "workspace"
    workspace.mkdir(parents=True)
    seed(home, workspace, args.entries)
    server, base, token = start_hearth(home, workspace)
    bare, bare_base = start_app(BARE_APP)
    peer: subprocess.Popen[str] | None = None
    peer_target: Target | None = None
    try:
        target = Target(base, token, server.pid)
        wait_ready(base, "/v1/info", target.headers)
        bare_target = Target(bare_base, None, bare.pid)
        wait_ready(bare_base, "/bare", {})
        d, c = args.duration, args.connections
        mix = [("search", args.rate), ("save", args.save_rate)]
        result: dict[str, Any] = {
            "fixed_rate": {
                "hearth": asyncio.run(fixed_rate(target, mix, d, c)),
                "bare": asyncio.run(fixed_rate(bare_target, [("bare", args.rate)], d, c))["bare"],
            },
        }
        # Why now: the peer holds exactly the entries hearth holds when both are searched
        # (the seeded ones and the saves of the fixed-rate phase).
        seed_peer(root / "memory.db", memory_texts(home, workspace))
        peer, peer_base = start_app(PEER_APP, str(root / "memory.db"))
        peer_target = Target(peer_base, None, peer.pid)
        wait_ready(peer_base, "/memory.json", {})
        result["saturation"] = {
            "bare": asyncio.run(saturate(bare_target, "bare", d, c)),
            "search": asyncio.run(saturate(target, "search", d, c)),
            "peer": asyncio.run(saturate(peer_target, "peer", d, c)),
            "peer_ranked": asyncio.run(saturate(peer_target, "peer_ranked", d, c)),
            "info": asyncio.run(saturate(target, "info", d, c)),
            "blank": asyncio.run(saturate(target, "blank", d, c)),
            "miss": asyncio.run(saturate(target, "miss", d, c)),
            "save": asyncio.run(saturate(target, "save", d, c)),
        }
        result["library_search"] = library_search(home, workspace, min(d, 5.0))
    finally:
        for proc in (server, bare, peer):
            if proc is not None:
                stop(proc)

    from workhearth.app import Workhearth
    from workhearth.errors import NotFoundError

    wh = Workhearth(home=home, workspace=workspace)
    lost = []
    for entry_id in target.saved:
        try:
            wh.memory.get(entry_id)
        except NotFoundError:
            lost.append(entry_id)
    result["saves"] = {"acknowledged": len(target.saved), "lost": len(lost)}
    result["failures"] = dict(
        sum((t.failures for t in (target, bare_target, peer_target) if t), Counter())
    )
    result["targets"] = targets(result)
    return result


# Targets (issue #20): at saturation, hearth's search does at least this share of the
# async bare route's requests per second, and more than the peer's full-text search.
SEARCH_VS_BARE_MIN = 0.4
RATIOS = {
    "search_vs_bare": "bare",
    "search_vs_peer": "peer",
    "search_vs_peer_ranked": "peer_ranked",
}


def ratios(sat: dict[str, Any]) -> dict[str, float | None]:
    """hearth's search req/s at saturation ÷ each reference's; and the same from the
    servers' CPU time per request (``…_by_cpu``: the reference's ÷ hearth's search's)."""
    search = sat["search"]
    out: dict[str, float | None] = {}
    for name, ref in RATIOS.items():
        other = sat[ref]
        out[name] = round(search["rps"] / other["rps"], 3) if other["rps"] else None
        if search.get("server_cpu_ms") and other.get("server_cpu_ms"):
            out[f"{name}_by_cpu"] = round(other["server_cpu_ms"] / search["server_cpu_ms"], 3)
    bare = sat["bare"].get("server_cpu_ms")
    for probe in PROBES:
        mine = sat[probe].get("server_cpu_ms")
        if bare and mine:
            out[f"{probe}_vs_bare_by_cpu"] = round(bare / mine, 3)
    return out


def verdicts(ratio: dict[str, float | None]) -> dict[str, bool]:
    def at_least(name: str, floor: float) -> bool:
        value = ratio[name]
        return value is not None and value >= floor

    return {
        "search_ge_0_4_of_bare": at_least("search_vs_bare", SEARCH_VS_BARE_MIN),
        "search_ahead_of_peer": at_least("search_vs_peer", 1.0)
        and at_least("search_vs_peer_ranked", 1.0),
    }


def targets(result: dict[str, Any]) -> dict[str, Any]:
    ratio = ratios(result["saturation"])
    return {
        "fixed_rate_search_p99_ms_le_50": result["fixed_rate"]["hearth"]["search"]["p99_ms"] <= 50,
        "fixed_rate_no_errors": all(
            v["errors"] == 0 for v in result["fixed_rate"]["hearth"].values()
        ),
        **ratio,
        **verdicts(ratio),
        "zero_lost_saves": result["saves"]["lost"] == 0,
    }


ROWS = [
    ("fixed rate", "search (hearth)", ("fixed_rate", "hearth", "search")),
    ("fixed rate", "save (hearth)", ("fixed_rate", "hearth", "save")),
    ("fixed rate", "bare route", ("fixed_rate", "bare")),
    ("saturation", "search (hearth)", ("saturation", "search")),
    ("saturation", "search (datasette)", ("saturation", "peer")),
    ("saturation", "ranked (datasette)", ("saturation", "peer_ranked")),
    ("saturation", "info (hearth)", ("saturation", "info")),
    ("saturation", "blank query (hearth)", ("saturation", "blank")),
    ("saturation", "no hits (hearth)", ("saturation", "miss")),
    ("saturation", "save (hearth)", ("saturation", "save")),
    ("saturation", "bare route (async)", ("saturation", "bare")),
    ("in-process", "library search", ("library_search",)),
]
FIGURES = ("rps", "p50_ms", "p99_ms", "errors", "server_cpu_ms")


def _at(result: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    for k in keys:
        result = result[k]
    return result


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each row's figures, each the median over the runs (a figure's runs, not one run's)."""
    out: dict[str, Any] = {}
    for _, _, keys in ROWS:
        rows = [_at(r, keys) for r in runs]
        name = ".".join((keys[0], keys[-1])) if len(keys) > 1 else keys[0]
        figures = [f for f in FIGURES if all(f in row for row in rows)]
        out[name] = {f: statistics.median(row[f] for row in rows) for f in figures}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    ap.add_argument("--rate", type=float, default=200.0, help="offered searches per second")
    ap.add_argument("--save-rate", type=float, default=20.0, help="offered saves per second")
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--entries", type=int, default=500, help="memory entries seeded first")
    ap.add_argument("--runs", type=int, default=3, help="whole runs; the table shows medians")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "server_load.json")
    args = ap.parse_args()
    if importlib.util.find_spec("datasette") is None:
        raise SystemExit("the peer is missing: pip install datasette (or -e '.[bench]')")

    runs = []
    for i in range(args.runs):
        print(f"run {i + 1} of {args.runs}", file=sys.stderr, flush=True)
        runs.append(one_run(args))
    median = median_of(runs)
    # Why the median of each run's ratio: a run's rows share its moment on this shared
    # machine, so its ratio is steadier than a ratio of medians taken from different runs.
    names = [n for n in runs[0]["targets"] if n.startswith(("search_vs_", "blank_vs_", "miss_vs_"))]
    median_ratios = {
        name: statistics.median(r["targets"][name] for r in runs if r["targets"].get(name))
        if any(r["targets"].get(name) for r in runs)
        else None
        for name in names
    }
    median_targets = {
        "fixed_rate_search_p99_ms_le_50": median["fixed_rate.search"]["p99_ms"] <= 50,
        "fixed_rate_no_errors": all(r["targets"]["fixed_rate_no_errors"] for r in runs),
        **median_ratios,
        **verdicts(median_ratios),
        "zero_lost_saves": all(r["saves"]["lost"] == 0 for r in runs),
    }
    head = (
        f"{'phase':12}{'what':22}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}"
        f"{'server CPU ms':>15}"
    )
    print(f"median of {args.runs} runs")
    print(head)
    for (phase, what, _), row in zip(ROWS, median.values(), strict=True):
        print(
            f"{phase:12}{what:22}{row['rps']:>10}{row['p50_ms']:>10}{row['p99_ms']:>10}"
            f"{row['errors']:>8}{row.get('server_cpu_ms', ''):>15}"
        )
    acknowledged = sum(r["saves"]["acknowledged"] for r in runs)
    lost = sum(r["saves"]["lost"] for r in runs)
    print(f"saves acknowledged {acknowledged}, lost {lost}")
    for name in names:
        each = ", ".join(str(r["targets"].get(name)) for r in runs)
        print(f"saturation {name.replace('_vs_', ' / ')}: median {median_ratios[name]} ({each})")
    for r in runs:
        for why, n in r["failures"].items():
            print(f"failed {n}x: {why}")
    print("targets (medians): " + ", ".join(f"{k}={v}" for k, v in median_targets.items()))
    out = {
        **_runs.machine(args),
        "median": median,
        "median_targets": median_targets,
        "thresholds": {"fixed_rate_p99_ms_max": 50, "search_vs_bare_min": SEARCH_VS_BARE_MIN},
        "saves": {"acknowledged": acknowledged, "lost": lost},
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(args.out, out)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
