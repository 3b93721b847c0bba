"""Key checks before the first request: which variable is missing, and when none is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from workhearth.config import PROVIDERS, load_config
from workhearth.errors import ConfigError
from workhearth.models.registry import PROVIDER_CLASSES, require_key, require_keys, resolve


def _models(tmp_path: Path, env: dict[str, str], toml: str = ""):
    (tmp_path / "config.toml").write_text(toml)
    return load_config({"HEARTH_HOME": str(tmp_path), **env}).models


def test_a_remote_model_without_its_key_names_the_variable(tmp_path: Path) -> None:
    models = _models(tmp_path, {})
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set"):
        require_key(resolve("anthropic:claude-sonnet-4-5", models))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        require_keys("openai:gpt-4o", models)


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:11434/v1",
        "http://localhost:8000/v1",
        "http://[::1]:8080",
        "http://127.8.0.1",
    ],
)
def test_a_server_on_this_machine_needs_no_key(tmp_path: Path, base_url: str) -> None:
    require_keys("openai:llama3", _models(tmp_path, {"OPENAI_BASE_URL": base_url}))


@pytest.mark.parametrize("base_url", ["http://10.0.0.5:11434/v1", "https://localhost.example.com"])
def test_any_other_host_needs_a_key(tmp_path: Path, base_url: str) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        require_keys("openai:llama3", _models(tmp_path, {"OPENAI_BASE_URL": base_url}))


def test_a_configured_table_names_its_own_key_variable(tmp_path: Path) -> None:
    toml = '[models.qwen]\nprovider = "openai"\nmodel = "qwen-plus"\napi_key_env = "DASHSCOPE_API_KEY"\n'
    with pytest.raises(ConfigError, match="DASHSCOPE_API_KEY is not set"):
        require_keys(None, _models(tmp_path, {}, toml))
    require_keys(None, _models(tmp_path, {"DASHSCOPE_API_KEY": "sk-x"}, toml))


def test_every_provider_prefix_has_one_class_in_the_table() -> None:
    assert set(PROVIDER_CLASSES) == set(PROVIDERS)
    assert {cls.__name__ for cls in PROVIDER_CLASSES.values()} == {
        "OpenAIChatModel",
        "AnthropicChatModel",
    }
