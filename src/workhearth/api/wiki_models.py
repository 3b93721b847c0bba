"""Wire shapes of the Repowiki (issue 24): ``GET /v1/wiki``, ``GET /v1/wiki/{page}`` and the
``wiki_read`` MCP tool; a search answers with memory's ``SearchOut`` (its hits are memory hits).

Why here: the REST routes and the MCP tool describe the same library objects
(``wiki.PageInfo``, ``wiki.WikiPage``); one definition keeps their fields alike.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class WikiSourceOut(BaseModel):
    path: str = Field(description="Workspace-relative POSIX path of a file the page summarizes.")
    sha256: str = Field(description="The file's content hash when the page was written.")


class WikiUnreadableOut(BaseModel):
    path: str = Field(
        description="Workspace-relative POSIX path of a source hearth could not read."
    )
    reason: str = Field(description="Why, in English.")


class WikiPageInfoOut(BaseModel):
    """One page as listed: what it is, when and from which source versions it was written."""

    name: str = Field(description="The page's name (its file is <name>.md); overview first.")
    title: str
    written: str = Field(description="When hearth wrote it (ISO 8601, UTC).")
    model: str = Field(description="The model that wrote it.")
    sources: list[WikiSourceOut]
    unreadable: list[WikiUnreadableOut]
    edited: bool = Field(description="The user changed the page's text since hearth wrote it.")
    update_waiting: bool = Field(
        description="An update hearth could not apply (the page was edited) waits beside it."
    )
    stale: bool = Field(description="A source's content changed since the page was written.")


class WikiPageOut(WikiPageInfoOut):
    """One page with its text."""

    text: str = Field(description="The page's body (Markdown), without its front matter.")
