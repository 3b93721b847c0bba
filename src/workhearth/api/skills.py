"""A skill's detail as ``hearth skills show --json`` and ``GET /v1/skills/{name}`` give it."""

from __future__ import annotations

from typing import Any

from workhearth.skills.model import Skill

# Why in metadata: the Agent Skills format has one description; its metadata map
# (text to text) is where a skill may carry another language's.
DESCRIPTION_ZH = "description-zh"


def descriptions(skill: Skill) -> dict[str, str]:
    """The skill's description by language: ``en`` always, ``zh`` when its metadata has one."""
    out = {"en": skill.description}
    zh = skill.metadata.get(DESCRIPTION_ZH)
    if isinstance(zh, str) and zh.strip():
        out["zh"] = zh.strip()
    return out


def skill_summary(skill: Skill) -> dict[str, Any]:
    """A skill as ``GET /v1/skills`` lists it: its fields and its descriptions by language."""
    return {**skill.as_dict(), "descriptions": descriptions(skill)}


def skill_detail(skill: Skill, body: str | None) -> dict[str, Any]:
    """The skill's fields and its instructions (``body``: None for a broken skill)."""
    data = skill_summary(skill)
    data.update(
        allowed_tools=list(skill.allowed_tools) if skill.allowed_tools is not None else None,
        license=skill.license,
        compatibility=skill.compatibility,
        metadata=dict(skill.metadata),
        body=body,
    )
    return data
