"""The repository ``bench/wiki.py`` builds a wiki of: generated, deterministic, a real git repo.

``make_repo(path, files, seed)`` writes ``files`` files (the same bytes for the same
arguments): nested Python packages under ``src/`` and ``tests/`` (an ``__init__.py`` in
every folder, modules that import their neighbours), Markdown docs in ``docs/`` and a
README, and a few CSV / JSON data files; each 1–8 KB (a triangular spread around 3 KB,
cut at a line end), dated an hour back, then ``git init`` + one commit so ``git status``
has a clean tree to compare with.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

KB = 1024
MIN_SIZE, MODE_SIZE, MAX_SIZE = 1 * KB, 3 * KB, 8 * KB
DOC_SHARE, DATA_SHARE = 0.12, 0.03  # of the files; the rest is Python
MODULES_PER_PACKAGE = 18  # on average
AGE_S = 3600.0  # the files' mtime: an hour before the bench starts
WORDS = (
    "account ledger invoice payment order cart price stock report export import parse "
    "render cache index query token session user config retry queue worker event batch "
    "schedule notify audit policy limit quota region tenant schema record field table "
    "column filter merge split stream buffer offset window metric alert backup restore"
).split()


@dataclass
class Repo:
    """A generated repository: where it is and what it holds (workspace-relative paths)."""

    path: Path
    files: list[str] = field(default_factory=list)
    modules: list[str] = field(default_factory=list)  # Python modules (no __init__.py)
    bytes: int = 0
    seconds: float = 0.0


def _ident(rng: random.Random, k: int = 2) -> str:
    return "_".join(rng.sample(WORDS, k=rng.randint(1, k)))


def _size(rng: random.Random) -> int:
    return int(rng.triangular(MIN_SIZE, MAX_SIZE, MODE_SIZE))


def _cut(lines: list[str], size: int) -> str:
    """Whole lines up to about ``size`` bytes (never under ``MIN_SIZE``)."""
    out, n = [], 0
    for line in lines:
        if n >= size:
            break
        out.append(line)
        n += len(line) + 1
    return "\n".join(out) + "\n"


def _function(rng: random.Random, indent: str = "") -> list[str]:
    name, arg, other = _ident(rng), _ident(rng, 1), _ident(rng, 1)
    body = [
        f"{indent}def {name}({arg}: dict[str, int], {other}: int = {rng.randint(0, 99)}) -> int:",
        f'{indent}    """{rng.choice(WORDS).capitalize()} the {arg} by {other}; '
        f'{" ".join(rng.choices(WORDS, k=5))}."""',
        f"{indent}    total = 0",
        f"{indent}    for key, value in sorted({arg}.items()):",
        f"{indent}        if value > {other}:",
        f"{indent}            total += value  # {' '.join(rng.choices(WORDS, k=3))}",
        f"{indent}        elif key.startswith({rng.choice(WORDS)!r}):",
        f"{indent}            total -= {rng.randint(1, 9)}",
        f"{indent}    return total",
        "",
    ]
    return body


def python_module(rng: random.Random, package: str, siblings: list[str], size: int) -> str:
    """A module of ``package`` (dotted) that imports a few of its ``siblings``."""
    lines = [f'"""{" ".join(rng.choices(WORDS, k=8)).capitalize()}."""', ""]
    lines += ["from __future__ import annotations", "", "import logging"]
    for sibling in rng.sample(siblings, k=min(len(siblings), rng.randint(0, 3))):
        lines.append(f"from {package}.{sibling} import {_ident(rng, 1)}")
    lines += ["", "log = logging.getLogger(__name__)", f"LIMIT = {rng.randint(10, 10_000)}", ""]
    while sum(len(line) + 1 for line in lines) < size:
        if rng.random() < 0.3:
            cls = "".join(w.capitalize() for w in rng.sample(WORDS, k=2))
            lines += [f"class {cls}:", f'    """{" ".join(rng.choices(WORDS, k=6))}."""', ""]
            for _ in range(rng.randint(1, 3)):
                lines += _function(rng, "    ")
        else:
            lines += ["", *_function(rng)]
    return _cut(lines, size)


def markdown_doc(rng: random.Random, title: str, modules: list[str], size: int) -> str:
    """A doc page: headings, paragraphs, a list, a code block naming real modules."""
    lines = [f"# {title}", ""]
    while sum(len(line) + 1 for line in lines) < size:
        lines += [f"## {' '.join(rng.choices(WORDS, k=3)).capitalize()}", ""]
        for _ in range(rng.randint(1, 3)):
            sentence = " ".join(rng.choices(WORDS, k=rng.randint(12, 30)))
            lines += [sentence.capitalize() + ".", ""]
        lines += [f"- `{rng.choice(modules)}`: {' '.join(rng.choices(WORDS, k=6))}" for _ in "ab"]
        lines += ["", "```python", f"from {_ident(rng, 1)} import {_ident(rng, 1)}", "```", ""]
    return _cut(lines, size)


def data_file(rng: random.Random, ext: str, size: int) -> str:
    if ext == ".csv":
        rows = ["date,kind,amount,status"]
        rows += [
            f"2026-{rng.randint(1, 12):02}-{rng.randint(1, 28):02},{rng.choice(WORDS)},"
            f"{rng.randint(0, 10**6)},{rng.choice(('ok', 'late', 'failed'))}"
            for _ in range(size // 30)
        ]
        return _cut(rows, size)
    items = [
        {"id": i, "name": _ident(rng), "limit": rng.randint(1, 999)} for i in range(size // 60)
    ]
    return json.dumps(items, indent=1) + "\n"


def _packages(rng: random.Random, count: int) -> list[str]:
    """``count`` package folders in a random tree under ``src/acme`` and ``tests`` (depth ≤ 4)."""
    folders = ["src/acme", "tests"]
    names: set[str] = set(folders)
    while len(folders) < count:
        parent = rng.choice([f for f in folders if f.count("/") < 4])
        child = f"{parent}/{rng.choice(WORDS)}"
        if child not in names:
            names.add(child)
            folders.append(child)
    return folders


def _layout(rng: random.Random, files: int) -> dict[str, str]:
    """Every file's relative path and kind (``py``, ``init``, ``md``, ``.csv``, ``.json``)."""
    n_docs = max(2, round(files * DOC_SHARE))
    n_data = max(1, round(files * DATA_SHARE))
    n_py = files - n_docs - n_data
    packages = _packages(rng, max(2, n_py // (MODULES_PER_PACKAGE + 1)))
    layout = {f"{p}/__init__.py": "init" for p in packages}
    slots = dict.fromkeys(packages, 0)
    while len(layout) < n_py:
        pkg = rng.choice(packages)
        slots[pkg] += 1
        layout[f"{pkg}/{rng.choice(WORDS)}_{slots[pkg]:02}.py"] = "py"
    layout["README.md"] = "md"
    areas = [f"docs/{rng.choice(WORDS)}" for _ in range(max(1, n_docs // 10))]
    for i in range(n_docs - 1):
        layout[f"{rng.choice(areas)}/{rng.choice(WORDS)}-{i:03}.md"] = "md"
    for i in range(n_data):
        ext = rng.choice((".csv", ".json"))
        layout[f"data/{rng.choice(WORDS)}-{i:02}{ext}"] = ext
    return layout


def make_repo(path: Path, files: int, seed: int) -> Repo:
    """Write the repository (``files`` files) at ``path`` and commit it."""
    started = time.perf_counter()
    rng = random.Random(seed)
    layout = _layout(rng, files)
    modules = sorted(p for p, kind in layout.items() if kind == "py")
    by_package: dict[str, list[str]] = {}
    for rel in modules:
        folder, _, name = rel.rpartition("/")
        by_package.setdefault(folder, []).append(name.removesuffix(".py"))
    repo = Repo(path, sorted(layout), modules)
    written_at = time.time() - AGE_S
    for rel in repo.files:
        kind, size = layout[rel], _size(rng)
        folder = rel.rpartition("/")[0]
        if kind == "init":
            text = f'"""The {folder.replace("/", ".")} package."""\n'
        elif kind == "py":
            dotted = folder.removeprefix("src/").replace("/", ".")
            text = python_module(rng, dotted, by_package[folder], size)
        elif kind == "md":
            text = markdown_doc(rng, rel.removesuffix(".md").replace("/", " / "), modules, size)
        else:
            text = data_file(rng, kind, size)
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        repo.bytes += len(text.encode())
        # Why dated back: a repository is not written the second before its wiki is built,
        # and a file whose mtime is that fresh is re-read at the next scan (a "racy" stat).
        os.utime(target, (written_at, written_at))
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "the bench's repository")
    repo.seconds = time.perf_counter() - started
    return repo


def git(path: Path, *args: str) -> str:
    """Run git in ``path`` with a fixed identity (no user config needed)."""
    ident = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    proc = subprocess.run(
        ["git", *ident, "-c", "commit.gpgsign=false", *args],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout
