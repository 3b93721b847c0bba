"""MCP client: the servers hearth's agent may use, started lazily, in parallel, restarted after a crash.

Servers come from ``[mcp.servers.NAME]`` in ``config.toml`` and from the workspace's
``.mcp.json`` (``{"mcpServers": {NAME: …}}``, the file Claude Code and Qwen Code read),
``config.toml`` winning on a name clash with a warning. A folder's ``.mcp.json`` is
read only once the user trusts the folder (:mod:`workhearth.trust`), its ``${VAR}``
only expanded then, and a ``trust`` key in it is never honoured. Every server starts
with a minimal environment (:func:`server_environment`), never the user's secrets.

The agent is synchronous and the SDK is async, so one event loop runs in a daemon
thread; each server is one task there that holds its transport and session open
(anyio scopes must be left by the task that entered them) until it is stopped or
its connection drops. Calls are submitted from any thread.

Startup (why it is this way): the tool list must be known before the first prompt.
A server whose tool list is cached on disk (``$HEARTH_HOME/cache/mcp/``, keyed by a
hash of its whole config) is not started at all until a call needs it; one without a
cache is started at once, all of them in parallel, and a run waits at most
``[mcp] start_budget`` seconds for them. A server still starting after that is left
out of this run (with a warning) but keeps starting in the background, and its list
is cached for the next run. So a slow server never delays a run that does not use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from workhearth.config import Config, McpServerConfig, mcp_server_config
from workhearth.errors import ConfigError, HearthError
from workhearth.fsutil import atomic_write, make_private_dir
from workhearth.mcp.client.processes import GRACE, TERM_WAIT
from workhearth.procgroups import ProcessGroups
from workhearth.trust import MCP_JSON, FolderTrust, file_digest

# Why: fields other clients keep in .mcp.json that mean nothing here; ignored silently.
_FOREIGN_KEYS = frozenset(
    {"cwd", "description", "includeTools", "excludeTools", "disabled", "oauth"}
)
# Why: a folder cannot vouch for its own servers; only config.toml can (DESIGN §5).
_USER_ONLY_KEYS = frozenset({"trust", "read_only_tools", "readOnlyTools", "autoApprove"})
# What a server process inherits from hearth's environment: enough to find programs
# and speak the user's language, nothing that could hold a secret.
SERVER_ENV_NAMES = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
START_TIMEOUT = 30.0  # seconds a (re)start may take when a call needs the server
Warn = Callable[[str], None]


class McpError(HearthError):
    """An MCP server could not be started or reached."""


# ------------------------------------------------------------------ config


def _expand(value: str, env: Mapping[str, str]) -> str:
    """``${VAR}`` and ``${VAR:-default}``, as Claude Code expands them in .mcp.json."""
    return _VAR.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)


def _expand_all(value: Any, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _expand(value, env)
    if isinstance(value, list):
        return [_expand_all(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _expand_all(v, env) for k, v in value.items()}
    return value


def server_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables every MCP server starts with (its own ``env`` table adds to them)."""
    return {name: env[name] for name in SERVER_ENV_NAMES if name in env}


def read_mcp_json(
    path: Path, env: Mapping[str, str] | None, warn: Warn, *, trusted_hash: str | None = None
) -> dict[str, McpServerConfig]:
    """The servers of one ``.mcp.json``; a missing file is none, a broken one a ConfigError.

    ``env`` expands ``${VAR}``; None leaves every value as written (an untrusted
    folder's file is shown, never filled with the user's variables). With
    ``trusted_hash``, the bytes read must be the ones the user trusted (a file swapped
    after the trust check is left out, with a warning).
    """
    data = _read_trusted(path, warn, trusted_hash)
    if data is None:
        return {}
    found: dict[str, McpServerConfig] = {}
    for name, table in _servers_object(path, data).items():
        where = f'{path}: mcpServers["{name}"]'
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be an object")
        found[name] = mcp_server_config(
            name, _server_table(name, table, where, env, warn), str(path), where
        )
    return found


def _read_trusted(path: Path, warn: Warn, trusted_hash: str | None) -> bytes | None:
    """The file's bytes; None when it is missing or not the version the user trusted."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: not a readable JSON file ({exc})") from None
    if trusted_hash is not None and file_digest(data) != trusted_hash:
        warn(f"{path} changed since you trusted it; its servers are left out of this run")
        return None
    return data


def _servers_object(path: Path, data: bytes) -> dict[str, Any]:
    """The ``mcpServers`` object of the file's JSON (none is an empty one)."""
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable JSON file ({exc})") from None
    servers = raw.get("mcpServers", {}) if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: "mcpServers" must be an object of servers')
    return servers


def _server_table(
    name: str, table: dict[str, Any], where: str, env: Mapping[str, str] | None, warn: Warn
) -> dict[str, Any]:
    """One server's entry as a config table: user-only and foreign keys dropped, ``${VAR}``
    expanded when ``env`` is given, Qwen Code's spellings translated, unknown keys dropped."""
    vouched = sorted(k for k in table if k in _USER_ONLY_KEYS)
    if vouched:
        warn(
            f"{where}: ignoring {', '.join(vouched)}: only config.toml can trust a server "
            f"([mcp.servers.{name}] trust / read_only_tools)"
        )
    if env is not None:
        table = _expand_all(table, env)
    table = {k: v for k, v in table.items() if k not in _FOREIGN_KEYS and k not in _USER_ONLY_KEYS}
    _translate_qwen_keys(table)
    unknown = sorted(k for k in table if k not in _KNOWN)
    if unknown:
        warn(f"{where}: ignoring unknown keys: {', '.join(unknown)}")
        table = {k: v for k, v in table.items() if k in _KNOWN}
    return table


def _translate_qwen_keys(table: dict[str, Any]) -> None:
    """Qwen Code's ``httpUrl`` (a streamable-HTTP url) and ``timeout`` in milliseconds."""
    if "httpUrl" in table:
        table.setdefault("url", table.pop("httpUrl"))
        table.setdefault("type", "http")
    if "timeout" in table:
        ms = table.pop("timeout")
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms > 0:
            table["timeout"] = ms / 1000


_KNOWN = frozenset({"type", "command", "args", "env", "url", "headers", "timeout"})


def configured_servers(
    config: Config,
    workspace: Path,
    env: Mapping[str, str],
    warn: Warn,
    trust: FolderTrust | None = None,
) -> dict[str, McpServerConfig]:
    """config.toml's servers, then the workspace's ``.mcp.json`` (config.toml wins a clash).

    The ``.mcp.json`` counts only when ``trust`` says the user trusted it as it is now.
    """
    servers = dict(config.mcp.servers)
    if trust is None or not trust.allows(MCP_JSON):
        return servers
    found = read_mcp_json(
        trust.folder / MCP_JSON, env, warn, trusted_hash=trust.trusted.get(MCP_JSON)
    )
    for name, spec in found.items():
        if name in servers:
            warn(
                f"MCP server {name!r} is in both {servers[name].source} and {spec.source}; "
                "using the one in config.toml"
            )
            continue
        servers[name] = spec
    return servers


def config_key(spec: McpServerConfig) -> str:
    """A hash of everything that could change a server's tools (the cache key)."""
    data = asdict(spec)
    data.pop("source", None)
    data.pop("timeout", None)
    blob = json.dumps(data, sort_keys=True, default=list).encode()
    return hashlib.sha256(blob).hexdigest()[:24]


# ------------------------------------------------------------------ tools


@dataclass(frozen=True)
class RemoteTool:
    """A tool as one server offers it."""

    server: str
    name: str
    description: str
    input_schema: dict[str, Any]
    # The server's own readOnlyHint: shown to the user, never trusted (DESIGN §5);
    # what may run unasked is the user's [mcp.servers.NAME] read_only_tools / trust.
    read_only_hint: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _remote_tool(server: str, tool: Any) -> RemoteTool:
    annotations = getattr(tool, "annotations", None)
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    return RemoteTool(
        server=server,
        name=tool.name,
        description=(tool.description or getattr(tool, "title", None) or "").strip(),
        input_schema=schema or {"type": "object", "properties": {}},
        read_only_hint=bool(annotations is not None and annotations.read_only_hint is True),
    )


@dataclass(frozen=True)
class CallOutcome:
    text: str
    is_error: bool


def _result_text(result: Any) -> CallOutcome:
    parts: list[str] = []
    for item in result.content or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource" and hasattr(item.resource, "text"):
            parts.append(item.resource.text)
        else:
            parts.append(f"[{kind or 'content'}: {getattr(item, 'mime_type', '') or 'not text'}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return CallOutcome("\n".join(parts), bool(result.is_error))


# ------------------------------------------------------------------ connections


@dataclass
class _Conn:
    """One server's live state, touched only on the event loop."""

    spec: McpServerConfig
    session: Any = None
    ready: asyncio.Future[list[RemoteTool]] | None = None
    stop: asyncio.Event | None = None
    task: asyncio.Task[None] | None = None
    errlog: Any = None
    process: Any = None  # a stdio server's ServerProcess
    started_at: float = 0.0
    tools: list[RemoteTool] = field(default_factory=list)


def _last_stderr(errlog: Any) -> str:
    if errlog is None:
        return ""
    try:
        errlog.flush()
        errlog.seek(0)
        lines = [line.strip() for line in errlog.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1][:300] if lines else ""


class MCPServers:
    """The configured servers of one process: tool lists, calls, restarts, shutdown."""

    def __init__(
        self,
        specs: Mapping[str, McpServerConfig],
        *,
        cache_dir: Path | None,
        env: Mapping[str, str],
        cwd: Path,
        call_timeout: float = 60.0,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        self.specs = dict(specs)
        self.cache_dir = cache_dir
        self.env = dict(env)
        self.cwd = cwd
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout  # past it, a server still starting is ended
        self._conns = {name: _Conn(spec) for name, spec in self.specs.items()}
        # Why: each stdio server's process group is recorded there, so the next run can
        # end a group that a SIGKILLed hearth left behind (workhearth.procgroups).
        self._groups = ProcessGroups(cache_dir / "running" if cache_dir is not None else None)
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ loop
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            self._groups.end_orphans()
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="hearth-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _submit(self, coro: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    def close(self) -> None:
        """Stop every server and the loop thread; no server process outlives this."""
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(Exception):
                self._submit(self._stop_all()).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._loop = None
        # Why: a group the loop could not end in time is killed here, never left running.
        self._groups.end_all()
        self._closing = False

    async def _stop_all(self) -> None:
        self._closing = True  # Why: a start already on its way must not begin a new server
        tasks = []
        for conn in self._conns.values():
            if conn.task is None or conn.task.done():
                continue
            if conn.stop is not None:
                conn.stop.set()  # the MCP shutdown: stdin closed, a grace period, then signals
            if not _answered(conn):
                # Why: a server still starting is not waited for; its group is killed at once
                # (its stdout ends, so the start fails at once and the task ends).
                if conn.process is not None:
                    conn.process.kill()
                else:
                    conn.task.cancel()
            tasks.append(conn.task)
        if tasks:
            await asyncio.wait(tasks, timeout=GRACE + TERM_WAIT + 2)
        for conn in self._conns.values():
            if conn.ready is not None and not conn.ready.done():
                conn.ready.set_exception(McpError(f"MCP server {conn.spec.name!r} was stopped"))
        # Why: the waiters of those starts must see their outcome before the loop stops,
        # or asyncio logs "exception was never retrieved" on hearth's stderr at exit.
        others = asyncio.all_tasks() - {asyncio.current_task()}
        if others:
            await asyncio.wait(others, timeout=1)
        await asyncio.sleep(0)

    # ------------------------------------------------------------ cache
    def _cache_file(self, spec: McpServerConfig) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{config_key(spec)}.json"

    def cached_tools(self, name: str) -> list[RemoteTool] | None:
        path = self._cache_file(self.specs[name])
        if path is None:
            return None
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
            return [RemoteTool(**{**row, "server": name}) for row in rows["tools"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def _save_cache(self, name: str, tools: list[RemoteTool]) -> None:
        path = self._cache_file(self.specs[name])
        if path is None:
            return
        try:
            make_private_dir(path.parent)
            data = {"server": name, "tools": [t.as_dict() for t in tools]}
            atomic_write(path, json.dumps(data, ensure_ascii=False).encode())
        except OSError:
            pass  # Why: the cache only saves waiting; a read-only home must not fail a run

    # ------------------------------------------------------------ lifecycle (loop side)
    def _transport(self, spec: McpServerConfig, conn: _Conn) -> Any:
        if spec.transport == "stdio":
            from workhearth.mcp.client.stdio import ServerProcess

            conn.errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            conn.process = process = ServerProcess(
                [spec.command or "", *spec.args],
                env={**self.env, **spec.env},
                cwd=self.cwd,
                errlog=conn.errlog,
                groups=self._groups,
            )
            return process.streams()
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url or "", headers=dict(spec.headers))
        return _http_transport(spec)

    async def _hold(self, conn: _Conn) -> None:
        """Open the connection, list the tools, then keep it open until told to stop."""
        import anyio

        from mcp import ClientSession

        assert conn.ready is not None and conn.stop is not None
        try:
            if conn.stop.is_set():  # Why: stopped before this task ever ran
                raise McpError("stopped before it started")
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(conn.spec, conn))
                session = await stack.enter_async_context(ClientSession(read, write))
                # Why: a server that never answers is ended (its whole group), not kept.
                with anyio.fail_after(self.start_timeout):
                    tools = await _initialize(session, conn.spec.name)
                conn.session, conn.tools = session, tools
                self._save_cache(conn.spec.name, tools)
                if not conn.ready.done():
                    conn.ready.set_result(tools)
                await conn.stop.wait()
        except BaseException as exc:
            if conn.ready is not None and not conn.ready.done():
                late = TimeoutError(f"no answer within {self.start_timeout:g} s")
                why = late if isinstance(_first(exc), TimeoutError) else exc
                conn.ready.set_exception(self._start_error(conn, why))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            conn.session = None

    def _start_error(self, conn: _Conn, exc: BaseException) -> McpError:
        spec = conn.spec
        what = f"{spec.command} {' '.join(spec.args)}".strip() if spec.command else spec.url
        detail = _describe(exc)
        said = _last_stderr(conn.errlog)
        tail = f"; it said: {said}" if said and said not in detail else ""
        return McpError(f"MCP server {spec.name!r} ({what}) could not start: {detail}{tail}")

    async def _ensure(self, name: str) -> _Conn:
        """The server running, started (or restarted) when it is not."""
        conn = self._conns[name]
        if self._closing:
            raise McpError(f"MCP server {name!r} was stopped")
        if conn.ready is not None and conn.ready.done():
            failed = conn.ready.cancelled() or conn.ready.exception() is not None
            if not failed and conn.session is not None and conn.task and not conn.task.done():
                return conn
            # Why: a failed or dead connection is started anew on the next use.
            await self._retire(conn)
        if conn.task is None:
            loop = asyncio.get_running_loop()
            conn.ready, conn.stop = loop.create_future(), asyncio.Event()
            conn.started_at = time.monotonic()
            conn.task = loop.create_task(self._hold(conn))
        assert conn.ready is not None
        await asyncio.shield(conn.ready)
        return conn

    async def _retire(self, conn: _Conn) -> None:
        if conn.stop is not None:
            conn.stop.set()
        if conn.task is not None and not conn.task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(conn.task), 8)
        if conn.ready is not None and conn.ready.done() and not conn.ready.cancelled():
            conn.ready.exception()  # Why: mark a failed start's error as seen
        conn.task = conn.ready = conn.stop = None
        conn.session = None

    async def _start(self, name: str, seconds: float) -> list[RemoteTool]:
        conn = await asyncio.wait_for(self._ensure(name), seconds)
        return list(conn.tools)

    async def _call(
        self, name: str, tool: str, arguments: dict[str, Any], seconds: float
    ) -> CallOutcome:
        from mcp.shared.exceptions import MCPError

        conn = await asyncio.wait_for(self._ensure(name), START_TIMEOUT)
        try:
            result = await conn.session.call_tool(tool, arguments, read_timeout_seconds=seconds)
        except MCPError as exc:
            if "timed out" in str(exc).lower():
                return CallOutcome(
                    f"{tool} on MCP server {name!r} timed out after {seconds:g} s", True
                )
            said = _last_stderr(conn.errlog)
            await self._retire(conn)
            note = f" (it said: {said})" if said else ""
            return CallOutcome(
                f"MCP server {name!r} failed during the call to {tool}: {exc}{note}; "
                "it will be restarted on the next use",
                True,
            )
        return _result_text(result)

    # ------------------------------------------------------------ public (any thread)
    def start(self, names: list[str]) -> dict[str, Future[list[RemoteTool]]]:
        """Start ``names`` in parallel now; one future of its tool list per server."""
        self._groups.end_orphans()  # Why: also when every list is cached and nothing starts
        return {n: self._submit(self._start(n, START_TIMEOUT)) for n in names}

    def tool_lists(self, budget: float, warn: Warn | None = None) -> dict[str, list[RemoteTool]]:
        """Every server's tools: from the cache, else started now and waited for ≤ ``budget`` s."""
        lists: dict[str, list[RemoteTool]] = {}
        missing = []
        for name in self.specs:
            cached = self.cached_tools(name)
            if cached is not None:
                lists[name] = cached
            else:
                missing.append(name)
        futures = self.start(missing)
        deadline = time.monotonic() + budget
        for name, future in futures.items():
            try:
                lists[name] = future.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                if warn:
                    warn(f"MCP server {name!r} is still starting; its tools join the next run")
            except Exception as exc:
                if warn:
                    warn(str(exc))
        return lists

    def list_tools(self, name: str, timeout: float = START_TIMEOUT) -> list[RemoteTool]:
        """Start ``name`` (if needed) and return its live tool list; McpError if it fails."""
        self._known(name)
        try:
            return self._submit(self._start(name, timeout)).result(timeout + 5)
        except (TimeoutError, FutureTimeout):
            raise McpError(f"MCP server {name!r} did not answer within {timeout:g} s") from None

    def call(self, name: str, tool: str, arguments: Mapping[str, Any]) -> CallOutcome:
        """Call one tool; every failure (start, crash, timeout) is an error outcome, never raised."""
        self._known(name)
        spec = self.specs[name]
        timeout = spec.timeout or self.call_timeout
        future = self._submit(self._call(name, tool, dict(arguments), timeout))
        try:
            return future.result(timeout=timeout + START_TIMEOUT + 5)
        except (TimeoutError, FutureTimeout):
            future.cancel()
            return CallOutcome(f"MCP server {name!r} did not answer in time", True)
        except McpError as exc:
            return CallOutcome(f"{exc}; it will be tried again on the next use", True)
        except Exception as exc:
            return CallOutcome(f"MCP server {name!r}: {_describe(exc)}", True)

    def _known(self, name: str) -> None:
        if name not in self.specs:
            known = ", ".join(sorted(self.specs)) or "none"
            raise McpError(f"no MCP server named {name!r} (configured: {known})")


def _first(exc: BaseException) -> BaseException:
    """The first exception inside anyio's (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _answered(conn: _Conn) -> bool:
    """Whether the server's start succeeded (it answered and listed its tools)."""
    ready = conn.ready
    return ready is not None and ready.done() and not ready.cancelled() and not ready.exception()


async def _initialize(session: Any, server: str) -> list[RemoteTool]:
    """The MCP handshake, then every page of the server's tool list."""
    await session.initialize()
    tools: list[RemoteTool] = []
    cursor = None
    while True:
        page = await session.list_tools(params=_page(cursor) if cursor is not None else None)
        tools += [_remote_tool(server, t) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return tools


def _page(cursor: str) -> Any:
    from mcp.types import PaginatedRequestParams

    return PaginatedRequestParams(cursor=cursor)


@contextlib.asynccontextmanager
async def _http_transport(spec: McpServerConfig) -> Any:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with create_mcp_http_client(headers=dict(spec.headers)) as client:
        async with streamable_http_client(spec.url or "", http_client=client) as streams:
            yield streams


def _describe(exc: BaseException) -> str:
    """One line for an exception, unwrapping anyio's exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def open_servers(
    config: Config,
    workspace: Path,
    env: Mapping[str, str],
    warn: Warn,
    trust: FolderTrust | None = None,
) -> MCPServers:
    """The servers configured for ``workspace`` (none is fine: every call then fails cleanly)."""
    return servers_of(
        config, workspace, env, configured_servers(config, workspace, env, warn, trust)
    )


def servers_of(
    config: Config, workspace: Path, env: Mapping[str, str], specs: Mapping[str, McpServerConfig]
) -> MCPServers:
    """``specs`` as servers started in ``workspace`` with the minimal environment."""
    return MCPServers(
        specs,
        cache_dir=config.home / "cache" / "mcp",
        env=server_environment(env),
        cwd=workspace,
        call_timeout=config.mcp.call_timeout,
    )


__all__ = [
    "MCP_JSON",
    "CallOutcome",
    "MCPServers",
    "McpError",
    "RemoteTool",
    "config_key",
    "configured_servers",
    "open_servers",
    "read_mcp_json",
    "server_environment",
    "servers_of",
]
