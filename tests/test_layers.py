"""Dependencies point down (DESIGN §7): a lower layer never imports a higher one."""

from __future__ import annotations

import ast
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
    "team": 2,
    "agent": 3,
    "tasks": 4,
    "app": 4,
    "api": 4,
    "cli": 5,
    "server": 5,
    "mcp": 5,
}


def layer_of(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "workhearth" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


def test_every_top_level_module_has_a_layer() -> None:
    names = {p.stem if p.is_file() else p.name for p in SRC.iterdir() if not p.name.startswith("_")}
    assert names <= set(LAYERS), names - set(LAYERS)


def test_no_module_imports_a_higher_layer() -> None:
    wrong = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        mine = layer_of(".".join(rel.parts))
        if mine is None:
            continue
        for target in imports(path):
            theirs = layer_of(target)
            if theirs is not None and theirs > mine:
                wrong.append(f"{rel} imports {target}")
    assert not wrong, wrong


def test_library_code_does_not_read_the_environment() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = str(path.relative_to(SRC))
        # Why: the CLI is the process edge; it reads the environment and passes it down.
        if rel == "config.py" or rel.startswith("cli/"):
            continue
        text = path.read_text(encoding="utf-8")
        if "os.environ" in text or "os.getenv" in text:
            offenders.append(rel)
    assert not offenders, offenders
