"""Workspace folder encoding: readable, reversible, collision-free, short (DESIGN §2)."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workhearth.errors import UsageError
from workhearth.paths import MAX_NAME_BYTES, decode_workspace, encode_workspace, is_hashed_name

segment = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"),
    min_size=1,
    max_size=12,
)
abs_paths = st.lists(segment, min_size=1, max_size=6).map(lambda parts: "/" + "/".join(parts))
windows_paths = st.tuples(
    st.sampled_from("CDZcd"), st.lists(segment.filter(lambda s: "\\" not in s), max_size=4)
).map(lambda t: f"{t[0]}:\\" + "\\".join(t[1]))


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def test_readable_like_claude_code() -> None:
    assert encode_workspace("/home/ana/work/app") == "-home-ana-work-app"
    assert encode_workspace("/home/ana/my-app") == "-home-ana-my+app"
    assert encode_workspace("/home/Ana/项目") == "-home-^ana-项目"


@pytest.mark.parametrize(
    "path",
    [
        "/a-b/c",
        "/a/b-c",
        "/a.b/c d",
        "C:\\Users\\ana\\app",
        "/home/ana/Docs/ÉTÉ",
        "/tmp/ß/straße",
        "/x/%2d/~/^",
        "/emoji/🔥",
    ],
)
def test_round_trip_examples(path: str) -> None:
    name = encode_workspace(path)
    assert decode_workspace(name) == path
    assert "/" not in name and "\\" not in name


def test_dash_and_slash_never_collide() -> None:
    assert encode_workspace("/a-/b") != encode_workspace("/a/-b")
    assert encode_workspace("/a/b") != encode_workspace("/a-b")


@given(abs_paths)
@settings(max_examples=400)
def test_decode_inverts_encode(path: str) -> None:
    name = encode_workspace(path)
    if not is_hashed_name(name):
        assert decode_workspace(name) == nfc(path)
    assert len(name.encode("utf-8")) <= MAX_NAME_BYTES


@given(windows_paths)
def test_windows_paths_round_trip(path: str) -> None:
    name = encode_workspace(path)
    if not is_hashed_name(name):
        assert decode_workspace(name) == nfc(path)


@given(abs_paths, abs_paths)
@settings(max_examples=400)
def test_distinct_paths_never_share_a_name_even_case_folded(a: str, b: str) -> None:
    if nfc(a) == nfc(b):
        assert encode_workspace(a) == encode_workspace(b)
    else:
        assert encode_workspace(a).casefold() != encode_workspace(b).casefold()


def test_case_only_difference_is_safe_on_case_insensitive_filesystems() -> None:
    names = {encode_workspace(p).casefold() for p in ["/Work/App", "/work/app", "/WORK/APP"]}
    assert len(names) == 3


def test_nfc_and_nfd_share_one_folder() -> None:
    composed = "/home/ana/caf\u00e9"
    decomposed = "/home/ana/cafe\u0301"
    assert encode_workspace(composed) == encode_workspace(decomposed)


def test_long_paths_keep_a_readable_prefix_and_a_hash() -> None:
    long_a = "/data/" + "x" * 400 + "/a"
    long_b = "/data/" + "x" * 400 + "/b"
    na, nb = encode_workspace(long_a), encode_workspace(long_b)
    assert na != nb
    assert na.startswith("-data-xxx")
    assert len(na.encode()) <= MAX_NAME_BYTES and is_hashed_name(na)
    with pytest.raises(UsageError):
        decode_workspace(na)


def test_long_unicode_path_is_cut_between_characters() -> None:
    name = encode_workspace("/" + "記憶" * 200)
    assert len(name.encode()) <= MAX_NAME_BYTES
    name.encode("utf-8").decode("utf-8")  # a cut inside a character would not decode
