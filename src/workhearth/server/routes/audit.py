"""``/v1/audit``: every tool call, its decision and outcome (arguments stored redacted)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from workhearth.agent.audit import AuditLog
from workhearth.api.workbench_models import AuditListOut
from workhearth.server.schemas import ID_MAX

router = APIRouter(prefix="/v1/audit", tags=["audit"])


@router.get("", response_model=AuditListOut)
def audit(
    request: Request,
    session: Annotated[
        str | None, Query(max_length=ID_MAX, description="Only this session.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="The newest N records.")] = 200,
) -> dict:
    """Audit records oldest first (the newest ``limit``); a session with none gives an empty list."""
    log = AuditLog(request.app.state.config.paths.audit_log)
    return {"records": [r.as_dict() for r in log.read(session=session or None, limit=limit)]}
