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


# ------------------------------------------------- hand-written lines beside savers
WORKER = textwrap.dedent(
    """
    import sys
    from workhearth import Workhearth

    home, ws, tag, count, mode = sys.argv[1:6]
    wh = Workhearth(home=home, workspace=ws)
    wh.memory.folder("project")
    print("ready", flush=True)
    sys.stdin.readline()  # every process starts together
    for i in range(int(count)):
        entry = wh.memory.save(f"{tag} fact number {i}", tags=[tag])
        if mode == "churn":
            # Why: an edit and a delete rewrite the file; a hand line must survive both.
            wh.memory.edit(entry.id, f"{tag} edited fact {i}")
            wh.memory.delete(entry.id)
        else:
            print(entry.id, flush=True)
    print("done", flush=True)
    """
)

HAND = textwrap.dedent(
    """
    import os, sys, time
    path, stop = sys.argv[1], sys.argv[2]
    print("ready", flush=True)
    sys.stdin.readline()
    i = 0
    # Why: what an editor plugin or `echo >>` does: an ordinary open('a') per line.
    while not os.path.exists(stop) and i < 5000:
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"hand-written line {i}\\n")
        i += 1
        time.sleep(0.0002)
    print(i, flush=True)
    """
)


def _race(tmp_path: Path, savers: int, count: int, mode: str) -> tuple[Path, int, list[str]]:
    """Savers (or churners) against one hand appender; returns (folder, hand lines, acked ids)."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    folder = Workhearth(home=home, workspace=ws).memory.folder("project")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "MEMORY.md").write_text("# Memory\n\n")
    stop = tmp_path / "stop"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(home), str(ws), f"w{n}", str(count), mode],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(savers)
    ]
    hand = subprocess.Popen(
        [sys.executable, "-c", HAND, str(folder / "MEMORY.md"), str(stop)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    for p in [*workers, hand]:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for p in [*workers, hand]:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    acked: list[str] = []
    for p in workers:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0 and out.splitlines()[-1] == "done"
        acked += out.splitlines()[:-1]
    stop.write_text("")
    out, _ = hand.communicate(timeout=60)
    return folder, int(out.strip()), acked


def _hand_lines(folder: Path) -> list[str]:
    lines = (folder / "MEMORY.md").read_text(encoding="utf-8").splitlines()
    return [x for x in lines if x.startswith("hand-written line ")]


def test_savers_never_lose_a_line_appended_by_hand_meanwhile(tmp_path: Path) -> None:
    folder, written, acked = _race(tmp_path, savers=4, count=15, mode="save")
    assert written > 0
    hand = _hand_lines(folder)
    assert sorted(hand) == sorted(f"hand-written line {i}" for i in range(written)), (
        f"{written - len(set(hand))} of {written} hand-written lines lost"
    )
    assert len(acked) == 60
    lines = (folder / "MEMORY.md").read_text().splitlines()
    ids = [m["id"] for line in lines if (m := ENTRY_LINE.match(line))]
    assert sorted(ids) == sorted(acked)
    assert meta_ids(folder) == set(acked)
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    entries, _ = wh.memory.list(limit=100)
    assert {e.id for e in entries} == set(acked)


def test_edits_and_deletes_carry_over_lines_appended_by_hand_meanwhile(tmp_path: Path) -> None:
    folder, written, _ = _race(tmp_path, savers=2, count=10, mode="churn")
    assert written > 0
    hand = _hand_lines(folder)
    assert sorted(hand) == sorted(f"hand-written line {i}" for i in range(written)), (
        f"{written - len(set(hand))} of {written} hand-written lines lost"
    )
    # every entry was deleted again: only the title and the hand-written lines are left
    rest = [x for x in (folder / "MEMORY.md").read_text().splitlines() if x.strip()]
    assert rest == ["# Memory", *hand]
    assert meta_ids(folder) == set()


def _meta(folder: Path) -> dict:
    return json.loads((folder / "memory_meta.json").read_text(encoding="utf-8"))["entries"]


def test_a_save_reads_the_meta_again_only_when_another_writer_changed_it(
    tmp_path: Path, monkeypatch
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    mine, other = Workhearth(home=home, workspace=ws), Workhearth(home=home, workspace=ws)
    folder = mine.memory.folder("project")
    first = mine.memory.save("The deploy runs on Fridays.")
    reads: list[str] = []
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        reads.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    mine.memory.save("The printer is on the second floor.")
    # Why: the meta on disk is the one this store wrote; reading back thousands of
    # entries cost a save more than all its other work.
    assert "memory_meta.json" not in reads
    # Another writer (hearth's atomic replace: a new file) ...
    theirs = other.memory.save("The vendor contract ends in May.", tags=["vendor"])
    # ... and a hand edit in place (same file, new size): both are read before the next save.
    meta_path = folder / "memory_meta.json"
    edited = _meta(folder)
    edited[first.id]["tags"] = ["by-hand"]
    with meta_path.open("r+", encoding="utf-8") as f:
        f.write(json.dumps({"version": 1, "entries": edited}, indent=1))
        f.truncate()
    reads.clear()
    last = mine.memory.save("The roadmap review is on Monday.")
    assert "memory_meta.json" in reads
    meta = _meta(folder)
    assert {first.id, theirs.id, last.id} <= set(meta)
    assert meta[theirs.id]["tags"] == ["vendor"] and meta[first.id]["tags"] == ["by-hand"]
