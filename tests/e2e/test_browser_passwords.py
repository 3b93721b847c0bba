"""``hearth run`` and a password field (issue 25): the user types the password at the
terminal's hidden prompt; the site gets it, and the model's requests, the transcript, the
audit and the terminal's output never hold it. Without a terminal the run stops
``not-asked``; a quest refuses in words. The real command, a scripted model, Debian's
Chromium and a sign-in page on 127.0.0.1 (tests/agent/browser/login_site.py)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import termios
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.agent.browser.browsing import needs_chromium
from tests.agent.browser.login_site import PASSWORD, serve_login
from tests.e2e.conftest import HEARTH_CMD, Hearth
from tests.e2e.test_agent_run import calls_reply, text_reply, write_config
from tests.e2e.test_first_hour import MODEL, audit, hearth_run
from tests.fake_providers import FakeProvider, Reply

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium
NEEDS_THE_USER = "a password field needs the user; run it in agent mode with a terminal or the page"


@pytest.fixture(scope="module")
def site() -> Iterator[ThreadingHTTPServer]:
    with serve_login() as server:
        yield server


@pytest.fixture
def base(site: ThreadingHTTPServer, hearth: Hearth) -> str:
    site.received.clear()  # type: ignore[attr-defined]
    write_config(hearth, '[browser]\nallow = ["127.0.0.1"]\n')
    return f"http://127.0.0.1:{site.server_address[1]}"


def _sign_in(base: str, *more: Reply) -> list[Reply]:
    """The model's side: open the form, read it, fill the user, leave the password to the user."""
    return [
        calls_reply("openai", ("call_o", "browser_open", {"url": f"{base}/login"})),
        calls_reply("openai", ("call_s", "browser_snapshot", {})),
        calls_reply("openai", ("call_u", "browser_type", {"ref": 1, "text": "ana"})),
        calls_reply("openai", ("call_p", "browser_type", {"ref": 2, "text": ""})),
        *more,
    ]


def _leaks(home: Path, secret: str) -> list[str]:
    """Files of hearth's home holding ``secret``, but the browser's own profile."""
    return [
        str(p)
        for p in home.rglob("*")
        if p.is_file() and "browser-profile" not in p.parts and secret.encode() in p.read_bytes()
    ]


def _tool_results(body: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def test_the_user_types_the_password_at_the_terminal_and_only_the_site_gets_it(
    hearth: Hearth, site: ThreadingHTTPServer, base: str
) -> None:
    replies = _sign_in(
        base,
        calls_reply("openai", ("call_c", "browser_click", {"ref": 4})),
        calls_reply("openai", ("call_r", "browser_snapshot", {})),
        text_reply("openai", "Signed in."),
    )
    leader, follower = pty.openpty()
    with FakeProvider(replies) as fake:
        env = {**hearth.env, "OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": "sk-test-dummy"}
        proc = subprocess.Popen(
            [*HEARTH_CMD, "run", "sign in", "--mode", "agent", "--model", MODEL],
            cwd=hearth.workspace,
            env=env,
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            # Why wait: what is typed while the echo is on shows on the screen.
            deadline = time.monotonic() + 60
            while termios.tcgetattr(follower)[3] & termios.ECHO:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "hearth never turned the echo off"
                time.sleep(0.02)
            os.write(leader, PASSWORD.encode() + b"\n")
            os.write(leader, b"y\n")  # then yes to the submission
            out, err = proc.communicate(timeout=90)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            os.set_blocking(leader, False)
            try:
                screen = os.read(leader, 65536)
            except BlockingIOError:
                screen = b""
            os.close(leader)
            os.close(follower)
        requests = [r.raw for r in fake.received]
        bodies = fake.bodies

    assert proc.returncode == 0, err.decode()
    words = err.decode()
    assert "browser_type wants to:" in words and "type a password you give into Password" in words
    assert f"Type the password for 'Password' on {base} (hidden" in words
    [sent] = site.received  # type: ignore[attr-defined]
    assert f"password={PASSWORD}".encode() in sent
    results = _tool_results(bodies[-1])
    assert results["call_p"].startswith("Typed the password the user gave (hidden)")
    assert "Signed in: ana / ••••••••" in results["call_r"]
    assert len(requests) == 7 and all(PASSWORD.encode() not in raw for raw in requests)
    assert PASSWORD.encode() not in out + err + screen
    assert _leaks(hearth.home, PASSWORD) == []
    [transcript] = hearth.home.glob("projects/*/sessions/*/transcript.jsonl")
    assert b"Signed in: ana" in transcript.read_bytes()  # the grep looked in the right place
    assert audit(hearth)[3:5] == [
        ("browser_type", "allowed-by-user", "ok"),
        ("browser_click", "allowed-by-user", "ok"),
    ]


def test_without_a_terminal_the_password_field_stops_the_run_not_asked(
    hearth: Hearth, site: ThreadingHTTPServer, base: str
) -> None:
    with FakeProvider(_sign_in(base, text_reply("openai", "Done."))) as fake:
        ran = hearth_run(
            hearth, fake, "run", "sign in", "--mode", "agent", "--model", MODEL, timeout=90
        )
        asked = len(fake.bodies)
    assert ran.code not in (0, 130), ran.err
    assert "browser_type needs a password only you can type" in ran.err
    assert "--yes" not in ran.err  # neither --yes nor a quest can type it
    assert asked == 4  # stopped: the model was not told anything made up
    assert audit(hearth)[-1] == ("browser_type", "not-asked", "error")
    assert site.received == []  # type: ignore[attr-defined]


def test_a_quest_refuses_the_password_field_in_words(
    hearth: Hearth, site: ThreadingHTTPServer, base: str
) -> None:
    with FakeProvider(_sign_in(base, text_reply("openai", "I need you."))) as fake:
        ran = hearth_run(
            hearth, fake, "run", "sign in", "--mode", "quest", "--model", MODEL, timeout=90
        )
        bodies = fake.bodies
    assert ran.code == 0, ran.err
    assert _tool_results(bodies[-1])["call_p"] == f"Refused: {NEEDS_THE_USER}"
    assert audit(hearth)[-1] == ("browser_type", "allowed-by-mode", "error")
    assert site.received == []  # type: ignore[attr-defined]
    assert json.dumps(bodies).count("password field needs the user") == 1
