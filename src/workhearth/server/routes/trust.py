"""``/v1/trust``: what the workspace brings (.mcp.json, skills, agents) and the user's yes.

The page's form of the question a terminal run asks (DESIGN §5 Trust): GET shows each
item with its status and, for ``.mcp.json``, every server's command line and the
variables it would receive; POST trusts exactly the items shown (by the hashes GET
gave), so a file changed in between stays untrusted; DELETE forgets the folder's trust.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from workhearth.api.workbench_models import TrustOut
from workhearth.app import Workhearth
from workhearth.mcp.client.trust_view import folder_servers
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import TrustIn
from workhearth.trust import MCP_JSON, FolderTrust, TrustStore

router = APIRouter(prefix="/v1/trust", tags=["trust"])
Hearth = Annotated[Workhearth, Depends(hearth_dep)]


def _view(state: FolderTrust, request: Request) -> dict:
    servers: list[dict] = []
    unreadable = False
    if MCP_JSON in state.present:
        views, problem = folder_servers(state.folder, request.app.state.env)
        servers = [v.as_dict() for v in views]
        unreadable = problem is not None
    return {
        **state.as_dict(),
        "hashes": dict(state.present),
        "pending": state.pending,
        "servers": servers,
        "mcp_json_unreadable": unreadable,
    }


@router.get("", response_model=TrustOut)
def show(request: Request, wh: Hearth) -> dict:
    """What the workspace brings, which of it is trusted, and what its servers would run."""
    return _view(wh.trust, request)


@router.post("", response_model=TrustOut)
def trust(body: TrustIn, request: Request, wh: Hearth) -> dict:
    """Trust the items the user was shown (their ``hashes`` from GET)."""
    shown = {item: digest for item, digest in body.hashes.items() if item in wh.trust.present}
    state = TrustStore(wh.paths).trust(wh.workspace, seen={**wh.trust.trusted, **shown})
    return _view(state, request)


@router.delete("", response_model=TrustOut)
def untrust(request: Request, wh: Hearth) -> dict:
    """Stop loading the workspace's .mcp.json, skills and agents."""
    TrustStore(wh.paths).untrust(wh.workspace)
    wh.refresh_trust()
    return _view(wh.trust, request)
