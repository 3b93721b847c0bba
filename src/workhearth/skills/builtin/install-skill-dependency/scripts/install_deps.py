"""Install the Python packages a skill declares into hearth's own environment, after confirmation.

A skill declares them in its SKILL.md frontmatter:

    metadata:
      python-packages: "python-docx>=1.1 openpyxl"

(whitespace-separated requirement strings; no spaces inside one: ``pkg>=1,<2``).
Only package names with optional extras, versions and markers are accepted: URLs,
paths, archives and pip options (``--index-url`` …) are refused, so a skill can never
make you install from somewhere else than your configured package index.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "install_deps.py"
KEY = "python-packages"
# Why: the fallback when packaging is absent; names per PEP 508, versions without spaces.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SIMPLE = re.compile(
    rf"^{_NAME}(?:\[{_NAME}(?:,{_NAME})*\])?(?:(?:===|==|!=|<=|>=|~=|<|>)[\w.*+!-]+(?:,(?:===|==|!=|<=|>=|~=|<|>)[\w.*+!-]+)*)?$"
)


def check_requirement(text: str) -> tuple[str, object | None]:
    """``(project name, Requirement or None)`` for an acceptable requirement; UserError otherwise."""
    if text.startswith("-"):
        raise UserError(f"refused {text!r}: pip options are not allowed in a skill's packages")
    if "://" in text or "@" in text:
        raise UserError(
            f"refused {text!r}: URLs and direct references are not allowed, only package names"
        )
    if text.startswith((".", "/", "~")) or "\\" in text or "/" in text.split(";")[0]:
        raise UserError(f"refused {text!r}: local paths are not allowed, only package names")
    if re.search(r"\.(whl|zip|tar\.gz|tgz|tar\.bz2)$", text, re.I):
        raise UserError(f"refused {text!r}: archives are not allowed, only package names")
    try:
        from packaging.requirements import InvalidRequirement, Requirement
    except ImportError:
        if not _SIMPLE.match(text):
            raise UserError(f"refused {text!r}: not a requirement like name[extra]>=1.0") from None
        return re.split(r"[\[<>=!~]", text, maxsplit=1)[0], None
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        why = str(exc).splitlines()[0]  # Why: packaging adds a caret diagram on more lines
        raise UserError(f"refused {text!r}: not a valid requirement ({why})") from None
    if req.url:
        raise UserError(
            f"refused {text!r}: URLs and direct references are not allowed, only package names"
        )
    return req.name, req


def _satisfied(name: str, req: object | None) -> str | None:
    """The installed version when it already satisfies the requirement."""
    try:
        have = metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    if req is None:
        return have
    marker = getattr(req, "marker", None)
    if marker is not None and not marker.evaluate():
        return have  # Why: a marker that does not apply here needs nothing installed.
    spec = req.specifier  # type: ignore[attr-defined]
    return have if spec.contains(have, prereleases=True) else None


def skill_folder(skill: str, home: str | None, workspace: str | None) -> Path:
    """A folder holding SKILL.md, or an installed skill found by name (hearth's precedence)."""
    path = Path(skill)
    if (path / "SKILL.md").is_file():
        return path
    if "/" in skill or skill.startswith("."):
        raise UserError(f"{skill}: no SKILL.md in that folder")
    from workhearth import Workhearth
    from workhearth.errors import HearthError

    try:
        return Workhearth(home=home, workspace=workspace).skills.get(skill).path
    except HearthError as exc:
        raise UserError(str(exc)) from None


def declared(folder: Path) -> list[str]:
    """The requirement strings the skill declares (may be empty)."""
    from workhearth.skills.validate import read_skill

    parsed = read_skill(folder)
    if parsed.errors:
        raise UserError(f"{folder.name} is broken: {parsed.errors[0]}")
    value = parsed.metadata.get(KEY, "")
    if not isinstance(value, str):
        raise UserError(f"{folder.name}: metadata {KEY} must be a string of requirements")
    return value.split()


def plan(folder: Path) -> dict:
    """What would be installed: {"skill", "python", "declared", "installed", "missing", "command"}."""
    reqs = declared(folder)
    installed, missing = {}, []
    for text in reqs:
        name, req = check_requirement(text)
        have = _satisfied(name, req)
        if have is None:
            missing.append(text)
        else:
            installed[text] = have
    command = [sys.executable, "-m", "pip", "install", *missing] if missing else []
    return {
        "skill": folder.name,
        "python": sys.executable,
        "declared": reqs,
        "installed": installed,
        "missing": missing,
        "command": command,
    }


def _confirm(p: dict, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise UserError(
            f"not installing {' '.join(p['missing'])} without confirmation: no terminal to ask; "
            "run again with --yes after the user agreed"
        )
    answer = input(f"Install {' '.join(p['missing'])} into {p['python']}? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        raise UserError("not installed: the user said no")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog=PROG,
        description="Install a skill's declared Python packages (SKILL.md metadata python-packages) "
        "into hearth's own Python, after confirmation.",
    )
    parser.add_argument("skill", help="an installed skill's name, or a folder holding SKILL.md")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the pip command, install nothing"
    )
    parser.add_argument(
        "--yes", action="store_true", help="the user agreed: install without asking"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the plan as JSON and install nothing"
    )
    parser.add_argument(
        "--home", help="HEARTH_HOME to look the skill up in (default: the environment)"
    )
    parser.add_argument("--workspace", help="workspace to look the skill up from (default: .)")
    args = parser.parse_args(argv)
    try:
        p = plan(skill_folder(args.skill, args.home, args.workspace))
        if args.json:
            print(json.dumps(p, ensure_ascii=False, indent=2))
            return 0
        for text, have in p["installed"].items():
            print(f"already installed: {text} ({have})")
        if not p["missing"]:
            print(
                f"nothing to install for {p['skill']}"
                + ("" if p["declared"] else " (it declares no Python packages)")
            )
            return 0
        print(f"would run: {shlex.join(p['command'])}")
        if args.dry_run:
            return 0
        _confirm(p, args.yes)
    except UserError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except (EOFError, KeyboardInterrupt):
        print(f"{PROG}: not installed: no answer", file=sys.stderr)
        return 2
    code = subprocess.run(p["command"], check=False).returncode
    if code != 0:
        print(f"{PROG}: pip failed with exit code {code}", file=sys.stderr)
        return code
    print(f"installed {' '.join(p['missing'])} into {p['python']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
