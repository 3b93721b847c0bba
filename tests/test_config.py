"""``config.toml`` read once in config.py: every mistake names the file (DESIGN §6: one clear line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.config import load_config
from workhearth.errors import ConfigError

RANDOM_BYTES = bytes(range(256))[::-1] * 4  # not UTF-8 (0xff first), with NULs and controls


def write(home: Path, data: bytes) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "config.toml"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "data",
    [RANDOM_BYTES, b"\x80\x81garbage", b'[models]\ndefault = "caf\xe9"\n'],
    ids=["random", "continuation-bytes", "latin-1"],
)
def test_a_config_that_is_not_utf8_names_the_file(tmp_path: Path, data: bytes) -> None:
    path = write(tmp_path / "home", data)
    with pytest.raises(ConfigError) as caught:
        load_config({"HEARTH_HOME": str(tmp_path / "home")})
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "UTF-8" in message


def test_not_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "home", b"[models\n")
    with pytest.raises(ConfigError, match="not valid TOML") as caught:
        load_config({"HEARTH_HOME": str(tmp_path / "home")})
    assert str(path) in str(caught.value)


def test_read_file_false_ignores_a_broken_file_but_keeps_the_environment(tmp_path: Path) -> None:
    write(tmp_path / "home", RANDOM_BYTES)
    config = load_config(
        {"HEARTH_HOME": str(tmp_path / "home"), "HEARTH_FSYNC": "always"}, read_file=False
    )
    assert config.home == tmp_path / "home"
    assert config.fsync == "always"
    assert config.raw == {}


def test_server_allowed_hosts_and_team_key_file(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[server]\nallowed_hosts = ["Bank.Example "]\n[team]\nkey_file = "bank.key"\n'
    )
    config = load_config({}, tmp_path)
    assert config.allowed_hosts == ("bank.example",)
    assert config.team_key_file == tmp_path / "bank.key"
    (tmp_path / "config.toml").write_text('[server]\nallowed_hosts = "bank.example"\n')
    with pytest.raises(ConfigError, match=r"\[server\] allowed_hosts must be a list"):
        load_config({}, tmp_path)
