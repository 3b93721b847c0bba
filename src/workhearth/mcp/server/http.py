"""``/mcp``: the MCP server over streamable HTTP, for ``hearth serve`` to mount.

``hearth serve`` keeps its own Host/Origin guard in front; this endpoint adds the
token check (``authorize``) and needs :meth:`MCPEndpoint.lifespan` running for as
long as the server is up (it owns the MCP sessions' task group).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse

from workhearth.config import Config
from workhearth.mcp.server.tools import build_server

NOT_LOGGED_IN = (
    "not logged in: send Authorization: Bearer <$HEARTH_HOME/server.token>, "
    "or open the login URL `hearth serve` printed"
)


def unauthorized(detail: str) -> JSONResponse:
    """The 401 of an ``/mcp`` request without a valid token (local and team servers alike)."""
    return JSONResponse({"detail": detail}, status_code=401, headers={"WWW-Authenticate": "Bearer"})


class MCPEndpoint:
    """An ASGI app answering the streamable-HTTP MCP transport at whatever path it is routed."""

    def __init__(
        self,
        config: Config,
        workspace: Path | str,
        *,
        authorize: Callable[[Request], bool] | None = None,
    ) -> None:
        # Why not inline: many clients share this server; a slow call must not stall the rest.
        server = build_server(config, workspace, inline=False)
        # Why no DNS-rebinding check here: the host is hearth serve's to judge (its
        # Guard allows --allow-remote names the SDK's localhost list would refuse).
        server.streamable_http_app(
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
        )
        self.manager: StreamableHTTPSessionManager = server.session_manager
        self.authorize = authorize

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Run while the web server runs; MCP requests are refused outside it."""
        return self.manager.run()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.authorize is not None:
            if not self.authorize(Request(scope)):
                await unauthorized(NOT_LOGGED_IN)(scope, receive, send)
                return
        await self.manager.handle_request(scope, receive, send)


def mcp_http_app(
    config: Config,
    workspace: Path | str,
    *,
    authorize: Callable[[Request], bool] | None = None,
) -> MCPEndpoint:
    """The streamable-HTTP ASGI app of the MCP server (route it at ``/mcp``)."""
    return MCPEndpoint(config, workspace, authorize=authorize)
