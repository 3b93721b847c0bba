"""``POST /v1/check`` (DESIGN §6): receipts for files inside the authorized folders only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from docx import Document

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.conftest import Served
from tests.server.tasks_helpers import Api


@pytest.fixture
def report(served: Served) -> Path:
    doc = Document()
    doc.add_heading("Quarterly report", 1)
    doc.add_paragraph("Sales grew 12 % in the third quarter. 销售额增长。")
    path = served.workspace / "docs" / "report.docx"
    path.parent.mkdir()
    doc.save(str(path))
    return path


def test_a_file_in_the_workspace_gets_a_receipt_and_thumbnails(
    served: Served, report: Path
) -> None:
    r = served.api.post("/v1/check", json={"paths": ["docs/report.docx"]})
    assert r.status_code == 200, r.text
    (receipt,) = r.json()
    assert receipt["path"] == "docs/report.docx" and receipt["format"] == "docx"
    assert receipt["ok"] is True, receipt["problems"]
    assert receipt["pages"] == 1 and "Quarterly report" in receipt["text"]
    assert str(served.workspace) not in r.text  # no filesystem path in the answer
    (thumb,) = receipt["thumbnails"][:1]
    assert thumb.startswith("/v1/check/thumbnails/")
    png = served.api.get(thumb)
    assert png.status_code == 200 and png.content.startswith(b"\x89PNG")
    assert png.headers["content-type"] == "image/png"


def test_a_broken_file_is_a_receipt_not_an_error(served: Served) -> None:
    (served.workspace / "fake.xlsx").write_text("a,b\n1,2\n")
    r = served.api.post("/v1/check", json={"paths": ["fake.xlsx"]})
    assert r.status_code == 200, r.text
    (receipt,) = r.json()
    assert receipt["ok"] is False and receipt["problems"][0]["kind"] == "opens"


def test_paths_outside_the_authorized_folders_are_refused(served: Served, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    Document().save(str(outside / "secret.docx"))
    (served.workspace / "link.docx").symlink_to(outside / "secret.docx")
    for given in (str(outside / "secret.docx"), "../elsewhere/secret.docx", "link.docx"):
        r = served.api.post("/v1/check", json={"paths": [given]})
        assert 400 <= r.status_code < 500, (given, r.text)
        assert str(outside) not in r.text and str(tmp_path) not in r.text, r.text
    home_file = served.home / "report.pdf"
    home_file.write_bytes(b"%PDF-1.4\n")
    r = served.api.post("/v1/check", json={"paths": [str(home_file)]})
    assert 400 <= r.status_code < 500 and str(served.home) not in r.text


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"paths": ["notes.txt"]}, 422),
        ({"paths": ["missing.docx"]}, 404),
        ({"paths": []}, 422),
        ({"paths": ["a.pdf"] * 21}, 422),
        ({}, 422),
    ],
)
def test_bad_requests_get_a_clear_4xx(served: Served, body: dict, status: int) -> None:
    r = served.api.post("/v1/check", json=body)
    assert r.status_code == status, r.text
    assert r.json()["code"] and r.json()["detail"]


def test_thumbnail_names_cannot_leave_the_cache(served: Served) -> None:
    for name in ("..%2Fserver.token", "x.png", "0123456789abcdef-1.png"):
        assert served.api.get(f"/v1/check/thumbnails/{name}").status_code == 404


def test_a_tasks_receipts_and_failure_reach_the_api(api_for: Callable[..., Api]) -> None:
    """Issue #21: the office file a task wrote is checked; its receipt is listed under
    the session, and the task that said "done" over a failing file is ``failed``."""
    api = api_for(
        [
            calls_reply("openai", ("call_x", "write_file", {"path": "plan.pptx", "content": "x"})),
            text_reply("openai", "The deck is ready."),
        ]
    )
    sid = api.start(task="make plan.pptx", mode="quest")
    with api.events(sid) as events:
        seen = list(events)
    done = seen[-1]
    assert done.name == "done" and done.data["status"] == "failed", done.data
    task = api.client.get(f"/v1/tasks/{sid}").json()
    assert task["status"] == "failed" and "plan.pptx" in task["reason"]
    assert "not a valid Office file" in task["reason"]
    listed = api.client.get(f"/v1/sessions/{sid}/receipts")
    assert listed.status_code == 200, listed.text
    (receipt,) = listed.json()
    assert receipt["path"] == "plan.pptx" and receipt["ok"] is False
    assert receipt["call_id"] == "call_x" and receipt["thumbnails"] == []
    assert api.client.get(f"/v1/sessions/{sid}/receipts/{'0' * 64}-1.png").status_code == 404
    assert (
        api.client.get(f"/v1/sessions/{sid}/receipts/..%2F..%2Ftranscript.jsonl").status_code == 404
    )


def test_a_produced_file_downloads_and_nothing_outside_does(
    served: Served, report: Path, tmp_path: Path
) -> None:
    r = served.api.get("/v1/files/content", params={"path": "docs/report.docx"})
    assert r.status_code == 200, r.text
    assert r.content == report.read_bytes()
    assert r.headers["content-type"] == "application/octet-stream"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-disposition"] == "attachment; filename*=UTF-8''report.docx"
    (served.workspace / "page.html").write_text("<script>alert(1)</script>")
    html = served.api.get("/v1/files/content", params={"path": "page.html"})
    assert html.headers["content-disposition"].startswith("attachment")  # never rendered here
    secret = tmp_path / "secret.txt"
    secret.write_text("outside")
    (served.workspace / "out").symlink_to(secret)
    for given, status in (
        ("../secret.txt", 422),
        ("/etc/passwd", 422),
        ("out", 404),
        ("no.docx", 404),
    ):
        r = served.api.get("/v1/files/content", params={"path": given})
        assert r.status_code == status, (given, r.text)
        assert "outside" not in r.text and str(tmp_path) not in r.text
