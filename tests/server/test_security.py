"""Local-mode security: token file, bearer and cookie, one-time login, Host, Origin, headers."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.server.conftest import BASE, Served
from workhearth.server.app import WEB_DIR
from workhearth.server.security import (
    COOKIE,
    LOGIN_TTL,
    Auth,
    host_allowed,
    load_or_create_token,
)


def test_token_file_is_0600_made_once_and_reused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = load_or_create_token(home)
    path = home / "server.token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 32 and load_or_create_token(home) == first
    assert [p.name for p in home.iterdir()] == ["server.token"]  # no temporary file left


def test_servers_starting_together_agree_on_one_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    tokens: list[str] = []
    threads = [
        threading.Thread(target=lambda: tokens.append(load_or_create_token(home))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(tokens)) == 1 and (home / "server.token").read_text().strip() == tokens[0]


def test_an_empty_token_file_is_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "server.token").write_text("")
    token = load_or_create_token(home)
    assert len(token) >= 32 and (home / "server.token").read_text().strip() == token


@pytest.mark.parametrize(
    "path",
    [
        "/v1/info",
        "/v1/memory",
        "/v1/memory/search?q=x",
        "/v1/sessions",
        "/v1/skills",
        "/v1/trash",
        "/v1/audit",
    ],
)
def test_api_without_credentials_is_401(served: Served, path: str) -> None:
    response = served.client.get(path)
    assert response.status_code == 401
    assert "login URL" in response.json()["detail"]
    wrong = served.client.get(path, headers={"Authorization": "Bearer " + "x" * 43})
    assert wrong.status_code == 401


@pytest.mark.parametrize(
    ("method", "path"),
    [("PUT", "/v1/memory"), ("GET", "/v1/no/such/route"), ("DELETE", "/v1/memory/m-00000000")],
)
def test_any_method_or_unknown_api_path_without_credentials_is_401(
    served: Served, method: str, path: str
) -> None:
    """Nothing about the API (which routes or methods exist) is told before the token."""
    response = served.client.request(method, path)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "login URL" in response.json()["detail"]


def test_the_login_cookie_is_found_among_other_cookies(served: Served) -> None:
    import re

    r = served.client.get(f"/login?token={served.app.state.new_login()}", follow_redirects=False)
    sid = re.search(r"hearth_session=([^;]+)", r.headers["set-cookie"])
    assert sid is not None
    cookie = f"theme=dark; hearth_session={sid.group(1)}; lang=zh"
    assert served.client.get("/v1/info", headers={"Cookie": cookie}).status_code == 200
    wrong = cookie.replace(sid.group(1), "forged")
    assert served.client.get("/v1/info", headers={"Cookie": wrong}).status_code == 401


def test_a_post_without_credentials_saves_nothing(served: Served) -> None:
    assert served.client.post("/v1/memory", json={"content": "sneaky"}).status_code == 401
    assert served.api.get("/v1/memory").json()["entries"] == []


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8765",
        "127.0.0.1.evil.example",
        "localhost:80@x",
        "10.0.0.2:8765",
        "",
    ],
)
def test_a_foreign_host_is_421_even_with_the_token(served: Served, host: str) -> None:
    response = served.api.get("/v1/info", headers={"Host": host})
    assert response.status_code == 421
    assert "Host" in response.json()["detail"]
    assert served.client.get("/", headers={"Host": host}).status_code == 421


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "localhost:8765",
        "127.0.0.1",
        "127.0.0.1:1",
        "[::1]",
        "[::1]:8765",
        "LOCALHOST:8765",
    ],
)
def test_local_hosts_are_allowed(host: str) -> None:
    assert host_allowed(host)


def test_a_foreign_origin_cannot_change_state(served: Served) -> None:
    evil = {"Origin": "http://evil.example"}
    response = served.api.post("/v1/memory", json={"content": "planted"}, headers=evil)
    assert response.status_code == 403
    assert served.api.delete("/v1/memory/m-00000000", headers=evil).status_code == 403
    assert (
        served.api.patch("/v1/memory/m-00000000", json={"content": "x"}, headers=evil).status_code
        == 403
    )
    other_port = {"Origin": "http://127.0.0.1:9999"}
    assert (
        served.api.post("/v1/memory", json={"content": "x"}, headers=other_port).status_code == 403
    )
    assert served.api.get("/v1/memory").json()["entries"] == []
    own = served.api.post("/v1/memory", json={"content": "mine"}, headers={"Origin": BASE})
    assert own.status_code == 201


def test_no_cors_headers_even_when_asked(served: Served) -> None:
    response = served.api.options(
        "/v1/memory",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert not any(h.lower().startswith("access-control-") for h in response.headers)
    got = served.api.get("/v1/info", headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in got.headers


def as_browser(served: Served, sid: str | None = None) -> TestClient:
    """A client holding only the given session cookie (none: a browser never logged in)."""
    client = TestClient(served.app, base_url=BASE)
    if sid is not None:
        client.cookies.set(COOKIE, sid)
    return client


def login(served: Served) -> str:
    """Open a fresh one-time login URL; the session id the cookie got."""
    response = as_browser(served).get(
        f"/login?token={served.app.state.new_login()}", follow_redirects=False
    )
    assert response.status_code == 303
    return response.cookies[COOKIE]


def test_login_url_works_once_and_sets_a_strict_httponly_session_cookie(served: Served) -> None:
    one_time = served.app.state.new_login()
    first = as_browser(served).get(f"/login?token={one_time}", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    sid = first.cookies[COOKIE]
    assert sid not in (served.token, one_time)
    assert as_browser(served, sid).get("/v1/info").status_code == 200
    reused = as_browser(served).get(f"/login?token={one_time}", follow_redirects=False)
    assert reused.status_code == 401 and COOKIE not in reused.cookies
    assert as_browser(served, "made-up").get("/v1/info").status_code == 401


def test_the_bearer_token_itself_is_not_a_login_url(served: Served) -> None:
    response = as_browser(served).get(f"/login?token={served.token}", follow_redirects=False)
    assert response.status_code == 401


def test_a_login_url_expires() -> None:
    now = [1000.0]
    auth = Auth("t" * 43, clock=lambda: now[0])
    one_time = auth.new_login()
    now[0] += LOGIN_TTL + 1
    assert auth.use_login(one_time) is None
    fresh = auth.new_login()
    now[0] += LOGIN_TTL - 1
    assert auth.use_login(fresh) is not None


def test_logout_ends_the_cookie_session(served: Served) -> None:
    sid = login(served)
    assert as_browser(served, sid).post("/logout").status_code == 204
    assert as_browser(served, sid).get("/v1/info").status_code == 401


def test_a_second_browser_logs_in_by_posting_the_token(served: Served) -> None:
    bad = as_browser(served).post("/login", data={"token": "wrong"}, follow_redirects=False)
    assert bad.status_code == 401
    good = as_browser(served).post("/login", data={"token": served.token}, follow_redirects=False)
    assert good.status_code == 303
    assert as_browser(served, good.cookies[COOKIE]).get("/v1/info").status_code == 200


def test_the_page_never_carries_the_token_and_has_security_headers(served: Served) -> None:
    one_time = served.app.state.new_login()
    sid = as_browser(served).get(f"/login?token={one_time}", follow_redirects=False).cookies[COOKIE]
    browser = as_browser(served, sid)
    page = browser.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    for secret in (served.token, one_time, sid):
        assert secret not in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "same-origin"
    assets = sorted(p.name for p in WEB_DIR.iterdir()) if WEB_DIR.is_dir() else []
    for name in assets:
        assert served.token not in browser.get(f"/{name}").text
