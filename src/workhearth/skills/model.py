"""What a skill and its example tasks are, as plain frozen values (DESIGN §8 shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from workhearth.errors import HearthError

# Where a skill was found, first wins (see library.ROOTS for the order).
Source = Literal[
    "workspace",
    "user",
    "builtin",
    "agents-workspace",
    "agents-user",
    "claude-workspace",
    "claude-user",
]
VariableType = Literal["text", "file", "choice", "number"]
VARIABLE_TYPES: tuple[VariableType, ...] = ("text", "file", "choice", "number")
LANGUAGES = ("zh", "en")


class SkillError(HearthError):
    """A skill is broken, or an example cannot be rendered as asked."""

    exit_code = 2


@dataclass(frozen=True)
class Skill:
    """One skill folder as found on disk.

    ``problems`` holds every deviation from the Agent Skills specification. A skill
    with any is still ``ok`` when it can be used (an unknown key, a name unlike its
    folder: warnings); it is ``broken`` when it cannot (no description, an unreadable
    file; see :mod:`workhearth.skills.validate`). ``name`` is the one its ``SKILL.md``
    declares, else its folder's.
    """

    name: str
    description: str
    source: str
    path: Path
    status: Literal["ok", "broken"]
    problems: tuple[str, ...]
    allowed_tools: tuple[str, ...] | None = None
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "path": str(self.path),
            "status": self.status,
            "problems": list(self.problems),
        }


@dataclass(frozen=True)
class Variable:
    """One ``{{name}}`` an example's prompt takes."""

    name: str
    description: Mapping[str, str] = field(default_factory=dict)
    type: VariableType = "text"
    choices: tuple[str, ...] = ()
    default: str | None = None
    required: bool = False
    label: Mapping[str, str] = field(default_factory=dict)  # the form's field name {zh, en}

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": dict(self.label),
            "description": dict(self.description),
            "type": self.type,
            "choices": list(self.choices),
            "default": self.default,
            "required": self.required,
        }


@dataclass(frozen=True)
class Example:
    """A ready-to-run task of a skill: a person picks it and fills its variables."""

    id: str
    title: Mapping[str, str]
    description: Mapping[str, str]
    prompt: str
    variables: tuple[Variable, ...] = ()

    def variable(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": dict(self.title),
            "description": dict(self.description),
            "variables": [v.as_dict() for v in self.variables],
        }


def localized(text: Mapping[str, str], language: str) -> str:
    """The text in ``language``, else the other one (a map always holds both after parsing)."""
    return text.get(language) or next((t for t in text.values() if t), "")
