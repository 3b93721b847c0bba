"""Draft a new, valid skill folder: from a name and a description, or from a finished hearth session.

From a session (``--from-session ID``) the user's prompts become the skill's goal and
the tool calls that succeeded become its steps, in order: what worked once becomes a
reusable card. Secrets in the session's text are masked. The result is checked with
hearth's own validator before it is kept.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "draft_skill.py"
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
MAX_STEPS = 30


# ------------------------------------------------------------------ session → steps
def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _step(name: str, args: dict[str, Any]) -> str:
    """One tool call as an instruction a model (or a person) can follow again."""
    if name == "shell" and args.get("command"):
        return f"Run `{_short(str(args['command']), 300)}`"
    if name in ("write_file", "edit_file", "read_file", "delete", "list_dir") and args.get("path"):
        verb = {
            "write_file": "Write",
            "edit_file": "Edit",
            "read_file": "Read",
            "delete": "Delete",
            "list_dir": "List",
        }[name]
        return f"{verb} `{args['path']}`"
    if name in ("glob", "grep") and args.get("pattern"):
        return f"Search with {name} for `{_short(str(args['pattern']), 120)}`"
    if name == "activate_skill" and args.get("name"):
        return f"Activate the `{args['name']}` skill"
    shown = _short(json.dumps(args, ensure_ascii=False), 200)
    return f"Call `{name}` with {shown}"


def session_steps(messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """``(user prompts, steps)``: prompts in order; steps from tool calls whose result was not an error."""
    prompts: list[str] = []
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    order: list[str] = []
    failed: set[str] = set()
    answered: set[str] = set()
    for msg in messages:
        for block in msg.get("content") or []:
            kind = block.get("type")
            if msg.get("role") == "user" and kind == "text" and block.get("text", "").strip():
                prompts.append(block["text"].strip())
            elif msg.get("role") == "assistant" and kind == "tool_use":
                calls[block["id"]] = (block.get("name", "?"), block.get("input") or {})
                order.append(block["id"])
            elif kind == "tool_result":
                answered.add(block.get("tool_use_id", ""))
                if block.get("is_error"):
                    failed.add(block.get("tool_use_id", ""))
    steps: list[str] = []
    for call_id in order:
        # Why: a call never answered (interrupted) or answered with an error did not work.
        if call_id in failed or call_id not in answered:
            continue
        step = _step(*calls[call_id])
        if not steps or steps[-1] != step:
            steps.append(step)
    return prompts, steps[:MAX_STEPS]


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    stop = {
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "into",
        "and",
        "for",
        "with",
        "my",
        "this",
        "that",
        "please",
    }
    words = [w for w in words if w not in stop][:4]
    return "-".join(words)[:64].strip("-")


def from_session(session_id: str, home: str | None) -> tuple[str, list[str], list[str]]:
    """``(session id, prompts, steps)`` read through the workhearth library, secrets masked."""
    from workhearth import Workhearth
    from workhearth.errors import HearthError
    from workhearth.memory.secrets import redact

    try:
        session = Workhearth(home=home).sessions.open(session_id)
        messages = session.messages()
    except HearthError as exc:
        raise UserError(str(exc)) from None
    prompts, steps = session_steps(messages)
    if not prompts and not steps:
        raise UserError(
            f"session {session_id} has no user prompt and no successful tool call to learn from"
        )
    return session.folder.name, [redact(p) for p in prompts], [redact(s) for s in steps]


# ------------------------------------------------------------------ the files
def _yaml_str(text: str) -> str:
    # Why: a JSON string is a valid YAML double-quoted scalar, whatever the text holds.
    return json.dumps(text, ensure_ascii=False)


def skill_md(name: str, description: str, steps: list[str], prompts: list[str], origin: str) -> str:
    title = name.replace("-", " ").capitalize()
    if steps:
        step_lines = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    else:
        step_lines = (
            "1. Check the inputs: the files exist and are the kind this skill handles.\n"
            "2. Do the work (name the exact commands or scripts; put reusable code in `scripts/`).\n"
            "3. Check the result, and tell the user what was written where."
        )
    goal = ""
    if prompts:
        asked = "\n".join(f"> {_short(p, 400)}" for p in prompts[:5])
        goal = f"\n## What was asked\n\nThe session this skill was drafted from ({origin}) was asked:\n\n{asked}\n"
    return f"""---
name: {name}
description: {_yaml_str(description)}
# Python packages this skill's scripts need (installed after confirmation by the
# install-skill-dependency skill), whitespace-separated requirements:
# metadata:
#   python-packages: "python-docx>=1.1 openpyxl"
---

# {title}

{description}
{goal}
## Steps

{step_lines}

## Check the result

- The files the steps wrote exist and open; commands exited with 0.
- Tell the user what changed, and anything that did not work.

## Notes

- Scripts go in `scripts/` (argparse), long reference material in `references/`,
  templates in `assets/`. Run a script with hearth's Python and its full path, as
  `activate_skill` prints it: `PYTHON SKILL_DIR/scripts/NAME.py ARGS` (a bare `python`
  may lack the libraries the script needs).
- The example tasks are in `.skill-metadata.yaml`: `{{{{variable}}}}` placeholders
  are filled in by the person running the task.
"""


def metadata_yaml(name: str, description: str, from_session: bool) -> str:
    zh_desc = description if CJK.search(description) else f"按照 {name} 技能的步骤完成任务。"
    en_desc = _short(description, 300)
    if from_session:
        prompt = (
            f"Use the {name} skill to do again what it describes, this time on {{{{target}}}}."
            "\n{{notes}}\n"
        )
    else:
        prompt = f"Use the {name} skill on {{{{target}}}}.\n{{{{notes}}}}\n"
    return f"""examples:
  - id: {name}
    title:
      zh: {_yaml_str(f"运行 {name}")}
      en: {_yaml_str(name.replace("-", " ").capitalize())}
    description:
      zh: {_yaml_str(zh_desc)}
      en: {_yaml_str(en_desc)}
    prompt: {_yaml_str(prompt)}
    variables:
      - name: target
        description:
          zh: 要处理的对象（文件、文件夹或主题）
          en: What to work on (a file, a folder or a topic)
        type: text
        required: true
      - name: notes
        description:
          zh: 其他要求（可选）
          en: Anything else to keep in mind (optional)
        type: text
"""


def write_skill(parent: Path, name: str, files: dict[str, str], force: bool) -> Path:
    """Write the folder next to its final place, validate it, then move it in."""
    from workhearth.skills.validate import validate

    target = parent / name
    if target.exists() and not force:
        raise UserError(f"{target} exists (use --force to replace it)")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{name}."))
    try:
        draft = tmp / name
        (draft / "scripts").mkdir(parents=True)
        (draft / "references").mkdir()
        for rel, text in files.items():
            (draft / rel).write_text(text, encoding="utf-8")
        problems = validate(draft)
        if problems:
            raise UserError(f"the draft does not validate: {problems[0]}")
        if target.exists():
            shutil.rmtree(target)
        draft.rename(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog=PROG,
        description="Draft a new skill folder (SKILL.md + .skill-metadata.yaml) from a description "
        "or from a finished hearth session.",
    )
    parser.add_argument(
        "name", nargs="?", help="skill name: lowercase letters, digits, single '-' (1-64)"
    )
    parser.add_argument(
        "--description", help="what the skill does and when to use it (1-1024 characters)"
    )
    parser.add_argument(
        "--from-session",
        metavar="ID",
        help="draft from this session's prompts and successful tool calls",
    )
    parser.add_argument(
        "--dir", help="parent folder of the new skill (default: $HEARTH_HOME/skills)"
    )
    parser.add_argument("--home", help="HEARTH_HOME (default: the environment)")
    parser.add_argument(
        "--force", action="store_true", help="replace an existing skill folder of that name"
    )
    args = parser.parse_args(argv)
    try:
        prompts: list[str] = []
        steps: list[str] = []
        origin = ""
        if args.from_session:
            origin, prompts, steps = from_session(args.from_session, args.home)
        name = args.name or (_slug(prompts[0]) if prompts else "")
        if not name:
            name = f"from-session-{origin[:8].lower()}" if origin else ""
        if not name:
            raise UserError("give the skill a name")
        if not NAME_RE.match(name) or len(name) > 64:
            raise UserError(
                f"invalid name {name!r}: use 1-64 lowercase letters, digits and single '-'"
            )
        description = " ".join((args.description or "").split())
        if not description and prompts:
            description = f"Do again what worked in session {origin}: {_short(prompts[0], 300)}"
        if not description:
            raise UserError("give a --description: what the skill does and when to use it")
        if len(description) > 1024:
            raise UserError(f"the description is {len(description)} characters; at most 1024")
        if args.dir:
            parent = Path(args.dir)
        else:
            from workhearth import Workhearth

            parent = Workhearth(home=args.home).paths.skills
        files = {
            "SKILL.md": skill_md(name, description, steps, prompts, origin),
            ".skill-metadata.yaml": metadata_yaml(name, description, bool(args.from_session)),
        }
        target = write_skill(parent, name, files, args.force)
    except UserError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    extra = f", {len(steps)} steps from session {origin}" if args.from_session else ""
    print(f"wrote {target} (SKILL.md, .skill-metadata.yaml{extra})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
