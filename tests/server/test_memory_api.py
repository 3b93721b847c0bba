"""``/v1/memory``: every route, status code and limit of DESIGN §4 and §6."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import make_hearth
from tests.server.conftest import Served
from workhearth.memory.bank import CONTENT_MAX

SAVE = "/v1/memory"
NO_ENTRY = {"detail": "no such memory entry", "code": "not_found", "params": {}}


def save(served: Served, content: str, **extra: object) -> dict:
    response = served.api.post(SAVE, json={"content": content, **extra})
    assert response.status_code == 201, response.text
    return response.json()


def test_save_returns_201_and_the_entry(served: Served) -> None:
    entry = save(
        served,
        "The staging database is on port 5433",
        level="critical",
        tags=["db", "staging"],
        contexts=[{"snippet": "it runs on 5433", "session_id": "s1", "origin": "chat"}],
    )
    assert entry["content"] == "The staging database is on port 5433"
    assert entry["level"] == "critical" and entry["tags"] == ["db", "staging"]
    assert entry["provenance"][0]["origin"] == "chat"
    assert served.library().memory.get(entry["id"]).content == entry["content"]


@pytest.mark.parametrize("body", [b"\xc3\x28", b"\xff\xfe not utf-8", b"{not json"])
def test_a_body_that_is_not_json_is_a_documented_422(served: Served, body: bytes) -> None:
    response = served.api.post(SAVE, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    assert response.json() == {
        "detail": "the request body is not valid JSON",
        "code": "not_json",
        "params": {},
    }
    documented = served.api.get("/openapi.json").json()["paths"][SAVE]["post"]["responses"]
    assert "422" in documented


def test_saving_the_same_sentence_again_returns_the_entry_with_200(served: Served) -> None:
    first = save(served, "Use tabs in the Makefile")
    again = served.api.post(SAVE, json={"content": "Use tabs in the Makefile"})
    assert again.status_code == 200 and again.json()["id"] == first["id"]


def test_search_finds_and_an_empty_search_is_200_with_no_results(served: Served) -> None:
    entry = save(served, "Deploys go through the blue-green pipeline")
    found = served.api.get("/v1/memory/search", params={"q": "pipeline"})
    assert found.status_code == 200
    assert [h["entry_id"] for h in found.json()["results"]] == [entry["id"]]
    nothing = served.api.get("/v1/memory/search", params={"q": "kangaroo"})
    assert nothing.status_code == 200 and nothing.json() == {"results": []}


def test_list_pages_newest_first_and_filters_by_tag(served: Served) -> None:
    ids = [
        save(served, f"fact number {i} about llamas", tags=[f"t{i % 2}"])["id"] for i in range(5)
    ]
    page = served.api.get(SAVE, params={"limit": 2}).json()
    assert [e["id"] for e in page["entries"]] == ids[::-1][:2] and page["next_cursor"]
    rest = served.api.get(SAVE, params={"limit": 100, "cursor": page["next_cursor"]}).json()
    assert [e["id"] for e in rest["entries"]] == ids[::-1][2:] and rest["next_cursor"] is None
    tagged = served.api.get(SAVE, params={"tag": "t1"}).json()["entries"]
    assert {e["id"] for e in tagged} == {ids[1], ids[3]}
    bad = served.api.get(SAVE, params={"cursor": "!!not-a-cursor"})
    assert bad.status_code == 422 and "cursor" in bad.json()["detail"]


def test_edit_delete_and_restore(served: Served) -> None:
    entry = save(served, "The office closes at six")
    edited = served.api.patch(f"{SAVE}/{entry['id']}", json={"content": "The office closes at 7"})
    assert edited.status_code == 200 and edited.json()["content"] == "The office closes at 7"
    deleted = served.api.delete(f"{SAVE}/{entry['id']}")
    assert deleted.status_code == 204 and deleted.content == b""
    assert served.api.get("/v1/memory/search", params={"q": "office"}).json()["results"] == []
    restored = served.api.post(f"{SAVE}/{entry['id']}/restore")
    assert restored.status_code == 200 and restored.json()["content"] == "The office closes at 7"
    again = served.api.post(f"{SAVE}/{entry['id']}/restore")
    assert again.status_code == 409 and "not deleted" in again.json()["detail"]


@pytest.mark.parametrize(
    "bad_id", ["m-00000000", "m-zzzzzzzz", "nope", "...", "x" * 300, "%00", "m-0%2F1", "%E4%BD%A0"]
)
def test_unknown_and_malformed_ids_get_the_same_404(served: Served, bad_id: str) -> None:
    save(served, "something to have a memory folder")
    for method, path, body in (
        ("PATCH", f"{SAVE}/{bad_id}", {"content": "new"}),
        ("DELETE", f"{SAVE}/{bad_id}", None),
        ("POST", f"{SAVE}/{bad_id}/restore", None),
    ):
        response = served.api.request(method, path, json=body)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json() == NO_ENTRY


def test_an_entry_of_another_workspace_is_a_404_here(served: Served, tmp_path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    theirs = save(served, "A fact of the other project", workspace=str(other))
    assert served.api.delete(f"{SAVE}/{theirs['id']}").json() == NO_ENTRY
    mine = served.api.delete(f"{SAVE}/{theirs['id']}", params={"workspace": str(other)})
    assert mine.status_code == 204


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"content": "x" * (CONTENT_MAX + 1)}, "content: at most 8000 characters"),
        ({"content": ""}, "content"),
        ({"content": "ok", "tags": ["t"] * 33}, "tags: at most 32 items"),
        ({"content": "ok", "tags": ["x" * 65]}, "tags.0: at most 64 characters"),
        ({"content": "ok", "contexts": [{"snippet": "s"}] * 17}, "contexts: at most 16 items"),
        ({"content": "ok", "contexts": [{"snippet": "s" * 4001}]}, "contexts.0.snippet"),
        ({"content": "ok", "contexts": [{"snippet": "s", "origin": "o" * 65}]}, "origin"),
        ({"content": "ok", "level": "urgent"}, "level"),
        ({"content": "ok", "conent": "typo"}, "conent: is not a field"),
        ({"content": "ok", "workspace": "relative/path"}, "workspace must be an absolute path"),
    ],
)
def test_limits_are_422_with_one_clear_message(served: Served, body: dict, where: str) -> None:
    response = served.api.post(SAVE, json=body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert isinstance(detail, str) and where in detail, detail


def test_query_and_limit_bounds(served: Served) -> None:
    search = "/v1/memory/search"
    assert served.api.get(search, params={"q": "a" * 512}).status_code == 200
    long = served.api.get(search, params={"q": "a" * 513})
    assert long.status_code == 422 and long.json()["detail"] == "q: at most 512 characters"
    assert served.api.get(search, params={"q": "x", "limit": 50}).status_code == 200
    assert served.api.get(search, params={"q": "x", "limit": 51}).status_code == 422
    assert served.api.get(SAVE, params={"limit": 100}).status_code == 200
    assert served.api.get(SAVE, params={"limit": 101}).status_code == 422
    missing = served.api.get(search)
    assert missing.status_code == 422 and missing.json()["detail"] == "q: is required"


def test_a_secret_is_refused_with_the_detectors_message_and_stored_masked_on_redact(
    served: Served,
) -> None:
    key = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    refused = served.api.post(SAVE, json={"content": f"the key is {key}"})
    assert refused.status_code == 422
    assert refused.json()["detail"].startswith("refused: the content looks like it holds a secret")
    in_snippet = served.api.post(SAVE, json={"content": "ok", "contexts": [{"snippet": key}]})
    assert in_snippet.status_code == 422 and "snippet" in in_snippet.json()["detail"]
    masked = served.api.post(SAVE, json={"content": f"the key is {key}", "redact": True})
    assert masked.status_code == 201 and key not in masked.json()["content"]
    assert key not in (served.workspace.parent / "home").joinpath().as_posix()


def test_a_body_over_64_kb_is_413_by_length_and_by_stream(served: Served) -> None:
    big = b'{"content": "' + b"x" * (65 * 1024) + b'"}'
    by_length = served.api.post(SAVE, content=big, headers={"content-type": "application/json"})
    assert by_length.status_code == 413 and "64 KB" in by_length.json()["detail"]

    def chunks():
        for _ in range(70):
            yield b"x" * 1024

    streamed = served.api.post(SAVE, content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413


def test_api_save_is_found_by_the_cli_and_a_cli_save_by_the_api(served: Served, tmp_path) -> None:
    hearth = make_hearth(tmp_path / "cli")
    hearth.env["HEARTH_HOME"] = str(served.home)
    entry = save(served, "The release train leaves every Thursday", workspace=str(hearth.workspace))
    hits = hearth.json("memory", "search", "release train")
    assert [h["entry_id"] for h in hits] == [entry["id"]]

    done = hearth.run("memory", "save", "Invoices are approved by Marta")
    assert done.code == 0, done.err
    found = served.api.get(
        "/v1/memory/search", params={"q": "invoices Marta", "workspace": str(hearth.workspace)}
    ).json()["results"]
    assert found and "Invoices are approved by Marta" in found[0]["text"]


# ------------------------------------------ issue #17: control characters, workspaces
CONTROL_BODIES = [
    {"content": "harmless\u0000looking"},
    {"content": "coloured \u001b[31mred"},
    {"content": "next\u0085line"},
    {"content": "lone \ud800 surrogate"},
    {"content": "ok", "tags": ["t\u0000"]},
    {"content": "ok", "contexts": [{"snippet": "pasted\u0000"}]},
    {"content": "ok", "contexts": [{"snippet": "s", "origin": "chat\u001b]0;pwned\u0007"}]},
    {"content": "ok", "contexts": [{"snippet": "s", "session_id": "s\u00001"}]},
    {"content": "ok", "contexts": [{"snippet": "s", "message_id": "m\u009b1"}]},
]


@pytest.mark.parametrize("body", CONTROL_BODIES, ids=range(len(CONTROL_BODIES)))
def test_control_characters_and_lone_surrogates_are_422(served: Served, body: dict) -> None:
    kept = save(served, "llamas like hay", tags=["farm"])
    # Why by hand: JSON escapes (\u0000, \ud800) as a client sends them; httpx cannot
    # encode a lone surrogate itself.
    raw = json.dumps(body).encode()
    response = served.api.post(SAVE, content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    # (a lone surrogate is already refused by the JSON reader: "not a valid string")
    assert any(w in detail for w in ("control character", "UTF-8", "valid string")), detail
    listed = served.api.get(SAVE).json()["entries"]
    assert [(e["id"], e["tags"]) for e in listed] == [(kept["id"], ["farm"])]


def test_a_control_character_in_an_edit_a_query_or_a_tag_filter_is_422(served: Served) -> None:
    entry = save(served, "llamas like hay")
    edit = served.api.patch(f"{SAVE}/{entry['id']}", json={"content": "now\u0000hidden"})
    assert edit.status_code == 422 and "control character" in edit.json()["detail"]
    search = served.api.get("/v1/memory/search", params={"q": "llamas\u0000"})
    assert search.status_code == 422 and "control character" in search.json()["detail"]
    listed = served.api.get(SAVE, params={"tag": "farm\u001b"})
    assert listed.status_code == 422 and "control character" in listed.json()["detail"]
    assert served.api.get(SAVE).json()["entries"][0]["content"] == "llamas like hay"


@pytest.mark.parametrize("where", ["home", "inside home", "proc root", "proc self cwd"])
def test_hearth_home_and_proc_are_refused_as_workspaces(served: Served, where: str) -> None:
    inside = served.home / "projects"
    inside.mkdir(parents=True, exist_ok=True)
    workspace = {
        "home": str(served.home),
        "inside home": str(inside),
        "proc root": f"/proc/self/root{served.workspace}",
        "proc self cwd": "/proc/self/cwd",
    }[where]
    saved = served.api.post(SAVE, json={"content": "planted", "workspace": workspace})
    assert saved.status_code == 422, saved.text
    detail = saved.json()["detail"]
    assert ("HEARTH_HOME" in detail) if "home" in where else ("/proc" in detail), detail
    assert str(served.home) not in detail  # no error carries a filesystem path
    found = served.api.get("/v1/memory/search", params={"q": "x", "workspace": workspace})
    assert found.status_code == 422
    assert served.api.get(SAVE, params={"workspace": workspace}).status_code == 422
    assert not list(served.home.glob("projects/*proc*")) and not list(
        served.home.glob("projects/*home*")
    )


def test_passwords_in_sentences_are_refused_over_rest(served: Served) -> None:
    from tests.memory.secrets_corpus import PROSE_PASSWORDS

    for sentence in PROSE_PASSWORDS:
        refused = served.api.post(SAVE, json={"content": sentence})
        assert refused.status_code == 422, sentence
        assert refused.json()["detail"].startswith("refused: the content looks like it holds")
        masked = served.api.post(SAVE, json={"content": sentence, "redact": True})
        assert masked.status_code == 201 and "[REDACTED password]" in masked.json()["content"]


def test_the_nul_attack_through_the_real_server(tmp_path) -> None:
    """Issue #17 hole 8 as found: against a running ``hearth serve``, a save holding a NUL
    returned 201, then list and search were empty, every PATCH was a 404 and the metadata
    of every entry was gone for good."""
    import signal
    import subprocess

    import httpx

    from tests.e2e.conftest import HEARTH_CMD

    hearth = make_hearth(tmp_path)
    proc = subprocess.Popen(
        [*HEARTH_CMD, "serve", "--port", "0", "--no-open"],
        cwd=hearth.workspace,
        env=hearth.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = None
        for _ in range(5):
            line = proc.stdout.readline()
            if "/login?token=" in line:
                port = int(line.split(":")[2].split("/")[0])
                break
        assert port is not None, proc.stderr.read() if proc.poll() is not None else "no url"
        token = (hearth.home / "server.token").read_text().strip()
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=20) as c:
            kept = [
                c.post(SAVE, json={"content": t, "level": "critical", "tags": ["farm"]}).json()
                for t in ("llamas like hay", "alpacas are smaller")
            ]
            attack = c.post(SAVE, json={"content": "harmless\u0000looking"})
            assert attack.status_code == 422, attack.text
            assert "control character U+0000" in attack.json()["detail"]
            mcp_like = c.post(SAVE, json={"content": "ok", "tags": ["a\u0000b"]})
            assert mcp_like.status_code == 422
            listed = c.get(SAVE).json()["entries"]
            assert {(e["id"], e["level"], tuple(e["tags"])) for e in listed} == {
                (k["id"], "critical", ("farm",)) for k in kept
            }
            hits = c.get("/v1/memory/search", params={"q": "llamas"}).json()["results"]
            assert [h["entry_id"] for h in hits] == [kept[0]["id"]]
            patched = c.patch(f"{SAVE}/{kept[1]['id']}", json={"content": "alpacas are small"})
            assert patched.status_code == 200 and patched.json()["tags"] == ["farm"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
