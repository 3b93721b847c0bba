"""Configuration: read once from ``config.toml`` and the environment, then passed down.

Library code never reads environment variables itself; :func:`load_config` is the
one place that does, and it takes the environment as an argument so tests can
hand it a dict.

Reading goes in two steps. *Parse*: each table of ``config.toml`` is converted by
msgspec into a typed struct (``_Table`` subclasses, which mirror the file and reject
unknown keys); a value of the wrong type or range becomes one line naming the file,
the table and the key (``…/config.toml: [memory] user_budget must be a positive
integer``), never a validation dump. *Resolve*: the structs and the environment make
the frozen config objects the rest of hearth is given (defaults, keys read from the
variables the file names, transports inferred).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Annotated, Literal, TypeVar, Union, get_args, get_origin

import msgspec

from workhearth.errors import ConfigError
from workhearth.paths import HearthPaths

FsyncPolicy = Literal["always", "turn", "never"]
FSYNC_POLICIES: tuple[FsyncPolicy, ...] = ("always", "turn", "never")
ProviderName = Literal["openai", "anthropic"]
Tier = Literal["light", "strong"]
PROVIDERS: tuple[ProviderName, ...] = ("openai", "anthropic")
TIERS: tuple[Tier, ...] = ("light", "strong")
McpTransport = Literal["stdio", "http", "sse"]
MCP_TRANSPORTS: tuple[McpTransport, ...] = ("stdio", "http", "sse")
LANGUAGES = ("zh", "en")
DEFAULT_BASE_URLS: Mapping[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
DEFAULT_KEY_ENVS: Mapping[str, str] = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
_BASE_URL_ENVS: Mapping[str, str] = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}
BANK_TOKEN_ENV = "HEARTH_BANK_TOKEN"
# Why: only the user's own config.toml may vouch for a server (DESIGN §5 Trust).
MCP_USER_KEYS = frozenset({"trust", "read_only_tools"})

# The file's value types; each carries the words its one-line error uses.
PositiveInt = Annotated[int, msgspec.Meta(gt=0, description="a positive integer")]
Count = Annotated[int, msgspec.Meta(ge=0, description="an integer of at least 0")]
Days = Annotated[int, msgspec.Meta(ge=0, description="a whole number of days (0 keeps forever)")]
Seconds = Annotated[float, msgspec.Meta(gt=0, description="a positive number of seconds")]
Price = Annotated[float, msgspec.Meta(ge=0, description="a number of at least 0")]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1, description="a non-empty string")]
Name = Annotated[str, msgspec.Meta(description="a name")]
ModelName = Annotated[str, msgspec.Meta(description="a model name")]
PathText = Annotated[str, msgspec.Meta(min_length=1, description="a path")]
HttpUrl = Annotated[
    str, msgspec.Meta(pattern=r"^https?://", description="an http:// or https:// URL")
]
Strings = Annotated[tuple[str, ...], msgspec.Meta(description="a list of strings")]
StringTable = Annotated[dict[str, str], msgspec.Meta(description="a table of strings")]
ToolNames = Annotated[tuple[NonEmpty, ...], msgspec.Meta(description="a list of tool names")]
HostNames = Annotated[
    tuple[Annotated[str, msgspec.Meta(pattern=r"\S")], ...],
    msgspec.Meta(description="a list of host names"),
]
Servers = Annotated[dict[str, object], msgspec.Meta(description="a table of servers")]
SiteNames = Annotated[
    tuple[Annotated[str, msgspec.Meta(pattern=r"^\S+$")], ...],
    msgspec.Meta(description="a list of sites (example.com, *.example.com, localhost:8123)"),
]


def _one_of(choices: tuple[str, ...]) -> str:
    quoted = [f'"{c}"' for c in choices]
    return f"{', '.join(quoted[:-1])} or {quoted[-1]}"


class _Table(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A table of ``config.toml`` as typed fields; unknown keys are refused."""


# ----------------------------------------------------------------- the config objects


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


class MemoryConfig(_Table, frozen=True, kw_only=True):
    """``[memory]``: budgets are in tokens (counted offline).

    ``maintenance = "manual"`` silences reflection.
    """

    project_budget: PositiveInt = 40_000
    user_budget: PositiveInt = 10_000
    project_capacity: PositiveInt = 200_000
    user_capacity: PositiveInt = 50_000
    maintenance: Literal["auto", "manual"] = "auto"


class RetentionConfig(_Table, frozen=True):
    """``[retention]``: how many days each kind of leftover is kept; 0 keeps it forever.

    Transcripts and memory have no retention: they are the user's record.
    """

    trash_days: Days = 30
    file_history_days: Days = 30
    tool_outputs_days: Days = 30
    audit_days: Days = 90


class CheckpointsConfig(_Table, frozen=True, kw_only=True):
    """``[checkpoints]``: what a rewind can put back (issue 22).

    Files larger than ``max_file_mb`` are not kept (a rewind names them); authorized
    folders holding more than ``max_total_mb`` get no checkpoints (said once, in the
    run's files changed); content follows ``[retention] file_history_days``.
    """

    enabled: bool = True
    max_file_mb: PositiveInt = 50
    max_total_mb: PositiveInt = 4096


class WikiConfig(_Table, frozen=True, kw_only=True):
    """``[wiki]``: the project wiki (issue 24). ``max_calls``: the most model calls one
    ``hearth wiki build`` or ``update`` makes (``--max-calls`` overrides it); pages past it
    are written by the next run."""

    max_calls: PositiveInt = 200


class BrowserConfig(_Table, frozen=True, kw_only=True):
    """``[browser]``: the agent's browser (issue 25). ``executable``: a Chromium-family
    browser (a path, or a name on PATH; found on the machine when unset); ``headless =
    false`` shows it working; ``allow``: sites (``*.example.com``, ``127.0.0.1``,
    ``localhost:8123``, or address blocks ``10.0.0.0/8``) quest mode may visit, agent mode
    visits unasked, and whose private addresses are reachable; ``profile``: the user's own
    browser profile, used only when set (else one per session); ``screenshots = false``: no
    picture of the page after each action for the page's task stream (each costs ~30 ms
    of the browser's time, taken after the action's result)."""

    executable: PathText | None = None
    headless: bool = True
    allow: SiteNames = ()
    profile: PathText | None = None
    screenshots: bool = True


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


@dataclass(frozen=True)
class Config:
    home: Path
    fsync: FsyncPolicy = "turn"
    encryption: EncryptionConfig = EncryptionConfig()
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    models: ModelsConfig = ModelsConfig()
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    checkpoints: CheckpointsConfig = field(default_factory=CheckpointsConfig)
    wiki: WikiConfig = field(default_factory=WikiConfig)
    browser: BrowserConfig = field(default_factory=BrowserConfig)
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
    team_parallel: int = 3  # ``[team] parallel``: specialists at once in a team task

    @property
    def paths(self) -> HearthPaths:
        return HearthPaths(self.home)


# ------------------------------------------------------------ the file, table by table


class _SessionsTable(_Table, frozen=True, kw_only=True):
    fsync: FsyncPolicy = "turn"


class _EncryptionTable(_Table, frozen=True, kw_only=True):
    enabled: bool = False
    key_file: PathText | None = None
    keyring_service: Name | None = None


class _ModelTable(_Table, frozen=True, kw_only=True):
    """``[models.NAME]``: one model; ``model`` defaults to NAME, the rest to the provider's."""

    provider: ProviderName
    model: NonEmpty | None = None
    base_url: NonEmpty | None = None
    api_key_env: NonEmpty | None = None
    tier: Tier = "strong"
    context_window: PositiveInt | None = None
    max_tokens: PositiveInt | None = None
    thinking_budget: PositiveInt | None = None
    price_in: Price | None = None
    price_out: Price | None = None


class _ModelsTable(_Table, frozen=True, kw_only=True):
    """``[models]`` less its sub-tables (the models) and ``[models.context_windows]``."""

    default: ModelName | None = None
    timeout: Seconds = 120.0
    max_retries: Count = 4


class _McpServerTable(_Table, frozen=True, kw_only=True):
    """A server as ``.mcp.json`` may give it; the transport is inferred when ``type`` is absent."""

    type: Literal["stdio", "http", "sse", "streamable-http"] | None = None
    command: NonEmpty | None = None
    args: Strings = ()
    env: StringTable = {}
    url: HttpUrl | None = None
    headers: StringTable = {}
    timeout: Seconds | None = None


class _UserMcpServerTable(_McpServerTable, frozen=True, kw_only=True):
    """``[mcp.servers.NAME]``: also the user's own word on the server."""

    trust: bool = False
    read_only_tools: ToolNames = ()


class _McpTable(_Table, frozen=True, kw_only=True):
    servers: Servers = {}  # each server is read on its own, so its errors name it
    call_timeout: Seconds = 60.0
    start_budget: Seconds = 5.0
    max_tools: Count = 40
    tool_tokens: Count = 8_000


class _BankTable(_Table, frozen=True, kw_only=True):
    url: HttpUrl | None = None
    token_env: NonEmpty | None = None
    token_file: NonEmpty | None = None
    timeout: Seconds = 10.0


class _UiTable(_Table, frozen=True, kw_only=True):
    language: Literal["zh", "en"] | None = None


class _ServerTable(_Table, frozen=True, kw_only=True):
    allowed_hosts: HostNames = ()


class _TeamTable(_Table, frozen=True, kw_only=True):
    key_file: PathText | None = None
    # How many specialists of a team task work at once (issue 23).
    parallel: Annotated[int, msgspec.Meta(ge=1, le=16, description="1 to 16")] = 3


_T = TypeVar("_T", bound=_Table)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ERROR_AT = re.compile(r"at `\$\.(\w+)")
_MISSING = re.compile(r"missing required field `(\w+)`")


def _key(name: object) -> str:
    """A key as TOML writes it: bare when it can be, else quoted (so always one line)."""
    text = str(name)
    return text if _BARE_KEY.fullmatch(text) else json.dumps(text, ensure_ascii=False)


def _convert(table: object, kind: type[_T], where: str) -> _T:
    """``table`` as ``kind``, or a :class:`ConfigError` of one line starting with ``where``."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(_key(k) for k in set(table) - set(kind.__struct_fields__))
    if unknown:
        raise ConfigError(f"{where} has unknown keys: {', '.join(unknown)}")
    try:
        return msgspec.convert(table, kind, strict=True)
    except msgspec.ValidationError as exc:
        raise ConfigError(_explain(str(exc), table, kind, where)) from None


def _rule(kind: type[_Table], key: str) -> tuple[str, bool] | None:
    """How the rule for ``key`` of ``kind`` reads, and whether it is a choice.

    The words come from the key's type: a ``Literal`` lists its choices, ``bool`` is
    "true or false", anything else is an ``Annotated`` type whose ``Meta`` describes it.
    """
    hint = next((f.type for f in msgspec.structs.fields(kind) if f.name == key), None)
    if get_origin(hint) in (Union, UnionType):  # X | None: the rule is X's
        hint = next(a for a in get_args(hint) if a is not type(None))
    if get_origin(hint) is Literal:
        return _one_of(get_args(hint)), True
    if hint is bool:
        return "true or false", False
    meta = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, msgspec.Meta)]
    return (meta[0].description, False) if meta and meta[0].description else None


def _explain(error: str, table: Mapping[str, object], kind: type[_Table], where: str) -> str:
    """msgspec's error (``Expected `int` >= 1 - at `$.user_budget```) in our words."""
    missing = _MISSING.search(error)
    found = missing or _ERROR_AT.search(error)
    words = _rule(kind, found.group(1)) if found else None
    if found is None or words is None:  # Why: a rule without words is still one line
        return f"{where}: {error.splitlines()[0]}"
    key, (must, choice) = found.group(1), words
    if missing:
        return f"{where} needs {key} = {must}"
    # Why: only a choice repeats the wrong value; other values may be secrets.
    return f"{where} {key} must be {must}" + (f", not {table.get(key)!r}" if choice else "")


def _section(raw: Mapping[str, object], name: str, kind: type[_T], path: Path) -> _T:
    return _convert(raw.get(name, {}), kind, f"{path}: [{name}]")


# ------------------------------------------------------------------- resolving: models


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


def _model_settings(name: str, table: _ModelTable, env: Mapping[str, str]) -> ModelSettings:
    base = _provider_settings(table.provider, env)
    key_env = table.api_key_env or base.api_key_env
    return ModelSettings(
        name=name,
        provider=table.provider,
        model=table.model or name,
        base_url=table.base_url or base.base_url,
        api_key_env=key_env,
        api_key=env.get(key_env) or None,
        tier=table.tier,
        context_window=table.context_window,
        max_tokens=table.max_tokens,
        thinking_budget=table.thinking_budget,
        price_in=table.price_in,
        price_out=table.price_out,
    )


def _context_windows(value: object, path: Path) -> dict[str, int]:
    where = f"{path}: [models.context_windows]"
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table")
    windows: dict[str, int] = {}
    for family, window in value.items():
        try:
            windows[str(family).lower()] = msgspec.convert(window, PositiveInt, strict=True)
        except msgspec.ValidationError:
            raise ConfigError(f"{where} {_key(family)} must be a positive integer") from None
    return windows


def _models_config(raw: Mapping[str, object], env: Mapping[str, str], path: Path) -> ModelsConfig:
    """``[models]``: sub-tables are models, except the reserved ``context_windows``."""
    section = raw.get("models", {})
    if not isinstance(section, Mapping):
        raise ConfigError(f"{path}: [models] must be a table")
    tables = {k: v for k, v in section.items() if isinstance(v, Mapping) and k != "context_windows"}
    rest = {k: v for k, v in section.items() if k not in tables and k != "context_windows"}
    settings = _convert(rest, _ModelsTable, f"{path}: [models]")
    entries = {
        name: _model_settings(
            name, _convert(table, _ModelTable, f"{path}: [models.{_key(name)}]"), env
        )
        for name, table in tables.items()
    }
    return ModelsConfig(
        entries=entries,
        default=env.get("HEARTH_MODEL") or settings.default or None,
        providers={p: _provider_settings(p, env) for p in PROVIDERS},
        context_windows=_context_windows(section.get("context_windows", {}), path),
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )


# ---------------------------------------------------------------------- resolving: MCP


def _transport(table: _McpServerTable) -> McpTransport | None:
    if table.type == "streamable-http":
        return "http"
    if table.type is not None:
        return table.type
    return "stdio" if table.command is not None else "http" if table.url is not None else None


def mcp_server_config(
    name: str, table: object, source: str, where: str, *, user: bool = False
) -> McpServerConfig:
    """One server's table (``config.toml`` or ``.mcp.json``), checked; ``where`` prefixes errors.

    ``user``: the table comes from the user's own ``config.toml``, so ``trust`` and
    ``read_only_tools`` are accepted there (and only there).
    """
    spec = _convert(table, _UserMcpServerTable if user else _McpServerTable, where)
    kind = _transport(spec)
    if kind is None or (spec.command if kind == "stdio" else spec.url) is None:
        raise ConfigError(f"{where} needs a command (stdio) or a url (http or sse)")
    return McpServerConfig(
        name=name,
        transport=kind,
        source=source,
        command=spec.command if kind == "stdio" else None,
        args=spec.args,
        env=spec.env,
        url=spec.url if kind != "stdio" else None,
        headers=spec.headers,
        timeout=spec.timeout,
        trust=isinstance(spec, _UserMcpServerTable) and spec.trust,
        read_only_tools=spec.read_only_tools if isinstance(spec, _UserMcpServerTable) else (),
    )


def _mcp_config(raw: Mapping[str, object], path: Path) -> McpConfig:
    section = _section(raw, "mcp", _McpTable, path)
    servers = {
        name: mcp_server_config(
            name, table, str(path), f"{path}: [mcp.servers.{_key(name)}]", user=True
        )
        for name, table in section.servers.items()
    }
    return McpConfig(
        servers=servers,
        call_timeout=section.call_timeout,
        start_budget=section.start_budget,
        max_tools=section.max_tools,
        tool_tokens=section.tool_tokens,
    )


# --------------------------------------------------------------------- resolving: bank


def _bank_config(raw: Mapping[str, object], env: Mapping[str, str], path: Path) -> BankConfig:
    where = f"{path}: [bank]"
    section = raw.get("bank", {})
    if isinstance(section, Mapping) and "token" in section:
        raise ConfigError(
            f"{where} must not hold the token itself: name a variable with token_env "
            "or a file with token_file"
        )
    table = _convert(section, _BankTable, where)
    if table.url is None:
        return BankConfig(source=str(path))
    if table.token_env is not None and table.token_file is not None:
        raise ConfigError(f"{where} takes token_env or token_file, not both")
    token, source = _bank_token(table, env, path)
    return BankConfig(
        url=table.url.rstrip("/"),
        token=token,
        token_source=source,
        timeout=table.timeout,
        source=str(path),
    )


def _bank_token(table: _BankTable, env: Mapping[str, str], path: Path) -> tuple[str | None, str]:
    """The bank token and where it was looked for (named when it is missing)."""
    if table.token_file is None:
        name = table.token_env or BANK_TOKEN_ENV
        return env.get(name, "").strip() or None, f"the variable {name} ([bank] in {path})"
    token_path = _beside(path, table.token_file)
    source = f"the token file {token_path} ([bank] token_file in {path})"
    try:
        return token_path.read_text(encoding="utf-8").strip() or None, source
    except (OSError, UnicodeDecodeError):
        return None, source


def _beside(config_file: Path, value: str) -> Path:
    """A path from the file: ``~`` expanded, relative to the config file's folder."""
    found = Path(value).expanduser()
    return found if found.is_absolute() else config_file.parent / found


# ------------------------------------------------------------------------ the rest


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


def _fsync(raw: Mapping[str, object], env: Mapping[str, str], path: Path) -> FsyncPolicy:
    """``HEARTH_FSYNC``, else ``[sessions] fsync``."""
    from_file = _section(raw, "sessions", _SessionsTable, path).fsync
    value = env.get("HEARTH_FSYNC")
    if not value:
        return from_file
    if value in FSYNC_POLICIES:
        return value
    raise ConfigError(f"HEARTH_FSYNC must be {_one_of(FSYNC_POLICIES)}, not {value!r}")


def _encryption(raw: Mapping[str, object], env: Mapping[str, str], path: Path) -> EncryptionConfig:
    table = _section(raw, "encryption", _EncryptionTable, path)
    key_file = env.get("HEARTH_KEY_FILE") or table.key_file
    return EncryptionConfig(
        enabled=table.enabled or env.get("HEARTH_ENCRYPT") == "1",
        key_file=Path(key_file).expanduser() if key_file else None,
        keyring_service=table.keyring_service or None,
        passphrase=env.get("HEARTH_PASSPHRASE") or None,
    )


def _language(raw: Mapping[str, object], env: Mapping[str, str], path: Path) -> str:
    """``[ui] language``, else the locale: zh* → "zh", anything else → "en"."""
    language = _section(raw, "ui", _UiTable, path).language
    if language is not None:
        return language
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
    path = home / "config.toml"
    raw = _read_toml(path) if read_file else {}
    team_table = _section(raw, "team", _TeamTable, path)
    team_key = team_table.key_file
    return Config(
        home=home,
        fsync=_fsync(raw, env, path),
        encryption=_encryption(raw, env, path),
        memory=_section(raw, "memory", MemoryConfig, path),
        models=_models_config(raw, env, path),
        retention=_section(raw, "retention", RetentionConfig, path),
        checkpoints=_section(raw, "checkpoints", CheckpointsConfig, path),
        wiki=_section(raw, "wiki", WikiConfig, path),
        browser=_section(raw, "browser", BrowserConfig, path),
        mcp=_mcp_config(raw, path),
        bank=_bank_config(raw, env, path),
        language=_language(raw, env, path),
        user_home=Path(env["HOME"]) if env.get("HOME") else None,
        allowed_hosts=tuple(
            h.strip().lower() for h in _section(raw, "server", _ServerTable, path).allowed_hosts
        ),
        team_key_file=_beside(path, team_key) if team_key is not None else None,
        team_parallel=team_table.parallel,
        raw=raw,
    )
