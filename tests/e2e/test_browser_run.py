"""``hearth run`` with the browser tools: the real command, a scripted model (fake provider),
Debian's Chromium and a site served on 127.0.0.1 (tests/agent/browser/site.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import needs_chromium
from tests.e2e.conftest import HEARTH_CMD, Hearth
from tests.e2e.test_agent_run import calls_reply, text_reply, write_config
from tests.e2e.test_first_hour import MODEL, audit, hearth_run
from tests.fake_providers import FakeProvider

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    with site.serve() as server:
        yield server


def _browsers_of(home: Path) -> list[str]:
    """Command lines of live processes that use a profile under ``home``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except (OSError, UnicodeDecodeError):
                continue
            # Why the bare path: crash handlers name the profile too (their database is in it).
            if str(home) in args and "chrom" in args:
                found.append(args)
    return found


def test_a_quest_reads_a_table_from_an_allowed_site(
    hearth: Hearth, web: ThreadingHTTPServer
) -> None:
    write_config(hearth, '[browser]\nallow = ["127.0.0.1"]\n')
    base = f"http://127.0.0.1:{web.server_address[1]}"
    replies = [
        calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/table?page=2"})),
        calls_reply("openai", ("call_t", "browser_extract", {"table": 1})),
        calls_reply("openai", ("call_f", "browser_open", {"url": "file:///etc/passwd"})),
        text_reply("openai", "Done."),
    ]
    with FakeProvider(replies) as fake:
        ran = hearth_run(
            hearth, fake, "run", "read the table", "--mode", "quest", "--model", MODEL, timeout=90
        )
        bodies = list(fake.bodies)
    assert ran.code == 0, ran.err
    offered = {t["function"]["name"] for t in bodies[0]["tools"]}
    assert {"browser_open", "browser_click", "browser_download"} <= offered
    results = [m for m in bodies[3]["messages"] if m["role"] == "tool"]
    assert "Opened" in results[0]["content"] and '"Table page 2"' in results[0]["content"]
    rows = json.loads(results[1]["content"])["rows"]
    assert rows[1] == ["item 11", "110"] and len(rows) == 11
    assert "file: URLs are not opened" in results[2]["content"]
    assert audit(hearth) == [
        ("browser_open", "allowed-by-mode", "ok"),
        ("browser_extract", "allowed-by-mode", "ok"),
        ("browser_open", "allowed-by-mode", "error"),
    ]
    [profile] = hearth.home.glob("projects/*/sessions/*/browser-profile")
    assert profile.is_dir()
    assert _browsers_of(hearth.home) == []  # the run closed its browser


def test_a_submission_nobody_can_approve_stops_the_run(
    hearth: Hearth, web: ThreadingHTTPServer
) -> None:
    write_config(hearth, '[browser]\nallow = ["127.0.0.1"]\n')
    base = f"http://127.0.0.1:{web.server_address[1]}"
    web.posts.clear()  # type: ignore[attr-defined]
    replies = [
        calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/login"})),
        calls_reply("openai", ("call_s", "browser_snapshot", {})),
        calls_reply(
            "openai", ("call_t", "browser_type", {"ref": 1, "text": "ana", "submit": True})
        ),
        text_reply("openai", "Done."),
    ]
    with FakeProvider(replies) as fake:
        ran = hearth_run(
            hearth, fake, "run", "sign in", "--mode", "agent", "--model", MODEL, timeout=90
        )
        asked = len(fake.bodies)
    assert ran.code not in (0, 130), ran.err
    assert "--yes" in ran.err
    assert asked == 3  # the model was not told a made-up denial
    assert web.posts == []  # type: ignore[attr-defined]
    assert audit(hearth)[-1] == ("browser_type", "not-asked", "error")
    assert _browsers_of(hearth.home) == []


def test_no_browser_outlives_a_sigkill_of_hearth_run(
    hearth: Hearth, web: ThreadingHTTPServer
) -> None:
    write_config(hearth, '[browser]\nallow = ["127.0.0.1"]\n')
    base = f"http://127.0.0.1:{web.server_address[1]}"
    replies = [calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/slow"}))]
    with FakeProvider(replies) as fake:
        env = {**hearth.env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test-dummy"}
        proc = subprocess.Popen(
            [*HEARTH_CMD, "run", "open it", "--mode", "quest", "--model", MODEL],
            cwd=hearth.workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 60
            while not _browsers_of(hearth.home) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _browsers_of(hearth.home), "the run should have started its browser"
            os.kill(proc.pid, signal.SIGKILL)  # mid-call: /slow answers after 4 s
            proc.wait(timeout=10)
            deadline = time.monotonic() + 5
            while _browsers_of(hearth.home) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _browsers_of(hearth.home) == []
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_a_download_is_a_change_of_its_turn_and_a_rewind_takes_it_back(
    hearth: Hearth, web: ThreadingHTTPServer
) -> None:
    write_config(hearth, '[browser]\nallow = ["127.0.0.1"]\n')
    base = f"http://127.0.0.1:{web.server_address[1]}"
    replies = [
        calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/files"})),
        calls_reply("openai", ("call_s", "browser_snapshot", {})),
        calls_reply("openai", ("call_d", "browser_download", {"ref": 1, "path": "report.csv"})),
        text_reply("openai", "Saved the report."),
    ]
    with FakeProvider(replies) as fake:
        ran = hearth_run(
            hearth, fake, "run", "get the report", "--yes", "--model", MODEL, timeout=90
        )
        bodies = list(fake.bodies)
    assert ran.code == 0, ran.err
    snapshot = [m for m in bodies[2]["messages"] if m["role"] == "tool"][-1]["content"]
    assert '[1] link "Get the report"' in snapshot  # the ref the script downloads by
    saved = hearth.workspace / "report.csv"
    assert saved.read_bytes() == site.CSV
    assert audit(hearth)[-1] == ("browser_download", "allowed-by-flag", "ok")
    [session] = hearth.json("sessions", "list")
    listed = hearth.json("rewind", session["session_id"], "--list")
    assert "report.csv" in listed["turns"][0]["files"], listed
    back = hearth.run("rewind", session["session_id"], "--to", "1")
    assert back.code == 0, back.err
    assert not saved.exists()
    assert _browsers_of(hearth.home) == []
