"""The real ``hearth serve``: the login URL line, a clean SIGTERM exit, a port in use."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

from tests.e2e.conftest import HEARTH_CMD, make_hearth

URL_LINE = re.compile(r"http://127\.0\.0\.1:(\d+)/login\?token=[A-Za-z0-9_\-]{20,}")


def test_serve_prints_the_login_url_alone_and_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    hearth = make_hearth(tmp_path)
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", "0", "--no-open"],
        cwd=hearth.workspace,
        # Why a narrow terminal: the URL must stay whole on its line whatever the width.
        env={**hearth.env, "COLUMNS": "20"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().rstrip("\n") for _ in range(3)]
        url = next((line for line in lines if URL_LINE.fullmatch(line)), None)
        assert url is not None, lines
        port = int(URL_LINE.fullmatch(url).group(1))  # type: ignore[union-attr]
        token = (hearth.home / "server.token").read_text().strip()
        assert token not in "\n".join(lines)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            deadline = time.monotonic() + 30
            while True:
                try:
                    first = client.get(url, follow_redirects=False)
                    break
                except httpx.ConnectError:
                    assert time.monotonic() < deadline
                    time.sleep(0.1)
            assert first.status_code == 303 and "hearth_session" in first.cookies
            assert client.get(url, follow_redirects=False).status_code == 401  # used once
            info = client.get("/v1/info", headers={"Authorization": f"Bearer {token}"})
            assert info.status_code == 200 and info.json()["workspace"] == str(hearth.workspace)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_port_in_use_is_one_clear_line_and_a_failure(tmp_path: Path) -> None:
    hearth = make_hearth(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = hearth.run("serve", "--port", str(port), "--no-open")
    assert result.code != 0
    assert result.err_lines == [
        f"hearth: port {port} on 127.0.0.1 is in use (another hearth serve?); pick one with --port"
    ]
    assert "login" not in result.out


def test_another_interface_needs_allow_remote(tmp_path: Path) -> None:
    hearth = make_hearth(tmp_path)
    result = hearth.run("serve", "--host", "0.0.0.0", "--no-open")
    assert result.code == 2 and len(result.err_lines) == 1
    assert "--allow-remote" in result.err_lines[0]


def test_allowed_hosts_extend_the_host_check_in_local_mode_too(tmp_path: Path) -> None:
    hearth = make_hearth(tmp_path)
    hearth.home.mkdir()
    (hearth.home / "config.toml").write_text('[server]\nallowed_hosts = ["box.lan"]\n')
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", "0", "--no-open", "--allowed-host", "Hearth.Local"],
        cwd=hearth.workspace,
        env=hearth.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(re.search(r":(\d+)/", proc.stdout.readline()).group(1))  # type: ignore[union-attr]
        token = (hearth.home / "server.token").read_text().strip()
        auth = {"Authorization": f"Bearer {token}"}
        url = f"http://127.0.0.1:{port}/v1/info"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url, headers=auth, timeout=10)
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        for host, status in (("hearth.local", 200), ("box.lan:80", 200), ("other.lan", 421)):
            assert httpx.get(url, headers={**auth, "Host": host}).status_code == status, host
    finally:
        proc.kill()
        proc.wait()
