"""``hearth skills list|show|examples|render|install|new|validate``.

The skills package (and YAML) is imported inside each command, so ``hearth --help``
pays nothing for it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workhearth.cli.context import hearth
from workhearth.cli.help import HearthTyper
from workhearth.cli.output import JsonOpt, print_json
from workhearth.cli.tables import Column, print_table
from workhearth.errors import UsageError

if TYPE_CHECKING:
    from workhearth.skills.library import SkillLibrary

app = HearthTyper(
    help="Skills: folders with SKILL.md the agent can use, and their example tasks.",
    no_args_is_help=True,
)

NameArg = Annotated[str, typer.Argument(metavar="NAME", help="The skill's name.")]


def _library() -> SkillLibrary:
    return hearth().skills


def _warn(lib: SkillLibrary) -> None:
    for line in lib.warnings():
        print(f"hearth: warning: {line}", file=sys.stderr)


def parse_sets(pairs: list[str]) -> dict[str, str]:
    """``["k=v", …]`` → ``{"k": "v"}``; the value may hold ``=``."""
    values: dict[str, str] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--set takes NAME=VALUE, not {pair!r}")
        if name.strip() in values:
            raise UsageError(f"--set {name.strip()} is given twice")
        values[name.strip()] = value
    return values


@app.command("list")
def list_(json: JsonOpt = False) -> None:
    """Every skill found, in precedence order; broken ones with their problems."""
    lib = _library()
    skills = lib.list()
    _warn(lib)
    if json:
        print_json([s.as_dict() for s in skills])
        return
    if not skills:
        print("no skills found (hearth skills new NAME makes one)")
        return
    rows = []
    for s in skills:
        what = s.description if s.ok else f"BROKEN: {s.problems[0]}"
        rows.append([s.name, s.source, s.status, what])
    # Why: one line per skill; the description gives way to the terminal's width.
    columns = [
        Column("name", cut="never"),
        Column("source", cut="never", drop=1),
        Column("status", cut="never"),
        Column("description", main=True),
    ]
    print_table(columns, rows)


@app.command()
def show(name: NameArg, json: JsonOpt = False) -> None:
    """A skill's fields, where it is, and its instructions (SKILL.md body)."""
    from workhearth.api.skills import skill_detail

    lib = _library()
    skill = lib.get(name)
    body = lib.body(name) if skill.ok else None
    if json:
        print_json(skill_detail(skill, body))
        return
    print(f"{skill.name}  ({skill.source}, {skill.status})")
    print(f"path: {skill.path}")
    print(f"description: {skill.description}")
    if skill.allowed_tools is not None:
        print(f"allowed tools: {' '.join(skill.allowed_tools) or '(none)'}")
    for key in ("license", "compatibility"):
        if getattr(skill, key):
            print(f"{key}: {getattr(skill, key)}")
    for problem in skill.problems:
        # Why: an ok skill's problems are warnings; it loads despite them.
        print(f"{'warning' if skill.ok else 'problem'}: {problem}")
    if body is not None:
        print()
        print(body.strip("\n"))


@app.command()
def examples(name: NameArg, json: JsonOpt = False) -> None:
    """The ready-to-run example tasks of a skill, with the variables each takes."""
    from workhearth.skills.model import localized

    lib = _library()
    found = lib.examples(name)
    if json:
        print_json([e.as_dict() for e in found])
        return
    if not found:
        print(f"skill {name!r} has no examples")
        return
    lang = lib.language
    rows = []
    for ex in found:
        takes = []
        for v in ex.variables:
            mark = "*" if v.required and v.default is None else ""
            kind = f"{v.type}: {'|'.join(v.choices)}" if v.choices else v.type
            takes.append(f"{v.name}{mark} ({kind})")
        rows.append([ex.id, localized(ex.title, lang), ", ".join(takes) or "-"])
    columns = [
        Column("id", cut="never"),
        Column("title", main=True),
        Column("variables (* required)", cap=24, drop=1),
    ]
    print_table(columns, rows)


@app.command()
def render(
    name: NameArg,
    example: Annotated[str, typer.Argument(metavar="EXAMPLE", help="The example's id.")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", metavar="NAME=VALUE", help="A variable's value (repeatable)."),
    ] = None,
) -> None:
    """Print an example's prompt with its variables filled in (strict: nothing left unknown)."""
    from workhearth.agent.workspace import Workspaces
    from workhearth.skills.library import make_file_check

    wh = hearth()
    lib = wh.skills
    roots = Workspaces(wh.paths, current=wh.workspace).roots()
    print(lib.render(name, example, parse_sets(set_ or []), file_check=make_file_check(roots)))


@app.command()
def install(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A skill folder, .zip or .skill.")],
    force: Annotated[
        bool,
        typer.Option(help="Replace an installed skill of that name, or hide a built-in one."),
    ] = False,
) -> None:
    """Validate a skill and copy it into $HEARTH_HOME/skills (links and devices refused)."""
    from workhearth.skills.install import is_builtin

    lib = _library()
    skill = lib.install(path, force=force)
    print(f"installed {skill.name} at {skill.path}")
    if is_builtin(skill.path.name, lib.builtin_dir):
        print(
            f"hearth: warning: skill {skill.path.name!r} now hides the built-in skill "
            "of that name (remove it to use the built-in one again)",
            file=sys.stderr,
        )


@app.command()
def new(
    name: NameArg,
    description: Annotated[
        str, typer.Option(help="When the agent should use it (goes into SKILL.md).")
    ] = "",
    directory: Annotated[
        Path | None,
        typer.Option("--dir", metavar="DIR", help="Make it in DIR instead of $HEARTH_HOME/skills."),
    ] = None,
) -> None:
    """Scaffold a valid skill: SKILL.md and .skill-metadata.yaml with one example."""
    skill = _library().new(name, description, directory=directory)
    print(f"created {skill.path} (edit SKILL.md, then: hearth skills validate {skill.path})")


@app.command()
def validate(
    path: Annotated[Path, typer.Argument(metavar="PATH", help="A skill folder.")],
    json: JsonOpt = False,
) -> None:
    """Check a skill folder against the Agent Skills format; exits 1 when anything is wrong."""
    from workhearth.skills.validate import validate as check

    if not path.is_dir():
        raise UsageError(f"{path} is not a folder")
    problems = check(path)
    if json:
        print_json({"path": str(path), "ok": not problems, "problems": problems})
    elif problems:
        for problem in problems:
            print(f"{path}/{problem}")
    else:
        print(f"{path}: ok")
    if problems:
        print(f"hearth: {len(problems)} problem(s) in {path}", file=sys.stderr)
        raise typer.Exit(1)
