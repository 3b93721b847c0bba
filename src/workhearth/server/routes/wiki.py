"""``/v1/wiki``: the workspace's Repowiki over HTTP (DESIGN §6, issue 24).

The pages are files hearth wrote under ``projects/<ws>/wiki/`` (``hearth wiki build``);
these routes only read them. A search is memory's, limited to the wiki's pages, so it
answers with memory's hits.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi import Path as PathParam

from workhearth.api.models import SearchOut
from workhearth.api.wiki_models import WikiPageInfoOut, WikiPageOut
from workhearth.app import Workhearth
from workhearth.memory.search import DEFAULT_LIMIT, LIMIT_MAX, QUERY_MAX
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import ID_MAX, errors

router = APIRouter(prefix="/v1/wiki", tags=["wiki"])
# Why scope="function": the memory a search borrows goes back to the pool when it returns.
Hearth = Annotated[Workhearth, Depends(hearth_dep, scope="function")]
PageName = Annotated[
    str,
    PathParam(max_length=ID_MAX, description="A page's name (overview, src-workhearth-memory…)."),
]


@router.get("", response_model=list[WikiPageInfoOut])
def pages(wh: Hearth) -> list[dict[str, Any]]:
    """Every page, the overview first, with its age and sources; empty before a build."""
    return [info.as_dict() for info in wh.wiki.pages()]


# Why before /{page}: the literal path must win over the template.
@router.get("/search", response_model=SearchOut)
def search(
    wh: Hearth,
    q: Annotated[str, Query(max_length=QUERY_MAX, description="Words to find.")],
    limit: Annotated[int, Query(ge=1, le=LIMIT_MAX)] = DEFAULT_LIMIT,
) -> dict[str, Any]:
    """The wiki's pages by words, best first (memory's search over the wiki only)."""
    if not q.strip():
        return {"results": []}
    hits = wh.memory.search(q, limit, layer="wiki")
    return {"results": [hit.as_dict() for hit in hits]}


@router.get("/{page}", response_model=WikiPageOut, responses=errors(404))
def page(page: PageName, wh: Hearth) -> dict[str, Any]:
    """One page: its listing's fields and its Markdown text (404 for a name that names none)."""
    return wh.wiki.read(page).as_dict()
