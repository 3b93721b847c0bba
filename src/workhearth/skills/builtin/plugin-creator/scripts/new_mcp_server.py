"""Scaffold a new MCP tool server in Python: pyproject, server module, tools, README and a test.

The generated server uses the ``mcp`` package 2.x (``mcp.server.mcpserver.MCPServer``,
the class 1.x called FastMCP). Tools are plain functions in ``tools.py`` so they can be
tested without the MCP machinery; ``server.py`` only registers them and runs stdio.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_write

PROG = "new_mcp_server.py"
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
MCP_REQUIREMENT = "mcp>=2,<3"


PYPROJECT = """\
[build-system]
requires = ["hatchling>=1.25"]
build-backend = "hatchling.build"

[project]
name = "{name}"
version = "0.1.0"
description = {description_toml}
requires-python = ">=3.10"
dependencies = ["{mcp}"]

[project.optional-dependencies]
dev = ["pytest>=8"]

[project.scripts]
{name} = "{package}.server:main"

[tool.hatch.build.targets.wheel]
packages = ["src/{package}"]

[tool.pytest.ini_options]
pythonpath = ["src"]
testpaths = ["tests"]
"""

INIT = """\
{description_py}

__version__ = "0.1.0"
"""

TOOLS = '''\
"""The tools this server offers: plain, typed functions.

Each function's signature becomes the tool's input schema and its docstring the
description the model reads, so say what the tool does and when to use it.
Keep them free of MCP imports, so tests call them directly.
"""

from __future__ import annotations


def word_count(text: str) -> dict[str, int]:
    """Count the characters, words and lines of a text."""
    return {{
        "characters": len(text),
        "words": len(text.split()),
        "lines": len(text.splitlines()),
    }}


def echo(message: str) -> str:
    """Return the message unchanged (a smoke test for clients)."""
    return message


TOOLS = [word_count, echo]
'''

SERVER = '''\
"""The {name} MCP server over stdio.

Run: `{name}` (after `pip install -e .`) or `python -m {package}.server`.
Under stdio, stdout carries the protocol: log to stderr, never print().
"""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import MCPServer

from {package}.tools import TOOLS

logging.basicConfig(stream=sys.stderr, level=logging.INFO)

server = MCPServer(
    name="{name}",
    instructions={description_py},
)
for tool in TOOLS:
    server.add_tool(tool)


def main() -> None:
    server.run("stdio")


if __name__ == "__main__":
    main()
'''

TEST = '''\
"""The tools are plain functions: test them without a client."""

from {package}.tools import echo, word_count


def test_word_count() -> None:
    assert word_count("one two\\nthree") == {{"characters": 13, "words": 3, "lines": 2}}


def test_echo_keeps_unicode() -> None:
    assert echo("你好") == "你好"
'''

README = """\
# {name}

{description}

An MCP tool server in Python (the `mcp` package, 2.x), speaking stdio.

## Install and test

```sh
python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/pytest -q
```

## Add a tool

Write a typed function with a docstring in `src/{package}/tools.py` and add it to
`TOOLS`. Its parameters become the tool's input schema; its docstring is what the
model reads to decide when to call it.

## Connect it

The server speaks MCP over stdio: a client starts `{venv_bin}/{name}` (no
arguments) and talks to it on stdin/stdout. Most clients take it in this shape:

```json
{{"mcpServers": {{"{name}": {{"command": "{venv_bin}/{name}", "args": []}}}}}}
```
"""

GITIGNORE = ".venv/\n__pycache__/\n*.egg-info/\ndist/\n"


def render(name: str, description: str, target: Path) -> dict[str, str]:
    """The files of the new project: relative path -> text."""
    package = name.replace("-", "_")
    values = {
        "name": name,
        "package": package,
        "description": description,
        "description_toml": _toml_string(description),
        "description_py": repr(description),
        "mcp": MCP_REQUIREMENT,
        "venv_bin": str(target / ".venv" / "bin"),
    }
    files = {
        "pyproject.toml": PYPROJECT,
        f"src/{package}/__init__.py": INIT,
        f"src/{package}/tools.py": TOOLS,
        f"src/{package}/server.py": SERVER,
        "tests/test_tools.py": TEST,
        "README.md": README,
    }
    out = {path: text.format(**values) for path, text in files.items()}
    out[".gitignore"] = GITIGNORE
    return out


def _toml_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def scaffold(name: str, description: str, parent: Path, force: bool = False) -> Path:
    if not NAME_RE.match(name) or len(name) > 64:
        raise UserError(
            f"invalid name {name!r}: use 1-64 lowercase letters, digits and single '-', starting with a letter"
        )
    if not description.strip():
        raise UserError("the description must not be empty")
    description = " ".join(description.split())
    target = (parent / name).absolute()
    if target.exists() and any(target.iterdir()) and not force:
        raise UserError(f"{target} exists and is not empty (use --force to write into it)")
    for rel, text in render(name, description, target).items():
        _write_atomic(target / rel, text)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description="Scaffold a new MCP tool server in Python.")
    parser.add_argument(
        "name", help="server name: lowercase letters, digits and '-' (e.g. word-tools)"
    )
    parser.add_argument(
        "--description",
        default="Tools for an MCP client.",
        help="one sentence: what the server offers (also its instructions to the model)",
    )
    parser.add_argument(
        "--dir", default=".", help="parent folder; the project goes in DIR/NAME (default: .)"
    )
    parser.add_argument(
        "--force", action="store_true", help="write into an existing, non-empty folder"
    )
    args = parser.parse_args(argv)
    try:
        parent = Path(args.dir)
        if not parent.is_dir():
            raise UserError(f"--dir {args.dir}: not a folder")
        target = scaffold(args.name, args.description, parent, force=args.force)
    except UserError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(
        f"wrote {target} (pyproject.toml, src/{args.name.replace('-', '_')}/server.py, tools.py, tests, README.md)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
