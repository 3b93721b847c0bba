"""Output shapes of skills that the REST API and the MCP tools answer with (pydantic).

The data comes from :mod:`workhearth.api.skills` (free of pydantic, for the CLI):
``skill_summary`` fills :class:`SkillOut`, ``skill_detail`` :class:`SkillDetailOut`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SkillOut(BaseModel):
    name: str
    description: str
    descriptions: dict[str, str] = Field(
        default_factory=dict,
        description="The description by language {en, zh?} (zh from metadata description-zh).",
    )
    source: str
    path: str
    status: Literal["ok", "broken"]
    problems: list[str]


class SkillListOut(BaseModel):
    """The ``skill_list`` tool's answer (an MCP tool answers with an object, not a list)."""

    skills: list[SkillOut]
    warnings: list[str] = Field(description="Skills that could not be read, in words.")


class VariableOut(BaseModel):
    name: str
    label: dict[str, str] = Field(
        default_factory=dict, description="The form's field name {zh, en}; empty: use name."
    )
    description: dict[str, str]
    type: str
    choices: list[str]
    default: str | None
    required: bool


class ExampleOut(BaseModel):
    id: str
    title: dict[str, str]
    description: dict[str, str]
    variables: list[VariableOut]


class SkillDetailOut(SkillOut):
    allowed_tools: list[str] | None
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    body: str | None
    examples: list[ExampleOut]


class RenderOut(BaseModel):
    prompt: str
