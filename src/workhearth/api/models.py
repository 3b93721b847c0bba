"""Shapes of memory that the REST API and the MCP tools both answer with (pydantic),
and the provenance record both take.

Why here: the REST routes (``server/``) and the MCP tools' output schemas
(``mcp.server.tools``, ``mcp.server.team``) describe the same library objects
(``memory.bank.Entry``, ``memory.search.Hit``); one definition keeps the field names
and types alike.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from workhearth.memory.bank import ORIGIN_MAX, SNIPPET_MAX

# Why: ids, paths and names in a request are short; bounding them keeps a hostile
# request from making the server walk or log megabytes.
ID_MAX = 200


class ContextIn(BaseModel):
    """One provenance record of a saved sentence: where it came from.

    An item of ``POST /v1/memory``'s ``contexts`` and of the ``memory_save`` tool's.
    """

    # Why: a misspelt field must be an error, not silently ignored; an id is text.
    model_config = ConfigDict(extra="forbid", strict=True)
    snippet: str = Field(
        "", max_length=SNIPPET_MAX, description="The text the sentence came from (up to 4,000)."
    )
    session_id: str | None = Field(None, max_length=ID_MAX)
    message_id: str | None = Field(None, max_length=ID_MAX)
    origin: str | None = Field(
        None, max_length=ORIGIN_MAX, description="Free text, up to 64 characters."
    )


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


class DeletedOut(BaseModel):
    """The ``memory_delete`` tool's answer (``DELETE /v1/memory/{id}`` answers 204, no body)."""

    deleted: str
