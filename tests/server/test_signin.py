"""Signing in (issue #19 item 2): a sign-in that outlives a restart of the server, ends
at once on sign-out or a new token, survives a damaged or read-only store; form posts
whose Origin a private browser hides; fresh login URLs for ``--login-url``; and the
pages a browser gets instead of JSON."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from pathlib import Path

from tests.e2e.conftest import HEARTH_CMD
from tests.server.conftest import BASE, Served
from tests.server.test_browser import start_serve, stop_serve
from tests.server.test_security import as_browser, login
from workhearth.server.security import COOKIE, SESSIONS_FILE, Auth

TOKEN = "t" * 43


def test_a_sign_in_outlives_a_restart_with_the_same_token(tmp_path: Path) -> None:
    first = Auth(TOKEN, home=tmp_path)
    sid = first.use_login(first.new_login())
    assert sid is not None
    store = tmp_path / SESSIONS_FILE
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert sid not in store.read_text()  # only its digest is kept
    restarted = Auth(TOKEN, home=tmp_path)
    assert restarted.allowed(None, sid)
    assert not restarted.allowed(None, "made-up")
    # Signing out in one server ends it for the next one too.
    restarted.end_session(sid)
    assert not Auth(TOKEN, home=tmp_path).allowed(None, sid)


def test_a_new_token_ends_every_sign_in(tmp_path: Path) -> None:
    sid = Auth(TOKEN, home=tmp_path).login_with_token(TOKEN)
    assert sid is not None
    assert not Auth("u" * 43, home=tmp_path).allowed(None, sid)


def test_a_sign_in_expires_after_a_restart_too(tmp_path: Path) -> None:
    now = [1000.0]
    auth = Auth(TOKEN, home=tmp_path, clock=lambda: now[0])
    sid = auth.login_with_token(TOKEN)
    now[0] += 8 * 24 * 3600
    assert not Auth(TOKEN, home=tmp_path, clock=lambda: now[0]).allowed(None, sid)


def test_a_damaged_store_costs_a_sign_in_not_the_server(tmp_path: Path) -> None:
    for junk in (b"", b"{not json", b"[1, 2]", b'{"token": 5, "sessions": []}'):
        (tmp_path / SESSIONS_FILE).write_bytes(junk)
        auth = Auth(TOKEN, home=tmp_path)
        sid = auth.login_with_token(TOKEN)
        assert sid is not None and auth.allowed(None, sid)


def test_a_read_only_home_keeps_sign_ins_in_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o500)
    try:
        if os.access(home, os.W_OK):  # root writes anyway: make the store a folder instead
            home.chmod(0o700)
            (home / SESSIONS_FILE).mkdir()
        auth = Auth(TOKEN, home=home)
        sid = auth.login_with_token(TOKEN)
        assert sid is not None and auth.allowed(None, sid)
        other = auth.login_with_token(TOKEN)
        assert auth.allowed(None, sid) and auth.allowed(None, other)
    finally:
        home.chmod(0o700)


def test_a_form_post_with_origin_null_passes_only_when_the_browser_says_same_origin(
    served: Served,
) -> None:
    hidden = {"Origin": "null", "Sec-Fetch-Site": "same-origin", "Accept": "text/html"}
    good = as_browser(served).post(
        "/login", data={"token": served.token}, headers=hidden, follow_redirects=False
    )
    assert good.status_code == 303 and COOKIE in good.cookies
    for site in ("cross-site", "same-site", "none", None):
        headers = {"Origin": "null", **({"Sec-Fetch-Site": site} if site else {})}
        refused = as_browser(served).post(
            "/login", data={"token": served.token}, headers=headers, follow_redirects=False
        )
        assert refused.status_code == 403, site
        assert refused.json()["code"] == "foreign_origin"


def test_a_form_sign_out_goes_to_the_sign_in_page(served: Served) -> None:
    sid = login(served)
    browser = as_browser(served, sid)
    out = browser.post(
        "/logout", headers={"Origin": BASE, "Accept": "text/html"}, follow_redirects=False
    )
    assert out.status_code == 303 and out.headers["location"] == "/"
    assert as_browser(served, sid).get("/v1/info").status_code == 401
    page = as_browser(served, sid).get("/")
    assert 'data-page="signin"' in page.text


def test_a_stranger_gets_the_sign_in_page_and_a_browser_error_is_a_page(served: Served) -> None:
    stranger = as_browser(served)
    for path in ("/", "/index.html"):
        page = stranger.get(path)
        assert page.status_code == 200 and 'data-page="signin"' in page.text
        assert 'id="view-tasks"' not in page.text
    wrong = stranger.post("/login", data={"token": "nope"}, headers={"Origin": BASE})
    assert wrong.status_code == 401 and 'data-reason="wrong"' in wrong.text
    used = stranger.get("/login?token=never-issued")
    assert used.status_code == 401 and 'data-reason="expired"' in used.text
    missing = stranger.get("/no/such/page", headers={"Accept": "text/html"})
    assert missing.status_code == 404 and 'data-page="error" ' in missing.text
    assert 'data-status="404"' in missing.text
    # A program asking for JSON still gets JSON, with a code.
    api = stranger.get("/no/such/page", headers={"Accept": "application/json"})
    assert api.status_code == 404 and api.json()["detail"] == "Not Found"
    icon = stranger.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")


def test_a_fresh_login_url_needs_the_bearer_token(served: Served) -> None:
    made = served.api.post("/v1/logins")
    assert made.status_code == 201
    body = made.json()
    assert body["expires_in"] == 300 and "/login?token=" in body["url"]
    one_time = body["url"].split("token=", 1)[1]
    assert (
        as_browser(served).get(f"/login?token={one_time}", follow_redirects=False).status_code
        == 303
    )
    sid = login(served)
    # A browser's cookie does not mint login URLs: only the token's holder does.
    assert as_browser(served, sid).post("/v1/logins", headers={"Origin": BASE}).status_code == 403
    assert as_browser(served).post("/v1/logins", headers={"Origin": BASE}).status_code == 401


def test_login_url_after_the_server_was_killed_says_none_runs(tmp_path: Path) -> None:
    bench = start_serve(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
    env["HEARTH_HOME"] = str(bench.home)

    def login_url() -> subprocess.CompletedProcess[str]:
        command = [*HEARTH_CMD, "serve", "--login-url"]
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)

    try:
        alive = login_url()
        assert alive.returncode == 0, alive.stderr
        assert "/login?token=" in alive.stdout
        bench.proc.send_signal(signal.SIGKILL)
        bench.proc.wait(timeout=20)
    finally:
        stop_serve(bench)
    assert (bench.home / "server.json").exists()  # a killed server leaves its record
    gone = login_url()
    assert gone.returncode == 1 and gone.stdout == ""
    assert gone.stderr.count("\n") == 1 and "no hearth serve is running" in gone.stderr
