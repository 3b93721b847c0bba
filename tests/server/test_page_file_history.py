"""In the browser: a task's changed file is put back to its previous version from the
task view, and a skill's file variable suggests the workspace's files.

``hearth serve`` runs for real, with ``tests/fake_providers.py`` as its model.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import text_reply
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    ARTIFACTS,
    Workbench,
    browser,
    open_page,
    sync_api,
)
from tests.server.test_browser_tasks import bench_with, write_call  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")


def test_a_changed_file_is_restored_to_its_previous_version_from_the_task_view(
    bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with([write_call("call_h1"), text_reply("openai", "Replaced ", "the note.")])
    note = bench.workspace / "note.txt"
    note.write_text("my own words\n")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/chat")
    page.get_by_label("What should the agent do?").fill("Write hi into note.txt")
    page.locator('.chat-form select[name="mode"]').select_option("agent")
    page.get_by_role("button", name="Start task").click()
    page.locator(".approval").get_by_role("button", name="Allow once").click()
    expect(page.locator(".task-status .badge")).to_have_text("done", timeout=20000)
    assert note.read_text() == "hi"

    page.get_by_role("link", name="Open in Tasks").click()
    files = page.locator("#view-tasks .files-box")
    restore = files.get_by_role("button", name="Restore previous version: note.txt")
    expect(restore).to_be_visible()
    restore.click()
    expect(page.get_by_text(re.compile(r"Restored .*note\.txt"))).to_be_visible()
    assert note.read_text() == "my own words\n"
    # What the restore replaced (the agent's "hi") is kept as a version too.
    session_id = page.url.rsplit("/", 1)[1]
    versions = bench.api.get("/v1/trash", params={"session": session_id}).json()["versions"]
    assert [v["call_id"] for v in versions] == ["call_h1", "restore-1"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "test_file_restored_from_task.png"), full_page=True)


def test_a_file_variable_suggests_the_workspaces_files(
    bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with([])
    (bench.workspace / "logs").mkdir()
    (bench.workspace / "logs" / "err.txt").write_text("make: command not found\n")
    (bench.workspace / "logs" / "out.txt").write_text("building\n")
    (bench.workspace / ".env").write_text("TOKEN=x\n")
    page = open_page(bench)
    page.goto(f"{bench.base}/#/skills")
    card = page.locator('.skill-card[data-skill="error-recovery"]')
    card.get_by_role("button", name=re.compile("Diagnose a failed command")).click()
    field = page.locator('.example-form input[name="stderr_file"]')
    choices = page.locator(f"datalist#{field.get_attribute('list')} option")
    field.focus()
    expect(choices).to_have_count(2)
    assert sorted(choices.evaluate_all("os => os.map(o => o.value)")) == [
        "logs/err.txt",
        "logs/out.txt",
    ]
    field.fill("logs/")
    expect(choices).to_have_count(2)
