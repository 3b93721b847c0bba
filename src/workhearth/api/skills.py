"""A skill's detail as ``hearth skills show --json`` and ``GET /v1/skills/{name}`` give it."""

from __future__ import annotations

from typing import Any

from workhearth.skills.model import Skill


def skill_detail(skill: Skill, body: str | None) -> dict[str, Any]:
    """The skill's fields and its instructions (``body``: None for a broken skill)."""
    data = skill.as_dict()
    data.update(
        allowed_tools=list(skill.allowed_tools) if skill.allowed_tools is not None else None,
        license=skill.license,
        compatibility=skill.compatibility,
        metadata=dict(skill.metadata),
        body=body,
    )
    return data
