"""``GET /v1/memory/search`` is served ahead of FastAPI's routing (routes/memory.py
``serve_search_first``): the same answers, errors and checks as any other route."""

from __future__ import annotations

import orjson

from tests.server.conftest import Served

SEARCH = "/v1/memory/search"


def _save(served: Served, content: str, tags: list[str] | None = None) -> dict:
    r = served.api.post("/v1/memory", json={"content": content, "tags": tags or []})
    assert r.status_code == 201, r.text
    return r.json()


def test_the_answer_is_the_library_hits_byte_for_byte(served: Served) -> None:
    _save(served, "The deploy pipeline runs on Fridays", ["ops"])
    _save(served, "The release pipeline needs two approvals")
    memory = served.library().memory
    (memory.folder("project") / "notes.md").write_text("# Ops\nA pipeline by hand, no id.\n")
    r = served.api.get(SEARCH, params={"q": "pipeline", "limit": 5})
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.headers["x-content-type-options"] == "nosniff"  # the Guard's headers too
    hits = memory.search("pipeline", limit=5)
    assert len(hits) == 3 and {h.entry_id is None for h in hits} == {True, False}
    assert r.content == orjson.dumps({"results": [h.as_dict() for h in hits]})
    memory.close()


def test_bad_queries_get_the_documented_422(served: Served) -> None:
    for query, field in (({"q": "x", "limit": "0"}, "limit"), ({}, "q")):
        r = served.api.get(SEARCH, params=query)
        assert r.status_code == 422
        body = r.json()
        assert body["params"]["field"] == field and body["code"] in ("out_of_range", "required")
    long = served.api.get(SEARCH, params={"q": "x" * 513})
    assert long.status_code == 422 and long.json()["code"] == "too_long"


def test_a_post_to_the_path_is_405_naming_get(served: Served) -> None:
    r = served.api.post(SEARCH, json={"q": "x"})
    assert r.status_code == 405 and r.headers["allow"] == "GET"


def test_it_needs_the_token_and_a_local_host(served: Served) -> None:
    assert served.client.get(SEARCH, params={"q": "x"}).status_code == 401
    foreign = served.api.get(SEARCH, params={"q": "x"}, headers={"Host": "evil.example"})
    assert foreign.status_code == 421


def test_an_empty_query_and_a_query_string_repeating_a_name(served: Served) -> None:
    _save(served, "The otter enclosure is green")
    assert served.api.get(SEARCH, params={"q": "  "}).json() == {"results": []}
    # Why: as Starlette reads a query string, the last of a repeated name wins.
    r = served.api.get(f"{SEARCH}?q=zebra&q=otter&limit=9&limit=1")
    (hit,) = r.json()["results"]
    assert "otter" in hit["text"]
