"""Context assembly and eviction (DESIGN §4): importance first, inside a token budget;
over capacity, low goes before normal, critical only at ≥ 99 %, and nothing is lost."""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from workhearth import Workhearth
from workhearth.errors import NotFoundError
from workhearth.memory.files import Layer
from workhearth.models.tokens import count_tokens

TITLES = {
    "## About the user (user memory)": "user",
    "## This project (project memory)": "project",
}
MARKER = re.compile(r"^<!-- (?P<path>.+):(?P<line>\d+) \((?P<level>critical|normal|low)\) -->$")
RANK = {"critical": 0, "normal": 1, "low": 2}


@dataclass
class Block:
    """One layer's part of the context.

    Its rendering overhead is exactly the ``## …`` title line plus one
    ``<!-- path:line (level) -->`` marker line per chunk; every other line is memory text.
    """

    title: str
    lines: list[str] = field(default_factory=list)

    @property
    def picks(self) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for line in self.lines:
            if (m := MARKER.match(line)) is not None:
                out.append((m["level"], ""))
            elif line.strip():
                assert out, f"memory text before any marker: {line!r}"
                out[-1] = (out[-1][0], f"{out[-1][1]}\n{line}".lstrip("\n"))
        return out

    @property
    def costs(self) -> list[tuple[str, int]]:
        """(level, tokens of its marker line and text) of every pick."""
        out: list[tuple[str, int]] = []
        for line in self.lines:
            if (m := MARKER.match(line)) is not None:
                out.append((m["level"], 0))
            if out:
                out[-1] = (out[-1][0], out[-1][1] + count_tokens(line))
        return out

    @property
    def overhead(self) -> int:
        marks = [x for x in self.lines if MARKER.match(x)]
        return count_tokens(self.title) + sum(count_tokens(x) for x in marks)

    @property
    def text_tokens(self) -> int:
        return sum(count_tokens(x) for x in self.lines if not MARKER.match(x))

    @property
    def tokens(self) -> int:
        return count_tokens("\n".join([self.title, *self.lines]))


def blocks(context: str) -> dict[str, Block]:
    out: dict[str, Block] = {}
    current = None
    for line in context.splitlines():
        if line in TITLES:
            current = out[TITLES[line]] = Block(line)
        else:
            assert current is not None, line
            current.lines.append(line)
    return out


def picks(context: str, layer: str = "project") -> list[tuple[str, str]]:
    block = blocks(context).get(layer)
    return block.picks if block else []


@pytest.fixture
def wh(tmp_path: Path) -> Workhearth:
    return Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")


def with_capacity(tmp_path: Path, layer: Layer, capacity: int) -> Workhearth:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(f"[memory]\n{layer}_capacity = {capacity}\n")
    return Workhearth(workspace=tmp_path / "ws", env={"HEARTH_HOME": str(home)})


# ------------------------------------------------------------------ context
def _mixed(wh: Workhearth) -> None:
    for i in range(4):
        wh.memory.save(f"low otter note {i}", level="low")
        wh.memory.save(f"normal note {i} about soil", level="normal")
        wh.memory.save(f"critical rule {i} about soil", level="critical")
    wh.memory.save("normal otter river note", level="normal")
    wh.memory.save("normal otter note", level="normal")
    wh.memory.save("the user likes short answers", layer="user", level="low")
    wh.memory.save("the user writes Go", layer="user", level="critical")


def test_context_puts_critical_then_normal_then_low(wh: Workhearth) -> None:
    _mixed(wh)
    parts = blocks(wh.memory.context())
    assert set(parts) == {"user", "project"}
    for block in parts.values():
        ranks = [RANK[level] for level, _ in block.picks]
        assert ranks == sorted(ranks)
    assert len(parts["project"].picks) == 14
    assert [lv for lv, _ in parts["user"].picks] == ["critical", "low"]


def test_inside_a_level_the_best_match_comes_first(wh: Workhearth) -> None:
    _mixed(wh)
    normals = [t for lv, t in picks(wh.memory.context(topic="otter river")) if lv == "normal"]
    assert normals[0].startswith("- normal otter river note")
    assert normals[1].startswith("- normal otter note")
    lows = [t for lv, t in picks(wh.memory.context(topic="otter")) if lv == "low"]
    assert len(lows) == 4


@pytest.mark.parametrize("budget", [1, 12, 40, 75, 150, 10_000])
def test_budget_caps_the_whole_context_headings_included(wh: Workhearth, budget: int) -> None:
    _mixed(wh)
    hand = [f"hand line {i} about soil" for i in range(60)]
    (wh.memory.folder("project") / "notes.md").write_text("# Notes\n\n" + "\n".join(hand) + "\n")
    wh.memory.index()
    context = wh.memory.context(topic="soil", budget=budget)
    assert count_tokens(context) <= budget
    parts = blocks(context)
    assert count_tokens(context) == sum(block.tokens for block in parts.values())
    for block in parts.values():
        assert block.tokens == block.text_tokens + block.overhead  # nothing else is added
    everything = "\n".join(t for _, t in picks(context))
    assert all(line in everything for line in hand) == (budget == 10_000)


@pytest.mark.parametrize("budget", [20, 40, 80])
def test_a_layer_budget_caps_its_part_heading_included(tmp_path: Path, budget: int) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"[memory]\nuser_budget = {budget}\n")
    w = Workhearth(workspace=tmp_path / "ws", env={"HEARTH_HOME": str(home)})
    for i in range(6):
        w.memory.save(
            f"the user likes tea number {i}", layer="user", level=("critical", "low")[i % 2]
        )
    user = blocks(w.memory.context()).get("user")
    assert user is None or user.tokens <= budget
    assert budget < 80 or user is not None  # a heading and one entry fit in 80


def test_a_tight_budget_keeps_the_critical_entries(wh: Workhearth) -> None:
    _mixed(wh)
    full = blocks(wh.memory.context())
    critical = sum(
        count_tokens(block.title) + sum(cost for lv, cost in block.costs if lv == "critical")
        for block in full.values()
    )
    smallest_other = min(
        cost for block in full.values() for lv, cost in block.costs if lv != "critical"
    )
    tight = wh.memory.context(budget=critical + smallest_other - 1)
    assert count_tokens(tight) == critical
    levels = [lv for block in blocks(tight).values() for lv, _ in block.picks]
    assert levels == ["critical"] * 5  # four of the project, one of the user


# ----------------------------------------------------------------- eviction
@dataclass
class Saved:
    level: str
    content: str
    tokens: int  # of its Markdown line "- content ^id", as the index counts it


def _tokens(w: Workhearth, layer: Layer) -> int:
    return w.memory.status()[layer]["tokens"]


_SAVES = itertools.count()


def _fill(w: Workhearth, plan: list[tuple[str, int]], layer: Layer = "project") -> dict[str, Saved]:
    """Save entries of ``words`` one-token words at ``level``, in order (oldest first)."""
    saved = {}
    for level, words in plan:
        # Why: distinct text per call, since saving the same text again returns that entry.
        content = f"{level} entry {next(_SAVES)}: {' '.join(['cat'] * words)}".strip()
        entry_id = w.memory.save(content, level=level, layer=layer).id
        saved[entry_id] = Saved(level, content, count_tokens(f"- {content} ^{entry_id}"))
    return saved


def _gone(w: Workhearth, saved: dict[str, Saved], layer: Layer = "project") -> set[str]:
    """Ids evicted; checks that each is in the log with its content and meta, and
    that every other entry is still listed: nothing is lost."""
    log = w.memory.folder(layer) / ".memory_evicted.log"
    lines = log.read_text().splitlines() if log.exists() else []
    logged = {item["id"]: item for item in map(json.loads, lines)}
    listed = {e.id for e in w.memory.list(limit=100, layer=layer)[0]}
    assert set(saved) == listed | set(logged) and not listed & set(logged)
    for entry_id, item in logged.items():
        assert item["content"] == saved[entry_id].content
        assert item["meta"]["level"] == saved[entry_id].level
        assert "capacity" in item["reason"]
    return set(logged)


def _of(saved: dict[str, Saved], level: str) -> set[str]:
    return {i for i, s in saved.items() if s.level == level}


@pytest.mark.parametrize("layer", ["project", "user"])
def test_over_capacity_low_goes_first_even_when_newer(tmp_path: Path, layer: Layer) -> None:
    first = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    plan = [("normal", 10)] * 5 + [("critical", 10)] * 2 + [("low", 40)] * 4
    saved = _fill(first, plan, layer)
    capacity = _tokens(first, layer) + 5
    w = with_capacity(tmp_path, layer, capacity)
    saved |= _fill(w, [("normal", 10)], layer)
    assert _tokens(w, layer) <= capacity
    gone = _gone(w, saved, layer)
    assert gone and gone <= _of(saved, "low")


def test_normal_goes_when_no_low_is_left_and_critical_stays(tmp_path: Path) -> None:
    first = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    hand = "# Hand notes\n\nwritten by hand and never evicted\n"
    first.memory.folder("project").mkdir(parents=True)
    (first.memory.folder("project") / "hand.md").write_text(hand)
    plan = [("critical", 60)] * 4 + [("normal", 60), ("low", 0)] * 3
    saved = _fill(first, plan)
    before = _tokens(first, "project")
    capacity = before + 2
    w = with_capacity(tmp_path, "project", capacity)
    new = _fill(w, [("normal", 40)])
    saved |= new
    # Why: the low entries alone cannot bring the layer back under capacity.
    assert (
        before
        + sum(s.tokens for s in new.values())
        - sum(saved[i].tokens for i in _of(saved, "low"))
        > capacity
    )
    assert _tokens(w, "project") <= capacity
    gone = _gone(w, saved)
    assert _of(saved, "low") <= gone
    assert gone & _of(saved, "normal") and not gone & _of(saved, "critical")
    assert (w.memory.folder("project") / "hand.md").read_text() == hand


def test_critical_is_evicted_when_the_layer_is_still_99_percent_full(tmp_path: Path) -> None:
    first = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    saved = _fill(first, [("critical", 40)] * 8)
    capacity = _tokens(first, "project")  # full to the brim with critical entries
    w = with_capacity(tmp_path, "project", capacity)
    saved |= _fill(w, [("critical", 40)])
    after = _tokens(w, "project")
    gone = _gone(w, saved)
    assert gone
    assert after <= 0.99 * capacity
    # It stopped as soon as the layer was under 99 %: one fewer would still be over.
    assert after + min(saved[i].tokens for i in gone) > 0.99 * capacity


def test_critical_is_kept_while_the_layer_is_under_99_percent(tmp_path: Path) -> None:
    first = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    saved = _fill(first, [("critical", 40)] * 8 + [("normal", 30)] * 3)
    critical = sum(saved[i].tokens for i in _of(saved, "critical"))
    capacity = int((critical + 48) / 0.95)  # criticals (with the new one) fill ~95 %
    w = with_capacity(tmp_path, "project", capacity)
    saved |= _fill(w, [("critical", 40)])
    after = _tokens(w, "project")
    assert 0.9 * capacity < after < 0.99 * capacity
    assert _gone(w, saved) == _of(saved, "normal")


def test_saving_into_a_full_layer_does_not_fail_with_not_found(tmp_path: Path) -> None:
    first = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    saved = _fill(first, [("critical", 10)] * 5)
    w = with_capacity(tmp_path, "project", _tokens(first, "project") + 2)
    try:
        saved |= _fill(w, [("low", 6)])
    except NotFoundError as exc:
        pytest.fail(f"save raised {exc}")
    _gone(w, saved)
