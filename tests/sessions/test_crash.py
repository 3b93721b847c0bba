"""Real-process crash test: SIGKILL a writer at random moments; nothing acknowledged is lost."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from workhearth.config import load_config
from workhearth.sessions.store import SessionStore

CHILD = textwrap.dedent(
    """
    import sys
    from workhearth.config import load_config
    from workhearth.sessions.store import SessionStore

    home, sid, policy, start = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = SessionStore(load_config({"HEARTH_HOME": home, "HEARTH_FSYNC": policy}), home)
    session = store.open(sid)
    session.load()
    i = start
    while True:
        text = f"event {i} " + "y" * (i % 3000)
        session.append_message({"role": "user", "content": [{"type": "text", "text": text}]})
        # the append returned: acknowledge it
        sys.stdout.write(f"{i}\\n")
        sys.stdout.flush()
        if i % 7 == 0:
            session.turn_end()
        i += 1
    """
)


def _run_and_kill(home: Path, sid: str, policy: str, start: int, rng: random.Random) -> int:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), sid, policy, str(start)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    # wait until it really writes, then kill it at a random moment
    first = proc.stdout.readline()
    assert first.strip(), "child never wrote an event"
    time.sleep(rng.uniform(0.0, 0.08))
    proc.send_signal(signal.SIGKILL)
    rest = proc.stdout.read()
    proc.wait()
    acked = [int(x) for x in (first + rest).split()]
    return acked[-1]


@pytest.mark.parametrize("policy", ["turn", "never"])
def test_sigkill_never_loses_an_acknowledged_event(tmp_path: Path, policy: str) -> None:
    home = tmp_path / "home"
    store = SessionStore(load_config({"HEARTH_HOME": str(home)}), home)
    sid = store.create().id
    rng = random.Random(20261130)
    next_i = 0
    kills = 12
    for _ in range(kills):
        last_acked = _run_and_kill(home, sid, policy, next_i, rng)
        texts = [m["content"][0]["text"].split()[1] for m in store.open(sid).load().messages]
        numbers = [int(t) for t in texts]
        # every acknowledged event is there, in order, exactly once
        assert numbers[: last_acked + 1] == list(range(last_acked + 1))
        # at most the one event whose write was in flight when the kill came
        assert len(numbers) <= last_acked + 2
        next_i = len(numbers)
    report = store.verify(sid)
    # a kill can tear at most the line being written; the next run starts on a fresh line
    assert report.damage["checksum"] + report.damage["torn"] <= kills
    assert report.messages >= kills
