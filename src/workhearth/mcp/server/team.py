"""``/mcp`` of a team bank server (``hearth serve --store``): the memory tools, per user.

The same tools as ``hearth mcp``'s memory face (memory_save, memory_search,
memory_list, memory_delete), on the team bank: every HTTP request carries a
team user's bearer token, checked here, and each tool call acts for the user
of the request that carried it. Why stateless: the servers keep no state of
their own, so any of them behind a load balancer can answer any call.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

from mcp.server.mcpserver import Context as McpContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.concurrency import run_in_threadpool

from workhearth.api.models import DeletedOut, EntryListOut, EntryOut, SearchOut
from workhearth.bank.server.store import PgBank
from workhearth.errors import HearthError
from workhearth.mcp.server.http import unauthorized
from workhearth.mcp.server.tools import (
    DELETE,
    READ,
    WRITE,
    Content,
    Contexts,
    Cursor,
    EntryId,
    Level,
    ListLimit,
    Query,
    SearchLimit,
    Tags,
)

T = TypeVar("T")
USER_KEY = "workhearth.team_user"
NOT_LOGGED_IN = (
    "a team token is needed: send Authorization: Bearer <the token of hearth team user add>"
)


def _user(ctx: McpContext) -> str:
    request = ctx.request_context.request
    user = request.scope.get(USER_KEY) if request is not None else None
    if not user:  # pragma: no cover - the endpoint refuses such requests first
        raise ToolError(NOT_LOGGED_IN)
    return str(user)


def _call(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except HearthError as exc:
        raise ToolError(str(exc)) from exc


def build_team_server(bank: PgBank) -> MCPServer:
    server = MCPServer(
        "workhearth-team",
        instructions=(
            "A team's shared memory bank: your own confirmed sentences, saved and found "
            "by words (Chinese included). Other users' entries are never visible."
        ),
    )

    def memory_save(
        ctx: McpContext,
        content: Content,
        level: Level = "normal",
        tags: Tags = None,
        contexts: Contexts = None,
    ) -> EntryOut:
        """Save a sentence to your team memory; saving the same sentence again returns it."""
        user = _user(ctx)
        provenance = [c.model_dump() for c in contexts or []]
        entry = _call(lambda: bank.save(user, content, level, tags or [], provenance))
        return EntryOut.model_validate(entry.as_dict())

    def memory_search(
        ctx: McpContext,
        query: Query,
        limit: SearchLimit = 6,
    ) -> SearchOut:
        """Find your team memory entries by words; best first, scores relative to the best."""
        user = _user(ctx)
        hits = _call(lambda: bank.search(user, query, limit))
        return SearchOut.model_validate({"results": [h.as_dict() for h in hits]})

    def memory_list(
        ctx: McpContext,
        limit: ListLimit = 20,
        cursor: Cursor = None,
    ) -> EntryListOut:
        """Your team memory entries, newest first, a page at a time."""
        user = _user(ctx)
        entries, nxt = _call(lambda: bank.list(user, limit, cursor or None))
        return EntryListOut.model_validate(
            {"entries": [e.as_dict() for e in entries], "next_cursor": nxt}
        )

    def memory_delete(
        ctx: McpContext,
        id: EntryId,
    ) -> DeletedOut:
        """Delete one of your team memory entries (restorable through the REST API)."""
        user = _user(ctx)
        _call(lambda: bank.delete(user, id))
        return DeletedOut(deleted=id)

    for fn, hints, title in (
        (memory_save, WRITE, "Save to memory"),
        (memory_search, READ, "Search memory"),
        (memory_list, READ, "List memory entries"),
        (memory_delete, DELETE, "Delete a memory entry"),
    ):
        server.add_tool(fn, annotations=hints, title=title)
    return server


class TeamMCPEndpoint:
    """The ASGI app at ``/mcp``: a team token's user on every request, else a 401."""

    def __init__(self, bank: PgBank) -> None:
        server = build_team_server(bank)
        server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            # Why off: the host is hearth serve's Guard's to judge (--allowed-host).
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.manager: StreamableHTTPSessionManager = server.session_manager
        self.bank = bank

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return self.manager.run()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            scheme, _, token = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
            user = None
            if scheme.lower() == "bearer" and token.strip():
                user = await run_in_threadpool(self.bank.user_for_token, token.strip())
            if user is None:
                await unauthorized(NOT_LOGGED_IN)(scope, receive, send)
                return
            scope = {**scope, USER_KEY: user}
        await self.manager.handle_request(scope, receive, send)
