"""Reading never needs to write: the real ``hearth`` on a read-only or a full ``HEARTH_HOME``.

The machines run as root, so ``chmod`` cannot make a folder read-only; each test
runs its commands in a private mount namespace (``unshare --mount``) where the
home is a read-only bind mount or a small full tmpfs. Nothing leaks out of the
namespace, even when a test fails half-way.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest

from tests.e2e.conftest import HEARTH_CMD, Hearth, Result, chat, text

BIG = 299  # messages of ~5 KB: a 1.5 MB transcript, so reading it wants to write a snapshot


def _can_mount(tmp: Path) -> str | None:
    """Why mounting is impossible here, or None when it works."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = tmp / "probe"
    probe.mkdir()
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs", probe],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return None if done.returncode == 0 else f"cannot mount here: {done.stderr.strip()}"


@pytest.fixture
def mounts(tmp_path: Path) -> None:
    reason = _can_mount(tmp_path)
    if reason:
        pytest.skip(reason)


def run_mounted(hearth: Hearth, setup: str, commands: list[tuple[str, ...]]) -> list[Result]:
    """Run ``setup`` (mounts) then each ``hearth`` command, all in one mount namespace."""
    out = hearth.home.parent / "results"
    out.mkdir()
    script = ["set -eu", setup, "set +e", f"cd {shlex.quote(str(hearth.workspace))}"]
    for n, args in enumerate(commands):
        cmd = shlex.join([*HEARTH_CMD, *args])
        script.append(f"{cmd} >{out}/{n}.out 2>{out}/{n}.err; echo $? >{out}/{n}.rc")
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c", "\n".join(script)],
        env=hearth.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return [
        Result(
            int((out / f"{n}.rc").read_text()),
            (out / f"{n}.out").read_text(),
            (out / f"{n}.err").read_text(),
        )
        for n in range(len(commands))
    ]


def seed_home(hearth: Hearth) -> tuple[str, str]:
    """A small session and a big one whose snapshot is missing (reading it wants to write one)."""
    small = hearth.seed(chat(4), title="small one")
    big = hearth.seed(
        [text(m["role"], m["content"][0]["text"] + " " + "x" * 5000) for m in chat(BIG)]
    )
    (hearth.session_dir(big) / "snapshot.zst").unlink(missing_ok=True)
    return small, big


COMMANDS = [
    ("sessions", "list", "--json"),
    ("sessions", "list"),
    ("sessions", "show", "{small}"),
    ("sessions", "show", "{big}", "--json"),
    ("sessions", "latest", "{big}"),
    ("resume", "{big}", "--print-messages"),
    ("sessions", "verify", "{small}"),
    ("doctor",),
    ("doctor", "--json"),
]


def check_reads(results: list[Result], small: str, big: str) -> dict[str, Result]:
    """Every read command exits 0 with the right answer and no traceback."""
    by = {
        " ".join(c).format(small="SMALL", big="BIG"): r
        for c, r in zip(COMMANDS, results, strict=True)
    }
    for name, result in by.items():
        assert result.code == 0, f"{name}: {result.err}"
        assert "Traceback" not in result.err, f"{name}: {result.err}"
    listed = orjson.loads(by["sessions list --json"].out)
    assert {(s["session_id"], s["messages"]) for s in listed} == {(small, 4), (big, BIG)}
    assert big[:20] in by["sessions list"].out  # a narrow terminal shows an id's prefix
    assert "msg-3" in by["sessions show SMALL"].out
    assert orjson.loads(by["sessions show BIG --json"].out)["total"] == BIG
    assert "msg-298" in by["sessions latest BIG"].out
    assert len(orjson.loads(by["resume BIG --print-messages"].out)["messages"]) == BIG
    assert "4 messages, ok" in by["sessions verify SMALL"].out
    report = orjson.loads(by["doctor --json"].out)
    assert report["sessions"] == 2 and report["home_writable"] is False
    return by


def test_a_read_only_home_reads_everything_and_doctor_says_so(hearth: Hearth, mounts: None) -> None:
    small, big = seed_home(hearth)
    home = shlex.quote(str(hearth.home))
    setup = f"mount --bind {home} {home}\nmount -o remount,ro,bind {home} {home}"
    commands = [tuple(a.format(small=small, big=big) for a in c) for c in COMMANDS]
    by = check_reads(run_mounted(hearth, setup, commands), small, big)
    doctor = by["doctor"].out
    storage = next(line for line in doctor.splitlines() if line.startswith("storage"))
    assert "NOT WRITABLE" in storage and "Read-only file system" in storage
    assert "sessions    2" in doctor and "quest hides" in doctor
    # Nothing was written behind the mount either.
    assert not (hearth.session_dir(big) / "snapshot.zst").exists()


def test_a_full_home_reads_everything_without_a_traceback(hearth: Hearth, mounts: None) -> None:
    small, big = seed_home(hearth)
    seed = hearth.home.parent / "seed"
    shutil.copytree(hearth.home, seed)
    home, src = shlex.quote(str(hearth.home)), shlex.quote(str(seed))
    setup = (
        f"mount -t tmpfs -o size=6m,mode=0700 tmpfs {home}\n"
        f"cp -a {src}/. {home}/\n"
        f"dd if=/dev/zero of={home}/.filler bs=4096 2>/dev/null || true\n"
        f"dd if=/dev/zero of={home}/.filler2 bs=1 2>/dev/null || true"
    )
    commands = [tuple(a.format(small=small, big=big) for a in c) for c in COMMANDS]
    by = check_reads(run_mounted(hearth, setup, commands), small, big)
    storage = next(line for line in by["doctor"].out.splitlines() if line.startswith("storage"))
    assert "NOT WRITABLE" in storage and "No space left on device" in storage
