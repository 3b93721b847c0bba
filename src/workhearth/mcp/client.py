"""MCP client: the servers hearth's agent may use, started lazily, in parallel, restarted after a crash.

Servers come from ``[mcp.servers.NAME]`` in ``config.toml`` and from the workspace's
``.mcp.json`` (``{"mcpServers": {NAME: …}}``, the file Claude Code and Qwen Code read),
``config.toml`` winning on a name clash with a warning.

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

MCP_JSON = ".mcp.json"
# Why: fields other clients keep in .mcp.json that mean nothing here; ignored silently.
_FOREIGN_KEYS = frozenset(
    {"cwd", "trust", "description", "includeTools", "excludeTools", "disabled", "oauth"}
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


def read_mcp_json(path: Path, env: Mapping[str, str], warn: Warn) -> dict[str, McpServerConfig]:
    """The servers of one ``.mcp.json``; a missing file is none, a broken one a ConfigError."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable JSON file ({exc})") from None
    servers = raw.get("mcpServers", {}) if isinstance(raw, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{path}: "mcpServers" must be an object of servers')
    found: dict[str, McpServerConfig] = {}
    for name, table in servers.items():
        where = f'{path}: mcpServers["{name}"]'
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be an object")
        table = {k: v for k, v in _expand_all(table, env).items() if k not in _FOREIGN_KEYS}
        if "httpUrl" in table:  # Qwen Code's name for a streamable-HTTP url
            table.setdefault("url", table.pop("httpUrl"))
            table.setdefault("type", "http")
        if "timeout" in table:  # Qwen Code: milliseconds
            ms = table.pop("timeout")
            if isinstance(ms, int | float) and not isinstance(ms, bool) and ms > 0:
                table["timeout"] = ms / 1000
        unknown = sorted(k for k in table if k not in _KNOWN)
        if unknown:
            warn(f"{where}: ignoring unknown keys: {', '.join(unknown)}")
            table = {k: v for k, v in table.items() if k in _KNOWN}
        found[name] = mcp_server_config(name, table, str(path), where)
    return found


_KNOWN = frozenset({"type", "command", "args", "env", "url", "headers", "timeout"})


def configured_servers(
    config: Config, workspace: Path, env: Mapping[str, str], warn: Warn
) -> dict[str, McpServerConfig]:
    """config.toml's servers, then the workspace's ``.mcp.json`` (config.toml wins a clash)."""
    servers = dict(config.mcp.servers)
    for name, spec in read_mcp_json(workspace / MCP_JSON, env, warn).items():
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
    read_only: bool  # annotated readOnlyHint; anything else counts as a write

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
        read_only=bool(annotations is not None and annotations.read_only_hint is True),
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
    ) -> None:
        self.specs = dict(specs)
        self.cache_dir = cache_dir
        self.env = dict(env)
        self.cwd = cwd
        self.call_timeout = call_timeout
        self._conns = {name: _Conn(spec) for name, spec in self.specs.items()}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ loop
    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="hearth-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _submit(self, coro: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._ensure_loop())

    def close(self) -> None:
        """Stop every server (their processes end) and the loop thread."""
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(Exception):
            self._submit(self._stop_all()).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._loop = None

    async def _stop_all(self) -> None:
        tasks = []
        for conn in self._conns.values():
            if conn.stop is not None:
                conn.stop.set()
            if conn.task is not None:
                tasks.append(conn.task)
        if tasks:
            await asyncio.wait(tasks, timeout=8)

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
            from mcp.client.stdio import StdioServerParameters, stdio_client

            conn.errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            params = StdioServerParameters(
                command=spec.command or "",
                args=list(spec.args),
                env={**self.env, **spec.env},
                cwd=self.cwd,
            )
            return stdio_client(params, errlog=conn.errlog)
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url or "", headers=dict(spec.headers))
        return _http_transport(spec)

    async def _hold(self, conn: _Conn) -> None:
        """Open the connection, list the tools, then keep it open until told to stop."""
        from mcp import ClientSession

        assert conn.ready is not None and conn.stop is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(conn.spec, conn))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                tools: list[RemoteTool] = []
                cursor = None
                while True:
                    page = await session.list_tools(
                        params=_page(cursor) if cursor is not None else None
                    )
                    tools += [_remote_tool(conn.spec.name, t) for t in page.tools]
                    cursor = page.next_cursor
                    if not cursor:
                        break
                conn.session, conn.tools = session, tools
                self._save_cache(conn.spec.name, tools)
                if not conn.ready.done():
                    conn.ready.set_result(tools)
                await conn.stop.wait()
        except BaseException as exc:
            if conn.ready is not None and not conn.ready.done():
                conn.ready.set_exception(self._start_error(conn, exc))
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


def open_servers(config: Config, workspace: Path, env: Mapping[str, str], warn: Warn) -> MCPServers:
    """The servers configured for ``workspace`` (none is fine: every call then fails cleanly)."""
    specs = configured_servers(config, workspace, env, warn)
    return MCPServers(
        specs,
        cache_dir=config.home / "cache" / "mcp",
        env=env,
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
]
