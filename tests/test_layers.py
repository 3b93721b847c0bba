"""Dependencies point down (DESIGN §7): a lower layer never imports a higher one, the
interface packages never import each other, and a string import counts as an import."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "workhearth"

# Higher number = higher layer. A module may import only its own layer or lower.
LAYERS = {
    "paths": 0,
    "config": 0,
    "errors": 0,
    "fsutil": 0,
    "procgroups": 0,
    "trash": 0,
    "trust": 0,
    "models": 1,
    "sessions": 2,
    "memory": 2,
    "skills": 2,
    "shell": 2,
    "bank": 2,
    "check": 2,  # hearth check FILE: office files rendered and read back
    "agent": 3,
    "tasks": 4,
    "wiki": 4,  # the Repowiki (issue 24): pages written by the model from a folder
    "app": 4,
    "api": 4,
    "cli": 5,
    "server": 5,
    "mcp": 5,
    # The composition root: the `hearth` command put together from the three surfaces.
    "main": 6,
    "__main__": 6,
}
# Why: the MCP client (how the agent reaches other tools, and a folder's .mcp.json shown
# before it is trusted) lives beside the MCP server for the protocol, but it is library
# code two surfaces use (`hearth run` and the trust question; the page's tasks and
# /v1/trust), and it builds on the task service (tasks.service.ToolsFor): it sits with
# tasks, below the surfaces. The MCP server (mcp/server/) is a surface.
MODULE_LAYERS = {"workhearth.mcp.client": 4}
INTERFACES = ("cli", "server", "mcp")
# Functions that import the module named by their first argument.
IMPORTERS = {"import_module", "__import__", "_optional", "find_spec", "import_string"}
# A string naming one of our modules, alone or as "module:attribute" (a lazily loaded
# command: workhearth.main's table), is an import too, once that module exists.
MODULE_STRING = re.compile(r"workhearth(?:\.\w+)+(?::\w+)?")
# The client side of the bank runs on every hearth: it must not need the database driver.
CLIENT_ONLY = ("workhearth.bank.server", "psycopg")


def _module_of(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The modules a ``from … import …`` names, a relative one resolved."""
    base = node.module or ""
    if node.level:
        package = module.split(".")
        package = package if is_package else package[:-1]
        package = package[: len(package) - node.level + 1]
        base = ".".join([*package, base] if base else package)
    # Why both: ``from workhearth.bank import client`` imports workhearth.bank.client.
    return [base] + [f"{base}.{alias.name}" for alias in node.names if alias.name != "*"]


def _string_import(node: ast.Call) -> str | None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in IMPORTERS or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def _exists(module: str) -> bool:
    path = SRC.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _module_strings(tree: ast.AST) -> list[str]:
    """Our modules named by a string (``"workhearth.cli.check:check"``), docstrings aside."""
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        node.value.partition(":")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and MODULE_STRING.fullmatch(node.value)
        and _exists(node.value.partition(":")[0])
    ]


def imports_in(source: str, module: str, is_package: bool = False) -> list[str]:
    """Every module ``source`` imports: statements (relative ones resolved), strings
    passed to an import function (``importlib.import_module("workhearth.x")``), and
    strings naming one of our modules (``"workhearth.cli.check:check"``)."""
    tree = ast.parse(source)
    found: list[str] = _module_strings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found += _absolute(node, module, is_package)
        elif isinstance(node, ast.Call) and (named := _string_import(node)):
            found.append(named)
    return found


@functools.cache
def imports(path: Path) -> tuple[str, ...]:
    source = path.read_text(encoding="utf-8")
    return tuple(imports_in(source, _module_of(path), path.name == "__init__.py"))


def sources() -> list[tuple[str, Path]]:
    return [(_module_of(p), p) for p in sorted(SRC.rglob("*.py"))]


def package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "workhearth" and len(parts) > 1 else None


def layer_of(module: str) -> int | None:
    for prefix, layer in MODULE_LAYERS.items():
        if under(module, prefix):
            return layer
    package = package_of(module)
    return None if package is None else LAYERS.get(package)


def interface_of(module: str) -> str | None:
    """The surface (cli, server, mcp) a module belongs to; None below the surfaces."""
    package = package_of(module)
    return package if package in INTERFACES and layer_of(module) == 5 else None


def under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_every_top_level_module_has_a_layer() -> None:
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir() if not p.name.startswith("_")}
    assert names <= set(LAYERS), names - set(LAYERS)


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for module, path in sources():
        mine = layer_of(module)
        if mine is None:
            continue
        for target in imports(path):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                wrong.append(f"{module} imports {target}")
    assert not wrong, wrong


def test_interface_packages_never_import_each_other() -> None:
    # Why: code two surfaces share belongs a layer down; what one starts or serves of
    # another (`hearth serve`, `hearth mcp`, /mcp) is wired above them, in workhearth.main.
    wrong = []
    for module, path in sources():
        mine = interface_of(module)
        if mine is None:
            continue
        for target in imports(path):
            theirs = interface_of(target)
            if theirs is not None and theirs != mine:
                wrong.append(f"{module} imports {target}")
    assert not wrong, wrong


def test_the_bank_client_does_not_import_its_server() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, path in sources()
        if under(module, "workhearth.bank.client")
        for target in imports(path)
        if any(under(target, banned) for banned in CLIENT_ONLY)
    ]
    assert not wrong, wrong


def test_the_bank_client_imports_without_the_database_driver() -> None:
    # Why a child process: it blocks psycopg before anything imports it, as on a
    # hearth installed without the team extra.
    code = (
        "import sys; sys.modules['psycopg'] = None\n"
        "import workhearth.bank.client.facade, workhearth.app\n"
        "assert not any(m.startswith('workhearth.bank.server') for m in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_checker_sees_string_and_relative_imports() -> None:
    """The checks above can fail: the finder sees what they look for."""
    source = (
        "import importlib\n"
        "from . import app\n"
        "from ..cli import main\n"
        "importlib.import_module('workhearth.cli.serve')\n"
        "__import__('workhearth.mcp.server')\n"
        "_optional('workhearth.server.tasks')\n"
        "COMMANDS = {'check': 'workhearth.cli.check:check', 'x': 'workhearth.team_user'}\n"
    )
    found = imports_in(source, "workhearth.server.probe")
    assert {
        "workhearth.server.app",
        "workhearth.cli.main",
        "workhearth.cli.serve",
        "workhearth.mcp.server",
        "workhearth.server.tasks",
        "workhearth.cli.check",
    } <= set(found)
    assert "workhearth.team_user" not in found  # a string, but no module of ours
    assert interface_of("workhearth.cli.main") == "cli"
    assert interface_of("workhearth.mcp.server.tools") == "mcp"
    assert interface_of("workhearth.mcp.client.servers") is None
    assert layer_of("workhearth.mcp.client.tools") == 4
    assert layer_of("workhearth.main") == 6
    assert layer_of("workhearth.bank.client.facade") == 2


def test_library_code_does_not_read_the_environment() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = str(path.relative_to(SRC))
        # Why: the CLI is the process edge; it reads the environment and passes it down,
        # and so does the composition root to the surfaces it starts (workhearth.main).
        if rel in ("config.py", "main.py") or rel.startswith("cli/"):
            continue
        # Why: a built-in skill's script is a program of its own (run as `python
        # scripts/x.py`), a process edge like the CLI, never imported by the library.
        if rel.startswith("skills/builtin/") and "/scripts/" in rel:
            continue
        text = path.read_text(encoding="utf-8")
        if "os.environ" in text or "os.getenv" in text:
            offenders.append(rel)
    assert not offenders, offenders
