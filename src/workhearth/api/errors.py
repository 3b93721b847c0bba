"""The answer to an unknown memory entry id, the same from the REST API and the MCP tools."""

from __future__ import annotations

from workhearth.errors import NotFoundError

# Why one text for unknown and malformed ids: an answer never says whether an id
# exists elsewhere (another workspace, another team user).
NO_ENTRY = "no such memory entry"


class MemoryNotFound(NotFoundError):
    def __init__(self) -> None:
        super().__init__(NO_ENTRY)
