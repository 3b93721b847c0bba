"""The one table style: what keeps the width when the terminal is narrow, and what never gives way."""

from __future__ import annotations

import pytest

from workhearth.cli.tables import Column, cut, fit_table, short_size, unique_prefixes

SID = "20261201-120748-783d5b1d137a32d6"
COLUMNS = [
    Column("id", cut="never", short=20),
    Column("updated", cut="never"),
    Column("title", main=True),
    Column("workspace", cut="start", cap=16, drop=1),
]
ROWS = [
    [SID, "12-01 12:07", "a rather long title " * 3, "/home/me/projects/app"],
    ["20261201-120748-9aa0000000000000", "12-01 12:07", "short", "/srv/other"],
]


def test_a_table_that_fits_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # into a pipe: no width to fit
    lines = fit_table(COLUMNS, ROWS, width=200)
    assert lines[1].split("  ")[2].strip() == ("a rather long title " * 3).strip()
    assert SID in lines[1] and "/home/me/projects/app" in lines[1]
    assert fit_table(COLUMNS, ROWS, width=None) == fit_table(COLUMNS, ROWS, width=10_000)


def test_at_80_columns_the_free_text_keeps_most_of_the_line() -> None:
    lines = fit_table(COLUMNS, ROWS, width=80)
    assert all(len(line) <= 80 for line in lines)
    assert lines[0].split() == ["id", "updated", "title"]  # the workspace gave way
    assert lines[1].startswith("20261201-120748-783d  12-01 12:07  a rather long title")
    title = lines[1].split("  ", 2)[2]
    assert len(title) == 80 - 20 - 2 - 11 - 2 and title.endswith("…")


def test_room_the_free_text_does_not_need_goes_back_to_the_others() -> None:
    rows = [[SID, "12-01 12:07", "short", "/home/me/projects/some-long-folder/app"]]
    lines = fit_table(COLUMNS, rows, width=80)
    assert lines[1].endswith("  short  /home/me/projects/some-long-folder/app")
    assert len(lines[1]) <= 80


def test_a_cut_path_keeps_its_tail_from_a_slash() -> None:
    rows = [[SID, "12-01 12:07", "t" * 30, "/home/me/projects/app"]]
    line = fit_table(COLUMNS, rows, width=86)[1]
    assert line.endswith("  " + "t" * 30 + "  …/me/projects/app") and len(line) <= 86


def test_an_id_is_never_cut_even_when_nothing_else_is_left() -> None:
    lines = fit_table([Column("id", cut="never"), Column("title", main=True)], ROWS, width=20)
    assert lines[1].startswith(SID + "  ")


def test_short_ids_are_unique_prefixes() -> None:
    ids = ["20261201-120748-aaaa01", "20261201-120748-aaaa02", "20261201-130000-bbbbbb"]
    assert unique_prefixes(ids, 17) == [
        "20261201-120748-aaaa01",
        "20261201-120748-aaaa02",
        "20261201-130000-b",
    ]
    assert unique_prefixes(["abc", "abc"], 1) == ["a", "a"]  # the same id twice is one id


def test_cut_counts_wide_characters_as_two_cells() -> None:
    assert cut("修复登录问题并且加上测试", 9) == "修复登录…"
    assert cut("/a/b/c/project", 9, "start") == "…/project"
    assert cut("short", 9) == "short"


def test_sizes_read_short() -> None:
    assert [short_size(n) for n in (0, 812, 4_100, 23_000_000, 5 * 10**12)] == [
        "0 B",
        "812 B",
        "4.1 kB",
        "23 MB",
        "5000 GB",
    ]
