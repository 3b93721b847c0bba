"""From a name to a working model: resolve specs and config names, build providers.

A model is named either by a ``[models.NAME]`` table in ``config.toml`` or by a
spec ``openai:MODEL`` / ``anthropic:MODEL`` that uses ``OPENAI_BASE_URL`` /
``OPENAI_API_KEY`` (or the ``ANTHROPIC_`` pair). With no name, ``HEARTH_MODEL``
or ``[models] default`` decides, else the first configured table.

A model must have its API key before the first request (:func:`require_key`),
except on a loopback base URL: a server on this machine (Ollama, vLLM,
llama.cpp) usually takes no key, and a key it does need fails with a clear 401
at once, while a remote API without a key only retries into an auth or DNS error.

Context windows come from the table's ``context_window``, else
``[models.context_windows]`` (model-family prefix → tokens), else the built-in
table below, else :data:`DEFAULT_CONTEXT_WINDOW`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from workhearth.config import PROVIDERS, ModelsConfig, ModelSettings, ProviderName
from workhearth.errors import ConfigError
from workhearth.models.anthropic_provider import AnthropicChatModel
from workhearth.models.http import HttpChatModel, HttpOptions
from workhearth.models.openai_provider import OpenAIChatModel
from workhearth.models.streaming import StreamingChatModel

DEFAULT_CONTEXT_WINDOW = 32_768

# Why one table: a spec's prefix (``openai:``, ``anthropic:``) picks the class here
# and nowhere else, so a new provider is one line, not another branch.
PROVIDER_CLASSES: Mapping[ProviderName, type[HttpChatModel]] = {
    "openai": OpenAIChatModel,
    "anthropic": AnthropicChatModel,
}

# Model-family prefix (lower case, without an "org/" prefix) → context window in
# tokens. The longest matching prefix wins. Values are the documented input
# windows; where a family has several, the smaller one (safe side for compaction).
KNOWN_CONTEXT_WINDOWS: Mapping[str, int] = {
    "claude": 200_000,
    "gpt-5": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek": 128_000,
    "qwen-max": 32_768,
    "qwen-plus": 131_072,
    "qwen-turbo": 131_072,
    "qwen-coder": 131_072,
    "qwen3-max": 262_144,
    "qwen3-coder": 262_144,
    "qwen3": 131_072,
    "qwen2.5": 32_768,
    "qwq": 131_072,
    "glm-4.6": 200_000,
    "glm-4.5": 128_000,
    "glm-4": 128_000,
    "kimi-k2": 131_072,
    "kimi": 131_072,
    "moonshot-v1-8k": 8_192,
    "moonshot-v1-32k": 32_768,
    "moonshot-v1-128k": 131_072,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama-3.1": 131_072,
    "llama-3.2": 131_072,
    "llama-3.3": 131_072,
    "llama3": 8_192,
    "mistral": 32_768,
    "mixtral": 32_768,
    "gemma3": 131_072,
    "gemma": 8_192,
    "phi4": 16_384,
}


def _family_match(model: str, table: Mapping[str, int]) -> int | None:
    key = model.lower().rsplit("/", 1)[-1]
    best: tuple[int, int] | None = None
    for prefix, window in table.items():
        if key.startswith(prefix.lower()) and (best is None or len(prefix) > best[0]):
            best = (len(prefix), window)
    return best[1] if best else None


def context_window(settings: ModelSettings, overrides: Mapping[str, int] | None = None) -> int:
    """The window in tokens of the configured model (see the module docstring)."""
    if settings.context_window:
        return settings.context_window
    return (
        _family_match(settings.model, overrides or {})
        or _family_match(settings.model, KNOWN_CONTEXT_WINDOWS)
        or DEFAULT_CONTEXT_WINDOW
    )


def resolve(spec: str | None, config: ModelsConfig) -> ModelSettings:
    """Settings for a config name or an ``openai:MODEL`` / ``anthropic:MODEL`` spec."""
    spec = (spec or config.default or "").strip()
    if not spec:
        if config.entries:
            return next(iter(config.entries.values()))
        raise ConfigError(
            "no model configured: set HEARTH_MODEL=openai:NAME (or anthropic:NAME), "
            "or add a [models.NAME] table to config.toml",
            code="model_none",
            cli_hint="or pass --model",
        )
    if spec in config.entries:
        return config.entries[spec]
    provider, sep, model = spec.partition(":")
    if sep and provider in PROVIDERS and model:
        for entry in config.entries.values():
            if entry.provider == provider and entry.model == model:
                return entry
        base = config.providers.get(provider)
        if base is None:  # a ModelsConfig built by hand without provider defaults
            raise ConfigError(f"no settings for provider {provider!r}")
        return replace(base, name=spec, model=model)
    known = (
        f"the configured ones are {', '.join(config.entries)}"
        if config.entries
        else ("no model is configured")
    )
    raise ConfigError(
        f"unknown model {spec!r}: {known}; or name one as openai:MODEL or anthropic:MODEL",
        code="model_unknown",
        params={"model": spec},
    )


def _loopback(base_url: str) -> bool:
    host = (urlsplit(base_url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def require_key(settings: ModelSettings) -> None:
    """Raise :class:`ConfigError` naming the variable when ``settings`` needs a key it lacks."""
    if settings.api_key or _loopback(settings.base_url):
        return
    raise ConfigError(
        f"{settings.api_key_env} is not set: model {settings.name} at {settings.base_url} "
        "needs an API key",
        code="model_key_missing",
        params={"model": settings.name, "variable": settings.api_key_env},
        cli_hint=f"export {settings.api_key_env}=…",
    )


def require_keys(spec: str | None, config: ModelsConfig) -> None:
    """:func:`require_key` for every model a run with ``spec`` (None: routed) may call."""
    chosen = [resolve(spec, config)] if spec else configured_models(config)
    for settings in chosen or [resolve(None, config)]:
        require_key(settings)


def build(
    settings: ModelSettings,
    options: HttpOptions | None = None,
    *,
    client: httpx.Client | None = None,
    windows: Mapping[str, int] | None = None,
) -> HttpChatModel:
    """A provider for ``settings`` (``client`` lets callers share one connection pool)."""
    window = context_window(settings, windows)
    cls = PROVIDER_CLASSES[settings.provider]
    return cls(settings, options, client=client, context_window=window)


def build_model(
    spec: str | None, config: ModelsConfig, *, client: httpx.Client | None = None
) -> StreamingChatModel:
    """Resolve ``spec`` (or the default) and build it with the configured timeouts."""
    return build(
        resolve(spec, config),
        HttpOptions.from_config(config),
        client=client,
        windows=config.context_windows,
    )


def configured_models(config: ModelsConfig) -> list[ModelSettings]:
    """Every model the router may use: the tables in file order, plus the default spec."""
    models = list(config.entries.values())
    if config.default and config.default not in config.entries:
        try:
            extra = resolve(config.default, config)
        except ConfigError:
            extra = None
        if extra is not None and extra not in models:
            models.append(extra)
    return models


def describe(config: ModelsConfig) -> list[dict[str, Any]]:
    """Rows for ``hearth models list --json`` (never the key itself, only whether it is set)."""
    default = resolve(None, config).name if (config.default or config.entries) else None
    return [
        {
            "name": s.name,
            "provider": s.provider,
            "model": s.model,
            "base_url": s.base_url,
            "tier": s.tier,
            "context_window": context_window(s, config.context_windows),
            "api_key_env": s.api_key_env,
            "api_key_set": bool(s.api_key),
            "price_in": s.price_in,
            "price_out": s.price_out,
            "default": s.name == default,
        }
        for s in configured_models(config)
    ]
