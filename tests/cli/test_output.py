"""Fitted tables: what gives way when the terminal is narrow, and what never does."""

from __future__ import annotations

from workhearth.cli.output import Column, cut, fit_table

COLUMNS = [Column("id", cut="never"), Column("title"), Column("workspace", cut="start")]
ROWS = [["20261201-120748-783d5b1d137a32d6", "a rather long title " * 3, "/home/me/projects/app"]]


def test_a_table_that_fits_is_left_alone() -> None:
    lines = fit_table(COLUMNS, ROWS, width=200)
    assert lines[1].split("  ")[1].strip() == ("a rather long title " * 3).strip()
    assert fit_table(COLUMNS, ROWS, width=None) == fit_table(COLUMNS, ROWS, width=10_000)


def test_the_title_gives_way_first_then_the_workspace_keeps_its_tail() -> None:
    steps = [(1, 20), (2, 8), (1, 6)]
    roomy = fit_table(COLUMNS, ROWS, shrink=steps, width=80)
    assert roomy[1] == (
        "20261201-120748-783d5b1d137a32d6  a rather long title a…   /home/me/projects/app"
    )
    narrow = fit_table(COLUMNS, ROWS, shrink=steps, width=60)
    assert narrow[1] == "20261201-120748-783d5b1d137a32d6  a rather long t…  …cts/app"
    assert all(len(line) <= 60 for line in narrow)


def test_an_id_is_never_cut_even_when_nothing_else_is_left() -> None:
    lines = fit_table(COLUMNS, ROWS, shrink=[(0, 1), (1, 4)], drop=[1, 2], width=20)
    assert lines[1] == "20261201-120748-783d5b1d137a32d6"


def test_cut_counts_wide_characters_as_two_cells() -> None:
    assert cut("修复登录问题并且加上测试", 9) == "修复登录…"
    assert cut("/a/b/c/project", 9, "start") == "…/project"
    assert cut("short", 9) == "short"
