"""``hearth serve``: the REST API and the web workbench on this machine, or a team's bank.

The server's own command: :mod:`workhearth.main` builds it with :func:`serve_command`,
handing it the invocation's library object, the process environment and what to mount
beside the API (the MCP server at ``/mcp``). FastAPI and uvicorn are imported inside the
command, so other commands pay nothing.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import signal
import socket
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from workhearth.errors import HearthError, UsageError

if TYPE_CHECKING:
    from workhearth.app import Workhearth
    from workhearth.server.mounts import LocalMount, TeamMount
    from workhearth.server.slow_clients import ClientTimeouts

LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765


def _bind(host: str, port: int) -> socket.socket:
    """Listen now, so a port in use is one clear line before anything is printed."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UsageError(f"cannot listen on {host!r}: {exc.strerror}") from None
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise HearthError(
                f"port {port} on {host} is in use (another hearth serve?); pick one with --port"
            ) from None
        raise HearthError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def _url_host(host: str) -> str:
    try:
        if ipaddress.ip_address(host).version == 6:
            return f"[{host}]"
    except ValueError:
        pass
    return host


def _remote_hosts(host: str) -> frozenset[str]:
    """Host names a remote browser may use for this server (the Host check allows them)."""
    names = {host.lower(), _url_host(host).lower()}
    if host in ("0.0.0.0", "::"):
        hostname = socket.gethostname()
        names.add(hostname.lower())
        try:
            names.update(str(info[4][0]) for info in socket.getaddrinfo(hostname, None))
        except OSError:
            pass
    return frozenset(names)


def _can_open_browser(env: Mapping[str, str]) -> bool:
    # Why: without a display, webbrowser may start a text browser that takes the terminal.
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def _server_class(uvicorn: Any) -> Any:
    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # Why: uvicorn re-raises SIGTERM after its graceful shutdown, so the process
            # would die by the signal (exit -15) instead of exiting 0 after a clean stop.
            wanted = (signal.SIGINT, signal.SIGTERM)
            old = {sig: signal.signal(sig, self.handle_exit) for sig in wanted}
            try:
                yield
            finally:
                for sig, handler in old.items():
                    signal.signal(sig, handler)

    return Server


def serve_command(
    hearth: Callable[[], Workhearth],
    env: Mapping[str, str],
    mounts: Mapping[str, LocalMount],
    team_mounts: Mapping[str, TeamMount],
) -> Callable[..., None]:
    """``hearth serve`` for this process: ``hearth()`` gives the invocation's library
    object, ``env`` is the process environment, the mounts are served beside the API."""

    def serve(
        host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = (
            DEFAULT_PORT
        ),
        allow_remote: Annotated[
            bool,
            typer.Option(
                "--allow-remote", help="Allow a --host other than this machine's loopback."
            ),
        ] = False,
        no_open: Annotated[
            bool, typer.Option("--no-open", help="Do not open the workbench in a browser.")
        ] = False,
        store: Annotated[
            str | None,
            typer.Option(
                "--store",
                help="Team mode: serve the team memory bank in this postgresql://… database.",
            ),
        ] = None,
        store_key_file: Annotated[
            Path | None,
            typer.Option(
                "--store-key-file", help="Team mode: the bank's encryption key ([team] key_file)."
            ),
        ] = None,
        login_url: Annotated[
            bool,
            typer.Option(
                "--login-url",
                help="Print a fresh one-time login URL for the server already running "
                "from this HEARTH_HOME, and exit.",
            ),
        ] = False,
        allowed_host: Annotated[
            list[str] | None,
            typer.Option(
                "--allowed-host",
                help="A Host name this server answers to besides localhost (repeatable; "
                "[server] allowed_hosts).",
            ),
        ] = None,
    ) -> None:
        """Serve the REST API and the web workbench (prints a one-time login URL).

        With --store, serve a team's memory bank instead (per-user tokens, no tasks).
        """
        if host not in LOOPBACK and not allow_remote:
            raise UsageError(
                f"--host {host} would let other machines reach your memory and sessions; "
                "add --allow-remote if you mean it"
            )
        if login_url:
            _print_login_url(env)
            return
        timeouts = _client_timeouts(env)
        wh = hearth()
        allowed = frozenset(
            h.strip().lower()
            for h in (*wh.config.allowed_hosts, *(allowed_host or ()))
            if h.strip()
        )
        if store is not None:
            key_file = store_key_file or wh.config.team_key_file
            _serve_team(store, key_file, host, port, allowed, timeouts, team_mounts)
            return
        browser = not no_open and _can_open_browser(env)
        _serve_local(wh, host, port, allowed, timeouts, browser, env, mounts)

    return serve


def _serve_local(
    wh: Workhearth,
    host: str,
    port: int,
    allowed: frozenset[str],
    timeouts: ClientTimeouts,
    browser: bool,
    env: Mapping[str, str],
    mounts: Mapping[str, LocalMount],
) -> None:
    """The REST API, the workbench and the mounts for this home, until Ctrl-C."""
    from workhearth.server.security import LOGIN_TTL, TOKEN_FILE, load_or_create_token

    token = load_or_create_token(wh.home)
    sock = _bind(host, port)
    port = sock.getsockname()[1]

    import uvicorn

    from workhearth.server.app import create_app

    extra = (_remote_hosts(host) if host not in LOOPBACK else frozenset()) | allowed
    app = create_app(
        wh.config,
        token=token,
        workspace=wh.workspace,
        extra_hosts=extra,
        env=env,
        mounts=mounts,
    )
    base = f"http://{_url_host('127.0.0.1' if host in ('0.0.0.0', '::') else host)}:{port}"
    # Why plain print, each on its own line: Rich would wrap a long URL at the terminal's
    # width, and a wrapped URL cannot be clicked or copied whole.
    print(f"hearth serve: workbench for {wh.workspace} on {base}/", flush=True)
    print(f"log in once with this URL (it works once, for {int(LOGIN_TTL // 60)} minutes):")
    print(f"{base}/login?token={app.state.new_login()}", flush=True)
    print(f"API: Authorization: Bearer <{wh.home / TOKEN_FILE}>   stop: Ctrl-C", flush=True)
    if host not in LOOPBACK:
        print(
            f"hearth: warning: listening on {host}: other machines can reach this server "
            "(the token still guards it, but traffic is not encrypted)",
            file=sys.stderr,
            flush=True,
        )
    if browser:
        import webbrowser

        # Why a second login token: the printed URL stays usable if the browser
        # opened is not the one the user wants.
        webbrowser.open(f"{base}/login?token={app.state.new_login()}")
    config = _uvicorn_config(uvicorn, app, timeouts)

    class Server(_server_class(uvicorn)):  # type: ignore[misc]
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Why: end the open task streams first, so Ctrl-C never has to cancel them.
            if app.state.tasks is not None:
                app.state.tasks.end_streams()
            await super().shutdown(sockets)

    server = Server(config)
    from workhearth.server.running import clear_running, mark_running

    mark_running(wh.home, base)
    try:
        server.run(sockets=[sock])
    finally:
        clear_running(wh.home)
        sock.close()
    if getattr(server, "started", True) is False:
        raise typer.Exit(1)


def _print_login_url(env: Mapping[str, str]) -> None:
    """Ask the server running from this home for a one-time login URL, and print it alone."""
    import httpx

    from workhearth.config import default_home
    from workhearth.server.running import running_url
    from workhearth.server.security import TOKEN_FILE

    home = default_home(env)
    url = running_url(home)
    none = f"no hearth serve is running from {home} (start one with: hearth serve)"
    if url is None:
        raise NotRunning(none)
    try:
        token = (home / TOKEN_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeError) as exc:
        raise UsageError(f"cannot read {home / TOKEN_FILE}: {exc}") from None
    try:
        answer = httpx.post(
            f"{url}/v1/logins", headers={"Authorization": f"Bearer {token}"}, timeout=10
        )
    except httpx.HTTPError:
        raise NotRunning(none) from None
    if answer.status_code != 201:
        raise NotRunning(f"the server at {url} refused a login URL ({answer.status_code})")
    # Why plain print: a wrapped URL cannot be clicked or copied whole.
    print(answer.json()["url"], flush=True)


class NotRunning(HearthError):
    """``--login-url`` found no server to ask (exit 1)."""

    exit_code = 1


def _client_timeouts(env: Mapping[str, str]) -> ClientTimeouts:
    """10 s for a request's head, 30 s for its body; ``HEARTH_CLIENT_TIMEOUTS=H,B`` (tests)."""
    from workhearth.server.slow_clients import ClientTimeouts

    value = env.get("HEARTH_CLIENT_TIMEOUTS", "").strip()
    if not value:
        return ClientTimeouts()
    try:
        headers, body = (float(part) for part in value.split(","))
    except ValueError:
        headers = body = 0.0
    if not (0 < headers <= 3600 and 0 < body <= 3600):
        raise UsageError(f"HEARTH_CLIENT_TIMEOUTS must be HEADERS,BODY in seconds, not {value!r}")
    return ClientTimeouts(headers, body)


def _uvicorn_config(uvicorn: Any, app: Any, timeouts: ClientTimeouts) -> Any:
    """How both modes run uvicorn.

    Why a graceful-shutdown timeout: a page's open task stream (SSE) never ends by
    itself, and without one Ctrl-C waits for it forever before the lifespan stops
    tasks. Why no proxy headers: nothing stands in front of a local server, and any
    local process could otherwise name the client address (X-Forwarded-For); a
    team server behind a proxy logs no client addresses either. Why our own HTTP
    protocol: uvicorn never cuts a client that trickles its request (slowloris).
    """
    from workhearth.server.slow_clients import timed_protocol

    return uvicorn.Config(
        app,
        http=timed_protocol(timeouts),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=3,
        proxy_headers=False,
        server_header=False,
    )


def _serve_team(
    store: str,
    key_file: Path | None,
    host: str,
    port: int,
    allowed: frozenset[str],
    timeouts: ClientTimeouts,
    mounts: Mapping[str, TeamMount],
) -> None:
    """Team mode: the bank API on PostgreSQL; refuses to start on a damaged database."""
    from workhearth.bank.server.store import PgBank, check_url, where

    check_url(store)
    key = None
    if key_file is not None:
        from workhearth.bank.server.crypto import read_key_file

        key = read_key_file(key_file)
    # Why before binding: a missing search index or a wrong key is one line and exit 1.
    bank = PgBank(store, key=key)
    try:
        sock = _bind(host, port)
    except BaseException:
        bank.close()
        raise
    port = sock.getsockname()[1]

    import uvicorn

    from workhearth.server.team import create_team_app

    extra = (_remote_hosts(host) if host not in LOOPBACK else frozenset()) | allowed
    app = create_team_app(bank, extra_hosts=extra, mounts=mounts)
    base = f"http://{_url_host('127.0.0.1' if host in ('0.0.0.0', '::') else host)}:{port}"
    sealed = "encrypted" if key is not None else "not encrypted"
    print(f"hearth serve: team bank {where(store)} ({sealed}) on {base}/", flush=True)
    print("API: Authorization: Bearer <a token of hearth team user add>   stop: Ctrl-C", flush=True)
    if host not in LOOPBACK:
        print(
            f"hearth: warning: listening on {host}: put TLS in front (tokens travel in clear)",
            file=sys.stderr,
            flush=True,
        )
    server = _server_class(uvicorn)(_uvicorn_config(uvicorn, app, timeouts))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if getattr(server, "started", True) is False:
        raise typer.Exit(1)
