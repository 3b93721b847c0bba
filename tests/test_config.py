"""``config.toml`` read once in config.py: every mistake names the file (DESIGN §6: one clear line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workhearth import config as config_module
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


# ------------------------------------------------- typed tables: one line per mistake


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            '[models.x]\nprovider = "gemini"\n',
            '[models.x] provider must be "openai" or "anthropic", not \'gemini\'',
        ),
        ('[models.x]\nmodel = "m"\n', '[models.x] needs provider = "openai" or "anthropic"'),
        ("[models]\ntimeout = 0\n", "[models] timeout must be a positive number of seconds"),
        ("[models]\nmax_retries = true\n", "[models] max_retries must be an integer of at least 0"),
        ("[models]\ndefalt = 'x'\n", "[models] has unknown keys: defalt"),
        (
            '[models.context_windows]\n"qwen-max" = -3\n',
            "[models.context_windows] qwen-max must be a positive integer",
        ),
        ('[models."qwen2.5"]\nprovider = "openai"\ntier = 1\n', '[models."qwen2.5"] tier must be'),
        (
            "[memory]\nproject_capacity = -1\n",
            "[memory] project_capacity must be a positive integer",
        ),
        ("[memory]\nuser_budget = 1.5\n", "[memory] user_budget must be a positive integer"),
        (
            '[memory]\nmaintenance = "sometimes"\n',
            '[memory] maintenance must be "auto" or "manual", not \'sometimes\'',
        ),
        ("[memory]\nproject_budgt = 5\nzz = 1\n", "[memory] has unknown keys: project_budgt, zz"),
        (
            '[retention]\naudit_days = "90"\n',
            "[retention] audit_days must be a whole number of days",
        ),
        ("[mcp]\nmax_tools = -1\n", "[mcp] max_tools must be an integer of at least 0"),
        ("[mcp]\nservers = 3\n", "[mcp] servers must be a table of servers"),
        (
            '[mcp.servers.x]\ntype = "ftp"\n',
            '[mcp.servers.x] type must be "stdio", "http", "sse" or "streamable-http", not \'ftp\'',
        ),
        (
            '[mcp.servers.x]\ncommand = "a"\nargs = ["-y", 3]\n',
            "[mcp.servers.x] args must be a list of strings",
        ),
        (
            '[mcp.servers.x]\nurl = "ftp://h"\n',
            "[mcp.servers.x] url must be an http:// or https:// URL",
        ),
        ('[mcp.servers.x]\ncommand = ""\n', "[mcp.servers.x] command must be a non-empty string"),
        (
            '[mcp.servers.x]\ncommand = "a"\ntrust = "yes"\n',
            "[mcp.servers.x] trust must be true or false",
        ),
        (
            '[mcp.servers.x]\ncommand = "a"\nread_only_tools = [""]\n',
            "read_only_tools must be a list of tool names",
        ),
        (
            '[mcp.servers.x]\ncommand = "a"\ntimeout = -1\n',
            "[mcp.servers.x] timeout must be a positive number",
        ),
        ('[bank]\nurl = "bank.example"\n', "[bank] url must be an http:// or https:// URL"),
        (
            '[sessions]\nfsync = "sometimes"\n',
            '[sessions] fsync must be "always", "turn" or "never", not \'sometimes\'',
        ),
        ('[encryption]\nenabled = "yes"\n', "[encryption] enabled must be true or false"),
        ("[ui]\nlanguage = 3\n", '[ui] language must be "zh" or "en", not 3'),
        (
            '[server]\nallowed_hosts = [" "]\n',
            "[server] allowed_hosts must be a list of host names",
        ),
        ("[team]\nkey_file = 3\n", "[team] key_file must be a path"),
        ("memory = 3\n", "[memory] must be a table"),
    ],
)
def test_each_mistake_is_one_line_naming_file_table_and_key(
    tmp_path: Path, body: str, said: str
) -> None:
    path = write(tmp_path, body.encode())
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and said in message, message
    assert "\n" not in message and "`" not in message  # no validation dump, no msgspec path


def test_a_bad_hearth_fsync_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r'^HEARTH_FSYNC must be "always", "turn" or "never", not .x.$'
    ):
        load_config({"HEARTH_FSYNC": "x"}, tmp_path)
    assert load_config({"HEARTH_FSYNC": "never"}, tmp_path).fsync == "never"


def test_a_key_that_needs_quotes_is_quoted_and_stays_on_one_line(tmp_path: Path) -> None:
    write(tmp_path, b'[models."a\\nb"]\nprovider = "x"\n')
    with pytest.raises(ConfigError) as caught:
        load_config({}, tmp_path)
    assert '[models."a\\nb"] provider' in str(caught.value)
    write(tmp_path, b'[memory]\n"c\\nd" = 1\n')
    with pytest.raises(ConfigError, match=r'unknown keys: "c\\nd"$'):
        load_config({}, tmp_path)


def _tables() -> list[type[config_module._Table]]:
    tables = [config_module._Table]
    for table in tables:
        tables += table.__subclasses__()
    return tables[1:]


def test_every_rule_has_words() -> None:
    """A key whose type carries no words would fall back to msgspec's own text."""
    for table in _tables():
        for key in table.__struct_fields__:
            assert config_module._rule(table, key), f"{table.__name__}.{key}"


def test_a_full_file_reads_into_typed_values(tmp_path: Path) -> None:
    write(
        tmp_path,
        b"""
[sessions]
fsync = "always"
[encryption]
enabled = true
key_file = "~/k"
[memory]
user_budget = 5000
maintenance = "manual"
[models]
default = "fast"
timeout = 30
[models.fast]
provider = "openai"
model = "qwen-turbo"
tier = "light"
price_in = 0
[models.context_windows]
Qwen-Max = 100000
[retention]
trash_days = 0
[mcp]
call_timeout = 5
[mcp.servers.files]
command = "files-mcp"
args = ["--root", "/"]
trust = true
[mcp.servers.web]
type = "streamable-http"
url = "https://mcp.example/"
[ui]
language = "zh"
[server]
allowed_hosts = ["Box.Lan "]
[team]
key_file = "team.key"
[quest]
max_steps = 3
""",
    )
    cfg = load_config({"HOME": "/home/ana", "OPENAI_API_KEY": "sk-o"}, tmp_path)
    assert cfg.fsync == "always" and cfg.encryption.enabled
    assert cfg.encryption.key_file == Path("~/k").expanduser()
    assert (cfg.memory.user_budget, cfg.memory.project_budget) == (5000, 40_000)
    assert cfg.memory.maintenance == "manual"
    fast = cfg.models.entries["fast"]
    assert (fast.model, fast.tier, fast.price_in, fast.api_key) == (
        "qwen-turbo",
        "light",
        0,
        "sk-o",
    )
    assert isinstance(cfg.models.timeout, float) and cfg.models.timeout == 30
    assert cfg.models.context_windows == {"qwen-max": 100_000}
    assert (cfg.retention.trash_days, cfg.retention.audit_days) == (0, 90)
    files, web = cfg.mcp.servers["files"], cfg.mcp.servers["web"]
    assert (files.transport, files.args, files.trust, files.url) == (
        "stdio",
        ("--root", "/"),
        True,
        None,
    )
    assert (web.transport, web.url, web.command, web.trust) == (
        "http",
        "https://mcp.example/",
        None,
        False,
    )
    assert cfg.mcp.call_timeout == 5.0
    assert cfg.language == "zh" and cfg.allowed_hosts == ("box.lan",)
    assert cfg.team_key_file == tmp_path / "team.key"
    assert cfg.raw["quest"] == {"max_steps": 3}  # other modules' tables pass through untouched


def _toml(value: object) -> str:
    """A TOML value (what the strategy draws: scalars, arrays, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


_SCALARS = (
    st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(-1e6, 1e6, allow_nan=False)
    | st.text(max_size=6)
    | st.sampled_from(["stdio", "http", "turn", "zh", "openai", "light", "https://x", "manual"])
)
_VALUES = (
    _SCALARS
    | st.lists(_SCALARS, max_size=3)
    | st.dictionaries(st.text(max_size=4), _SCALARS, max_size=2)
)
_TABLES = [
    "sessions",
    "encryption",
    "memory",
    "models",
    "models.x",
    "models.context_windows",
    "retention",
    "mcp",
    "mcp.servers.x",
    "bank",
    "ui",
    "server",
    "team",
]
_KEYS = sorted(
    {k for t in _tables() for k in t.__struct_fields__}
    | {"trust", "read_only_tools", "provider", "tier", "qwen", "nope"}
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    tables=st.dictionaries(
        st.sampled_from(_TABLES),
        st.dictionaries(st.sampled_from(_KEYS), _VALUES, max_size=4),
        max_size=3,
    )
)
def test_any_file_loads_or_says_one_line(
    tmp_path: Path, tables: dict[str, dict[str, object]]
) -> None:
    text = "".join(
        f"[{name}]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in body.items())
        for name, body in tables.items()
    )
    path = write(tmp_path, text.encode())
    try:
        load_config({}, tmp_path)
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: ") and "\n" not in message, message
        assert "`" not in message and "Expected" not in message, message
