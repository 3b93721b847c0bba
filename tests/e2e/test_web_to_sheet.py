"""Issue 25 item 6 and two of its "done when" tests, through the real ``hearth run
--mode quest``: a table over three pages collected into a sheet with the web-to-sheet
skill, and a form filled from a CSV. Debian's Chromium, sites served on 127.0.0.1 (allowed
by ``[browser] allow``), and a scripted model that acts on what the tools answered
(tests/e2e/page_reading_model.py)."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import openpyxl
import pytest

from tests.agent.browser import site
from tests.agent.browser.browsing import needs_chromium
from tests.agent.browser.pages import PageHandler, running
from tests.e2e.conftest import Hearth
from tests.e2e.page_reading_model import PageReadingModel, Plan, ref_for, script_command
from tests.e2e.test_agent_run import write_config
from tests.e2e.test_first_hour import MODEL, audit, hearth_run

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium

ALLOW = '[browser]\nallow = ["127.0.0.1"]\n'


@pytest.fixture(scope="module")
def web() -> Iterator[ThreadingHTTPServer]:
    with site.serve() as server:
        yield server


def _quest(hearth: Hearth, model: PageReadingModel, task: str) -> str:
    """Run the quest; its stderr (the terminal's lines). The run must end well."""
    with model:
        ran = hearth_run(
            hearth, model, "run", task, "--mode", "quest", "--model", MODEL, timeout=180
        )
    if model.failure is not None:
        raise model.failure
    assert ran.code == 0, ran.err
    assert model.unscripted == 0
    return ran.err


# ------------------------------------------------------------------ a table into a sheet


def collect_table(url: str, output: str, page_limit: int) -> Plan:
    """What SKILL.md tells the agent: snapshot, extract, write the rows, click next, repeat;
    then the xlsx skill's create_from_data.py."""
    activation = yield ("activate_skill", {"name": "web-to-sheet"})
    rows_to_file = script_command(activation, "scripts/rows_to_file.py")
    create = script_command(activation, "../xlsx/scripts/create_from_data.py")
    yield ("browser_open", {"url": url})
    for _page in range(page_limit):
        snapshot = yield ("browser_snapshot", {})
        extract = yield ("browser_extract", {"table": 1})
        json.loads(extract)  # it is the JSON the skill says
        wrote = yield (
            "shell",
            {"command": f"{rows_to_file} --append -o rows.csv <<'ROWS'\n{extract}\nROWS"},
        )
        assert wrote.startswith("exit code 0"), wrote
        next_ref = ref_for(snapshot, "Next page")
        if next_ref is None:
            break
        yield ("browser_click", {"ref": next_ref})
    built = yield ("shell", {"command": f"{create} rows.csv -o {output} --no-totals"})
    assert f"[hearth check] {output}: ok" in built, built
    return f"{output} is ready and passed hearth's check."


def sheet_rows(path: Path) -> list[tuple]:
    book = openpyxl.load_workbook(path)
    return [tuple(row) for row in book.active.iter_rows(values_only=True)]


def test_a_table_over_three_pages_becomes_a_sheet(hearth: Hearth, web: ThreadingHTTPServer) -> None:
    write_config(hearth, ALLOW)
    url = f"http://127.0.0.1:{web.server_address[1]}/table?page=1"
    model = PageReadingModel(collect_table(url, "sales.xlsx", page_limit=10))
    _quest(hearth, model, f"collect the table on {url} into sales.xlsx")

    # The sheet holds exactly the site's rows: the header once, every page, numbers as numbers.
    assert sheet_rows(hearth.workspace / "sales.xlsx") == [("Name", "Amount"), *site.ROWS]
    names = [name for name, _ in model.calls]
    assert names.count("browser_extract") == 3 and names.count("browser_click") == 2
    # Every browser step is in the audit, allowed by the quest's allow list.
    browsing = [row for row in audit(hearth) if row[0].startswith("browser_")]
    assert len(browsing) == 1 + 3 + 3 + 2
    assert all(decision == "allowed-by-mode" and out == "ok" for _, decision, out in browsing)


def test_the_page_limit_stops_the_collection(hearth: Hearth, web: ThreadingHTTPServer) -> None:
    write_config(hearth, ALLOW)
    url = f"http://127.0.0.1:{web.server_address[1]}/table?page=1"
    model = PageReadingModel(collect_table(url, "two.xlsx", page_limit=2))
    _quest(hearth, model, f"collect two pages of {url} into two.xlsx")
    assert sheet_rows(hearth.workspace / "two.xlsx") == [
        ("Name", "Amount"),
        *site.ROWS[: 2 * site.PER_PAGE],
    ]


# ------------------------------------------------------------------ a form from a CSV

FORM = (
    b"<!doctype html><html><head><meta charset=utf-8><title>New expense</title></head><body>"
    b'<h1>New expense</h1><form method="post" action="/expense">'
    b'<label>Name <input name="name"></label>'
    b'<label>Email <input name="email" type="email"></label>'
    b'<label>Amount <input name="amount"></label>'
    b'<button type="submit">Send</button></form></body></html>'
)
EXPENSES = [
    {"name": "Li, Wei", "email": "li.wei@example.com", "amount": "12.50"},
    {"name": "王芳", "email": "wang.fang@example.com", "amount": "1,200"},
    {"name": "Ana O'Neil", "email": "ana@example.com", "amount": "7"},
]


class _FormHandler(PageHandler):
    def log_message(self, *args: object) -> None:  # quiet tests
        pass

    def do_GET(self) -> None:
        self._send(FORM)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        form = {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}
        self.server.received.append(form)  # type: ignore[attr-defined]
        self._send(
            f"<!doctype html><html><head><meta charset=utf-8><title>Received</title></head><body>"
            f"<p>Received {html.escape(form.get('name', ''))}</p>"
            f'<a href="/expense">New expense</a></body></html>'.encode()
        )


@pytest.fixture
def form_site() -> Iterator[ThreadingHTTPServer]:
    """A form on 127.0.0.1 that records every submission it received."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FormHandler)
    server.received = []  # type: ignore[attr-defined]
    with running(server):
        yield server


def fill_from_csv(url: str, path: str) -> Plan:
    """Read the CSV, then per row: snapshot, type each value by its field's ref, send."""
    text = yield ("read_file", {"path": path})
    # Why: read_file numbers each line ("     2\tLi, Wei,…"); the model reads past the numbers.
    lines = [m.group(1) for m in re.finditer(r"^\s*\d+\t(.*)$", text, re.M)]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    assert rows, text
    yield ("browser_open", {"url": url})
    for row in rows:
        form = yield ("browser_snapshot", {})
        for label, column in (("Name", "name"), ("Email", "email"), ("Amount", "amount")):
            ref = ref_for(form, label)
            assert ref is not None, form
            typed = yield ("browser_type", {"ref": ref, "text": row[column]})
            assert typed.startswith("Typed"), typed
        sent = ref_for(form, "Send")
        assert sent is not None, form
        yield ("browser_click", {"ref": sent})
        answer = yield ("browser_snapshot", {})
        assert f"Received {row['name']}" in answer, answer
        again = ref_for(answer, "New expense")
        assert again is not None, answer
        yield ("browser_click", {"ref": again})
    return f"Sent {len(rows)} forms."


def test_a_form_is_filled_once_per_row_of_a_csv(
    hearth: Hearth, form_site: ThreadingHTTPServer
) -> None:
    write_config(hearth, ALLOW)
    out = io.StringIO()
    writer = csv.DictWriter(out, ["name", "email", "amount"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(EXPENSES)
    (hearth.workspace / "expenses.csv").write_text(out.getvalue(), encoding="utf-8")
    url = f"http://127.0.0.1:{form_site.server_address[1]}/expense"
    model = PageReadingModel(fill_from_csv(url, "expenses.csv"))
    _quest(hearth, model, f"fill the form on {url} once per row of expenses.csv")

    assert form_site.received == EXPENSES  # type: ignore[attr-defined]
    sends = [row for row in audit(hearth) if row[0] == "browser_click"]
    assert len(sends) == 2 * len(EXPENSES)
    assert all(decision == "allowed-by-mode" and out == "ok" for _, decision, out in sends)
