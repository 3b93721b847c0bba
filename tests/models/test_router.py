"""Model configuration, the registry, the complexity heuristic and router fallback."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.fake_providers import FakeProvider, Reply, json_reply, openai_sse, openai_text
from workhearth.config import ModelsConfig, ModelSettings, load_config
from workhearth.errors import ConfigError, ModelError
from workhearth.models.anthropic_provider import AnthropicChatModel
from workhearth.models.base import ModelRequest
from workhearth.models.http import HttpOptions
from workhearth.models.messages import Message, text_message
from workhearth.models.openai_provider import OpenAIChatModel
from workhearth.models.registry import (
    DEFAULT_CONTEXT_WINDOW,
    build,
    build_model,
    context_window,
    describe,
    resolve,
)
from workhearth.models.router import Router, classify
from workhearth.models.streaming import Done, TextDelta

FAST = HttpOptions(timeout=2.0, max_retries=1, backoff_base=0.01, backoff_max=0.02)

CONFIG = """
[models]
default = "fast"
timeout = 30
max_retries = 2

[models.fast]
provider = "openai"
model = "qwen-turbo"
base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
api_key_env = "DASHSCOPE_API_KEY"
tier = "light"
price_in = 0.3
price_out = 0.6

[models."deepseek-chat"]
provider = "openai"
base_url = "https://api.deepseek.com"
api_key_env = "DEEPSEEK_API_KEY"
tier = "light"

[models.claude]
provider = "anthropic"
model = "claude-sonnet-4-5"
tier = "strong"
context_window = 1000000

[models.context_windows]
"qwen-turbo" = 1000000
"""


def load(tmp_path: Path, text: str, **env: str):
    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    return load_config({"HEARTH_HOME": str(tmp_path), **env})


# --------------------------------------------------------------------------- config


def test_models_config_is_read_once_with_keys_from_env(tmp_path: Path) -> None:
    cfg = load(tmp_path, CONFIG, DASHSCOPE_API_KEY="sk-dash", ANTHROPIC_API_KEY="sk-ant")
    models = cfg.models
    assert list(models.entries) == ["fast", "deepseek-chat", "claude"]
    fast = models.entries["fast"]
    assert (fast.provider, fast.model, fast.tier, fast.api_key) == (
        "openai",
        "qwen-turbo",
        "light",
        "sk-dash",
    )
    assert (fast.price_in, fast.price_out) == (0.3, 0.6)
    assert models.entries["deepseek-chat"].model == "deepseek-chat"  # the table name
    assert models.entries["deepseek-chat"].api_key is None
    claude = models.entries["claude"]
    assert claude.base_url == "https://api.anthropic.com" and claude.api_key == "sk-ant"
    assert claude.api_key_env == "ANTHROPIC_API_KEY"
    assert (models.timeout, models.max_retries, models.default) == (30.0, 2, "fast")
    assert "sk-dash" not in repr(cfg)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('provider = "gemini"', "provider must be"),
        ('provider = "openai"\ntier = "medium"', "tier must be"),
        ('provider = "openai"\ncontext_window = -1', "context_window must be a positive"),
        ('provider = "openai"\nprice_in = "cheap"', "price_in must be a number"),
        ('provider = "openai"\napi_key = "sk-inline"', "unknown keys: api_key"),
    ],
)
def test_bad_model_tables_are_one_clear_line(tmp_path: Path, table: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        load(tmp_path, f"[models.x]\n{table}\n")
    assert "[models.x]" in str(info.value) and "\n" not in str(info.value)


def test_env_base_urls_and_hearth_model(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        "",
        OPENAI_BASE_URL="http://127.0.0.1:11434/v1",
        OPENAI_API_KEY="ollama",
        HEARTH_MODEL="openai:qwen2.5:7b",
    )
    settings = resolve(None, cfg.models)
    assert (settings.name, settings.provider, settings.model) == (
        "openai:qwen2.5:7b",
        "openai",
        "qwen2.5:7b",
    )
    assert settings.base_url == "http://127.0.0.1:11434/v1" and settings.api_key == "ollama"
    assert cfg.models.default == "openai:qwen2.5:7b"
    model = build_model(None, cfg.models)
    assert isinstance(model, OpenAIChatModel) and model.name == "openai:qwen2.5:7b"
    assert model.context_window == 32_768  # qwen2.5 family


# --------------------------------------------------------------------------- registry


def test_resolve_names_and_specs(tmp_path: Path) -> None:
    models = load(tmp_path, CONFIG, ANTHROPIC_BASE_URL="http://proxy.local").models
    assert resolve(None, models).name == "fast"
    assert resolve("claude", models).model == "claude-sonnet-4-5"
    # A spec naming a configured model gets that table (its tier, prices, key).
    assert resolve("openai:qwen-turbo", models).name == "fast"
    adhoc = resolve("anthropic:claude-opus-4-1", models)
    assert adhoc.base_url == "http://proxy.local" and adhoc.tier == "strong"
    assert isinstance(build(adhoc), AnthropicChatModel)
    with pytest.raises(ConfigError, match=r"unknown model .gpt9.*fast, deepseek-chat, claude"):
        resolve("gpt9", models)


def test_no_model_configured() -> None:
    with pytest.raises(ConfigError, match="no model configured"):
        resolve(None, ModelsConfig())


def test_context_windows(tmp_path: Path) -> None:
    models = load(tmp_path, CONFIG).models
    windows = models.context_windows
    assert context_window(models.entries["claude"], windows) == 1_000_000  # table wins
    assert context_window(models.entries["fast"], windows) == 1_000_000  # override
    assert context_window(models.entries["deepseek-chat"], windows) == 128_000  # built in
    settings = models.entries["fast"]

    def window(name: str) -> int:
        return context_window(ModelSettings(**{**settings.__dict__, "model": name}))

    assert window("Qwen/Qwen3-Coder-480B-A35B-Instruct") == 262_144
    assert window("gpt-4o-mini") == 128_000
    assert window("glm-4.6") == 200_000
    assert window("some-local-model") == DEFAULT_CONTEXT_WINDOW
    rows = describe(models)
    assert [r["name"] for r in rows] == ["fast", "deepseek-chat", "claude"]
    assert rows[0]["default"] and not rows[0]["api_key_set"] and "api_key" not in rows[0]


# --------------------------------------------------------------------------- heuristic


@pytest.mark.parametrize(
    "task",
    [
        "hi",
        "list the files in src",
        "read README.md",
        "what time is it?",
        "rename notes.txt to todo.txt",
        "你好",
        "列出当前目录的文件",
        "读一下 README",
        "把 a.txt 改名为 b.txt",
        "今天几号？",
    ],
)
def test_simple_tasks_are_light(task: str) -> None:
    assert classify(task) == "light"


@pytest.mark.parametrize(
    "task",
    [
        "Why does test_store fail on Windows?",
        "Refactor the session store into smaller classes",
        "Design a caching layer for the memory index",
        "First read the config, then update the parser, and finally run the tests",
        "Fix this:\n```python\ndef f(x):\n    return x +\n```",
        'Traceback (most recent call last):\n  File "a.py", line 1\nValueError: bad',
        "1. add a flag\n2. wire it to the CLI\n3. document it",
        "please look at this " + "very long description of the problem " * 60,
        "分析一下这个函数为什么慢",
        "设计一个缓存系统",
        "重构这个模块",
        "为什么测试失败了？",
        "请按步骤来：首先读取配置，然后修改解析器，最后运行测试",
    ],
)
def test_complex_tasks_are_strong(task: str) -> None:
    assert classify(task) == "strong"


# --------------------------------------------------------------------------- router


def settings(name: str, tier: str, base_url: str = "http://127.0.0.1:9/v1") -> ModelSettings:
    return ModelSettings(
        name=name,
        provider="openai",
        model=name,
        base_url=base_url,
        api_key_env="OPENAI_API_KEY",
        api_key="sk",
        tier=tier,  # type: ignore[arg-type]
    )


def router_over(*specs: tuple[str, str, str]) -> Router:
    return Router([OpenAIChatModel(settings(n, t, u), FAST) for n, t, u in specs])


def user(text: str) -> list[Message]:
    return [text_message("user", text)]


def names(models: list[Any]) -> list[str]:
    return [m.settings.name for m in models]


def test_fallback_order_never_goes_down() -> None:
    url = "http://127.0.0.1:9/v1"
    router = router_over(
        ("strong-a", "strong", url),
        ("light-a", "light", url),
        ("light-b", "light", url),
        ("strong-b", "strong", url),
    )
    assert names(router.plan("light")) == ["light-a", "light-b", "strong-a", "strong-b"]
    assert names(router.plan("strong")) == ["strong-a", "strong-b"]
    router.last_model = "light-b"  # the model that answered last is tried first
    assert names(router.plan("light")) == ["light-b", "light-a", "strong-a", "strong-b"]


def test_tier_is_sticky_and_only_moves_up() -> None:
    router = router_over(("l", "light", "x"), ("s", "strong", "x"))
    assert router.choose(user("list the files")) == "light"
    assert router.choose(user("设计一个插件系统")) == "strong"
    assert router.choose(user("好的，继续")) == "strong"
    # A tool-result message carries no task; the last user text decides.
    tool_turn: Message = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}],
    }
    assert router.choose([*user("hi"), tool_turn]) == "strong"


def ok(text: str) -> Reply:
    return Reply(pieces=openai_sse(openai_text([text])))


def test_falls_back_within_tier_then_up() -> None:
    down = json_reply(500, {"error": {"message": "down"}})
    bad_key = json_reply(401, {"error": {"message": "bad key"}})
    with (
        FakeProvider([bad_key]) as la,
        FakeProvider([down, down]) as lb,
        FakeProvider([ok("from strong"), ok("again strong")]) as sa,
    ):
        router = router_over(
            ("light-a", "light", la.url),
            ("light-b", "light", lb.url),
            ("strong-a", "strong", sa.url),
        )
        done = router.generate(ModelRequest(None, user("list the files")))
        assert done.model == "strong-a" == router.last_model
        assert done.message["content"] == [{"type": "text", "text": "from strong"}]
        assert [name for name, _ in router.failures] == ["light-a", "light-b"]
        assert [err.kind for _, err in router.failures] == ["auth", "server"]
        # Going up for a fallback makes the session strong: the light models rest.
        assert router.tier == "strong"
        assert router.generate(ModelRequest(None, user("ok"))).model == "strong-a"
    assert (len(la.received), len(lb.received), len(sa.received)) == (1, 2, 2)


def test_falls_back_to_same_tier_and_sticks_to_it() -> None:
    down = json_reply(503, {"error": {"message": "busy"}})
    with (
        FakeProvider([down, down]) as la,
        FakeProvider([ok("b1"), ok("b2")]) as lb,
        FakeProvider([]) as sa,
    ):
        router = router_over(
            ("light-a", "light", la.url),
            ("light-b", "light", lb.url),
            ("strong-a", "strong", sa.url),
        )
        assert router.generate(ModelRequest(None, user("hi"))).model == "light-b"
        assert router.generate(ModelRequest(None, user("thanks"))).model == "light-b"
        assert router.tier == "light"
    assert (len(la.received), len(lb.received), sa.received) == (2, 2, [])


def test_strong_task_never_falls_down_to_light() -> None:
    down = json_reply(500, {"error": {"message": "down"}})
    bad_key = json_reply(403, {"error": {"message": "forbidden"}})
    with (
        FakeProvider([ok("unused")]) as light,
        FakeProvider([down, down]) as s1,
        FakeProvider([bad_key]) as s2,
    ):
        router = router_over(
            ("l", "light", light.url), ("s1", "strong", s1.url), ("s2", "strong", s2.url)
        )
        with pytest.raises(
            ModelError, match=r"every strong model failed: s1: gave up .*; s2: "
        ) as info:
            router.generate(ModelRequest(None, user("Why is the index slow? Analyse it.")))
    assert light.received == [] and info.value.context["failures"] == ["s1", "s2"]


def test_a_single_model_reports_its_own_error() -> None:
    with FakeProvider([json_reply(401, {"error": {"message": "no"}})]) as server:
        router = router_over(("only", "strong", server.url))
        with pytest.raises(ModelError, match=r"^only: the provider refused the credentials"):
            router.complete(None, user("hi"))


def test_no_fallback_once_text_was_streamed() -> None:
    head = openai_sse(openai_text(["half"])[:2], done=False)
    with FakeProvider([Reply(pieces=head, cut=True)]) as la, FakeProvider([]) as lb:
        router = router_over(("a", "light", la.url), ("b", "light", lb.url))
        seen = []
        with pytest.raises(ModelError, match="cut off midway"):
            seen.extend(router.stream(ModelRequest(None, user("hi"))))
    assert seen == [TextDelta("half")] and lb.received == []


def test_no_fallback_once_the_time_is_up() -> None:
    with FakeProvider([Reply(delay=3.0)]) as la, FakeProvider([ok("late")]) as lb:
        router = router_over(("a", "light", la.url), ("b", "light", lb.url))
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            list(router.stream(ModelRequest(None, user("hi"), deadline=started + 0.3)))
        assert time.monotonic() - started < 2.0
    assert info.value.kind == "deadline" and lb.received == []


def test_stream_reports_the_answering_model(tmp_path: Path) -> None:
    with FakeProvider([ok("hello")]) as server:
        cfg = load(
            tmp_path,
            f'[models.local]\nprovider = "openai"\nmodel = "llama3.1"\nbase_url = "{server.url}/v1"\n',
        )
        router = Router.from_config(cfg.models)
        events = list(router.stream(ModelRequest(None, user("hi"))))
        assert isinstance(events[-1], Done) and events[-1].completion.model == "local"
        assert router.context_window == 131_072
        pinned = Router.from_config(cfg.models, pinned="openai:gpt-4o")
        assert names(pinned.models) == ["openai:gpt-4o"]


def test_the_task_text_is_found_without_rescanning_a_long_tool_loop() -> None:
    """The router's remembered task text equals a full scan at every step of a growing
    conversation, also when a new prompt arrives or earlier messages are replaced."""
    from workhearth.models.router import task_text

    router = router_over(("light", "light", "http://127.0.0.1:9/v1"))
    prompt = text_message("user", "refactor the whole payment module and migrate the database")
    messages: list[Message] = [prompt]
    for step in range(40):
        call = {"type": "tool_use", "id": f"c{step}", "name": "read_file", "input": {}}
        result = {"type": "tool_result", "tool_use_id": f"c{step}", "content": "x"}
        messages.append({"role": "assistant", "content": [call]})  # type: ignore[list-item]
        messages.append({"role": "user", "content": [result]})  # type: ignore[list-item]
        if step == 20:
            messages.append(text_message("assistant", "done with that part"))
            messages.append(text_message("user", "now fix the typo"))
        if step == 30:  # a compaction: the start replaced by a summary (new objects)
            messages[:10] = [text_message("user", "summary: earlier work")]
        if step == 35:  # one replaced by one: the length stays, the first message changes
            messages[:1] = [text_message("user", "summary: the typo work")]
        assert router._task_text(list(messages)) == task_text(messages), step
    assert router._task_text(messages) == "now fix the typo"
