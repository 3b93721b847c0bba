"""Every measured number in the README comes from a bench run kept in ``bench/results/``.

A figure in the README is preceded by a marker naming the JSON it was read from::

    <!-- bench: results/memory_cli.json -->
    | command | wall time | target |
    ...

The marker covers the block that follows it: a table (every cell that starts with a
figure, so labels such as "200 searches/s offered" stay free) or a paragraph or list
item (every number outside code spans and dates). Each of those numbers must be a value
of the named JSON as printed: rounded to the decimals shown, possibly in ms where the
JSON has seconds or the other way round. A number edited by hand, or a table without
its marker, fails here; so does a JSON whose run is not the last of its history
(``bench/_runs.py`` keeps every run in ``<name>.runs.jsonl``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BENCH = ROOT / "bench"

MARKER = re.compile(r"<!--\s*bench:\s*([^>]*?)\s*-->")
NUMBER = re.compile(r"(?<![\w.@#/^-])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w.]\d|[\w])")
FIGURE_CELL = re.compile(r"^[*~≤≥<>+−-]*\s*\d")
UNSCANNED = re.compile(
    r"`[^`]*`"  # code: commands, flags, commits, paths
    r"|<!--.*?-->"  # markers and other comments
    r"|\]\([^)]*\)"  # link targets
    r"|\b\d{4}-\d{2}-\d{2}\b"  # dates
)
SCALES = (1.0, 1000.0, 0.001)  # s <-> ms


@dataclass
class Block:
    """What one marker covers: the JSON files it names and the lines after it."""

    line: int  # 1-based line of the marker
    sources: list[str]
    start: int  # 0-based index of the block's first line (the marker's own when inline)
    lines: list[str]

    @property
    def is_table(self) -> bool:
        return bool(self.lines) and self.lines[0].lstrip().startswith("|")

    def shown(self) -> list[str]:
        """The numbers this block shows that must come from its JSON."""
        if self.is_table:
            return [n for cell in table_cells(self.lines) for n, _ in numbers(cell)]
        return [n for n, _ in numbers("\n".join(self.lines))]


def blocks(text: str) -> Iterator[Block]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = MARKER.search(line)
        if not m:
            continue
        inline = line[m.end() :].strip()
        body, start = ([line[m.end() :]], i) if inline else ([], i + 1)
        for j in range(i + 1, len(lines)):
            stripped = lines[j].strip()
            if not body and not stripped:
                start = j + 1  # a blank line between the marker and its block
                continue
            ends_item = body and stripped.startswith(("- ", "* ", "#"))
            if not stripped or ends_item or MARKER.search(lines[j]):
                break
            body.append(lines[j])
        yield Block(i + 1, m.group(1).split(), start, body)


def table_cells(lines: list[str]) -> Iterator[str]:
    """The cells of a table's rows that start with a figure (header and rule skipped)."""
    for row in lines[2:]:
        for cell in row.strip().strip("|").split("|"):
            cell = cell.strip()
            if FIGURE_CELL.match(cell):
                yield cell


def numbers(text: str) -> list[tuple[str, int]]:
    """The numbers a reader sees in ``text`` as printed (``2,057``, ``0.266``), with offsets."""
    masked = UNSCANNED.sub(lambda m: " " * len(m.group()), text)
    return [(m.group(1) + (m.group(2) or ""), m.start()) for m in NUMBER.finditer(masked)]


def json_values(data: Any) -> list[float]:
    """Every number in a bench's JSON: values, and keys that are numbers (sizes, scales)."""
    out: list[float] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if re.fullmatch(r"\d+(\.\d+)?", str(key)):
                out.append(float(key))
            out.extend(json_values(value))
    elif isinstance(data, list):
        for value in data:
            out.extend(json_values(value))
    elif isinstance(data, int | float) and not isinstance(data, bool):
        out.append(float(data))
    return out


def printed_from(shown: str, values: list[float]) -> bool:
    """Whether ``shown`` is one of ``values`` rounded to its decimals (in s or ms)."""
    digits = len(shown.partition(".")[2])
    target = float(shown.replace(",", ""))
    slack = 0.5 * 10**-digits + 1e-9
    return any(abs(v * scale - target) <= slack for v in values for scale in SCALES)


def load(source: str) -> Any:
    return json.loads((BENCH / source).read_text(encoding="utf-8"))


def block_misses(block: Block) -> list[str]:
    values = [v for source in block.sources for v in json_values(load(source))]
    where = f"README.md:{block.line}"
    return [
        f"{where}: {n} ({' '.join(block.sources)})"
        for n in block.shown()
        if not printed_from(n, values)
    ]


def readme() -> str:
    return README.read_text(encoding="utf-8")


def test_every_marker_names_a_kept_run() -> None:
    found = list(blocks(readme()))
    assert len(found) >= 10, "the README's benchmark figures lost their markers"
    for block in found:
        assert block.sources, f"README.md:{block.line}: a marker naming no JSON"
        assert block.shown(), f"README.md:{block.line}: a marker over no figure"
        for source in block.sources:
            path = BENCH / source
            assert path.is_file(), f"README.md:{block.line}: {source} is not in bench/"
            history = path.with_name(path.stem + ".runs.jsonl")
            assert history.is_file(), f"{source}: no run history beside it"
            last = json.loads(history.read_text(encoding="utf-8").splitlines()[-1])
            assert last["report"] == load(source), f"{source} is not the last run of its history"


def test_marked_numbers_come_from_their_json() -> None:
    assert [m for block in blocks(readme()) for m in block_misses(block)] == []


def test_every_table_with_figures_is_marked() -> None:
    """A bench table without its marker would escape the check above."""
    text = readme()
    lines = text.splitlines()
    covered = {i for b in blocks(text) for i in range(b.start, b.start + len(b.lines))}
    unmarked = []
    for i, line in enumerate(lines):
        starts_table = line.lstrip().startswith("|") and not (
            i and lines[i - 1].lstrip().startswith("|")
        )
        if not starts_table:
            continue
        rows = []
        for row in lines[i:]:
            if not row.lstrip().startswith("|"):
                break
            rows.append(row)
        if any(True for _ in table_cells(rows)) and i not in covered:
            unmarked.append(f"README.md:{i + 1}: {line.strip()[:60]}")
    assert unmarked == []


def edit_first_figure(block: Block, digit: str) -> tuple[Block, str] | None:
    """``block`` with the last digit of its first checked figure set to ``digit``."""
    lines = block.lines.copy()
    for k, line in enumerate(lines):
        if block.is_table and k < 2:
            continue
        for shown, offset in numbers(line):
            if block.is_table:
                cell_start = line.rfind("|", 0, offset) + 1
                cell = line[cell_start : line.find("|", offset)]
                if not FIGURE_CELL.match(cell.strip()):
                    continue
            if shown[-1] == digit:
                return None
            edited = shown[:-1] + digit
            lines[k] = line[:offset] + edited + line[offset + len(shown) :]
            return Block(block.line, block.sources, block.start, lines), edited
    raise AssertionError(f"README.md:{block.line}: no figure to edit")


def test_a_number_edited_by_hand_is_caught() -> None:
    """The check can fail: a digit changed by hand in any marked block is found."""
    for block in blocks(readme()):
        caught = []
        for digit in "7319":
            changed = edit_first_figure(block, digit)
            if changed is not None:
                edited_block, edited = changed
                caught.append(any(f": {edited} (" in m for m in block_misses(edited_block)))
        # Why "any": a JSON with hundreds of values may hold one edit by coincidence.
        assert any(caught), f"README.md:{block.line}: edits of its first figure go unnoticed"
