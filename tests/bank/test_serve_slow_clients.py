"""The team server cuts slow senders too (its uvicorn is set up as ``hearth serve``'s).

The full set of slow-client cases runs against the local server
(tests/server/test_slow_clients.py); this checks the team mode's wiring.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from tests.bank.team_server import TeamServer
from tests.server.test_slow_clients import read_response, seconds_until_closed


class ShortTimeouts(TeamServer):
    def env(self) -> dict[str, str]:
        return {**super().env(), "HEARTH_CLIENT_TIMEOUTS": "1,2"}


def test_the_team_server_cuts_a_trickled_request_and_serves_a_whole_one(
    tmp_path: Path, pg_url: str
) -> None:
    server = ShortTimeouts(pg_url, tmp_path / "home", tmp_path / "serve.log")
    server.start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(b"GET /v1/info HT")
            waited, got = seconds_until_closed(sock)
        assert 0.5 <= waited < 10 and got.startswith(b"HTTP/1.1 408 ")
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(f"GET /v1/info HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            time.sleep(2.5)  # a slow reader is never cut
            assert read_response(sock)[0] in (200, 401)
    finally:
        server.stop(kill=False)
    assert "Traceback" not in server.log.read_text()
