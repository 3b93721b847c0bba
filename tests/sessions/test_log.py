"""The transcript log: checksummed lines, damage that never stops a load, the writer lock."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workhearth.errors import SessionLockedError, StorageError
from workhearth.sessions.codec import encode_line, line_ok
from workhearth.sessions.log import LogWriter, ScanResult, scan


def write_log(path: Path, n: int, sid: str = "s1", policy: str = "never") -> list[bytes]:
    with LogWriter(path, sid, policy) as w:  # type: ignore[arg-type]
        w.append("meta", {"schema": 1})
        for i in range(n):
            w.append(
                "message",
                {"message": {"role": "user", "content": [{"type": "text", "text": f"m{i}"}]}},
            )
    return path.read_bytes().splitlines(keepends=True)


def seqs(path: Path, sid: str = "s1") -> tuple[list[int], ScanResult]:
    res = ScanResult()
    return [e["seq"] for e in scan(path, sid, result=res)], res


def test_line_checksum_detects_any_flipped_byte() -> None:
    line = encode_line({"seq": 1, "sid": "s", "type": "title", "title": "héllo"}).rstrip(b"\n")
    assert line_ok(line)
    for i in range(len(line)):
        damaged = bytearray(line)
        damaged[i] ^= 0x01
        assert not line_ok(bytes(damaged)), i


def test_healthy_log_loads_everything(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    write_log(p, 5)
    got, res = seqs(p)
    assert got == [1, 2, 3, 4, 5, 6]
    assert res.damage.total == 0
    assert res.end_offset == p.stat().st_size


def test_torn_last_line(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    p.write_bytes(b"".join(lines[:-1]) + lines[-1][:25])
    got, res = seqs(p)
    assert got == [1, 2, 3, 4]
    assert res.damage.torn == 1


def test_glued_lines_are_both_recovered(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    p.write_bytes(lines[0] + lines[1].rstrip(b"\n") + lines[2] + b"".join(lines[3:]))
    got, res = seqs(p)
    assert got == [1, 2, 3, 4, 5]
    assert res.damage.glued == 1


def test_nul_runs_are_skipped(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    p.write_bytes(
        lines[0] + lines[1] + b"\x00" * 4096 + lines[2] + b"\x00" * 10 + b"\n" + b"".join(lines[3:])
    )
    got, res = seqs(p)
    assert got == [1, 2, 3, 4, 5]
    assert res.damage.nul == 2


def test_zero_filled_line_in_the_middle(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    p.write_bytes(lines[0] + lines[1] + b"\x00" * (len(lines[2]) - 1) + b"\n" + b"".join(lines[3:]))
    got, res = seqs(p)
    assert got == [1, 2, 4, 5]
    assert res.damage.nul == 1


def test_duplicated_and_foreign_lines(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    other = write_log(tmp_path / "o.jsonl", 2, sid="other")
    lines = write_log(p, 4)
    p.write_bytes(b"".join(lines[:3]) + lines[2] + other[1] + b"".join(lines[3:]))
    got, res = seqs(p)
    assert got == [1, 2, 3, 4, 5]
    assert res.damage.duplicate == 1 and res.damage.foreign == 1


def test_garbled_middle_line_does_not_stop_the_rest(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    bad = lines[2].replace(b"m1", b"mX")
    p.write_bytes(lines[0] + lines[1] + bad + b"".join(lines[3:]))
    got, res = seqs(p)
    assert got == [1, 2, 4, 5]
    assert res.damage.checksum == 1


def test_truncated_file_keeps_the_prefix(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 6)
    data = b"".join(lines)
    ends = [len(b"".join(lines[: i + 1])) for i in range(len(lines))]
    for cut in range(len(data) + 1):
        p.write_bytes(data[:cut])
        got, res = seqs(p)
        # a line counts once its bytes are all there; its newline may be missing
        whole = sum(1 for end in ends if cut >= end - 1)
        assert got == list(range(1, whole + 1)), cut
        assert res.damage.total == (0 if cut in (0, *ends, *(e - 1 for e in ends)) else 1)


def test_next_append_starts_on_a_fresh_line_after_a_torn_tail(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 3)
    p.write_bytes(b"".join(lines) + lines[1][:30])
    with LogWriter(p, "s1") as w:
        assert w.append("title", {"title": "after crash"}) == 5
    got, res = seqs(p)
    assert got == [1, 2, 3, 4, 5]
    assert res.damage.checksum == 1


def test_known_seq_beats_a_duplicated_tail(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    p.write_bytes(b"".join(lines) + lines[1])  # the tail now ends in an old seq
    with LogWriter(p, "s1", known_seq=5) as w:
        assert w.append("title", {"title": "x"}) == 6
    assert seqs(p)[0] == [1, 2, 3, 4, 5, 6]


def test_files_are_private(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    write_log(p, 1)
    assert stat.S_IMODE(p.stat().st_mode) == 0o600


def test_second_writer_is_refused_in_process(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    with LogWriter(p, "s1"), pytest.raises(SessionLockedError):
        LogWriter(p, "s1")


def test_second_writer_is_refused_across_processes_and_a_killed_one_leaves_no_lock(
    tmp_path: Path,
) -> None:
    p = tmp_path / "t.jsonl"
    write_log(p, 1)
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import sys, time
                from pathlib import Path
                from workhearth.sessions.log import LogWriter
                w = LogWriter(Path({str(p)!r}), "s1")
                print("locked", flush=True)
                time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"locked"
        with pytest.raises(SessionLockedError, match="another running process"):
            LogWriter(p, "s1")
    finally:
        child.kill()
        child.wait()
    with LogWriter(p, "s1") as w:  # the kernel dropped the dead process's lock
        assert w.append("title", {"title": "resumed"}) == 3


@pytest.mark.parametrize("policy", ["always", "turn", "never"])
def test_every_policy_writes_before_append_returns(tmp_path: Path, policy: str) -> None:
    p = tmp_path / "t.jsonl"
    w = LogWriter(p, "s1", policy)  # type: ignore[arg-type]
    w.append("meta", {})
    w.append("title", {"title": "x"})
    # another reader sees both lines before close: nothing waits in a user-space buffer
    assert seqs(p)[0] == [1, 2]
    w.before_side_effect()
    w.turn_end()
    w.close()


def test_scan_from_an_offset_with_known_max_seq(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    lines = write_log(p, 4)
    start = len(lines[0]) + len(lines[1])
    res = ScanResult()
    got = [e["seq"] for e in scan(p, "s1", start=start, max_seq=2, result=res)]
    assert got == [3, 4, 5]
    assert os.path.getsize(p) == res.end_offset


def test_turn_fsyncs_are_coalesced_and_the_last_turn_still_reaches_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from workhearth.sessions import log as log_module

    calls: list[float] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(time.monotonic())
        real_fsync(fd)

    monkeypatch.setattr(log_module.os, "fsync", counting_fsync)
    w = LogWriter(tmp_path / "t.jsonl", "s1", "turn")
    w.append("meta", {})
    calls.clear()
    started = time.monotonic()
    for i in range(200):  # 200 quick turns
        w.append("title", {"title": str(i)})
        w.turn_end()
    elapsed = time.monotonic() - started
    # coalesced: at most one fsync per 200 ms window, never one per turn
    assert len(calls) <= elapsed / 0.2 + 2 < 200
    deadline = time.monotonic() + 2
    while w._dirty and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not w._dirty  # the flusher synced the last turn without another call
    mark = len(calls)
    w.append("title", {"title": "tool"})  # a tool call is recorded ...
    w.before_side_effect()  # ... and is on disk before the tool runs: never deferred
    assert not w._dirty
    assert len(calls) > mark  # by this call, or by the append itself when 200 ms had passed
    w.close()


def test_an_append_on_a_full_disk_is_refused_whole_and_the_log_stays_clean(
    small_disk: Path,
) -> None:
    """ENOSPC mid-line: a clear StorageError, no torn tail, and appends go on once freed."""
    path = small_disk / "transcript.jsonl"
    big = "x" * 30_000  # several pages, so the disk fills in the middle of a line
    with LogWriter(path, "s1", "never") as w:
        acked = [w.append("meta", {"schema": 1})]
        fs = os.statvfs(small_disk)
        # Why: leave about 12 KB free, less than one event, so the write is cut short.
        (small_disk / "filler").write_bytes(b"\0" * (fs.f_bavail * fs.f_frsize - 12_288))
        with pytest.raises(StorageError, match="event not saved"):
            for _ in range(10):
                acked.append(w.append("message", {"message": {"role": "user", "text": big}}))
        assert path.read_bytes().endswith(b"\n")  # the cut line was taken back
        (small_disk / "filler").unlink()
        acked.append(w.append("message", {"message": {"role": "user", "text": "after"}}))
    got, res = seqs(path)
    assert got == acked
    assert res.damage.total == 0
