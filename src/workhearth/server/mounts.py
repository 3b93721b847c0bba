"""What a server serves beside its own routes: an ASGI endpoint at a path (the MCP server at ``/mcp``).

The server does not build them: the MCP server is a surface of its own (DESIGN §7), and
whoever starts the server (:mod:`workhearth.main`) hands ``create_app`` and
``create_team_app`` a mount per path. The server builds each for itself, puts it behind
its own guards, and runs its lifespan for as long as it runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.routing import Route

from workhearth.config import Config

if TYPE_CHECKING:
    from fastapi import FastAPI

    from workhearth.bank.server.store import PgBank


class Endpoint(Protocol):
    """An ASGI app that needs its lifespan running while the server runs (MCP's sessions)."""

    def lifespan(self) -> AbstractAsyncContextManager[None]: ...

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None: ...


# A local server's mount: its config and default workspace, and whether a request carries
# the server's token or login cookie (the mount answers only those, as /v1 does).
LocalMount = Callable[[Config, Path, Callable[[Request], bool]], Endpoint]
# A team server's mount, over the team bank (it checks the team's tokens itself).
TeamMount = Callable[["PgBank"], Endpoint]


@contextlib.asynccontextmanager
async def running(endpoints: Iterable[Endpoint]) -> AsyncIterator[None]:
    """Every endpoint's lifespan, for as long as the server runs."""
    async with contextlib.AsyncExitStack() as stack:
        for endpoint in endpoints:
            await stack.enter_async_context(endpoint.lifespan())
        yield


def add_routes(app: FastAPI, endpoints: Mapping[str, Endpoint]) -> None:
    # Why a plain ASGI route: a Mount would redirect /mcp to /mcp/.
    for path, endpoint in endpoints.items():
        app.router.routes.append(Route(path, endpoint=endpoint))
