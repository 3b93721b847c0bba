"""Reading ``SKILL.md`` per the Agent Skills specification: strict to report, lenient to load.

Every problem is one line naming the file and the line: ``SKILL.md:3: name …``.
``problems`` holds every deviation from the specification (``hearth skills validate``
prints them all); ``errors`` only those that leave nothing usable — no frontmatter,
broken YAML, no description, an ``allowed-tools`` that cannot be read, an unreadable
file. Following the Agent Skills guidance for clients, a skill with problems but no
errors loads (status ``ok``, the problems as warnings): skills written for Claude
Code carry keys such as ``version:`` and names such as ``Changelog Writer``. A skill
with an error is *broken*: listed with its problems, never loaded into a prompt.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SKILL_FILE = "SKILL.md"
METADATA_FILE = ".skill-metadata.yaml"
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
# One ``allowed-tools`` entry: split on commas and spaces, never inside ``Bash(git add:*)``.
_TOOL_SPLIT = re.compile(r"[,\s]+(?![^()]*\))")


def split_tools(text: str) -> list[str]:
    """The entries of an ``allowed-tools`` string (``"Read, Bash(git add:*)"`` → two)."""
    return [word for word in _TOOL_SPLIT.split(text.strip()) if word]


class LineDict(dict[Any, Any]):
    """A YAML mapping that remembers the line of each key (1-based, in its document)."""

    line: int = 1
    key_lines: dict[Any, int]


def yaml_load(text: str) -> Any:
    """``yaml.safe_load`` that keeps key lines and refuses duplicate keys.

    Raises ``yaml.YAMLError``; callers turn it into a problem line.
    """
    import yaml

    # Why: a SafeLoader subclass: same safe tags, plus line numbers for messages.
    return yaml.load(text, Loader=_loader())


@functools.cache
def _loader() -> Any:
    import yaml

    # Why: libyaml's parser when present (several times faster on a cold listing);
    # the constructor stays the safe one either way.
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    def construct_map(loader: yaml.SafeLoader, node: yaml.MappingNode) -> LineDict:
        loader.flatten_mapping(node)
        out = LineDict()
        out.line = node.start_mark.line + 1
        out.key_lines = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool) and key is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, "a key must be plain text", key_node.start_mark
                )
            if key in out:
                # Why: safe_load keeps the last of two equal keys silently; a
                # skill author would never see the first one ignored.
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            out[key] = loader.construct_object(value_node, deep=True)
            out.key_lines[key] = key_node.start_mark.line + 1
        return out

    Loader.add_constructor("tag:yaml.org,2002:map", construct_map)
    return Loader


def yaml_problem(file: str, exc: Exception, first_line: int = 1) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = first_line + mark.line if mark is not None else first_line
    what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{file}:{line}: not valid YAML ({what})"


@dataclass
class Parsed:
    """What ``SKILL.md`` holds, as far as it could be read, and what is wrong with it.

    ``problems`` is every deviation, in file order; ``errors`` the ones among them
    that make the skill unusable (see the module doc).
    """

    fields: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    problems: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    name: str = ""
    description: str = ""
    allowed_tools: tuple[str, ...] | None = None
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    def warn(self, problem: str) -> None:
        """A deviation the skill loads despite (the specification's name rules, a new key)."""
        self.problems.append(problem)

    def fail(self, problem: str) -> None:
        """A deviation that leaves nothing usable: the skill is broken."""
        self.problems.append(problem)
        self.errors.append(problem)

    @classmethod
    def failed(cls, problem: str) -> Parsed:
        out = cls()
        out.fail(problem)
        return out


def split_frontmatter(text: str) -> tuple[str, str, int] | None:
    """``(frontmatter, body, line where the frontmatter starts)`` or None without one."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), 2
    return None


def parse_skill_text(text: str, folder_name: str) -> Parsed:
    """Read and check a SKILL.md's text; ``folder_name`` is what ``name`` must equal."""
    out = Parsed()
    split = split_frontmatter(text)
    if split is None:
        out.fail(
            f"{SKILL_FILE}:1: no YAML frontmatter (the file must start with a '---' line "
            "and the frontmatter end with another)"
        )
        return out
    front, out.body, first = split
    try:
        data = yaml_load(front)
    except Exception as exc:  # yaml.YAMLError and its subclasses
        out.fail(yaml_problem(SKILL_FILE, exc, first))
        return out
    if not isinstance(data, LineDict):
        out.fail(f"{SKILL_FILE}:{first}: the frontmatter must be a YAML mapping")
        return out
    out.fields = dict(data)

    def at(key: str) -> str:
        return f"{SKILL_FILE}:{first - 1 + data.key_lines.get(key, 1)}"

    for key in data:
        if key not in FIELDS:
            out.warn(f"{at(key)}: unknown field {key!r} (allowed: {', '.join(FIELDS)})")
    _check_name(data, folder_name, at, out, first)
    _check_description(data, at, out, first)
    _check_optional(data, at, out)
    _check_allowed_tools(data, at, out)
    return out


def _check_optional(data: LineDict, at: Any, out: Parsed) -> None:
    """``license``, ``compatibility`` and ``metadata``: a malformed one is ignored, with a warning."""
    for key in ("license", "compatibility"):
        if key in data:
            value = data[key]
            if not isinstance(value, str) or not value.strip():
                out.warn(f"{at(key)}: {key} must be non-empty text")
            elif key == "compatibility" and len(value) > MAX_COMPATIBILITY:
                out.warn(
                    f"{at(key)}: compatibility is {len(value)} characters (at most "
                    f"{MAX_COMPATIBILITY})"
                )
            else:
                setattr(out, key, value)
    if "metadata" in data:
        meta = data["metadata"]
        if not isinstance(meta, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in meta.items()
        ):
            out.warn(
                f"{at('metadata')}: metadata must be a mapping of text keys to text values "
                '(quote numbers: version: "1.0")'
            )
        else:
            out.metadata = dict(meta)


def _check_allowed_tools(data: LineDict, at: Any, out: Parsed) -> None:
    if "allowed-tools" not in data:
        return
    tools = data["allowed-tools"]
    if isinstance(tools, str):
        out.allowed_tools = tuple(split_tools(tools))
    elif isinstance(tools, list) and all(isinstance(t, str) and t.strip() for t in tools):
        out.allowed_tools = tuple(t.strip() for t in tools)
    else:
        # Why an error: loading the skill without the narrowing its author asked for
        # would let it do more than it says.
        out.fail(
            f"{at('allowed-tools')}: allowed-tools must be a space-separated string "
            "(or a list of tool names)"
        )


def _check_name(data: LineDict, folder_name: str, at: Any, out: Parsed, first: int) -> None:
    # Why warnings only: the folder names the skill when its own name cannot (see
    # library._skill_name); clients load such skills and say what deviates.
    if "name" not in data:
        out.warn(f"{SKILL_FILE}:{first}: missing required field 'name'")
        return
    name = data["name"]
    where = at("name")
    if not isinstance(name, str):
        out.warn(f"{where}: name must be text, not {type(name).__name__}")
        return
    out.name = name
    if not 1 <= len(name) <= MAX_NAME:
        out.warn(f"{where}: name must be 1-{MAX_NAME} characters, not {len(name)}")
    elif not NAME_RE.match(name):
        out.warn(
            f"{where}: name {name!r} may hold only a-z, 0-9 and '-', "
            "and may not start or end with '-' or hold '--'"
        )
    if name != folder_name:
        out.warn(f"{where}: name {name!r} differs from its folder name {folder_name!r}")


def _check_description(data: LineDict, at: Any, out: Parsed, first: int) -> None:
    # Why errors: without a description the model can never know when to use the skill.
    if "description" not in data:
        out.fail(f"{SKILL_FILE}:{first}: missing required field 'description'")
        return
    text = data["description"]
    where = at("description")
    if not isinstance(text, str) or not text.strip():
        out.fail(f"{where}: description must be non-empty text")
        return
    out.description = text.strip()
    if len(text) > MAX_DESCRIPTION:
        out.warn(f"{where}: description is {len(text)} characters (at most {MAX_DESCRIPTION})")


def read_skill(folder: Path) -> Parsed:
    """Parse ``folder/SKILL.md``; an unreadable file is a problem, never an exception."""
    try:
        raw = (folder / SKILL_FILE).read_bytes()
    except FileNotFoundError:
        return Parsed.failed(f"{SKILL_FILE}: missing")
    except OSError as exc:
        return Parsed.failed(f"{SKILL_FILE}: cannot read ({exc.strerror})")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Parsed.failed(f"{SKILL_FILE}: not UTF-8 text (bad byte at offset {exc.start})")
    return parse_skill_text(text, folder.name)


def validate(folder: Path) -> list[str]:
    """Every problem of the skill in ``folder`` (SKILL.md and .skill-metadata.yaml), warnings
    included (strict: this is what ``hearth skills validate`` prints); [] when valid."""
    from workhearth.skills.metadata import read_examples

    folder = Path(folder)
    if not folder.is_dir():
        return [f"{folder}: not a folder"]
    problems = list(read_skill(folder).problems)
    problems += read_examples(folder)[1]
    return problems
