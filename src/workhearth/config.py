"""Configuration: read once from ``config.toml`` and the environment, then passed down.

Library code never reads environment variables itself; :func:`load_config` is the
one place that does, and it takes the environment as an argument so tests can
hand it a dict.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal

from workhearth.errors import ConfigError
from workhearth.paths import HearthPaths

FsyncPolicy = Literal["always", "turn", "never"]
FSYNC_POLICIES: tuple[FsyncPolicy, ...] = ("always", "turn", "never")


@dataclass(frozen=True)
class EncryptionConfig:
    """Where the session key comes from (DESIGN §3 Encryption).

    ``enabled`` makes new sessions encrypted. Key sources, first match wins:
    ``passphrase`` (from ``HEARTH_PASSPHRASE``; scrypt with a per-session salt),
    ``key_file`` (32 random bytes, file mode 0600), the OS ``keyring``.
    """

    enabled: bool = False
    key_file: Path | None = None
    keyring_service: str | None = None
    passphrase: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class MemoryConfig:
    """Budgets are in tokens (counted offline). ``maintenance = "manual"`` silences reflection."""

    project_budget: int = 40_000
    user_budget: int = 10_000
    project_capacity: int = 200_000
    user_capacity: int = 50_000
    maintenance: Literal["auto", "manual"] = "auto"


@dataclass(frozen=True)
class RetentionConfig:
    """``[retention]``: how many days each kind of leftover is kept; 0 keeps it forever.

    Transcripts and memory have no retention: they are the user's record.
    """

    trash_days: int = 30
    file_history_days: int = 30
    tool_outputs_days: int = 30
    audit_days: int = 90


ProviderName = Literal["openai", "anthropic"]
Tier = Literal["light", "strong"]
PROVIDERS: tuple[ProviderName, ...] = ("openai", "anthropic")
TIERS: tuple[Tier, ...] = ("light", "strong")
DEFAULT_BASE_URLS: Mapping[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_KEY_ENVS: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_BASE_URL_ENVS: Mapping[str, str] = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


@dataclass(frozen=True)
class ModelSettings:
    """One model, resolved: a ``[models.NAME]`` table or an ``openai:NAME`` spec.

    ``api_key`` was read from the variable named by ``api_key_env`` when the
    config was loaded; provider code never reads the environment. Prices are in
    currency units per million tokens.
    """

    name: str
    provider: ProviderName
    model: str
    base_url: str
    api_key_env: str
    api_key: str | None = field(default=None, repr=False)
    tier: Tier = "strong"
    context_window: int | None = None
    max_tokens: int | None = None
    thinking_budget: int | None = None
    price_in: float | None = None
    price_out: float | None = None


@dataclass(frozen=True)
class ModelsConfig:
    """``[models]``: named models in file order, the default, and call settings.

    ``providers`` holds the settings an ad-hoc ``openai:NAME`` / ``anthropic:NAME``
    spec uses: base URL and key from ``OPENAI_*`` / ``ANTHROPIC_*``.
    ``context_windows`` maps a model-family prefix (``"qwen-max"``) to its window
    and overrides the built-in table.
    """

    entries: Mapping[str, ModelSettings] = field(default_factory=dict)
    default: str | None = None
    providers: Mapping[str, ModelSettings] = field(default_factory=dict)
    context_windows: Mapping[str, int] = field(default_factory=dict)
    timeout: float = 120.0
    max_retries: int = 4

    @property
    def configured(self) -> bool:
        """True when some model can be called (a default spec or a [models.NAME] table)."""
        return bool(self.default or self.entries)


McpTransport = Literal["stdio", "http", "sse"]
MCP_TRANSPORTS: tuple[McpTransport, ...] = ("stdio", "http", "sse")


@dataclass(frozen=True)
class McpServerConfig:
    """One MCP server hearth's agent may use: ``[mcp.servers.NAME]`` or a ``.mcp.json`` entry.

    stdio: ``command`` + ``args`` + ``env``; http / sse: ``url`` + ``headers``.
    ``source`` names the file it came from (for messages and ``hearth mcp list``).
    """

    name: str
    transport: McpTransport
    source: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    timeout: float | None = None  # per call; None: [mcp] call_timeout
    # The user's own word on a server, read from config.toml only (never from a
    # folder's .mcp.json): ``trust`` lets its tools run without asking (and in quest
    # mode, where they run outside the sandbox); ``read_only_tools`` are the tools
    # that only read (offered in ask mode, never asked about). A server's own
    # annotations (readOnlyHint) are hints and decide nothing.
    trust: bool = False
    read_only_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class McpConfig:
    """``[mcp]``: the servers of ``config.toml`` and how the agent uses them.

    ``max_tools`` / ``tool_tokens``: past either, the agent gets the two meta-tools
    (search_capabilities, execute_capability) instead of every tool.
    ``start_budget``: seconds a run waits for servers whose tool list is not cached.
    """

    servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    call_timeout: float = 60.0
    start_budget: float = 5.0
    max_tools: int = 40
    tool_tokens: int = 8_000


_MCP_KEYS = frozenset({"servers", "call_timeout", "start_budget", "max_tools", "tool_tokens"})
_MCP_SERVER_KEYS = frozenset({"type", "command", "args", "env", "url", "headers", "timeout"})
# Why: only the user's own config.toml may vouch for a server (DESIGN §5 Trust).
MCP_USER_KEYS = frozenset({"trust", "read_only_tools"})


def _str_map(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where} must be a table of strings")
    return {str(k): v for k, v in value.items()}


def _seconds(value: object, where: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of seconds")
    return float(value)


def mcp_server_config(
    name: str, table: Mapping[str, object], source: str, where: str, *, user: bool = False
) -> McpServerConfig:
    """One server's table (``config.toml`` or ``.mcp.json``), checked; ``where`` prefixes errors.

    ``user``: the table comes from the user's own ``config.toml``, so ``trust`` and
    ``read_only_tools`` are accepted there (and only there).
    """
    unknown = sorted(set(table) - _MCP_SERVER_KEYS - (MCP_USER_KEYS if user else frozenset()))
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(unknown)}")
    kind = table.get("type")
    if kind == "streamable-http":
        kind = "http"
    if kind is None:
        kind = "stdio" if "command" in table else "http" if "url" in table else None
    if kind not in MCP_TRANSPORTS:
        raise ConfigError(
            f'{where} needs a command (stdio) or a url (http); type must be "stdio", "http" '
            f'or "sse", not {table.get("type")!r}'
        )
    command, url = table.get("command"), table.get("url")
    if kind == "stdio" and (not isinstance(command, str) or not command):
        raise ConfigError(f"{where} command must be a non-empty string")
    if kind != "stdio" and (
        not isinstance(url, str) or not url.startswith(("http://", "https://"))
    ):
        raise ConfigError(f"{where} url must be an http:// or https:// URL")
    args = table.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(f"{where} args must be a list of strings")
    trust = table.get("trust", False)
    if not isinstance(trust, bool):
        raise ConfigError(f"{where} trust must be true or false")
    read_only_tools = table.get("read_only_tools", [])
    if not isinstance(read_only_tools, list) or not all(
        isinstance(t, str) and t for t in read_only_tools
    ):
        raise ConfigError(f"{where} read_only_tools must be a list of tool names")
    return McpServerConfig(
        name=name,
        transport=kind,
        source=source,
        command=command if kind == "stdio" else None,  # type: ignore[arg-type]
        args=tuple(args),
        env=_str_map(table.get("env", {}), f"{where} env"),
        url=url if kind != "stdio" else None,  # type: ignore[arg-type]
        headers=_str_map(table.get("headers", {}), f"{where} headers"),
        timeout=_seconds(table["timeout"], f"{where} timeout") if "timeout" in table else None,
        trust=trust,
        read_only_tools=tuple(read_only_tools),
    )


def _mcp_config(section: Mapping[str, object], path: Path) -> McpConfig:
    unknown = sorted(set(section) - _MCP_KEYS)
    if unknown:
        raise ConfigError(f"{path}: [mcp] has unknown keys: {', '.join(unknown)}")
    servers = _section(section, "servers", path)
    parsed: dict[str, McpServerConfig] = {}
    for name, table in servers.items():
        where = f"{path}: [mcp.servers.{name}]"
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where} must be a table")
        parsed[name] = mcp_server_config(name, table, str(path), where, user=True)
    counts = {}
    for key in ("max_tools", "tool_tokens"):
        value = section.get(key, getattr(McpConfig, key))
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"{path}: [mcp] {key} must be an integer of at least 0")
        counts[key] = value
    return McpConfig(
        servers=parsed,
        call_timeout=_seconds(section.get("call_timeout", 60.0), f"{path}: [mcp] call_timeout"),
        start_budget=_seconds(section.get("start_budget", 5.0), f"{path}: [mcp] start_budget"),
        **counts,
    )


@dataclass(frozen=True)
class BankConfig:
    """``[bank]``: a remote team bank this machine saves to and searches (issue #13).

    ``url`` is the ``hearth serve --store`` server; the token comes from the
    variable named by ``token_env`` (default ``HEARTH_BANK_TOKEN``) or from
    ``token_file``, never from ``config.toml`` itself. ``token`` is None when that
    source is empty: the bank says so, naming ``token_source``, when first used.
    """

    url: str | None = None
    token: str | None = field(default=None, repr=False)
    token_source: str = ""
    timeout: float = 10.0
    source: str = ""  # the config file it came from, for messages


_BANK_KEYS = frozenset({"url", "token_env", "token_file", "timeout"})
BANK_TOKEN_ENV = "HEARTH_BANK_TOKEN"


def _bank_config(section: Mapping[str, object], env: Mapping[str, str], path: Path) -> BankConfig:
    where = f"{path}: [bank]"
    if "token" in section:
        raise ConfigError(
            f"{where} must not hold the token itself: name a variable with token_env "
            "or a file with token_file"
        )
    unknown = sorted(set(section) - _BANK_KEYS)
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(unknown)}")
    url = section.get("url")
    if url is None:
        return BankConfig(source=str(path))
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(f"{where} url must be an http:// or https:// URL")
    if "token_env" in section and "token_file" in section:
        raise ConfigError(f"{where} takes token_env or token_file, not both")
    for key in ("token_env", "token_file"):
        if key in section and (not isinstance(section[key], str) or not section[key]):
            raise ConfigError(f"{where} {key} must be a non-empty string")
    token: str | None
    if "token_file" in section:
        token_path = Path(str(section["token_file"])).expanduser()
        if not token_path.is_absolute():
            token_path = path.parent / token_path
        source = f"the token file {token_path} ([bank] token_file in {path})"
        try:
            token = token_path.read_text(encoding="utf-8").strip() or None
        except (OSError, UnicodeDecodeError):
            token = None
    else:
        name = str(section.get("token_env") or BANK_TOKEN_ENV)
        source = f"the variable {name} ([bank] in {path})"
        token = env.get(name, "").strip() or None
    return BankConfig(
        url=url.rstrip("/"),
        token=token,
        token_source=source,
        timeout=_seconds(section.get("timeout", 10.0), f"{where} timeout"),
        source=str(path),
    )


@dataclass(frozen=True)
class Config:
    home: Path
    fsync: FsyncPolicy = "turn"
    encryption: EncryptionConfig = EncryptionConfig()
    memory: MemoryConfig = MemoryConfig()
    models: ModelsConfig = ModelsConfig()
    retention: RetentionConfig = RetentionConfig()
    mcp: McpConfig = McpConfig()
    bank: BankConfig = BankConfig()
    raw: Mapping[str, object] = field(default_factory=dict, repr=False)
    # ``[ui] language`` ("zh" | "en"), default from the locale; the user's home
    # folder (for ~/.agents/skills, ~/.claude/skills), from HOME.
    language: str = "en"
    user_home: Path | None = None
    # ``[server] allowed_hosts``: Host names ``hearth serve`` answers to besides
    # localhost; ``[team] key_file``: the team bank's encryption key (issue #13).
    allowed_hosts: tuple[str, ...] = ()
    team_key_file: Path | None = None

    @property
    def paths(self) -> HearthPaths:
        return HearthPaths(self.home)


def default_home(env: Mapping[str, str]) -> Path:
    if env.get("HEARTH_HOME"):
        return Path(env["HEARTH_HOME"]).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_data_dir("workhearth", appauthor=False))


def _read_toml(path: Path) -> dict[str, object]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid UTF-8 text (bad byte at offset {exc.start}); "
            "config.toml must be a TOML text file"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None


def _section(raw: Mapping[str, object], name: str, path: Path) -> Mapping[str, object]:
    value = raw.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: [{name}] must be a table")
    return value


def _str_or_none(value: object) -> str | None:
    return str(value) if value else None


def _positive(section: Mapping[str, object], key: str, default: int, path: Path) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{path}: [memory] {key} must be a positive integer")
    return value


_MODEL_KEYS = frozenset(
    {
        "provider",
        "model",
        "base_url",
        "api_key_env",
        "tier",
        "context_window",
        "max_tokens",
        "thinking_budget",
        "price_in",
        "price_out",
    }
)


def _opt_int(table: Mapping[str, object], key: str, where: str) -> int | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{where} {key} must be a positive integer")
    return value


def _opt_price(table: Mapping[str, object], key: str, where: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{where} {key} must be a number of at least 0")
    return float(value)


def _provider_settings(provider: ProviderName, env: Mapping[str, str]) -> ModelSettings:
    key_env = DEFAULT_KEY_ENVS[provider]
    return ModelSettings(
        name=provider,
        provider=provider,
        model="",
        base_url=env.get(_BASE_URL_ENVS[provider]) or DEFAULT_BASE_URLS[provider],
        api_key_env=key_env,
        api_key=env.get(key_env) or None,
    )


def _model_settings(
    name: str, table: Mapping[str, object], env: Mapping[str, str], path: Path
) -> ModelSettings:
    where = f"{path}: [models.{name}]"
    unknown = sorted(set(table) - _MODEL_KEYS)
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(unknown)}")
    provider = table.get("provider")
    if provider not in PROVIDERS:
        raise ConfigError(f'{where} provider must be "openai" or "anthropic", not {provider!r}')
    tier = table.get("tier", "strong")
    if tier not in TIERS:
        raise ConfigError(f'{where} tier must be "light" or "strong", not {tier!r}')
    for key in ("model", "base_url", "api_key_env"):
        if key in table and (not isinstance(table[key], str) or not table[key]):
            raise ConfigError(f"{where} {key} must be a non-empty string")
    base = _provider_settings(provider, env)
    key_env = str(table.get("api_key_env") or base.api_key_env)
    return ModelSettings(
        name=name,
        provider=provider,
        model=str(table.get("model") or name),
        base_url=str(table.get("base_url") or base.base_url),
        api_key_env=key_env,
        api_key=env.get(key_env) or None,
        tier=tier,
        context_window=_opt_int(table, "context_window", where),
        max_tokens=_opt_int(table, "max_tokens", where),
        thinking_budget=_opt_int(table, "thinking_budget", where),
        price_in=_opt_price(table, "price_in", where),
        price_out=_opt_price(table, "price_out", where),
    )


def _models_config(
    section: Mapping[str, object], default: str | None, env: Mapping[str, str], path: Path
) -> ModelsConfig:
    """Parse ``[models]``: sub-tables are models, except the reserved ``context_windows``."""
    entries: dict[str, ModelSettings] = {}
    windows: dict[str, int] = {}
    for name, value in section.items():
        if name == "context_windows":
            if not isinstance(value, Mapping):
                raise ConfigError(f"{path}: [models.context_windows] must be a table")
            for family, window in value.items():
                windows[str(family).lower()] = _opt_int(  # type: ignore[assignment]
                    {"window": window}, "window", f"{path}: [models.context_windows] {family}:"
                )
        elif isinstance(value, Mapping):
            entries[name] = _model_settings(name, value, env, path)
    timeout = section.get("timeout", ModelsConfig.timeout)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ConfigError(f"{path}: [models] timeout must be a positive number of seconds")
    retries = section.get("max_retries", ModelsConfig.max_retries)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ConfigError(f"{path}: [models] max_retries must be an integer of at least 0")
    return ModelsConfig(
        entries=entries,
        default=default,
        providers={p: _provider_settings(p, env) for p in PROVIDERS},
        context_windows=windows,
        timeout=float(timeout),
        max_retries=retries,
    )


def _retention_config(section: Mapping[str, object], path: Path) -> RetentionConfig:
    keys = [f.name for f in fields(RetentionConfig)]
    unknown = sorted(set(section) - set(keys))
    if unknown:
        raise ConfigError(f"{path}: [retention] has unknown keys: {', '.join(unknown)}")
    days: dict[str, int] = {}
    for key in keys:
        value = section.get(key, getattr(RetentionConfig, key))
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(
                f"{path}: [retention] {key} must be a whole number of days (0 keeps forever)"
            )
        days[key] = value
    return RetentionConfig(**days)


LANGUAGES = ("zh", "en")


def _language(section: Mapping[str, object], env: Mapping[str, str], path: Path) -> str:
    """``[ui] language``, else the locale: zh* → "zh", anything else → "en"."""
    value = section.get("language")
    if value is not None:
        if value not in LANGUAGES:
            raise ConfigError(f'{path}: [ui] language must be "zh" or "en", not {value!r}')
        return str(value)
    # Why: POSIX order — LC_ALL overrides LC_MESSAGES, which overrides LANG.
    locale = env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG") or ""
    return "zh" if locale.lower().startswith("zh") else "en"


def load_config(
    env: Mapping[str, str] | None = None, home: Path | None = None, *, read_file: bool = True
) -> Config:
    """Read ``config.toml`` under the home and the environment variables we honour.

    ``read_file=False`` ignores ``config.toml``: ``hearth doctor`` uses it to go on
    checking everything else when the file is broken.
    """
    env = os.environ if env is None else env
    home = Path(home).absolute() if home is not None else default_home(env)
    cfg_path = home / "config.toml"
    raw = _read_toml(cfg_path) if read_file else {}

    sessions = _section(raw, "sessions", cfg_path)
    fsync = env.get("HEARTH_FSYNC") or sessions.get("fsync", "turn")
    if fsync not in FSYNC_POLICIES:
        raise ConfigError(f"fsync policy must be one of {', '.join(FSYNC_POLICIES)}, not {fsync!r}")

    enc = _section(raw, "encryption", cfg_path)
    key_file = env.get("HEARTH_KEY_FILE") or enc.get("key_file")
    encryption = EncryptionConfig(
        enabled=bool(enc.get("enabled", False)) or env.get("HEARTH_ENCRYPT") == "1",
        key_file=Path(str(key_file)).expanduser() if key_file else None,
        keyring_service=str(enc["keyring_service"]) if enc.get("keyring_service") else None,
        passphrase=env.get("HEARTH_PASSPHRASE") or None,
    )
    mem = _section(raw, "memory", cfg_path)
    memory = MemoryConfig(
        project_budget=_positive(mem, "project_budget", MemoryConfig.project_budget, cfg_path),
        user_budget=_positive(mem, "user_budget", MemoryConfig.user_budget, cfg_path),
        project_capacity=_positive(
            mem, "project_capacity", MemoryConfig.project_capacity, cfg_path
        ),
        user_capacity=_positive(mem, "user_capacity", MemoryConfig.user_capacity, cfg_path),
        maintenance="manual" if mem.get("maintenance") == "manual" else "auto",
    )
    if mem.get("maintenance") not in (None, "auto", "manual"):
        raise ConfigError(f'{cfg_path}: [memory] maintenance must be "auto" or "manual"')
    return Config(
        home=home,
        memory=memory,
        fsync=fsync,
        encryption=encryption,
        models=_models_config(
            _section(raw, "models", cfg_path),
            env.get("HEARTH_MODEL")
            or _str_or_none(_section(raw, "models", cfg_path).get("default")),
            env,
            cfg_path,
        ),
        retention=_retention_config(_section(raw, "retention", cfg_path), cfg_path),
        mcp=_mcp_config(_section(raw, "mcp", cfg_path), cfg_path),
        bank=_bank_config(_section(raw, "bank", cfg_path), env, cfg_path),
        language=_language(_section(raw, "ui", cfg_path), env, cfg_path),
        user_home=Path(env["HOME"]) if env.get("HOME") else None,
        allowed_hosts=_allowed_hosts(_section(raw, "server", cfg_path), cfg_path),
        team_key_file=_team_key_file(_section(raw, "team", cfg_path), cfg_path),
        raw=raw,
    )


def _allowed_hosts(section: Mapping[str, object], path: Path) -> tuple[str, ...]:
    hosts = section.get("allowed_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h.strip() for h in hosts):
        raise ConfigError(f"{path}: [server] allowed_hosts must be a list of host names")
    return tuple(h.strip().lower() for h in hosts)


def _team_key_file(section: Mapping[str, object], path: Path) -> Path | None:
    value = section.get("key_file")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{path}: [team] key_file must be a path")
    key_path = Path(value).expanduser()
    return key_path if key_path.is_absolute() else path.parent / key_path
