"""A team task's questions and plan (issue 23): what the lead asks, and the plan the user
approves, edits or nudges.

The plan is a Markdown file the user can read and edit (``plan.md`` in the lead's
session folder). hearth writes it from the lead's ``write_plan`` call and reads it back
before the steps run, so an edit counts. Its shape::

    # Plan: <goal>

    ## Deliverables
    - `report.docx` (docx): the quarterly report

    ## Steps
    ### 1. Gather the figures {#gather}
    - owner: researcher
    - depends on: none
    - files: data/sales.csv
    - produces: notes/figures.md
    - check: every quarter has a figure

    What to do, in as many lines as it takes.

A step's id is in ``{#id}`` (or made from its title); ``depends on`` names step ids
(``none`` or empty for none); ``files`` are what the step reads or changes (its
scratch copy gets them); ``produces`` what it delivers; each ``check`` line is an
acceptance check of the review.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workhearth.errors import UsageError

__all__ = ["Deliverable", "Plan", "Question", "Step", "parse_plan", "render_plan"]

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
_STEP = re.compile(r"^###\s+(?:\d+[.)]\s*)?(?P<title>.+?)\s*(?:\{#(?P<id>[^}]+)\})?\s*$")
_FIELD = re.compile(
    r"^[-*]\s+(?P<key>owner|role|depends on|files|produces|check)\s*:\s*(?P<value>.*)$",
    re.IGNORECASE,
)
_DELIVERABLE = re.compile(
    r"^[-*]\s+`(?P<path>[^`]+)`\s*(?:\((?P<format>[^)]*)\))?\s*:?\s*(?P<what>.*)$"
)


@dataclass(frozen=True)
class Question:
    """One structured question of the lead; ``choices`` empty means short text."""

    id: str
    text: str
    choices: tuple[str, ...] = ()
    default: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "choices": list(self.choices),
            "default": self.default,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], n: int) -> Question:
        qid = str(data.get("id") or f"q{n}")
        text = str(data.get("text") or "").strip()
        if not text:
            raise UsageError(f"question {qid} has no text")
        choices = tuple(str(c) for c in data.get("choices") or () if str(c).strip())
        default = str(data.get("default") or (choices[0] if choices else ""))
        return cls(qid, text, choices, default)


@dataclass(frozen=True)
class Deliverable:
    path: str
    format: str
    what: str

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "format": self.format, "what": self.what}


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    owner: str
    depends_on: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "owner": self.owner,
            "depends_on": list(self.depends_on),
            "files": list(self.files),
            "produces": list(self.produces),
            "checks": list(self.checks),
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Plan:
    goal: str
    deliverables: tuple[Deliverable, ...] = ()
    steps: tuple[Step, ...] = field(default_factory=tuple)

    def step(self, step_id: str) -> Step:
        for s in self.steps:
            if s.id == step_id:
                return s
        raise UsageError(f"the plan has no step {step_id!r}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "goal": self.goal,
            "deliverables": [d.as_dict() for d in self.deliverables],
            "steps": [s.as_dict() for s in self.steps],
        }

    @classmethod
    def from_call(cls, data: Mapping[str, Any]) -> Plan:
        """The plan of a ``write_plan`` call (checked like an edited file)."""
        raw_steps = [r for r in data.get("steps") or () if isinstance(r, Mapping)]
        deliverables = tuple(
            Deliverable(str(d.get("path", "")), str(d.get("format", "")), str(d.get("what", "")))
            for d in data.get("deliverables") or ()
            if isinstance(d, Mapping) and d.get("path")
        )
        steps = tuple(_step_of_call(raw, n) for n, raw in enumerate(raw_steps, 1))
        plan = cls(str(data.get("goal") or "").strip(), deliverables, steps)
        check_plan(plan)
        return plan


def _texts(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _step_of_call(raw: Mapping[str, Any], n: int) -> Step:
    title = str(raw.get("title") or f"Step {n}").strip()
    return Step(
        id=_slug(str(raw.get("id") or title)),
        title=title,
        owner=str(raw.get("owner") or raw.get("role") or "").strip(),
        depends_on=tuple(_slug(d) for d in _texts(raw.get("depends_on"))),
        files=_texts(raw.get("files")),
        produces=_texts(raw.get("produces")),
        checks=_texts(raw.get("checks")),
        detail=str(raw.get("detail") or "").strip(),
    )


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-")
    return slug or "step"


def _list(value: str) -> tuple[str, ...]:
    value = value.strip()
    if not value or value.lower() in ("none", "-", "nothing"):
        return ()
    return tuple(v.strip().strip("`") for v in value.split(",") if v.strip())


def check_plan(plan: Plan) -> None:
    """Ids unique and well formed, an owner per step, dependencies known and acyclic."""
    if not plan.steps:
        raise UsageError("the plan has no steps")
    ids = [s.id for s in plan.steps]
    for s in plan.steps:
        if not _ID.match(s.id):
            raise UsageError(f"step id {s.id!r}: use lowercase letters, digits and dashes")
        if ids.count(s.id) > 1:
            raise UsageError(f"two steps have the id {s.id!r}")
        if not s.owner:
            raise UsageError(f"step {s.id} has no owner (a role)")
        for dep in s.depends_on:
            if dep not in ids:
                raise UsageError(f"step {s.id} depends on {dep!r}, which the plan does not have")
    done: set[str] = set()
    remaining = list(plan.steps)
    while remaining:
        ready = [s for s in remaining if set(s.depends_on) <= done]
        if not ready:
            raise UsageError(
                "the steps depend on each other in a circle: " + ", ".join(s.id for s in remaining)
            )
        done |= {s.id for s in ready}
        remaining = [s for s in remaining if s.id not in done]


def render_plan(
    plan: Plan, questions: Sequence[Question] = (), answers: Mapping[str, str] = {}
) -> str:
    """The plan as the Markdown file the user reads and may edit."""
    out = [f"# Plan: {plan.goal}", ""]
    if questions:
        out += ["## Answers", ""]
        out += [f"- {q.text} — {answers.get(q.id, q.default)}" for q in questions]
        out.append("")
    if plan.deliverables:
        out += ["## Deliverables", ""]
        for d in plan.deliverables:
            fmt = f" ({d.format})" if d.format else ""
            out.append(f"- `{d.path}`{fmt}: {d.what}".rstrip(": "))
        out.append("")
    out += ["## Steps", ""]
    for n, s in enumerate(plan.steps, 1):
        out.append(f"### {n}. {s.title} {{#{s.id}}}")
        out.append(f"- owner: {s.owner}")
        out.append(f"- depends on: {', '.join(s.depends_on) or 'none'}")
        if s.files:
            out.append(f"- files: {', '.join(s.files)}")
        if s.produces:
            out.append(f"- produces: {', '.join(s.produces)}")
        out += [f"- check: {c}" for c in s.checks]
        if s.detail:
            out += ["", s.detail]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


class _Reader:
    """Reads plan.md line by line: the goal, the deliverables, the steps and their fields."""

    def __init__(self) -> None:
        self.goal = ""
        self.section = ""
        self.deliverables: list[Deliverable] = []
        self.steps: list[dict[str, Any]] = []

    def line(self, n: int, raw: str) -> None:
        line = raw.strip()
        if line.startswith("# ") and not self.goal:
            self.goal = re.sub(r"^#\s+(plan:\s*)?", "", line, flags=re.IGNORECASE).strip()
        elif line.startswith("## "):
            self.section = line[3:].strip().lower()
        elif self.section.startswith("step"):
            self._step_line(n, raw, line)
        elif self.section.startswith("deliverable") and (m := _DELIVERABLE.match(line)):
            fmt = (m.group("format") or "").strip()
            self.deliverables.append(Deliverable(m.group("path"), fmt, m.group("what").strip()))

    def _step_line(self, n: int, raw: str, line: str) -> None:
        if line.startswith("### "):
            m = _STEP.match(line)
            if m is None:
                raise UsageError(f"plan.md line {n}: a step heading needs a title")
            title = m.group("title").strip()
            self.steps.append({"id": m.group("id") or _slug(title), "title": title, "detail": []})
            return
        if not self.steps:
            return
        current = self.steps[-1]
        field_match = _FIELD.match(line)
        if field_match and not current["detail"]:
            _set_field(current, field_match.group("key").lower(), field_match.group("value"))
        elif line or current["detail"]:
            current["detail"].append(raw.rstrip())

    def plan(self) -> Plan:
        if not self.goal:
            raise UsageError("plan.md has no goal (a first line '# Plan: …')")
        steps = tuple(
            Step(
                id=str(s["id"]),
                title=str(s["title"]),
                owner=str(s.get("owner", "")),
                depends_on=tuple(s.get("depends_on", ())),
                files=tuple(s.get("files", ())),
                produces=tuple(s.get("produces", ())),
                checks=tuple(s.get("checks", ())),
                detail="\n".join(s["detail"]).strip(),
            )
            for s in self.steps
        )
        return Plan(self.goal, tuple(self.deliverables), steps)


def _set_field(step: dict[str, Any], key: str, value: str) -> None:
    if key in ("owner", "role"):
        step["owner"] = value.strip()
    elif key == "depends on":
        step["depends_on"] = _list(value)
    elif key == "check":
        step.setdefault("checks", []).append(value.strip())
    else:
        step[key] = _list(value)


def parse_plan(text: str) -> Plan:
    """The plan in ``text`` (a plan.md the user may have edited); UsageError naming the line."""
    reader = _Reader()
    for n, raw in enumerate(text.splitlines(), 1):
        reader.line(n, raw)
    plan = reader.plan()
    check_plan(plan)
    return plan


def parse_answers(raw: object, questions: Sequence[Question]) -> dict[str, str]:
    """``--answers FILE``'s JSON (id → answer), checked against the questions asked."""
    if not isinstance(raw, Mapping):
        raise UsageError("the answers must be a JSON object: question id -> answer")
    known = {q.id: q for q in questions}
    out: dict[str, str] = {}
    for key, value in raw.items():
        if key not in known:
            raise UsageError(f"no question {key!r} was asked; asked: {', '.join(known) or 'none'}")
        q = known[key]
        answer = str(value).strip()
        if q.choices and answer not in q.choices:
            raise UsageError(f"answer to {key!r} must be one of: {', '.join(q.choices)}")
        out[key] = answer
    return out
