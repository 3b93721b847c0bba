"""``.skill-metadata.yaml``: a skill's example tasks, and strict prompt rendering.

```yaml
examples:
  - id: md-to-docx
    title: {zh: 把 Markdown 转成 Word, en: Markdown to Word}
    description: {zh: …, en: …}
    prompt: "Turn {{input}} into a Word document named {{output}}."
    variables:
      - name: input
        label: {zh: 输入文件, en: Input file}   # the form's field name (default: name)
        type: file            # text | file | choice | number (default text)
        required: true        # default false
        description: {zh: …, en: …}
      - {name: output, default: report.docx}
```

In a prompt, ``{{name}}`` (spaces allowed inside) is a variable and ``{{{{``
writes a literal ``{{``. Values are inserted as text in one pass, so a value
holding ``{{x}}`` is never expanded again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from workhearth.skills.model import (
    LANGUAGES,
    VARIABLE_TYPES,
    Example,
    SkillError,
    Variable,
    VariableType,
)
from workhearth.skills.validate import METADATA_FILE, LineDict, yaml_load, yaml_problem

VAR_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
# One scan: a literal "{{{{", a placeholder, or a "{{" that is neither (an error).
_TOKEN_RE = re.compile(r"\{\{\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}|\{\{")
_EXAMPLE_KEYS = ("id", "title", "description", "prompt", "variables")
_VARIABLE_KEYS = ("name", "label", "description", "type", "choices", "default", "required")

FileCheck = Callable[[str], str]


def placeholders(prompt: str) -> tuple[list[str], list[str]]:
    """``(variable names used, problems)`` of a prompt template."""
    names: list[str] = []
    problems: list[str] = []
    for m in _TOKEN_RE.finditer(prompt):
        if m.group(0) == "{{{{":
            continue
        if m.group(1) is None:
            problems.append(
                f"'{{{{' at character {m.start() + 1} starts no {{{{variable}}}} "
                "(write '{{{{{{{{' for a literal '{{{{')"
            )
        elif m.group(1) not in names:
            names.append(m.group(1))
    return names, problems


def _text_map(value: Any, where: str, what: str, problems: list[str]) -> dict[str, str]:
    """A ``{zh, en}`` map; one given language stands in for the missing one."""
    if isinstance(value, str) and value.strip():
        return dict.fromkeys(LANGUAGES, value)
    if not isinstance(value, Mapping) or not value:
        problems.append(f"{where}: {what} must be a mapping {{zh: …, en: …}}")
        return {}
    out: dict[str, str] = {}
    for lang, text in value.items():
        if lang not in LANGUAGES:
            problems.append(f"{where}: {what} has unknown language {lang!r} (use zh, en)")
        elif not isinstance(text, str) or not text.strip():
            problems.append(f"{where}: {what}.{lang} must be non-empty text")
        else:
            out[lang] = text
    for lang in LANGUAGES:
        if lang not in out and out:
            out[lang] = next(iter(out.values()))
    return out


def _scalar_text(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str | int | float):
        return str(value)
    return None


class _Fields:
    """One YAML mapping being read: each problem is noted at the line of its key."""

    def __init__(self, raw: LineDict, problems: list[str]) -> None:
        self.raw = raw
        self.problems = problems
        self._before = len(problems)

    def at(self, key: str) -> str:
        return f"{METADATA_FILE}:{self.raw.key_lines.get(key, self.raw.line)}"

    def problem(self, key: str, text: str) -> None:
        self.problems.append(f"{self.at(key)}: {text}")

    def reject_unknown(self, allowed: tuple[str, ...], what: str) -> None:
        for key in self.raw:
            if key not in allowed:
                self.problem(key, f"unknown {what} field {key!r} (allowed: {', '.join(allowed)})")

    def text_map(self, key: str, what: str) -> dict[str, str]:
        """The ``{zh, en}`` map under ``key``; empty when the key is absent."""
        if key not in self.raw:
            return {}
        return _text_map(self.raw[key], self.at(key), what, self.problems)

    @property
    def failed(self) -> bool:
        """Whether any problem was noted since reading began."""
        return len(self.problems) > self._before


def _variable(raw: Any, where: str, problems: list[str]) -> Variable | None:
    if not isinstance(raw, LineDict):
        problems.append(f"{where}: a variable must be a mapping with at least 'name'")
        return None
    fields = _Fields(raw, problems)
    fields.reject_unknown(_VARIABLE_KEYS, "variable")
    name = raw.get("name")
    if not isinstance(name, str) or not VAR_NAME_RE.match(name):
        fields.problem("name", "variable name must be letters, digits, '_' or '-'")
        return None
    vtype = _variable_type(fields, name)
    choices = _choices(fields, name)
    if vtype == "choice" and not choices:
        fields.problem("type", f"choice variable {name!r} needs a list of choices")
    required = _required(fields, name)
    default = _default(fields, Variable(name, {}, vtype, choices))
    description = fields.text_map("description", f"description of {name!r}")
    label = fields.text_map("label", f"label of {name!r}")
    if fields.failed:
        return None
    return Variable(name, description, vtype, choices, default, required, label)


def _variable_type(fields: _Fields, name: str) -> VariableType:
    vtype = fields.raw.get("type", "text")
    if vtype not in VARIABLE_TYPES:
        fields.problem("type", f"type of {name!r} must be one of {', '.join(VARIABLE_TYPES)}")
        return "text"
    return vtype


def _choices(fields: _Fields, name: str) -> tuple[str, ...]:
    if "choices" not in fields.raw:
        return ()
    items = fields.raw["choices"]
    texts = [_scalar_text(c) for c in items] if isinstance(items, list) else [None]
    if not texts or any(t is None for t in texts):
        fields.problem("choices", f"choices of {name!r} must be a list of values")
        return ()
    return tuple(t for t in texts if t is not None)


def _required(fields: _Fields, name: str) -> bool:
    required = fields.raw.get("required", False)
    if not isinstance(required, bool):
        fields.problem("required", f"required of {name!r} must be true or false")
        return False
    return required


def _default(fields: _Fields, var: Variable) -> str | None:
    """The variable's default as text, checked against its type and choices."""
    raw = fields.raw.get("default")
    if raw is None:
        return None
    default = _scalar_text(raw)
    if default is None:
        fields.problem("default", f"default of {var.name!r} must be a single value")
        return None
    try:
        check_value(var, default)
    except SkillError as exc:
        fields.problem("default", f"default {exc}")
    return default


def _example(raw: Any, where: str, problems: list[str]) -> Example | None:
    if not isinstance(raw, LineDict):
        problems.append(f"{where}: an example must be a mapping")
        return None
    fields = _Fields(raw, problems)
    fields.reject_unknown(_EXAMPLE_KEYS, "example")
    ex_id = raw.get("id")
    if not isinstance(ex_id, str) or not ex_id.strip():
        fields.problem("id", "example id must be non-empty text")
        ex_id = "?"
    for key in ("title", "description"):
        if key not in raw:
            problems.append(f"{where}: example {ex_id!r} misses {key} {{zh, en}}")
    title = fields.text_map("title", "title")
    desc = fields.text_map("description", "description")
    prompt = raw.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        fields.problem("prompt", f"example {ex_id!r} needs a prompt (text)")
        prompt = ""
    variables = _variables(fields)
    _check_placeholders(fields, prompt, {v.name for v in variables})
    if fields.failed:
        return None
    return Example(ex_id, title, desc, prompt, tuple(variables))


def _variables(fields: _Fields) -> list[Variable]:
    """An example's declared variables (the valid ones), each name once."""
    raw_vars = fields.raw.get("variables", [])
    if raw_vars is None:
        raw_vars = []
    if not isinstance(raw_vars, list):
        fields.problem("variables", "variables must be a list")
        raw_vars = []
    variables: list[Variable] = []
    for item in raw_vars:
        var = _variable(item, fields.at("variables"), fields.problems)
        if var is None:
            continue
        if any(v.name == var.name for v in variables):
            fields.problem("variables", f"variable {var.name!r} is declared twice")
        variables.append(var)
    return variables


def _check_placeholders(fields: _Fields, prompt: str, declared: set[str]) -> None:
    """Note a malformed ``{{`` and every variable the prompt uses but does not declare."""
    used, template_problems = placeholders(prompt)
    for text in template_problems:
        fields.problem("prompt", text)
    for name in used:
        if name not in declared:
            fields.problem("prompt", f"prompt uses undeclared variable {name!r}")


def parse_examples(text: str) -> tuple[list[Example], list[str]]:
    """``(examples, problems)`` of a ``.skill-metadata.yaml`` text."""
    try:
        data = yaml_load(text)
    except Exception as exc:  # yaml.YAMLError
        return [], [yaml_problem(METADATA_FILE, exc)]
    if data is None:
        return [], []
    if not isinstance(data, LineDict):
        return [], [f"{METADATA_FILE}:1: must be a mapping with 'examples:'"]
    problems: list[str] = []
    for key in data:
        if key != "examples":
            problems.append(
                f"{METADATA_FILE}:{data.key_lines[key]}: unknown field {key!r} (allowed: examples)"
            )
    raw = data.get("examples") or []
    if not isinstance(raw, list):
        return [], [f"{METADATA_FILE}:{data.key_lines['examples']}: examples must be a list"]
    examples: list[Example] = []
    for item in raw:
        line = item.line if isinstance(item, LineDict) else data.key_lines["examples"]
        ex = _example(item, f"{METADATA_FILE}:{line}", problems)
        if ex is None:
            continue
        if any(e.id == ex.id for e in examples):
            problems.append(f"{METADATA_FILE}:{line}: example id {ex.id!r} is used twice")
        examples.append(ex)
    return examples, problems


def read_examples(folder: Path) -> tuple[list[Example], list[str]]:
    """The examples in ``folder/.skill-metadata.yaml`` (none when the file is absent)."""
    try:
        raw = (folder / METADATA_FILE).read_bytes()
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        return [], [f"{METADATA_FILE}: cannot read ({exc.strerror})"]
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        return [], [f"{METADATA_FILE}: not UTF-8 text (bad byte at offset {exc.start})"]
    return parse_examples(text)


def check_value(var: Variable, value: str) -> str:
    """``value`` as the variable's type accepts it; SkillError naming the variable otherwise."""
    if var.type == "number":
        try:
            number = float(value.strip())
        except ValueError:
            raise SkillError(
                f"{var.name!r} must be a number, not {value!r}",
                code="skill_value_number",
                params={"field": var.name},
            ) from None
        if not math.isfinite(number):
            raise SkillError(
                f"{var.name!r} must be a finite number, not {value!r}",
                code="skill_value_number",
                params={"field": var.name},
            )
        return value.strip()
    if var.type == "choice" and value not in var.choices:
        raise SkillError(
            f"{var.name!r} must be one of {', '.join(var.choices)}, not {value!r}",
            code="skill_value_choice",
            params={"field": var.name, "choices": ", ".join(var.choices)},
        )
    return value


def render(example: Example, values: Mapping[str, str], file_check: FileCheck | None = None) -> str:
    """The example's prompt with ``values`` filled in; strict (see the module doc).

    ``file_check`` turns a file variable's value into the path to insert, and
    raises a HearthError when the file is not inside an authorized workspace.
    Without one, a file variable is refused: nothing may name a file unchecked.
    """
    declared = {v.name for v in example.variables}
    unknown = [name for name in values if name not in declared]
    if unknown:
        takes = ", ".join(sorted(declared)) or "no variables"
        raise SkillError(
            f"unknown variable {unknown[0]!r} for example {example.id!r} (it takes: {takes})",
            code="skill_field_unknown",
            params={"field": unknown[0]},
        )
    filled: dict[str, str] = {}
    for var in example.variables:
        value = values.get(var.name)
        if value is None or value == "":
            value = var.default
        if value is None or value == "":
            if var.required:
                raise SkillError(
                    f"missing required variable {var.name!r} for example {example.id!r}",
                    code="skill_field_missing",
                    params={"field": var.name},
                    cli_hint=f"give it with --set {var.name}=…",
                )
            filled[var.name] = ""
            continue
        value = check_value(var, value)
        if var.type == "file":
            if file_check is None:
                raise SkillError(
                    f"file variable {var.name!r} needs an authorized workspace",
                    code="file_no_workspace",
                )
            value = file_check(value)
        filled[var.name] = value

    def replace(m: re.Match[str]) -> str:
        if m.group(0) == "{{{{":
            return "{{"
        if m.group(1) is None:
            raise SkillError(f"example {example.id!r}: malformed placeholder in its prompt")
        if m.group(1) not in filled:
            raise SkillError(f"example {example.id!r}: prompt uses undeclared {m.group(1)!r}")
        return filled[m.group(1)]

    return _TOKEN_RE.sub(replace, example.prompt)
