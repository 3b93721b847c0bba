"""``/v1/skills``: installed skills, their instructions and example tasks, and rendering."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from workhearth.api.skill_models import RenderOut, SkillDetailOut, SkillOut
from workhearth.api.skills import skill_detail, skill_summary
from workhearth.app import Workhearth
from workhearth.server.deps import hearth_dep
from workhearth.server.schemas import ID_MAX, RenderIn, errors

router = APIRouter(prefix="/v1/skills", tags=["skills"])
SkillName = Annotated[str, Path(max_length=ID_MAX, description="The skill's name.")]
Hearth = Annotated[Workhearth, Depends(hearth_dep)]


@router.get("", response_model=list[SkillOut])
def list_skills(wh: Hearth) -> list[dict]:
    """Every skill found, in precedence order; broken ones with their problems."""
    return [skill_summary(s) for s in wh.skills.list()]


@router.get("/{name}", response_model=SkillDetailOut, responses=errors(404))
def show(name: SkillName, wh: Hearth) -> dict:
    """A skill with its instructions (SKILL.md body) and example tasks."""
    lib = wh.skills
    skill = lib.get(name)
    data = skill_detail(skill, lib.body(skill.name) if skill.ok else None)
    data["examples"] = [e.as_dict() for e in lib.examples(skill.name)] if skill.ok else []
    return data


@router.post("/{name}/render", response_model=RenderOut, responses=errors(404))
def render(name: SkillName, body: RenderIn, wh: Hearth) -> dict:
    """An example's prompt with its variables filled in (strict: nothing left unknown).

    File variables must lie inside an authorized workspace, as for ``hearth skills render``.
    """
    from workhearth.agent.workspace import Workspaces
    from workhearth.skills.library import make_file_check

    roots = Workspaces(wh.paths, current=wh.workspace).roots()
    prompt = wh.skills.render(name, body.example, body.values, file_check=make_file_check(roots))
    return {"prompt": prompt}
