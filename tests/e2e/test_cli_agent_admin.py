"""``hearth workspace``, ``hearth models`` and ``hearth shell snapshot`` as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text


def hearth(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "HEARTH_"))
    }
    env.update(HEARTH_HOME=str(tmp_path / "home"), **extra)
    return subprocess.run(
        [sys.executable, "-m", "workhearth", *args],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_error_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_workspace_add_list_remove(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    assert hearth(tmp_path, "workspace", "add", str(other)).returncode == 0
    listed = json.loads(hearth(tmp_path, "workspace", "list", "--json").stdout)
    assert listed["current"] == str(tmp_path / "ws")
    assert [f["path"] for f in listed["authorized"]] == [str(other)]
    assert hearth(tmp_path, "workspace", "remove", str(other)).returncode == 0
    assert json.loads(hearth(tmp_path, "workspace", "list", "--json").stdout)["authorized"] == []
    assert "not an existing folder" in one_error_line(
        hearth(tmp_path, "workspace", "add", str(tmp_path / "nope"))
    )
    assert "not an authorized folder" in one_error_line(
        hearth(tmp_path, "workspace", "remove", str(other))
    )
    assert "own data folder" in one_error_line(
        hearth(tmp_path, "workspace", "add", str(tmp_path / "home"))
    )


def test_workspace_add_warns_about_the_whole_filesystem_or_home(tmp_path: Path) -> None:
    user_home = tmp_path / "user"
    user_home.mkdir()
    for folder, why in (("/", "whole filesystem"), (str(user_home), "whole home folder")):
        done = hearth(tmp_path, "workspace", "add", folder, HOME=str(user_home))
        assert done.returncode == 0
        assert why in done.stderr and "hearth workspace remove" in done.stderr
    plain = tmp_path / "project"
    plain.mkdir()
    done = hearth(tmp_path, "workspace", "add", str(plain), HOME=str(user_home))
    assert done.returncode == 0 and done.stderr == ""


def test_models_list_and_test_against_a_local_server(tmp_path: Path) -> None:
    assert json.loads(hearth(tmp_path, "models", "list", "--json").stdout) == []
    with FakeProvider([Reply(pieces=openai_sse(openai_text(["ready"])))]) as fake:
        env = {
            "OPENAI_BASE_URL": fake.url,
            "OPENAI_API_KEY": "sk-test-not-a-real-key-000000",
            "HEARTH_MODEL": "openai:qwen-plus",
        }
        rows = json.loads(hearth(tmp_path, "models", "list", "--json", **env).stdout)
        assert [(r["name"], r["provider"], r["api_key_set"]) for r in rows] == [
            ("openai:qwen-plus", "openai", True)
        ]
        assert "sk-test" not in json.dumps(rows)  # keys are never printed
        done = hearth(tmp_path, "models", "test", "openai:qwen-plus", "--json", **env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["answer"] == "ready"
        assert fake.bodies[0]["model"] == "qwen-plus"
    assert "unknown model" in one_error_line(hearth(tmp_path, "models", "test", "nope"))


def test_shell_snapshot_show(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    (home / ".bashrc").write_text(
        "alias ll='ls -l'\n_helper() { echo helped; }\nexport HEARTH_TEST_VAR=42\n"
    )
    done = hearth(tmp_path, "shell", "snapshot", "--json", HOME=str(home), SHELL="/bin/bash")
    assert done.returncode == 0, done.stderr
    snap = json.loads(done.stdout)
    path = Path(snap["path"])
    assert snap["shell"] == "bash" and oct(path.stat().st_mode & 0o777) == "0o600"
    shown = hearth(
        tmp_path, "shell", "snapshot", "--show", HOME=str(home), SHELL="/bin/bash"
    ).stdout
    assert "_helper" in shown and "HEARTH_TEST_VAR" in shown


def test_a_broken_rc_file_is_reported_at_session_start_and_the_run_goes_on(tmp_path: Path) -> None:
    home = tmp_path / "userhome"
    home.mkdir()
    (home / ".bashrc").write_text("if then fi (\n")  # a syntax error
    with FakeProvider([Reply(pieces=openai_sse(openai_text(["All done."])))]) as fake:
        done = hearth(
            tmp_path,
            "run",
            "say hi",
            "--yes",
            HOME=str(home),
            SHELL="/bin/bash",
            OPENAI_BASE_URL=fake.url,
            OPENAI_API_KEY="k",
            HEARTH_MODEL="openai:qwen-plus",
        )
    assert done.returncode == 0, done.stderr
    assert "All done." in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("hearth:")]
    assert len(warnings) == 1 and "clean environment" in warnings[0], done.stderr


# ------------------------------------------------------------------ doctor and config

NOT_UTF8 = bytes(range(256))[::-1]  # random-looking bytes: 0xff first, NULs, controls


def test_a_config_of_random_bytes_is_one_line_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_bytes(NOT_UTF8)
    line = one_error_line(hearth(tmp_path, "sessions", "list"))
    assert str(tmp_path / "home" / "config.toml") in line
    assert "UTF-8" in line


def test_doctor_reports_a_broken_config_and_still_prints_the_rest(tmp_path: Path) -> None:
    config = tmp_path / "home" / "config.toml"
    config.parent.mkdir()
    config.write_bytes(NOT_UTF8)
    done = hearth(tmp_path, "doctor")
    line = one_error_line(done)  # non-zero, one stderr line, no traceback
    assert str(config) in line
    lines = {row.split()[0]: row for row in done.stdout.splitlines() if row.strip()}
    assert str(config) in lines["config"] and "BROKEN" in lines["config"]
    for name in ("home", "storage", "workspace", "sessions", "encryption", "model", "sandbox"):
        assert name in lines, done.stdout
    assert "writable" in lines["storage"]
    report = json.loads(hearth(tmp_path, "doctor", "--json").stdout)
    assert str(config) in report["config_error"]
    assert report["home_writable"] is True and report["sessions"] == 0


def test_doctor_says_in_one_line_that_the_home_is_writable_and_how_much_is_free(
    tmp_path: Path,
) -> None:
    done = hearth(tmp_path, "doctor")
    assert done.returncode == 0, done.stderr
    (storage,) = [row for row in done.stdout.splitlines() if row.startswith("storage")]
    assert "writable" in storage and "free" in storage
    report = json.loads(hearth(tmp_path, "doctor", "--json").stdout)
    assert report["home_writable"] is True and report["home_free_bytes"] > 0
    assert report["config_error"] is None
    assert not (tmp_path / "home").exists() or not list(
        (tmp_path / "home").glob(".hearth-doctor-*")
    )


def test_doctor_names_what_to_install_for_a_complete_office_check(tmp_path: Path) -> None:
    """Issue #21: without LibreOffice (and poppler, fontconfig) hearth check runs what it
    can; doctor says which packages make its receipts complete."""
    bare = tmp_path / "bin"
    bare.mkdir()
    done = hearth(tmp_path, "doctor", PATH=str(bare))
    assert done.returncode == 0, done.stderr
    (office,) = [row for row in done.stdout.splitlines() if row.startswith("office check")]
    assert "partial" in office and "apt-get install libreoffice-writer" in office
    assert "poppler-utils" in office
    report = json.loads(hearth(tmp_path, "doctor", "--json", PATH=str(bare)).stdout)
    assert {m["program"] for m in report["office_check"]["missing"]} == {
        "soffice",
        "pdftoppm",
        "fc-list",
    }
    if shutil.which("soffice") and shutil.which("pdftoppm") and shutil.which("fc-list"):
        full = hearth(tmp_path, "doctor")
        assert "office check complete" in full.stdout
