"""Configuration: read once from ``config.toml`` and the environment, then passed down.

Library code never reads environment variables itself; :func:`load_config` is the
one place that does, and it takes the environment as an argument so tests can
hand it a dict.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
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
class Config:
    home: Path
    fsync: FsyncPolicy = "turn"
    encryption: EncryptionConfig = EncryptionConfig()
    default_model: str | None = None
    memory: MemoryConfig = MemoryConfig()
    raw: Mapping[str, object] = field(default_factory=dict, repr=False)

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
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from None


def _section(raw: Mapping[str, object], name: str, path: Path) -> Mapping[str, object]:
    value = raw.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: [{name}] must be a table")
    return value


def _positive(section: Mapping[str, object], key: str, default: int, path: Path) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ConfigError(f"{path}: [memory] {key} must be a positive integer")
    return value


def load_config(env: Mapping[str, str] | None = None, home: Path | None = None) -> Config:
    """Read ``config.toml`` under the home and the environment variables we honour."""
    env = os.environ if env is None else env
    home = Path(home).absolute() if home is not None else default_home(env)
    cfg_path = home / "config.toml"
    raw = _read_toml(cfg_path)

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
    models = _section(raw, "models", cfg_path)
    default_model = env.get("HEARTH_MODEL") or models.get("default")
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
        fsync=fsync,  # type: ignore[arg-type]
        encryption=encryption,
        default_model=str(default_model) if default_model else None,
        raw=raw,
    )
