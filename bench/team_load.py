"""Load on the team bank: two ``hearth serve --store`` processes sharing one PostgreSQL.

50 team users (``--users``), each a client with its own keep-alive connection to
one of the two servers (alternating), save and search concurrently for a bounded
time (closed loop: each sends its next request when the last one is answered;
``--search-ratio`` searches per save). Every save carries an ``Idempotency-Key``.
The client is this process (plain asyncio, bench/server_load.py's ``Conn``); the
servers are the real ``hearth serve --store`` in their own processes.

Afterwards, through the API of the *other* server than the one that took the
save: every acknowledged save (201) is present with its text in its owner's list,
each owner's list holds only their own saves, and a search by another user for a
save's unique marker finds nothing while the owner's finds it.

PostgreSQL: ``--pg URL`` (a superuser URL; a database is made and dropped), else
``HEARTH_TEST_PG``, else a throwaway cluster from Debian's binaries.

    python bench/team_load.py [--duration 10] [--users 50] [--pg URL] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import _runs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_load import WORDS, Conn, pct, stop

ROOT = Path(__file__).resolve().parent.parent


def _as_postgres(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """A superuser URL: the given one, or a throwaway cluster on loopback."""
    if url:
        yield url
        return
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not bins:
        raise SystemExit("no PostgreSQL: pass --pg URL, set HEARTH_TEST_PG or install postgresql")
    bindir = Path(bins[-1]).parent
    root = Path(tempfile.mkdtemp(prefix="hearth-pgbench-"))
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data = root / "data"
    subprocess.run(
        _as_postgres(
            [
                *(str(bindir / "initdb"), "-D", str(data), "-U", "postgres"),
                *("--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"),
            ]
        ),
        check=True,
        capture_output=True,
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={root}"
    subprocess.run(
        _as_postgres(
            [
                *(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log")),
                *("-w", "-o", opts, "start"),
            ]
        ),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def database(server_url: str) -> Iterator[str]:
    import psycopg

    name = "hearth_bench_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield server_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def start_server(store: str, home: Path) -> tuple[subprocess.Popen[str], str]:
    home.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTH_", "OPENAI_"))}
    env["HEARTH_HOME"] = str(home)
    hearth = Path(sys.executable).parent / "hearth"
    cmd = [str(hearth)] if hearth.exists() else [sys.executable, "-m", "workhearth"]
    proc = subprocess.Popen(
        [*cmd, "serve", "--store", store, "--port", "0"],
        cwd=home,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    m = re.search(r"on (http://127\.0\.0\.1:\d+)/", proc.stdout.readline())
    if not m:
        proc.kill()
        raise SystemExit(f"hearth serve --store did not start: {proc.stderr.read()}")  # type: ignore[union-attr]
    return proc, m.group(1)


class User:
    def __init__(self, name: str, token: str, base: str, other: str) -> None:
        self.name, self.token = name, token
        self.base, self.other = base, other  # the server it loads, the one that checks
        self.saved: dict[str, str] = {}  # id -> content, acknowledged (201)
        self.n = 0

    def conn(self, base: str) -> Conn:
        host, port = base.removeprefix("http://").rsplit(":", 1)
        return Conn(host, int(port), {"Authorization": f"Bearer {self.token}"})


async def load(
    users: list[User], duration: float, ratio: int
) -> tuple[dict[str, list[float]], Counter[str]]:
    latencies: dict[str, list[float]] = {"save": [], "search": []}
    failures: Counter[str] = Counter()
    end = time.monotonic() + duration

    async def client(user: User) -> None:
        conn = user.conn(user.base)
        head = conn.head
        while time.monotonic() < end:
            user.n += 1
            kind = "save" if user.n % (ratio + 1) == 1 else "search"
            t0 = time.perf_counter()
            try:
                if kind == "save":
                    marker = f"{user.name}x{user.n}"
                    word = WORDS[user.n % len(WORDS)]
                    content = f"note {marker}: the {word} belongs to {user.name}"
                    body = json.dumps({"content": content, "tags": ["load"]}).encode()
                    conn.head = f"{head}Idempotency-Key: {uuid.uuid4()}\r\n"
                    status, data = await conn.request("POST", "/v1/memory", body)
                    conn.head = head
                    if status == 201:
                        user.saved[json.loads(data)["id"]] = content
                else:
                    q = quote(f"{WORDS[user.n % len(WORDS)]} {WORDS[(user.n * 7) % len(WORDS)]}")
                    status, data = await conn.request("GET", f"/v1/memory/search?q={q}&limit=6")
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
                failures[f"{kind}: {type(exc).__name__}"] += 1
                continue
            if status in (200, 201):
                latencies[kind].append(time.perf_counter() - t0)
            else:
                failures[f"{kind} {status}: {data[:120].decode(errors='replace')}"] += 1
        conn.close()

    await asyncio.gather(*(client(u) for u in users))
    return latencies, failures


async def warm(users: list[User]) -> None:
    """One untimed search per user, so the servers' first-request costs stay out of the run."""

    async def one(user: User) -> None:
        conn = user.conn(user.base)
        await conn.request("GET", "/v1/memory/search?q=warm&limit=1")
        conn.close()

    await asyncio.gather(*(one(u) for u in users))


async def check(users: list[User]) -> dict[str, int]:
    """Through the other server: each owner sees exactly their saves; others find none."""
    out = Counter(missing=0, wrong_text=0, foreign=0, leaked=0, owner_search_miss=0)

    async def one(i: int, user: User) -> None:
        conn = user.conn(user.other)
        seen: dict[str, str] = {}
        cursor = ""
        while True:
            target = "/v1/memory?limit=100" + (f"&cursor={quote(cursor)}" if cursor else "")
            status, data = await conn.request("GET", target)
            assert status == 200, data
            page = json.loads(data)
            seen.update({e["id"]: e["content"] for e in page["entries"]})
            cursor = page["next_cursor"] or ""
            if not cursor:
                break
        for entry_id, content in user.saved.items():
            if entry_id not in seen:
                out["missing"] += 1
            elif seen[entry_id] != content:
                out["wrong_text"] += 1
        # Why "foreign" is not a leak by itself: a save whose answer was lost is
        # stored yet unacknowledged; it is still this user's (checked below by marker).
        out["foreign"] += sum(1 for c in seen.values() if f"belongs to {user.name}" not in c)
        if user.saved:
            marker = next(iter(user.saved.values())).split(":")[0].removeprefix("note ")
            status, data = await conn.request("GET", f"/v1/memory/search?q={marker}&limit=6")
            if not any(marker in h["text"] for h in json.loads(data)["results"]):
                out["owner_search_miss"] += 1
            stranger = users[(i + 1) % len(users)]
            sconn = stranger.conn(user.other)
            status, data = await sconn.request("GET", f"/v1/memory/search?q={marker}&limit=6")
            out["leaked"] += sum(marker in h["text"] for h in json.loads(data)["results"])
            sconn.close()
        conn.close()

    await asyncio.gather(*(one(i, u) for i, u in enumerate(users)))
    return dict(out)


def summary(latencies: list[float], elapsed: float) -> dict[str, Any]:
    return {
        "requests": len(latencies),
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(pct(latencies, 50) * 1000, 2),
        "p99_ms": round(pct(latencies, 99) * 1000, 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of load")
    ap.add_argument("--users", type=int, default=50)
    ap.add_argument("--search-ratio", type=int, default=3, help="searches per save")
    ap.add_argument("--pg", default=os.environ.get("HEARTH_TEST_PG"), help="superuser URL")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "team_load.json")
    args = ap.parse_args()

    from workhearth.bank.server.store import PgBank, connect
    from workhearth.bank.server.users import add_user

    root = Path(tempfile.mkdtemp(prefix="hearth-teamload-"))
    with postgres(args.pg) as pg, database(pg) as store:
        PgBank(store).close()  # Why: migrate once, before the two servers race to
        with connect(store) as conn:
            tokens = {f"u{i:02d}": add_user(conn, f"u{i:02d}") for i in range(args.users)}
        a, base_a = start_server(store, root / "a")
        b, base_b = start_server(store, root / "b")
        try:
            users = [
                User(name, token, *((base_a, base_b) if i % 2 == 0 else (base_b, base_a)))
                for i, (name, token) in enumerate(tokens.items())
            ]
            asyncio.run(warm(users))
            t0 = time.perf_counter()
            latencies, failures = asyncio.run(load(users, args.duration, args.search_ratio))
            elapsed = time.perf_counter() - t0
            checked = asyncio.run(check(users))
        finally:
            stop(a)
            stop(b)
    shutil.rmtree(root, ignore_errors=True)

    both = latencies["save"] + latencies["search"]
    acknowledged = sum(len(u.saved) for u in users)
    result: dict[str, Any] = {
        "config": {k: v for k, v in vars(args).items() if k not in ("out", "pg")},
        "cpus": os.cpu_count(),
        "servers": 2,
        "elapsed_s": round(elapsed, 2),
        "all": summary(both, elapsed),
        "save": summary(latencies["save"], elapsed),
        "search": summary(latencies["search"], elapsed),
        "errors": sum(failures.values()),
        "failures": dict(failures),
        "saves": {"acknowledged": acknowledged, **checked},
        "ok": acknowledged > 0
        and checked["missing"] == checked["wrong_text"] == checked["leaked"] == 0
        and checked["foreign"] == checked["owner_search_miss"] == 0,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(args.out, result)

    print(f"team bank: 2 servers, one PostgreSQL, {args.users} users, {elapsed:.1f} s")
    print(f"{'':8} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
    for kind in ("save", "search", "all"):
        row = result[kind]
        print(
            f"{kind:8} {row['requests']:>9} {row['rps']:>8} {row['p50_ms']:>8} {row['p99_ms']:>8}"
        )
    s = result["saves"]
    print(
        f"acknowledged saves {s['acknowledged']}: missing {s['missing']}, wrong text "
        f"{s['wrong_text']}, in another's list {s['foreign']}, found by another {s['leaked']}, "
        f"owner search misses {s['owner_search_miss']}; errors {result['errors']}"
    )
    if not result["ok"]:
        raise SystemExit("team load: a check failed (see above)")


if __name__ == "__main__":
    main()
