"""Real processes against one memory (DESIGN §4): concurrent writers lose nothing, and a
writer killed with SIGKILL at any moment leaves whole files and no orphans."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from workhearth import Workhearth

ENTRY_LINE = re.compile(r"^- (?P<text>.+) \^(?P<id>m-[0-9a-z]{8})$")

SAVER = textwrap.dedent(
    """
    import sys
    from workhearth import Workhearth

    home, ws, tag, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    wh = Workhearth(home=home, workspace=ws)
    wh.memory.folder("project")
    print("ready", flush=True)
    sys.stdin.readline()  # both writers start together
    for i in range(count):
        wh.memory.save(f"{tag} fact number {i}", tags=[tag])
    print("done", flush=True)
    """
)

LOOPER = textwrap.dedent(
    """
    import sys
    from workhearth import Workhearth

    home, ws, start = sys.argv[1], sys.argv[2], int(sys.argv[3])
    wh = Workhearth(home=home, workspace=ws)
    i = start
    while True:
        entry = wh.memory.save(f"looped fact {i} " + "pad " * (i % 40), level="low")
        print(entry.id, flush=True)
        if i % 5 == 4:
            wh.memory.delete(entry.id)
        elif i % 7 == 3:
            wh.memory.edit(entry.id, f"edited fact {i}")
        i += 1
    """
)


def memory_lines(folder: Path) -> list[str]:
    """MEMORY.md as a whole file: it ends with a newline and every line parses."""
    data = (folder / "MEMORY.md").read_text(encoding="utf-8")
    assert data.endswith("\n"), data[-200:]
    lines = data.splitlines()
    assert lines[:2] == ["# Memory", ""], lines[:2]
    for line in lines[2:]:
        assert ENTRY_LINE.match(line), f"half or foreign line: {line!r}"
    return lines[2:]


def ids_in_markdown(folder: Path) -> list[str]:
    return [m["id"] for line in memory_lines(folder) if (m := ENTRY_LINE.match(line))]


def meta_ids(folder: Path) -> set[str]:
    return set(json.loads((folder / "memory_meta.json").read_text())["entries"])


def test_two_processes_saving_at_once_lose_nothing(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SAVER, str(home), str(ws), tag, "50"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for tag in ("left", "right")
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        out, _ = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "done"

    wh = Workhearth(home=home, workspace=ws)
    folder = wh.memory.folder("project")
    lines = memory_lines(folder)
    texts = [ENTRY_LINE.match(x)["text"] for x in lines]  # type: ignore[index]
    want = {f"{tag} fact number {i}" for tag in ("left", "right") for i in range(50)}
    assert len(texts) == 100 and set(texts) == want
    ids = ids_in_markdown(folder)
    assert len(set(ids)) == 100
    assert meta_ids(folder) == set(ids)
    entries, cursor = wh.memory.list(limit=100)
    assert cursor is None and {e.id for e in entries} == set(ids)
    assert all(e.tags == [e.content.split()[0]] for e in entries)
    assert len(wh.memory.search("left fact number", limit=50)) == 50


def _run_and_kill(home: Path, ws: Path, start: int, rng: random.Random) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-c", LOOPER, str(home), str(ws), str(start)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    acked = 0
    wait_for = rng.randint(1, 12)
    while acked < wait_for:
        line = proc.stdout.readline()
        assert line, f"the saver died on its own: {proc.stderr.read()}"
        acked += 1
    time.sleep(rng.uniform(0, 0.04))  # a random moment inside a later save
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()
    proc.stderr.close()
    return acked


def test_sigkill_in_a_loop_of_saves_leaves_whole_files_and_no_orphans(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    rng = random.Random(20240611)
    folder = Workhearth(home=home, workspace=ws).memory.folder("project")
    start = 0
    for _ in range(8):
        start += _run_and_kill(home, ws, start, rng) + 100
        memory_lines(folder)  # after every kill: old or new file, never a half one

    wh = Workhearth(home=home, workspace=ws)
    wh.memory.index()
    in_markdown = ids_in_markdown(folder)
    assert len(in_markdown) == len(set(in_markdown))
    assert meta_ids(folder) == set(in_markdown)  # no orphaned meta, no entry without it
    listed = set()
    cursor = None
    while True:
        page, cursor = wh.memory.list(limit=100, cursor=cursor)
        listed |= {e.id for e in page}
        if cursor is None:
            break
    assert listed == set(in_markdown)
    for line in (folder / ".memory_evicted.log").read_text().splitlines():
        assert json.loads(line)["reason"] == "deleted"
