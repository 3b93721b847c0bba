"""Output shapes of memory that the REST API and the MCP tools both answer with (pydantic).

Why here: the REST schemas (``server.schemas``) and the MCP tools' output schemas
(``mcp.server``, ``mcp.team``) describe the same library objects (``memory.bank.Entry``,
``memory.search.Hit``); one definition keeps the field names and types alike.
"""

from __future__ import annotations

from pydantic import BaseModel


class ProvenanceOut(BaseModel):
    snippet: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    origin: str | None = None


class EntryOut(BaseModel):
    id: str
    content: str
    level: str
    tags: list[str]
    layer: str
    path: str
    line: int
    created: float
    updated: float
    source: str
    provenance: list[ProvenanceOut]
    pending: bool


class HitOut(BaseModel):
    path: str
    line_start: int
    line_end: int
    text: str
    score: float
    level: str
    entry_id: str | None
    layer: str
    tags: list[str]


class SearchOut(BaseModel):
    results: list[HitOut]


class EntryListOut(BaseModel):
    entries: list[EntryOut]
    next_cursor: str | None
