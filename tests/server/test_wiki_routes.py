"""``/v1/wiki`` (DESIGN §6, issue 24): the pages, one page, a search over them.

The pages are files in the spec's format under the workspace's wiki folder, as
``hearth wiki build`` writes them (tests/server/wiki_pages.py); the server only reads them.
"""

from __future__ import annotations

from pathlib import Path

from tests.server.conftest import Served
from tests.server.test_error_codes import check_shape
from tests.server.wiki_pages import MODEL, WRITTEN, file_sha, small_wiki, write_page


def test_before_a_build_there_are_no_pages_and_a_search_finds_nothing(served: Served) -> None:
    listed = served.api.get("/v1/wiki")
    assert listed.status_code == 200 and listed.json() == []
    found = served.api.get("/v1/wiki/search", params={"q": "invoice"})
    assert found.status_code == 200 and found.json() == {"results": []}
    missing = check_shape(served, served.api.get("/v1/wiki/overview"))
    assert missing["code"] == "wiki_no_page" and missing["params"] == {"page": "overview"}


def test_the_pages_are_listed_overview_first_with_their_sources_age_and_state(
    served: Served,
) -> None:
    small_wiki(served.config, served.workspace)
    answer = served.api.get("/v1/wiki")
    assert answer.status_code == 200, answer.text
    pages = {p["name"]: p for p in answer.json()}
    assert answer.json()[0]["name"] == "overview"
    assert set(pages) == {"overview", "src-billing", "docs", "notes"}
    docs = pages["docs"]
    assert docs == {
        "name": "docs",
        "title": "docs",
        "written": WRITTEN,
        "model": MODEL,
        "sources": [
            {"path": "docs/guide.md", "sha256": file_sha(served.workspace, "docs/guide.md")},
            {"path": "docs/scan.pdf", "sha256": file_sha(served.workspace, "docs/scan.pdf")},
        ],
        "unreadable": [{"path": "docs/scan.pdf", "reason": "not a PDF (no %PDF header)"}],
        "edited": True,
        "update_waiting": True,
        "stale": False,
    }
    # invoice.py changed since the page was written; notes was rewritten by hand.
    assert pages["src-billing"]["stale"] is True and pages["src-billing"]["edited"] is False
    assert pages["notes"]["edited"] is True and pages["notes"]["stale"] is False
    assert pages["notes"]["update_waiting"] is False
    assert "text" not in docs  # the listing carries no bodies


def test_one_page_is_its_fields_and_its_markdown_body(served: Served) -> None:
    small_wiki(served.config, served.workspace)
    answer = served.api.get("/v1/wiki/src-billing")
    assert answer.status_code == 200, answer.text
    page = answer.json()
    assert page["title"] == "src/billing" and page["stale"] is True
    assert page["text"].startswith("# src/billing\n\nThe `total` function")
    assert "body_sha256" not in page["text"] and "---" not in page["text"]
    listed = next(p for p in served.api.get("/v1/wiki").json() if p["name"] == "src-billing")
    assert {k: v for k, v in page.items() if k != "text"} == listed


def test_a_name_that_names_no_page_is_a_clear_404_naming_no_path(served: Served) -> None:
    small_wiki(served.config, served.workspace)
    unknown = check_shape(served, served.api.get("/v1/wiki/payroll"))
    assert unknown == {
        "detail": "no wiki page 'payroll'",
        "code": "wiki_no_page",
        "params": {"page": "payroll"},
    }
    # An update beside a page and hidden files are not pages; nor are malformed names.
    for name in ("docs.update", "Docs", ".state", "docs.md", "a_b", "-x"):
        bad = check_shape(served, served.api.get(f"/v1/wiki/{name}"))
        assert bad["code"] in ("wiki_no_page", "no_route"), (name, bad)
    too_long = check_shape(served, served.api.get("/v1/wiki/" + "a" * 300))
    assert too_long["code"] == "too_long"


def test_search_finds_pages_by_words_and_answers_memory_hits(served: Served) -> None:
    small_wiki(served.config, served.workspace)
    answer = served.api.get("/v1/wiki/search", params={"q": "refunds", "limit": 5})
    assert answer.status_code == 200, answer.text
    hits = answer.json()["results"]
    assert hits, "a word of a page's body finds it"
    assert {h["path"] for h in hits} <= {"wiki/docs.md", "wiki/overview.md"}
    assert "wiki/docs.md" in {h["path"] for h in hits}
    assert all(h["layer"] == "wiki" and h["level"] == "low" for h in hits)
    assert set(hits[0]) == {
        "path", "line_start", "line_end", "text", "score", "level", "entry_id", "layer", "tags"
    }  # fmt: skip
    # Front matter is not searched: a source path only in it finds nothing.
    assert served.api.get("/v1/wiki/search", params={"q": "scan.pdf"}).json()["results"] == []
    # A saved memory is not a wiki hit.
    assert (
        served.api.post("/v1/memory", json={"content": "refunds take five days"}).status_code == 201
    )
    again = served.api.get("/v1/wiki/search", params={"q": "refunds"}).json()["results"]
    assert all(h["layer"] == "wiki" for h in again)


def test_a_page_written_after_the_first_search_is_found(served: Served) -> None:
    small_wiki(served.config, served.workspace)
    assert served.api.get("/v1/wiki/search", params={"q": "payroll"}).json()["results"]
    assert not served.api.get("/v1/wiki/search", params={"q": "warehouse"}).json()["results"]
    write_page(
        served.config, served.workspace, "stock", "stock", "# stock\n\nThe warehouse counts.\n"
    )
    hits = served.api.get("/v1/wiki/search", params={"q": "warehouse"}).json()["results"]
    assert [h["path"] for h in hits] == ["wiki/stock.md"]


def test_bad_search_input_is_a_clear_422(served: Served) -> None:
    missing = check_shape(served, served.api.get("/v1/wiki/search"))
    assert missing == {"detail": "q: is required", "code": "required", "params": {"field": "q"}}
    for limit in ("0", "51", "many"):
        bad = check_shape(
            served, served.api.get("/v1/wiki/search", params={"q": "x", "limit": limit})
        )
        assert bad["params"]["field"] == "limit", bad
    long = check_shape(served, served.api.get("/v1/wiki/search", params={"q": "x" * 600}))
    assert long["code"] == "too_long"
    blank = served.api.get("/v1/wiki/search", params={"q": "   "})
    assert blank.status_code == 200 and blank.json() == {"results": []}


def test_another_workspace_has_its_own_wiki_and_hearths_home_is_refused(
    served: Served, tmp_path: Path
) -> None:
    small_wiki(served.config, served.workspace)
    other = tmp_path / "other"
    other.mkdir()
    write_page(served.config, other, "overview", "Other", "# Other\n\nA bakery's recipes.\n")
    names = [p["name"] for p in served.api.get("/v1/wiki", params={"workspace": str(other)}).json()]
    assert names == ["overview"]
    page = served.api.get("/v1/wiki/overview", params={"workspace": str(other)}).json()
    assert page["title"] == "Other"
    hits = served.api.get("/v1/wiki/search", params={"q": "bakery", "workspace": str(other)})
    assert [h["path"] for h in hits.json()["results"]] == ["wiki/overview.md"]
    assert not served.api.get("/v1/wiki/search", params={"q": "bakery"}).json()["results"]
    refused = check_shape(
        served, served.api.get("/v1/wiki", params={"workspace": str(served.home)})
    )
    assert refused["code"] == "workspace_refused"
    relative = check_shape(served, served.api.get("/v1/wiki", params={"workspace": "other"}))
    assert relative["code"] == "workspace_not_absolute"


def test_the_wiki_needs_the_token(served: Served) -> None:
    small_wiki(served.config, served.workspace)
    for path in ("/v1/wiki", "/v1/wiki/overview", "/v1/wiki/search?q=refunds"):
        answer = served.client.get(path)
        assert answer.status_code == 401, (path, answer.text)
        assert "refunds" not in answer.text and "billing" not in answer.text
    foreign = served.api.get("/v1/wiki", headers={"Host": "evil.example"})
    assert foreign.status_code == 421
