"""Adversary benchmark: kill, race, fill and freeze a real ``HEARTH_HOME``, count what is lost.

Five trials, each bounded in count and time, all on this machine (no network):

1. **SIGKILL appenders.** A child process appends session events through the library and
   prints each event's number once ``append_message`` returned; the parent kills it with
   SIGKILL at a random moment, then reopens the session. Every acknowledged event must be
   there, under each fsync policy. Baseline: a plain buffered ``f.write(json.dumps(e))``
   appender acknowledged the same way.
2. **Savers racing a hand appender.** K processes save memory entries while another
   process appends hand-written lines to the same ``MEMORY.md`` with ordinary writes (as an
   editor or ``echo >>`` would). No hand-written line and no acknowledged entry may be lost.
   Baseline: savers that read the file, add their line and replace it atomically.
3. **Full filesystem.** ``HEARTH_HOME`` on a tiny tmpfs: memory saves and session appends
   run until the disk is full. Every save reported as done must be in the Markdown and the
   meta, every acknowledged event in the transcript; read commands still work; after
   space is freed the next index catches up. Needs root (``mount -t tmpfs``); skipped with
   the reason otherwise.
4. **Read-only home.** A populated home bind-mounted read-only: every read command of the
   real ``hearth`` CLI must still work. Needs root; skipped with the reason otherwise.
5. **PostgreSQL stops under the team server** (``hearth serve --store``): each request
   while it is down must be a quick 503, and the first 200 must come within seconds of
   its return, from a busy and from an idle server. Needs PostgreSQL's binaries (Debian's,
   or ``--pg-bin DIR``): it stops and starts a cluster of its own; skipped otherwise.

Then the side-door attacks of issue #17 (``bench/side_doors.py``: zip chains, folder
configs, lying servers, quest persistence, NUL): tries and failures of each, through the
real ``hearth``; ``--side-doors-only`` runs just those.

Run ``.venv/bin/python bench/adversary.py`` (about a minute; ``--quick`` for a few
seconds). Tables go to stdout, raw numbers to ``--out``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _runs

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ("always", "turn", "never")
_SCRIPT = shutil.which("hearth", path=Path(sys.executable).parent)
HEARTH = [_SCRIPT] if _SCRIPT else [sys.executable, "-m", "workhearth"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ children
def child_append(home: str, workspace: str, policy: str) -> None:
    """Append events forever, printing the session id, then each acknowledged number."""
    from workhearth import Workhearth

    wh = Workhearth(home=home, workspace=workspace, env={"HEARTH_FSYNC": policy})
    session = wh.sessions.create(model="openai:bench")
    print(f"session {session.id}", flush=True)
    n = 0
    while True:
        n += 1
        role = "user" if n % 2 else "assistant"
        body = f"event-{n} " + "x" * random.randint(10, 3000)
        session.append_message({"role": role, "content": [{"type": "text", "text": body}]})
        print(n, flush=True)
        if n % 10 == 0:
            session.turn_end()


def child_append_plain(path: str) -> None:
    """The baseline: a buffered JSONL writer that acknowledges after ``write()`` returns."""
    with open(path, "a", encoding="utf-8") as fh:
        n = 0
        while True:
            n += 1
            fh.write(json.dumps({"n": n, "text": "x" * random.randint(10, 3000)}) + "\n")
            print(n, flush=True)


def child_save(home: str, workspace: str, tag: str, seconds: float) -> None:
    """Save entries for ``seconds``, printing each acknowledged entry id."""
    from workhearth import Workhearth

    wh = Workhearth(home=home, workspace=workspace)
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        entry = wh.memory.save(f"Saver {tag} noted fact number {i} about the release plan.")
        print(entry.id, flush=True)


def child_save_naive(path: str, tag: str, seconds: float) -> None:
    """The baseline saver: read the file, add a line, replace the file atomically."""
    end = time.monotonic() + seconds
    i = 0
    target = Path(path)
    while time.monotonic() < end:
        i += 1
        line = f"- Saver {tag} noted fact number {i} ^n-{tag}-{i}"
        old = target.read_text(encoding="utf-8")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(old + line + "\n", encoding="utf-8")
        os.replace(tmp, target)
        print(f"n-{tag}-{i}", flush=True)


def child_hand(path: str, seconds: float) -> None:
    """Append hand-written lines with ordinary writes, as an editor or ``echo >>`` would."""
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"- hand-written line {i} by the user\n")
        print(i, flush=True)
        time.sleep(0.0005)


def _spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--child", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _acks(proc: subprocess.Popen[str]) -> list[str]:
    out, _err = proc.communicate()
    return [line.strip() for line in out.splitlines() if line.strip()]


# ------------------------------------------------------------ 1. SIGKILL
def _kill_after_acks(proc: subprocess.Popen[str], want: int, limit: float) -> list[str]:
    """Read acknowledgements until ``want`` arrived (or ``limit`` s), SIGKILL, return them all."""
    assert proc.stdout is not None
    lines: list[str] = []
    timer = threading.Timer(limit, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line.strip())
            if sum(1 for x in lines if x.isdigit()) >= want:
                break
    finally:
        timer.cancel()
    # Why: a random extra delay lands the kill anywhere inside the next append.
    time.sleep(random.uniform(0, 0.004))
    proc.send_signal(signal.SIGKILL)
    rest, _ = proc.communicate()
    lines += [x.strip() for x in rest.splitlines() if x.strip()]
    return lines


def trial_kills(tries: int, tmp: Path, rng: random.Random) -> dict[str, Any]:
    from workhearth import Workhearth

    results: dict[str, Any] = {}
    for policy in POLICIES:
        lost = failures = acked_total = 0
        for t in range(tries):
            home = tmp / f"kill-{policy}-{t}"
            ws = tmp / "ws"
            ws.mkdir(exist_ok=True)
            proc = _spawn("append", str(home), str(ws), policy)
            lines = _kill_after_acks(proc, rng.randint(1, 120), 20.0)
            sid = next((x.split()[1] for x in lines if x.startswith("session ")), None)
            acked = {int(x) for x in lines if x.isdigit()}
            acked_total += len(acked)
            if sid is None:
                failures += 1
                continue
            try:
                wh = Workhearth(home=home, workspace=ws)
                texts = [
                    b["text"].split()[0]
                    for m in wh.sessions.open(sid).messages()
                    for b in m["content"]
                    if b.get("type") == "text"
                ]
            except Exception as exc:  # a session that cannot be read counts as a failure
                log(f"  kill {policy} #{t}: cannot reopen: {exc}")
                failures += 1
                continue
            present = {int(x.removeprefix("event-")) for x in texts if x.startswith("event-")}
            lost += len(acked - present)
            shutil.rmtree(home, ignore_errors=True)
        results[policy] = {
            "tries": tries,
            "acked": acked_total,
            "lost": lost,
            "failures": failures,
        }
        log(f"kills fsync={policy}: {tries} tries, {acked_total} acked, {lost} lost")
    # Baseline: a buffered plain writer, killed the same way.
    lost = acked_total = 0
    for t in range(tries):
        path = tmp / f"plain-{t}.jsonl"
        proc = _spawn("append-plain", str(path))
        lines = _kill_after_acks(proc, rng.randint(1, 120), 20.0)
        acked = {int(x) for x in lines if x.isdigit()}
        present = set()
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                present.add(json.loads(raw)["n"])
        acked_total += len(acked)
        lost += len(acked - present)
    results["plain_buffered"] = {"tries": tries, "acked": acked_total, "lost": lost, "failures": 0}
    log(f"kills plain buffered: {tries} tries, {acked_total} acked, {lost} lost")
    return results


# ------------------------------------------------------- 2. savers racing
def trial_savers(savers: int, seconds: float, tmp: Path) -> dict[str, Any]:
    from workhearth import Workhearth

    out: dict[str, Any] = {}
    home = tmp / "savers"
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    wh = Workhearth(home=home, workspace=ws)
    first = wh.memory.save("The savers trial starts with this entry.")
    memory_md = wh.memory.folder("project") / "MEMORY.md"
    hand = _spawn("hand", str(memory_md), str(seconds))
    procs = [_spawn("save", str(home), str(ws), str(k), str(seconds)) for k in range(savers)]
    acked_ids = {first.id}
    for p in procs:
        acked_ids.update(_acks(p))
    hand_acked = {int(x) for x in _acks(hand) if x.isdigit()}
    text = memory_md.read_text(encoding="utf-8")
    hand_present = {
        int(line.split()[3])
        for line in text.splitlines()
        if line.startswith("- hand-written line ")
    }
    out["hearth"] = {
        "savers": savers,
        "seconds": seconds,
        "saves_acked": len(acked_ids),
        "saves_lost": sum(1 for i in acked_ids if i not in text),
        "hand_lines": len(hand_acked),
        "hand_lost": len(hand_acked - hand_present),
    }
    log(f"savers hearth: {out['hearth']}")
    # Baseline: read + add + atomic replace, racing the same hand appender.
    naive = tmp / "naive" / "MEMORY.md"
    naive.parent.mkdir(parents=True)
    naive.write_text("# Memory\n", encoding="utf-8")
    hand = _spawn("hand", str(naive), str(seconds))
    procs = [_spawn("save-naive", str(naive), str(k), str(seconds)) for k in range(savers)]
    naive_ids: set[str] = set()
    for p in procs:
        naive_ids.update(_acks(p))
    hand_acked = {int(x) for x in _acks(hand) if x.isdigit()}
    text = naive.read_text(encoding="utf-8")
    hand_present = {
        int(line.split()[3])
        for line in text.splitlines()
        if line.startswith("- hand-written line ")
    }
    out["naive_rewrite"] = {
        "savers": savers,
        "seconds": seconds,
        "saves_acked": len(naive_ids),
        "saves_lost": sum(1 for i in naive_ids if f"^{i}" not in text),
        "hand_lines": len(hand_acked),
        "hand_lost": len(hand_acked - hand_present),
    }
    log(f"savers naive: {out['naive_rewrite']}")
    return out


# --------------------------------------------------------- mounts (root)
@contextlib.contextmanager
def _mount(*args: str) -> Iterator[None]:
    target = args[-1]
    done = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(done.stderr.strip() or f"mount exit {done.returncode}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", target], capture_output=True, check=False)


def _can_mount(tmp: Path) -> str | None:
    """None when this process may mount a tmpfs here, else the reason it may not."""
    if os.name != "posix" or shutil.which("mount") is None:
        return "no mount command"
    if os.geteuid() != 0:
        return "mounting needs root"
    probe = tmp / "mount-probe"
    probe.mkdir(exist_ok=True)
    try:
        with _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)):
            return None
    except OSError as exc:
        return f"mount refused: {exc}"


def _hearth(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "HEARTH_"))
    }
    env["HEARTH_HOME"] = str(home)
    return subprocess.run(
        [*HEARTH, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _clear_failure(proc: subprocess.CompletedProcess[str]) -> bool:
    """A failing command said one line on stderr and no traceback."""
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    return proc.returncode != 0 and len(lines) == 1 and "Traceback" not in proc.stderr


# ---------------------------------------------------------- 3. full disk
def _event(n: int) -> dict[str, Any]:
    role = "user" if n % 2 else "assistant"
    return {"role": role, "content": [{"type": "text", "text": f"event-{n} " + "y" * 500}]}


def _fill(path: Path) -> None:
    """Write zeros into ``path`` until the filesystem is full."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with contextlib.suppress(OSError):
            while os.write(fd, b"\0" * 4096):
                pass
    finally:
        os.close(fd)


def trial_full_disk(tmp: Path, size_kb: int, max_saves: int) -> dict[str, Any]:
    """Saves and appends until the disk is full; then reads; then free space and catch up."""
    from workhearth import Workhearth
    from workhearth.errors import HearthError

    mnt = tmp / "full"
    mnt.mkdir()
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    out: dict[str, Any] = {"size_kb": size_kb}
    with _mount("-t", "tmpfs", "-o", f"size={size_kb}k,mode=0700", "tmpfs", str(mnt)):
        home = mnt / "home"
        wh = Workhearth(home=home, workspace=ws)
        acked: list[str] = [wh.memory.save("The release is on the 14th, before the disk fills.").id]
        session = wh.sessions.create(model="openai:bench")
        sid = session.id
        s_acked = 0
        for n in range(1, 5):
            session.append_message(_event(n))
            s_acked = n
        session.turn_end()
        # Why: leave only a little room, so the trial reaches ENOSPC in a few saves.
        (mnt / "filler-reserve").write_bytes(b"\0" * (size_kb * 1024 // 2))
        _fill(mnt / "filler")
        (mnt / "filler-reserve").unlink()
        errors: dict[str, int] = {}
        unclear = 0
        for i in range(max_saves):
            try:
                acked.append(wh.memory.save(f"Full disk note {i} " + "lorem ipsum " * 60).id)
            except HearthError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                if sum(errors.values()) >= 5:
                    break
            except Exception as exc:  # anything else is not a clear error
                unclear += 1
                log(f"  full disk save {i}: {type(exc).__name__}: {exc}")
                if unclear >= 5:
                    break
        s_unclear = 0
        for n in range(s_acked + 1, 100_000):
            try:
                session.append_message(_event(n))
                s_acked = n
            except HearthError:
                break
            except Exception as exc:
                s_unclear += 1
                log(f"  full disk append {n}: {type(exc).__name__}: {exc}")
                break
        with contextlib.suppress(Exception):
            session.close()
        wh.memory.close()
        folder = wh.memory.folder("project")
        md = folder / "MEMORY.md"
        text = md.read_text(encoding="utf-8") if md.exists() else ""
        try:
            meta_ids = set(json.loads((folder / "memory_meta.json").read_text())["entries"])
        except (OSError, ValueError, KeyError):
            meta_ids = set()
        out["memory"] = {
            "saves_acked": len(acked),
            "errors": errors,
            "unclear_errors": unclear,
            "lost_from_markdown": sum(1 for i in acked if i not in text),
            "lost_from_meta": sum(1 for i in acked if i not in meta_ids),
        }
        present = {
            int(b["text"].split()[0].removeprefix("event-"))
            for m in Workhearth(home=home, workspace=ws).sessions.open(sid).messages()
            for b in m["content"]
            if b.get("type") == "text" and b["text"].startswith("event-")
        }
        out["sessions"] = {
            "events_acked": s_acked,
            "lost": len(set(range(1, s_acked + 1)) - present),
            "unclear_errors": s_unclear,
        }
        out["read_commands"] = _read_commands(home, ws, sid, acked[0])
        # Free the space: the next index must find every acknowledged save.
        (mnt / "filler").unlink()
        try:
            caught = Workhearth(home=home, workspace=ws)
            caught.memory.index()
            listed: set[str] = set()
            cursor: str | None = None
            while True:
                page, cursor = caught.memory.list(limit=100, cursor=cursor)
                listed.update(e.id for e in page)
                if cursor is None:
                    break
            caught.memory.close()
            out["memory"]["missing_after_index"] = sum(1 for i in acked if i not in listed)
        except Exception as exc:
            log(f"  full disk: catching up failed: {type(exc).__name__}: {exc}")
            out["memory"]["missing_after_index"] = len(acked)
    log(f"full disk: {out}")
    return out


# -------------------------------------------------------- 4. read-only
READ_COMMANDS: list[tuple[str, list[str]]] = [
    ("doctor", ["doctor"]),
    ("sessions list", ["sessions", "list", "--json"]),
    ("sessions show", ["sessions", "show", "{sid}", "--count", "3"]),
    ("sessions verify", ["sessions", "verify", "{sid}"]),
    ("resume --print-messages", ["resume", "{sid}", "--print-messages"]),
    ("memory search", ["memory", "search", "release", "--json"]),
    ("memory list", ["memory", "list", "--limit", "100", "--json"]),
    ("memory status", ["memory", "status"]),
    ("memory context", ["memory", "context", "--topic", "release"]),
]


def _read_commands(home: Path, ws: Path, sid: str | None, entry: str | None) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for name, argv in READ_COMMANDS:
        if "{sid}" in argv and sid is None:
            continue
        args = [a.replace("{sid}", sid or "") for a in argv]
        proc = _hearth(home, ws, *args)
        # Why: verify exits 1 when it found damage (a line torn by a full disk): a report.
        codes = (0, 1) if name == "sessions verify" else (0,)
        ok = proc.returncode in codes and "Traceback" not in proc.stderr and bool(proc.stdout)
        if ok and name == "sessions list":
            ok = sid is None or sid in proc.stdout
        if ok and name in ("memory search", "memory list") and entry is not None:
            ok = entry in proc.stdout
        results[name] = {
            "ok": ok,
            "rc": proc.returncode,
            "stderr": proc.stderr.strip().splitlines()[-1:] if not ok else [],
        }
    return results


def trial_read_only(tmp: Path) -> dict[str, Any]:
    from workhearth import Workhearth

    src = tmp / "ro-src"
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    wh = Workhearth(home=src / "home", workspace=ws)
    entry = wh.memory.save("The release is on the 14th; Ana runs the release checklist.")
    wh.memory.index()
    wh.memory.close()
    session = wh.sessions.create(model="openai:bench")
    for i in range(6):
        role = "user" if i % 2 == 0 else "assistant"
        session.append_message({"role": role, "content": [{"type": "text", "text": f"m{i}"}]})
    sid = session.id
    session.close()
    # Why: caches (snapshot, index) are left unwritten, as after an upgrade or a crash.
    for cache in src.rglob("snapshot.zst"):
        cache.unlink()
    mnt = tmp / "ro"
    mnt.mkdir()
    with _mount("--bind", str(src), str(mnt)), _mount("-o", "remount,ro,bind", str(mnt)):
        results = _read_commands(mnt / "home", ws, sid, entry.id)
    log(f"read-only: {sum(r['ok'] for r in results.values())}/{len(results)} commands work")
    return results


# ------------------------------------------------------- team outage
def _pg_bindir(given: Path | None) -> tuple[Path | None, str | None]:
    """PostgreSQL's binaries (``--pg-bin``, else Debian's newest), or why the trial skips."""
    import glob

    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "no psycopg (pip install 'workhearth[team]')"
    if given is not None:
        return (given, None) if (given / "pg_ctl").exists() else (None, f"no pg_ctl in {given}")
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not found:
        return None, "no PostgreSQL binaries (pass --pg-bin DIR): it stops and starts its own"
    return Path(found[-1]).parent, None


def trial_team_outage(tmp: Path, bindir: Path) -> dict[str, Any]:
    """PostgreSQL stops under ``hearth serve --store``: how long each request takes while
    it is down (and with what status), and how soon after its return the first 200 comes,
    from a busy server (polled every 0.1 s) and from one left idle through the outage."""
    import httpx
    import psycopg

    from workhearth.bank.server.store import PgBank, connect
    from workhearth.bank.server.users import add_user

    # Why its own temp folder in the system's: ``tmp`` and its parents may be private to
    # this user, and PostgreSQL runs as another when this is root.
    root = Path(tempfile.mkdtemp(prefix="hearth-adversary-pg-"))
    as_pg = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_pg:
        shutil.chown(root, "postgres", "postgres")
    data, port = root / "data", _free_port()
    subprocess.run(
        [
            *(*as_pg, str(bindir / "initdb"), "-D", str(data), "-U", "postgres"),
            *("--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"),
        ],
        check=True,
        capture_output=True,
    )
    opts = f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={root}"

    def ctl(*args: str) -> None:
        cmd = [*as_pg, str(bindir / "pg_ctl"), "-D", str(data), "-w", *args]
        subprocess.run(cmd, check=True, capture_output=True, timeout=120)

    ctl("-l", str(root / "log"), "-o", opts, "start")
    home, srv = tmp / "team-home", None
    home.mkdir()
    try:
        url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        PgBank(url).close()
        with connect(url) as conn:
            token = add_user(conn, "ann")
        http_port = _free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
        env["HEARTH_HOME"] = str(home)
        srv = subprocess.Popen(
            [*HEARTH, "serve", "--store", url, "--port", str(http_port)],
            cwd=home,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        c = httpx.Client(
            base_url=f"http://127.0.0.1:{http_port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        _first_200(c, limit=60)
        c.post("/v1/memory", json={"content": "before the outage"})
        ctl("-m", "fast", "stop")
        down = []
        for _ in range(5):
            t0 = time.monotonic()
            status = c.get("/v1/memory").status_code
            down.append({"status": status, "seconds": round(time.monotonic() - t0, 3)})
        ctl("-l", str(root / "log"), "-o", opts, "start")
        busy_back = _first_200(c, limit=600)
        ctl("-m", "fast", "stop")
        time.sleep(2)  # idle: no request while it is down
        ctl("-l", str(root / "log"), "-o", opts, "start")
        t0 = time.monotonic()
        first_idle = c.get("/v1/memory").status_code
        idle_first_s = time.monotonic() - t0
        idle_back = idle_first_s + (0.0 if first_idle == 200 else _first_200(c, limit=600))
        c.close()
    finally:
        if srv is not None:
            srv.kill()
            srv.wait(30)
        with contextlib.suppress(subprocess.SubprocessError):
            ctl("-m", "immediate", "stop")
        shutil.rmtree(root, ignore_errors=True)
    log(f"team outage: down {down}, back after {busy_back:.2f} s (busy), {idle_back:.2f} s (idle)")
    return {
        "down": down,
        "down_max_s": max(d["seconds"] for d in down),
        "down_all_503": all(d["status"] == 503 for d in down),
        "busy_first_200_s": round(busy_back, 3),
        "idle_first_status": first_idle,
        "idle_first_200_s": round(idle_back, 3),
        "psycopg": psycopg.__version__,
    }


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_200(c: Any, limit: float) -> float:
    """Seconds until ``GET /v1/memory`` answers 200 (every 0.1 s; ``limit`` at most)."""
    import httpx

    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        with contextlib.suppress(httpx.TransportError):
            if c.get("/v1/memory").status_code == 200:
                return time.monotonic() - t0
        time.sleep(0.1)
    return float("inf")


def report_team_outage(out: dict[str, Any]) -> None:
    print("\n### PostgreSQL stops under the team server\n")
    if "skipped" in out:
        print(f"skipped: {out['skipped']}")
        return
    print("| measure | value |")
    print("|---|---:|")
    print(f"| slowest request while down (s) | {out['down_max_s']:.2f} |")
    print(f"| every request while down was a 503 | {'yes' if out['down_all_503'] else 'NO'} |")
    print(f"| first 200 after its return, busy server (s) | {out['busy_first_200_s']:.2f} |")
    print(f"| first request after its return, idle server | {out['idle_first_status']} |")
    print(f"| first 200 after its return, idle server (s) | {out['idle_first_200_s']:.2f} |")


# ------------------------------------------------------------------ report
def report(res: dict[str, Any]) -> None:
    print("\n### SIGKILL of an appending process\n")
    print("| writer | kills | events acknowledged | lost | unreadable after kill |")
    print("|---|---:|---:|---:|---:|")
    for key, row in res["kills"].items():
        label = f"workhearth fsync={key}" if key in POLICIES else "plain buffered f.write"
        print(
            f"| {label} | {row['tries']} | {row['acked']:,} | {row['lost']:,} | {row['failures']} |"
        )
    print("\n### Concurrent savers and a hand appender on one MEMORY.md\n")
    print("| savers | K | seconds | saves acknowledged | saves lost | hand lines | hand lost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key, row in res["savers"].items():
        label = "workhearth `memory.save`" if key == "hearth" else "naive read + atomic replace"
        print(
            f"| {label} | {row['savers']} | {row['seconds']} | {row['saves_acked']:,} | "
            f"{row['saves_lost']} | {row['hand_lines']:,} | {row['hand_lost']} |"
        )
    full = res["full_disk"]
    print("\n### Full filesystem\n")
    if "skipped" in full:
        print(f"skipped: {full['skipped']}")
    else:
        m, s = full["memory"], full["sessions"]
        print(f"tmpfs of {full['size_kb']} KB\n")
        print("| what | acknowledged | lost | unclear errors |")
        print("|---|---:|---:|---:|")
        print(
            f"| memory saves | {m['saves_acked']} | "
            f"{m['lost_from_markdown']} (Markdown) / {m['lost_from_meta']} (meta) | "
            f"{m['unclear_errors']} |"
        )
        print(f"| session events | {s['events_acked']} | {s['lost']} | {s['unclear_errors']} |")
        rc = full["read_commands"]
        print(
            f"\nread commands on the full disk: {sum(r['ok'] for r in rc.values())}/{len(rc)} work"
        )
    ro = res["read_only"]
    print("\n### Read-only home\n")
    if "skipped" in ro:
        print(f"skipped: {ro['skipped']}")
    else:
        print("| command | works |")
        print("|---|---|")
        for name, row in ro.items():
            print(
                f"| `hearth {name}` | {'yes' if row['ok'] else 'NO: ' + ' '.join(row['stderr'])} |"
            )
    if "side_doors" in res:
        from side_doors import side_doors_table

        print("\n".join(side_doors_table(res["side_doors"])))


def _side_doors(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    # Why imported here: it loads the test helpers (a scripted model); --child runs skip them.
    from side_doors import run_side_doors

    return run_side_doors(tmp, random.Random(args.seed), quick=args.quick)


def side_doors_only(args: argparse.Namespace, tmp: Path) -> None:
    """``--side-doors-only``: the side-door table and JSON, nothing else."""
    try:
        res: dict[str, Any] = {
            "date": datetime.date.today().isoformat(),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "side_doors": _side_doors(tmp, args),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    from side_doors import side_doors_table

    print("\n".join(side_doors_table(res["side_doors"])))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(args.out, res)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, *rest = sys.argv[2:]
        {
            "append": child_append,
            "append-plain": child_append_plain,
            "save": lambda h, w, t, s: child_save(h, w, t, float(s)),
            "save-naive": lambda p, t, s: child_save_naive(p, t, float(s)),
            "hand": lambda p, s: child_hand(p, float(s)),
        }[kind](*rest)
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=30, help="SIGKILLs per fsync policy")
    ap.add_argument("--savers", type=int, default=8, help="concurrent saver processes")
    ap.add_argument("--seconds", type=float, default=5.0, help="length of the savers race")
    ap.add_argument("--disk-kb", type=int, default=4096, help="size of the full tmpfs")
    ap.add_argument("--quick", action="store_true", help="3 kills, 2 s race, fewer side-door tries")
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument(
        "--side-doors-only", action="store_true", help="only the side-door attacks (issue #17)"
    )
    ap.add_argument("--tmp", type=Path, default=None, help="scratch folder (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "adversary.json")
    ap.add_argument("--pg-bin", type=Path, default=None, help="PostgreSQL's bin folder")
    args = ap.parse_args()
    if args.quick:
        args.kills, args.seconds, args.savers = 3, 2.0, 4
    rng = random.Random(args.seed)
    random.seed(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="hearth-adversary-", dir=args.tmp))
    if args.side_doors_only:
        side_doors_only(args, tmp)
        return
    try:
        res: dict[str, Any] = {
            "date": datetime.date.today().isoformat(),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "kills": trial_kills(args.kills, tmp, rng),
            "savers": trial_savers(args.savers, args.seconds, tmp),
        }
        why = _can_mount(tmp)
        res["full_disk"] = (
            {"skipped": why} if why else trial_full_disk(tmp, args.disk_kb, max_saves=5000)
        )
        res["read_only"] = {"skipped": why} if why else trial_read_only(tmp)
        bindir, why = _pg_bindir(args.pg_bin)
        res["team_outage"] = {"skipped": why} if bindir is None else trial_team_outage(tmp, bindir)
        res["side_doors"] = _side_doors(tmp, args)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(res)
    report_team_outage(res["team_outage"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    _runs.save(args.out, res)


if __name__ == "__main__":
    main()
