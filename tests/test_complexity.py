"""Functions a reader can hold (issue #20 item 12): radon rates none D or worse outside
the built-in skill scripts (standalone programs, tested by running them)."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit

SRC = Path(__file__).resolve().parent.parent / "src" / "workhearth"
SKILL_SCRIPTS = SRC / "skills" / "builtin"


def test_no_function_is_rated_d_or_worse() -> None:
    too_complex = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(SKILL_SCRIPTS):
            continue
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if cc_rank(block.complexity) >= "D":
                name = (
                    f"{block.classname}.{block.name}"
                    if getattr(block, "classname", None)
                    else block.name
                )
                too_complex.append(
                    f"{path.relative_to(SRC)}:{block.lineno} {name} {cc_rank(block.complexity)} ({block.complexity})"
                )
    assert too_complex == [], "split these into pieces a reader can hold:\n" + "\n".join(
        too_complex
    )
