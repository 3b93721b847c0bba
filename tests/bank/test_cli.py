"""``hearth team user add|remove|list`` through the real command."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson

from tests.e2e.conftest import HEARTH_CMD
from workhearth.bank.server.store import PgBank, connect


def hearth(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTH_")}
    env["HEARTH_HOME"] = str(tmp_path / "home")
    return subprocess.run(
        [*HEARTH_CMD, "team", "user", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,  # Why: remove --purge rewrites tables (VACUUM FULL)
        cwd=tmp_path,
    )


def test_add_list_remove(tmp_path: Path, pg_url: str) -> None:
    added = hearth(tmp_path, "add", "ann", "--store", pg_url, "--json")
    assert added.returncode == 0, added.stderr
    data = orjson.loads(added.stdout)
    assert set(data) == {"name", "token"} and data["name"] == "ann"
    with PgBank(pg_url) as bank:
        assert bank.user_for_token(data["token"]) == "ann"
        bank.save("ann", "a note of ann's")
    plain = hearth(tmp_path, "add", "bob", "--store", pg_url)
    assert plain.returncode == 0 and plain.stdout.splitlines()[1].startswith("hth_")
    listed = hearth(tmp_path, "list", "--store", pg_url, "--json")
    assert [(u["name"], u["entries"]) for u in orjson.loads(listed.stdout)] == [
        ("ann", 1),
        ("bob", 0),
    ]
    assert data["token"] not in listed.stdout
    again = hearth(tmp_path, "add", "ann", "--store", pg_url)
    assert again.returncode != 0 and again.stderr.strip() == "hearth: team user ann already exists"
    removed = hearth(tmp_path, "remove", "ann", "--store", pg_url)
    assert removed.returncode == 0, removed.stderr
    assert "removed team user ann and their 1 memory entries" in removed.stdout
    with connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 0
    gone = hearth(tmp_path, "remove", "ann", "--store", pg_url)
    assert gone.returncode != 0 and gone.stderr.strip() == "hearth: no team user 'ann'"


def test_bad_store_is_one_clear_line(tmp_path: Path) -> None:
    for url, expected in (
        ("mysql://x", "hearth: --store must be a postgresql://… URL"),
        ("postgresql://u:hunter2@[bad", "hearth: --store is not a valid postgresql://… URL"),
        ("postgresql://u:hunter2@127.0.0.1:1/db", "hearth: cannot connect to the team store"),
    ):
        result = hearth(tmp_path, "list", "--store", url)
        assert result.returncode != 0
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(expected), result.stderr
        assert "hunter2" not in result.stderr and "Traceback" not in result.stderr
    missing = hearth(tmp_path, "add", "ann")
    assert missing.returncode != 0 and "--store" in missing.stderr
