"""The browser's lifetime: no Chromium outlives a SIGKILL of the process that started it,
a stop ends it at once, the next launch ends what a dead run left, and a run gets a
browser only when one is found and its mode offers the tools."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.agent.browser.browsing import (
    CHROMIUM,
    TEST_ARGS,
    MakeCtx,
    browser_env,
    call,
    needs_chromium,
)
from workhearth.agent.browser.session import BrowserSession, kill_browser_of
from workhearth.agent.tools import ToolRegistry
from workhearth.config import BrowserConfig
from workhearth.sessions.session import Session

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium
ROOT = Path(__file__).parents[3]


def _pids_with(text: str) -> list[int]:
    """Live processes whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in args and stat.rsplit(")", 1)[1].split()[0] != "Z":
            found.append(int(entry.name))
    return found


def _chromium_on(profile: Path, home: Path) -> subprocess.Popen[bytes]:
    """A Chromium started on ``profile`` as another program would start it (not through
    BrowserSession), once its process shows (10 s at most)."""
    started = subprocess.Popen(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "about:blank",
        ],
        env=browser_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while not _pids_with(f"--user-data-dir={profile}") and time.monotonic() < deadline:
        time.sleep(0.1)
    return started


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry.name))
    return kids


def _gone_within(text: str, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _pids_with(text)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from workhearth.agent.browser.session import BrowserSession
    browser = BrowserSession(Path(sys.argv[1]), Path(sys.argv[2]), env={"HOME": sys.argv[4],
        "PATH": "/usr/bin:/bin"}, extra_args=["--no-sandbox"])
    browser.do(lambda s: s.page().goto(sys.argv[3]))
    print("ready", flush=True)
    time.sleep(120)
    """
)


def test_no_chromium_outlives_a_sigkill_of_its_starter(base: str, tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SCRIPT,
            str(CHROMIUM),
            str(profile),
            f"{base}/table",
            str(tmp_path),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert _pids_with(f"--user-data-dir={profile}"), "the browser should be running"
        drivers = _children(proc.pid)
        assert drivers, "Playwright's driver should be the starter's child"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        # Why the bare profile path: crash handlers name it too (their database is in it).
        assert _gone_within(str(profile), 5.0) == []
        deadline = time.monotonic() + 5
        while any(_alive(d) for d in drivers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(d) for d in drivers)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_next_launch_ends_a_browser_a_dead_run_left(
    base: str, tmp_path: Path, browser_home: Path
) -> None:
    profile = tmp_path / "profile"
    profile.mkdir()
    left = _chromium_on(profile, browser_home)
    try:
        browser = BrowserSession(
            CHROMIUM, profile, env=browser_env(browser_home), extra_args=TEST_ARGS
        )
        try:
            title = browser.do(lambda s: (s.page().goto(f"{base}/table"), s.page().title()))
            assert title[1] == "Table page 1"
            left.wait(timeout=5)  # ended by the launch, not by this test
        finally:
            browser.close()
    finally:
        if left.poll() is None:
            left.kill()
            left.wait()


def test_a_stop_ends_the_browser_at_once_mid_call(
    reg: ToolRegistry, make_ctx: MakeCtx, base: str, session: Session
) -> None:
    ctx = make_ctx("agent")
    assert ctx.browser is not None
    ctx.browser.session_id = session.id  # as BrowserSession.for_run sets it
    call(reg, ctx, "browser_open", url=f"{base}/table")
    results = []
    waiting = threading.Thread(
        target=lambda: results.append(call(reg, ctx, "browser_wait", text="never", seconds=60))
    )
    waiting.start()
    time.sleep(0.5)
    stopped = time.monotonic()
    assert kill_browser_of(session.id) == 1
    waiting.join(timeout=10)
    latency = time.monotonic() - stopped
    assert not waiting.is_alive() and latency < 3.0, latency
    [result] = results
    assert result.is_error and "the browser was closed" in result.content
    assert _pids_with(f"--user-data-dir={ctx.browser.profile}") == []
    again = call(reg, ctx, "browser_open", url=f"{base}/table")  # starts afresh
    assert not again.is_error, again.content


def test_a_run_gets_a_browser_only_when_one_is_found_and_the_mode_offers_tools(
    session: Session, tmp_path: Path
) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    found = BrowserSession.for_run(
        BrowserConfig(), session, "agent", quest_network=True, env=env, home=tmp_path
    )
    assert found is not None and found.policy is not None and found.session_id == session.id
    assert found.profile == session.folder / "browser-profile" and not found.running
    assert found.policy.offers("browser_click")
    cut_off = BrowserSession.for_run(
        BrowserConfig(), session, "quest", quest_network=False, env=env, home=tmp_path
    )
    assert cut_off is None
    missing = BrowserConfig(executable=str(tmp_path / "no-such-browser"))
    assert (
        BrowserSession.for_run(
            missing, session, "agent", quest_network=True, env=env, home=tmp_path
        )
        is None
    )


def test_a_users_own_profile_in_use_is_never_ended(tmp_path: Path, browser_home: Path) -> None:
    profile = tmp_path / "the user's profile"
    profile.mkdir()
    users = _chromium_on(profile, browser_home)
    try:
        browser = BrowserSession(
            CHROMIUM, profile, env=browser_env(browser_home), extra_args=TEST_ARGS, timeout=10
        )
        browser.ours = False  # as [browser] profile makes it
        try:
            with pytest.raises(Exception, match="did not start"):
                browser.do(lambda s: s.page())
            browser.kill()
        finally:
            browser.close()
        assert users.poll() is None  # the user's browser lives on
    finally:
        users.kill()
        users.wait()
