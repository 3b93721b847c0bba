"""The bank face of memory (DESIGN §4 Bank rules, §8): limits, ids, secrets, paging,
edit / delete with provenance, and how search treats Chinese, Japanese and FTS5 syntax."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from workhearth import Workhearth
from workhearth.errors import NotFoundError, UsageError
from workhearth.memory.bank import Provenance


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Workhearth]:
    w = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    yield w
    w.memory.close()


def stored_bytes(wh: Workhearth) -> bytes:
    """Everything hearth keeps under its home: Markdown, meta, index, logs."""
    return b"".join(p.read_bytes() for p in sorted(wh.home.rglob("*")) if p.is_file())


def meta_of(wh: Workhearth, entry_id: str) -> dict[str, Any]:
    path = wh.memory.folder("project") / "memory_meta.json"
    return json.loads(path.read_text())["entries"][entry_id]


# ------------------------------------------------------------------ limits
def _save(**kw: Any) -> Callable[[Workhearth], object]:
    return lambda w: w.memory.save(kw.pop("content", "a plain fact"), **kw)


LIMITS = {
    "content 8000": (_save(content="x" * 8000), _save(content="x" * 8001)),
    "32 tags": (
        _save(tags=[f"t{i}" for i in range(32)]),
        _save(tags=[f"t{i}" for i in range(33)]),
    ),
    "tag of 64": (_save(tags=["t" * 64]), _save(tags=["t" * 65])),
    "16 snippets": (
        _save(contexts=[{"snippet": f"s{i}"} for i in range(16)]),
        _save(contexts=[{"snippet": f"s{i}"} for i in range(17)]),
    ),
    "snippet of 4000": (
        _save(contexts=[{"snippet": "s" * 4000}]),
        _save(contexts=[{"snippet": "s" * 4001}]),
    ),
    "query 512": (lambda w: w.memory.search("q" * 512), lambda w: w.memory.search("q" * 513)),
    "search limit 50": (
        lambda w: w.memory.search("fact", limit=50),
        lambda w: w.memory.search("fact", limit=51),
    ),
    "search limit 1": (
        lambda w: w.memory.search("fact", limit=1),
        lambda w: w.memory.search("fact", limit=0),
    ),
    "list limit 100": (lambda w: w.memory.list(limit=100), lambda w: w.memory.list(limit=101)),
    "list limit 1": (lambda w: w.memory.list(limit=1), lambda w: w.memory.list(limit=0)),
}


@pytest.mark.parametrize("name", list(LIMITS))
def test_limits_accept_at_and_reject_just_past(wh: Workhearth, name: str) -> None:
    at, past = LIMITS[name]
    wh.memory.save("an existing fact")
    before = stored_bytes(wh)
    with pytest.raises(UsageError):
        past(wh)
    assert stored_bytes(wh) == before
    at(wh)


def test_a_content_at_the_limit_is_stored_whole(wh: Workhearth) -> None:
    content = ("lynx " * 1600)[:7999] + "!"
    assert len(content) == 8000
    assert wh.memory.get(wh.memory.save(content).id).content == content


def test_empty_search_is_no_results_not_an_error(wh: Workhearth) -> None:
    assert wh.memory.search("nothing saved yet") == []
    wh.memory.save("a fact about otters")
    assert wh.memory.search("") == []
    assert wh.memory.search("   ") == []
    assert wh.memory.search("zzzqqq") == []


@pytest.mark.parametrize("bad", ["m-zzzzzzzz", "m-23456789", "bogus", "", "../MEMORY.md"])
def test_unknown_ids_are_not_found(wh: Workhearth, bad: str) -> None:
    wh.memory.save("a fact")
    for call in (
        lambda: wh.memory.get(bad),
        lambda: wh.memory.edit(bad, "new text"),
        lambda: wh.memory.delete(bad),
    ):
        with pytest.raises(NotFoundError):
            call()


def test_another_workspaces_id_is_not_found_and_leaks_nothing(tmp_path: Path) -> None:
    mine = Workhearth(home=tmp_path / "home", workspace=tmp_path / "mine")
    theirs = Workhearth(home=tmp_path / "home", workspace=tmp_path / "theirs")
    entry = theirs.memory.save("their private pelican plan")
    with pytest.raises(NotFoundError) as err:
        mine.memory.get(entry.id)
    assert "pelican" not in str(err.value) and "theirs" not in str(err.value)
    assert mine.memory.search("pelican") == []
    assert mine.memory.list(layer="project")[0] == []


# ----------------------------------------------------------------- secrets
SECRETS = {
    "openai": ("sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF", "Ab3dE6gH9jK2mN5pQ8sT1vW4"),
    "anthropic": ("sk-ant-api03-Zq8Wx7Vc6Bn5Ml4Kj3Hg2Fd1Sa0", "Zq8Wx7Vc6Bn5Ml4Kj3Hg2Fd1"),
    "aws": ("AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    "github": ("ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0"),
    "private key": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7vQ9xL2\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7vQ9xL2",
    ),
    "password": ("password = hunter2hunter", "hunter2hunter"),
}


@pytest.mark.parametrize("kind", list(SECRETS))
def test_secrets_are_refused_in_content_and_snippet(wh: Workhearth, kind: str) -> None:
    secret, core = SECRETS[kind]
    with pytest.raises(UsageError):
        wh.memory.save(f"the value is {secret} here")
    with pytest.raises(UsageError):
        wh.memory.save("a clean fact", contexts=[{"snippet": f"user said {secret}"}])
    entry = wh.memory.save("a clean fact")
    with pytest.raises(UsageError):
        wh.memory.edit(entry.id, f"now {secret}")
    assert core.encode() not in stored_bytes(wh)
    assert wh.memory.get(entry.id).content == "a clean fact"


@pytest.mark.parametrize("kind", list(SECRETS))
def test_secrets_are_redacted_when_asked(wh: Workhearth, kind: str) -> None:
    secret, core = SECRETS[kind]
    entry = wh.memory.save(
        f"deploy with {secret} please",
        contexts=[Provenance(snippet=f"pasted {secret}", session_id="s1")],
        redact=True,
    )
    wh.memory.index()
    assert core.encode() not in stored_bytes(wh)
    got = wh.memory.get(entry.id)
    assert got.content.startswith("deploy with ") and "REDACTED" in got.content
    assert "REDACTED" in got.provenance[0]["snippet"]
    edited = wh.memory.edit(entry.id, f"rotate {secret} soon", redact=True)
    assert "REDACTED" in edited.content and core.encode() not in stored_bytes(wh)


def test_a_secret_in_a_tag_is_never_stored(wh: Workhearth) -> None:
    secret, core = SECRETS["openai"]
    try:
        wh.memory.save("a clean fact", tags=[secret])
    except UsageError:
        pass
    assert core.encode() not in stored_bytes(wh)


# ------------------------------------------------- list, edit, delete, provenance
def _page_all(wh: Workhearth, limit: int, between: Callable[[], None] | None = None) -> list[str]:
    seen: list[str] = []
    cursor = None
    for _ in range(100):
        entries, cursor = wh.memory.list(limit=limit, cursor=cursor)
        assert len(entries) <= limit
        seen += [e.id for e in entries]
        if between:
            between()
        if cursor is None:
            return seen
    raise AssertionError("the cursor never ended")


def test_list_is_newest_first_and_pages_through_everything_once(wh: Workhearth) -> None:
    layers = ("user", "project")
    saved = [wh.memory.save(f"fact number {i}", layer=layers[i % 2]).id for i in range(23)]
    for limit in (1, 5, 7, 23, 100):
        assert _page_all(wh, limit) == saved[::-1], limit


def test_paging_while_entries_are_added_returns_each_old_entry_once(wh: Workhearth) -> None:
    saved = [wh.memory.save(f"fact number {i}").id for i in range(12)]
    added: list[str] = []
    seen = _page_all(wh, 4, lambda: added.append(wh.memory.save("a newer fact").id))
    assert seen == saved[::-1]
    assert not set(added) & set(seen)


def test_a_bad_cursor_is_a_usage_error(wh: Workhearth) -> None:
    wh.memory.save("a fact")
    with pytest.raises(UsageError):
        wh.memory.list(cursor="not-a-cursor!!")


def test_edit_keeps_the_id_and_the_meta(wh: Workhearth) -> None:
    wh.memory.save("a fact before")
    prov = {"snippet": "we chose jade", "session_id": "s-1", "message_id": "m-9", "origin": "cli"}
    entry = wh.memory.save("the colour is jade", level="critical", tags=["ui"], contexts=[prov])
    wh.memory.save("a fact after")
    edited = wh.memory.edit(entry.id, "the colour is amber")
    assert edited.id == entry.id
    assert (edited.content, edited.level, edited.tags) == (
        "the colour is amber",
        "critical",
        ["ui"],
    )
    assert edited.provenance == [prov] and edited.created == entry.created
    assert edited.updated >= entry.updated and edited.line == entry.line
    text = (wh.memory.folder("project") / "MEMORY.md").read_text()
    assert f"- the colour is amber ^{entry.id}" in text and "jade" not in text
    wh.memory.index()
    assert wh.memory.search("jade") == []
    assert [h.entry_id for h in wh.memory.search("amber")] == [entry.id]


def test_delete_removes_the_line_and_logs_it(wh: Workhearth) -> None:
    keep = wh.memory.save("keep the heron")
    prov = Provenance(snippet="about the crane", session_id="s-2", message_id="7", origin="lib")
    gone = wh.memory.save("forget the crane", level="low", tags=["birds"], contexts=[prov])
    wh.memory.delete(gone.id)
    folder = wh.memory.folder("project")
    assert "crane" not in (folder / "MEMORY.md").read_text()
    assert gone.id not in json.loads((folder / "memory_meta.json").read_text())["entries"]
    (logged,) = [json.loads(x) for x in (folder / ".memory_evicted.log").read_text().splitlines()]
    assert (logged["id"], logged["content"]) == (gone.id, "forget the crane")
    assert logged["meta"]["level"] == "low" and logged["meta"]["tags"] == ["birds"]
    assert logged["meta"]["provenance"][0]["snippet"] == "about the crane"
    with pytest.raises(NotFoundError):
        wh.memory.get(gone.id)
    with pytest.raises(NotFoundError):
        wh.memory.delete(gone.id)
    assert [e.id for e in wh.memory.list()[0]] == [keep.id]


def test_provenance_is_stored_by_id_and_returned(wh: Workhearth) -> None:
    contexts: list[Provenance | dict[str, Any]] = [
        Provenance(snippet="first words", session_id="sess-a", message_id="msg-1", origin="chat"),
        {"snippet": "second words", "session_id": "sess-b", "message_id": "msg-2", "origin": "mcp"},
    ]
    entry = wh.memory.save("a fact with a history", contexts=contexts)
    want = [
        {"snippet": "first words", "session_id": "sess-a", "message_id": "msg-1", "origin": "chat"},
        {"snippet": "second words", "session_id": "sess-b", "message_id": "msg-2", "origin": "mcp"},
    ]
    assert meta_of(wh, entry.id)["provenance"] == want
    assert wh.memory.get(entry.id).provenance == want
    again = Workhearth(home=wh.home, workspace=wh.workspace)
    assert again.memory.get(entry.id).provenance == want


# ------------------------------------------------------------------ search
def _ids(wh: Workhearth, q: str) -> list[str | None]:
    return [h.entry_id for h in wh.memory.search(q, limit=50)]


@pytest.mark.parametrize(
    "query,text",
    [
        ("记忆", "会话记忆保存在文件里"),
        ("会话", "会话记忆保存在文件里"),
        ("崩溃恢复", "进程崩溃后可以恢复"),
        ("かな", "かな文字と漢字とカタカナのメモ"),
        ("漢字", "かな文字と漢字とカタカナのメモ"),
        ("カタカナ", "かな文字と漢字とカタカナのメモ"),
        ("部署 staging", "部署到 staging 服务器"),
        ("Markdown 会话", "会话 are kept in Markdown files"),
    ],
)
def test_cjk_queries_find_their_text(wh: Workhearth, query: str, text: str) -> None:
    wh.memory.save("an unrelated english fact about gardens")
    wh.memory.save("记录回忆 and 话会 are different words")
    entry = wh.memory.save(text)
    assert _ids(wh, query)[0] == entry.id


def test_two_character_word_does_not_match_scattered_characters(wh: Workhearth) -> None:
    wh.memory.save("记录回忆")
    assert wh.memory.search("记忆") == []


def test_whole_phrase_ranks_before_its_words(wh: Workhearth) -> None:
    words = wh.memory.save("进程崩溃后可以恢复")
    phrase = wh.memory.save("崩溃恢复很重要")
    ids = _ids(wh, "崩溃恢复")
    assert ids[0] == phrase.id
    assert len(set(ids)) == len(ids)
    wh.memory.delete(phrase.id)
    assert _ids(wh, "崩溃恢复") == [words.id]


def test_a_long_phrase_is_matched_whole_though_few_trigrams_are_asked(wh: Workhearth) -> None:
    """A substring query asks FTS5 for a few of its trigrams; ``instr`` keeps the
    exact phrase only: a text holding those trigrams (and every word) elsewhere is
    not taken for it."""
    from workhearth.memory.search import _trigram_match

    query = "quick brown fox jumps over"
    decoy = wh.memory.save("jumps over quick brown fox; the fox jumps over quick brown dogs")
    asked = _trigram_match(query).replace('"', "").split(" AND ")
    assert len(asked) < len(query) - 2 and all(g in decoy.content for g in asked)
    exact = wh.memory.save("Notes: the quick brown fox jumps over the fence")
    hits = wh.memory.search(query)
    assert [h.entry_id for h in hits][:2] == [exact.id, decoy.id]
    assert hits[1].score < 0.6
    wh.memory.delete(exact.id)
    assert [h.entry_id for h in wh.memory.search(query)] == [decoy.id]


def test_single_cjk_character_is_found(wh: Workhearth) -> None:
    entry = wh.memory.save("我的猫叫小白")
    assert _ids(wh, "猫") == [entry.id]


FTS_SYNTAX = ['"', "*", "NEAR(a b)", "AND", "OR", "NOT", "(", ")", "-x", "a:b", "a/b", "^", "{x}"]


@pytest.mark.parametrize("token", FTS_SYNTAX)
def test_fts5_syntax_is_searched_as_text(wh: Workhearth, token: str) -> None:
    wh.memory.save("an unrelated fact about gardens")
    entry = wh.memory.save(f"the manual says {token} works here")
    for q in (token, f"{token} works", f'"{token}', f"{token})", f"({token} OR"):
        wh.memory.search(q)  # never an error
    assert entry.id in _ids(wh, token)


def test_scores_are_relative_to_the_best_and_never_under_a_tenth(wh: Workhearth) -> None:
    for i in range(30):
        wh.memory.save(f"note {i}: " + "badger " * (i % 5 + 1) + "meadow " * (i % 3))
    hits = wh.memory.search("badger meadow burrow", limit=50)
    scores = [h.score for h in hits]
    assert scores[0] == 1.0
    assert scores == sorted(scores, reverse=True)
    assert all(0.1 <= s <= 1.0 for s in scores)
    assert len(wh.memory.search("badger meadow burrow")) == 6  # top 6 by default


def test_tags_named_by_a_query_follow_saves_edits_and_deletes_of_a_warm_object(
    wh: Workhearth,
) -> None:
    # Why: search groups entries by tag once; every change must still be seen.
    def found(query: str, limit: int = 6) -> list[str | None]:
        return [h.entry_id for h in wh.memory.search(query, limit=limit)]

    def in_meta_order(*ids: str) -> list[str | None]:
        return [i for i in wh.memory.store("project").meta.entries if i in ids]

    first = wh.memory.save("the kettle is in the shed", tags=["Garden Tools"])
    assert found("garden tool") == [first.id]
    second = wh.memory.save("the rake hangs by the door", tags=["garden tools", "rake"])
    third = wh.memory.save("the hose leaks", tags=["tool"])
    assert found("garden tool") == in_meta_order(first.id, second.id, third.id)
    wh.memory.delete(second.id)
    assert found("garden tool") == in_meta_order(first.id, third.id)
    wh.memory.restore(second.id)
    assert found("garden tool", limit=2) == in_meta_order(first.id, second.id, third.id)[:2]
    assert wh.memory.search("rake")[0].tags == ["garden tools", "rake"]


def test_meta_groups_entries_by_tag_in_order_until_it_changes(tmp_path: Path) -> None:
    from workhearth.memory.meta import EntryMeta, MetaStore

    store = MetaStore(tmp_path / "memory_meta.json")
    store.put("m-aaaaaaaa", EntryMeta(tags=["x", "y", "x"]))
    store.put("m-bbbbbbbb", EntryMeta(tags=[]))
    store.put("m-cccccccc", EntryMeta(tags=["y"]))
    assert store.by_tag() == {"x": [(0, "m-aaaaaaaa")], "y": [(0, "m-aaaaaaaa"), (2, "m-cccccccc")]}
    store.drop("m-aaaaaaaa")
    assert store.by_tag() == {"y": [(1, "m-cccccccc")]}
    store.entries = {"m-dddddddd": EntryMeta(tags=["z"])}  # replaced whole, as reflection does
    assert store.by_tag() == {"z": [(0, "m-dddddddd")]}


def test_a_pending_entry_is_confirmed_by_the_users_edit(tmp_path: Path) -> None:
    wh = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    entry = wh.memory.save("The deploy key rotates monthly.", pending=True)
    assert wh.memory.get(entry.id).pending
    edited = wh.memory.edit(entry.id, "The deploy key rotates every month.")
    assert not edited.pending and edited.content == "The deploy key rotates every month."


def test_reading_memory_never_loads_the_secret_scanner(tmp_path: Path) -> None:
    """Search, list and context leave the scanner's rules uncompiled (a save needs them)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from workhearth import Workhearth\n"
        f"wh = Workhearth(home={str(tmp_path / 'home')!r}, workspace={str(tmp_path)!r})\n"
        "loaded = lambda: 'workhearth.memory.secrets' in sys.modules\n"
        "wh.memory.search('gecko'); wh.memory.list(); wh.memory.context()\n"
        "before = loaded()\n"
        "wh.memory.save('A gecko naps.')\n"
        "print(before, loaded())\n"
    )
    setup = Workhearth(home=tmp_path / "home", workspace=tmp_path)
    setup.memory.save("A gecko hunts at night.")
    setup.memory.close()
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["False", "True"]


def test_meta_entries_are_parsed_on_use_and_others_written_back_as_read(tmp_path: Path) -> None:
    """The meta is read lazily: an entry nobody looked at is written back byte for byte
    (odd hand-edited values included); one that was used is written in the checked form;
    tags are grouped with the same checks without parsing anything."""
    from workhearth.memory.meta import EntryTable, MetaStore

    path = tmp_path / "memory_meta.json"
    odd = {"level": 7, "tags": ["x", 3, "x"], "color": "teal"}
    path.write_text(json.dumps({"version": 1, "entries": {"m-aaaaaaaa": odd, "m-bbbbbbbb": odd}}))
    store = MetaStore(path)
    assert isinstance(store.entries, EntryTable)
    assert store.by_tag() == {"x": [(0, "m-aaaaaaaa"), (1, "m-bbbbbbbb")]}
    used = store.get("m-bbbbbbbb")
    assert used is not None and used.level == "normal" and used.tags == ["x", "x"]
    store.save()
    written = json.loads(path.read_text())["entries"]
    assert written["m-aaaaaaaa"] == odd
    assert written["m-bbbbbbbb"]["level"] == "normal"
    assert written["m-bbbbbbbb"]["tags"] == ["x", "x"]
    assert written["m-bbbbbbbb"]["color"] == "teal"
    assert MetaStore(path).by_tag() == store.by_tag()
