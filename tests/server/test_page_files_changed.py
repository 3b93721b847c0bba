"""In the browser: a task's "Files changed" lists what changed on disk (issue 18 item 5):
a file a shell command wrote, not a write the user denied.

``hearth serve`` runs for real, with ``tests/fake_providers.py`` as its model.
"""

# ruff: noqa: F811 (the imported fixtures are named as the tests' parameters)
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.server.test_browser import (  # noqa: F401 (fixtures)
    Workbench,
    browser,
    open_page,
    sync_api,
)
from tests.server.test_browser_tasks import bench_with, write_call  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="no chromium")


def test_files_changed_shows_a_commands_file_and_not_a_denied_write(
    bench_with: Callable[[list[Any]], Workbench], open_page: Callable[..., Any]
) -> None:
    expect = sync_api.expect
    bench = bench_with(
        [
            write_call("call_no"),
            calls_reply("openai", ("call_sh", "shell", {"command": "echo made > made.txt"})),
            text_reply("openai", "Made ", "it."),
        ]
    )
    page = open_page(bench)
    page.goto(f"{bench.base}/#/chat")
    page.get_by_label("What should the agent do?").fill("Write note.txt, then made.txt")
    page.locator('.chat-form select[name="mode"]').select_option("agent")
    page.get_by_role("button", name="Start task").click()
    page.locator(".approval").last.get_by_role("button", name="Deny").click()
    page.locator(".approval").last.get_by_role("button", name="Allow once").click()
    expect(page.locator(".task-status .badge")).to_have_text("done", timeout=20000)
    assert (bench.workspace / "made.txt").read_text() == "made\n"
    assert not (bench.workspace / "note.txt").exists()

    page.get_by_role("link", name="Open in Tasks").click()
    files = page.locator("#view-tasks .files-box li")
    expect(files).to_have_count(1)
    expect(files.first).to_contain_text("made.txt")
    expect(files.first).to_contain_text("new")
    expect(files.first).to_contain_text("shell")
