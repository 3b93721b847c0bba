"""Every error answer of the REST API is ``{"detail", "code", "params"}`` (DESIGN §6): one
English line that names no filesystem path and no command-line flag, a code the page has
words for in English and Chinese (web/strings-errors.js), and the params those words need."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Served
from workhearth.memory.bank import CONTENT_MAX
from workhearth.server.errors import pathless
from workhearth.trash import Trash

WEB = Path(__file__).parents[2] / "src" / "workhearth" / "server" / "web"
SECRET = "my key is sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCD"


def page_codes() -> dict[str, set[str]]:
    """The codes the page words, per language, read from strings-errors.js."""
    text = (WEB / "strings-errors.js").read_text()
    en, zh = text.split("\n  zh: {", 1)
    return {
        lang: set(re.findall(r'"error\.code\.([a-z_]+)"', part))
        for lang, part in (("en", en), ("zh", zh))
    }


def check_shape(served: Served, answer: Any) -> dict[str, Any]:
    """The answer is an error of the documented shape, worded by the page, with no path."""
    assert answer.status_code >= 400, answer.text
    body = answer.json()
    assert set(body) == {"detail", "code", "params"}, body
    assert isinstance(body["detail"], str) and body["detail"] and "\n" not in body["detail"]
    assert re.fullmatch(r"[a-z][a-z_]*", body["code"]), body
    assert all(isinstance(v, str | int) for v in body["params"].values()), body
    codes = page_codes()
    assert body["code"] in codes["en"] and body["code"] in codes["zh"], body["code"]
    text = answer.text
    for folder in (served.home, served.workspace, served.home.parent):
        assert str(folder) not in text, text
    assert not re.search(r"(?<![\w:/])(?:/[\w.-]+){2,}", text), text
    assert "--" not in text, text  # no CLI flag (--redact, --set)
    return dict(body)


def test_memory_errors_have_codes_and_params(served: Served) -> None:
    empty = check_shape(served, served.api.post("/v1/memory", json={"content": "   "}))
    assert empty["code"] == "memory_empty"
    nothing = check_shape(served, served.api.post("/v1/memory", json={"content": ""}))
    assert nothing["code"] == "empty" and nothing["params"] == {"field": "content"}
    assert "String should" not in nothing["detail"]
    long = check_shape(served, served.api.post("/v1/memory", json={"content": "x" * 9000}))
    assert long["code"] == "too_long"
    assert long["params"] == {"field": "content", "limit": CONTENT_MAX}
    secret = check_shape(served, served.api.post("/v1/memory", json={"content": SECRET}))
    assert secret["code"] == "memory_secret" and secret["params"]["field"] == "content"
    assert secret["detail"].startswith("refused: the content looks like it holds a secret")
    tags = check_shape(served, served.api.post("/v1/memory", json={"content": "a", "tags": [" "]}))
    assert tags["code"] == "tag_length"
    unknown = check_shape(served, served.api.delete("/v1/memory/m-nope"))
    assert unknown["code"] == "not_found"
    missing_q = check_shape(served, served.api.get("/v1/memory/search"))
    assert missing_q == {"detail": "q: is required", "code": "required", "params": {"field": "q"}}
    saved = served.api.post("/v1/memory", json={"content": "restore me"}).json()
    again = check_shape(served, served.api.post(f"/v1/memory/{saved['id']}/restore"))
    assert again["code"] == "memory_not_deleted" and again["detail"].endswith("nothing to restore")


def test_task_errors_have_codes_and_params(served: Served) -> None:
    model = check_shape(
        served, served.api.post("/v1/tasks", json={"task": "hi", "model": "no-such-model"})
    )
    assert model["code"] == "model_unknown" and model["params"] == {"model": "no-such-model"}
    assert "configured models are none" not in model["detail"]
    none = check_shape(served, served.api.post("/v1/tasks", json={"task": "hi"}))
    assert none["code"] == "model_none"
    blank = check_shape(served, served.api.post("/v1/tasks", json={"task": "  ", "model": "x"}))
    assert blank["code"] in ("task_empty", "model_unknown")
    relative = check_shape(
        served, served.api.post("/v1/tasks", json={"task": "hi", "workspace": "not/absolute"})
    )
    assert relative["code"] == "workspace_not_absolute"
    gone = served.workspace / "gone" / "deeper"
    absent = check_shape(
        served, served.api.post("/v1/tasks", json={"task": "hi", "workspace": str(gone)})
    )
    assert absent["code"] == "workspace_missing"
    mode = check_shape(served, served.api.post("/v1/tasks", json={"task": "hi", "mode": "wild"}))
    assert mode["code"] == "invalid_choice" and mode["params"] == {"field": "mode"}
    extra = check_shape(served, served.api.post("/v1/tasks", json={"task": "hi", "nope": 1}))
    assert extra["code"] == "unknown_field" and extra["params"] == {"field": "nope"}
    check_shape(served, served.api.get("/v1/tasks/no-such-session"))
    check_shape(served, served.api.post("/v1/tasks/no-such-session/resume"))


def test_skill_errors_name_the_field_not_the_flag(served: Served) -> None:
    render = "/v1/skills/docx/render"
    missing = check_shape(served, served.api.post(render, json={"example": "md-to-docx"}))
    assert missing["code"] == "skill_field_missing" and missing["params"] == {"field": "input"}
    outside = check_shape(
        served,
        served.api.post(
            render, json={"example": "md-to-docx", "values": {"input": "/etc/hostname"}}
        ),
    )
    assert outside["code"] == "file_outside_workspace"
    (served.workspace / "a.md").write_text("# A\n")
    unknown = check_shape(
        served,
        served.api.post(
            render, json={"example": "md-to-docx", "values": {"input": "a.md", "x": "1"}}
        ),
    )
    assert unknown["code"] == "skill_field_unknown" and unknown["params"] == {"field": "x"}
    choice = check_shape(
        served,
        served.api.post(
            render,
            json={"example": "extract-content", "values": {"document": "a.md", "format": "pdf"}},
        ),
    )
    assert choice["code"] == "skill_value_choice" and choice["params"]["field"] == "format"
    example = check_shape(served, served.api.post(render, json={"example": "nope"}))
    assert example["code"] == "example_unknown"
    assert example["params"] == {"name": "docx", "example": "nope"}
    skill = check_shape(served, served.api.get("/v1/skills/no-such-skill"))
    assert skill["code"] == "skill_unknown" and "hearth skills list" not in skill["detail"]


def test_trash_and_http_errors_have_codes_and_no_path(served: Served) -> None:
    target = served.workspace / "deep" / "a.txt"
    target.parent.mkdir()
    target.write_text("old")
    item = Trash(served.config.paths.trash).put(target)
    target.write_text("new")
    exists = check_shape(served, served.api.post(f"/v1/trash/{item.id}/restore"))
    assert exists["code"] == "restore_exists"
    assert check_shape(served, served.api.post("/v1/trash/nope/restore"))["code"] in (
        "trash_unknown",
        "not_found",
    )
    route = check_shape(served, served.api.get("/v1/no/such/route"))
    assert route["code"] == "no_route"
    method = check_shape(served, served.api.put("/v1/memory"))
    assert method["code"] == "method_not_allowed"
    body = check_shape(
        served,
        served.api.post(
            "/v1/memory", content=b"{not json", headers={"Content-Type": "application/json"}
        ),
    )
    assert body["code"] == "not_json"
    limit = check_shape(served, served.api.get("/v1/audit", params={"limit": 0}))
    assert limit["code"] == "out_of_range" and limit["params"]["field"] == "limit"


def test_an_error_that_names_a_file_is_answered_without_the_path(served: Served) -> None:
    """A library message that slips a path through (the memory index names its file for
    the terminal) reaches the API without it."""
    assert pathless(f"{served.home}/awareness/main/.index.sqlite: disk I/O error") == (
        "(a path): disk I/O error"
    )
    for kept in ("openai:MODEL or anthropic:MODEL", "a/b", "http://127.0.0.1:8765/x", "/proc"):
        assert pathless(kept) == kept


@pytest.mark.parametrize("status", ["401", "403", "404", "413", "421", "422", "507"])
def test_openapi_documents_code_and_params(served: Served, status: str) -> None:
    schema = served.api.get("/openapi.json").json()
    error = schema["components"]["schemas"]["ErrorOut"]
    assert set(error["required"]) == {"detail", "code", "params"}
    documented = [
        op["responses"][status]
        for path in schema["paths"].values()
        for op in path.values()
        if status in op.get("responses", {})
    ]
    assert documented, status


def test_every_code_the_server_raises_has_words_in_both_languages() -> None:
    src = Path(__file__).parents[2] / "src" / "workhearth"
    raised: set[str] = set()
    for path in src.rglob("*.py"):
        text = path.read_text()
        raised |= set(re.findall(r'\bcode="([a-z_]+)"', text))
        raised |= set(re.findall(r'^\s+code = "([a-z_]+)"', text, re.MULTILINE))
        raised |= set(re.findall(r'error_response\(\s*\d+,[^)]*?"([a-z_]+)"', text))
    from workhearth.server.app import _KIND_CODES
    from workhearth.server.errors import STATUS_CODES

    raised |= set(_KIND_CODES.values()) | set(STATUS_CODES.values()) | {"server_error"}
    for lang, worded in page_codes().items():
        assert raised - worded == set(), lang
