"""Pick a light or a strong model by task complexity, and fall back when one fails.

The heuristic is local and instant (no model call): long text, code blocks,
stack traces, reasoning words (why, analyse, design, refactor — 为什么, 分析,
设计, 重构 …) and multi-step markers (first … then, numbered steps — 步骤, 首先,
然后 …) push a task to ``strong``.

A session's tier is sticky and only moves up: once a task needed the strong
model, later light-looking follow-ups ("ok, go on") stay strong. On failure the
router tries the other models of the same tier, then the stronger tier, never a
weaker one; a fallback that had to go up raises the session's tier too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

import httpx

from workhearth.config import TIERS, ModelsConfig, Tier
from workhearth.errors import ConfigError, ModelError
from workhearth.models.base import ModelRequest
from workhearth.models.http import HttpOptions
from workhearth.models.messages import Message
from workhearth.models.registry import build, configured_models, resolve
from workhearth.models.streaming import (
    Done,
    StreamEvent,
    StreamingChatModel,
)
from workhearth.models.tokens import count_tokens

_REASONING = re.compile(
    r"\b(why|explain|analy[sz]e|analysis|design|architect\w*|refactor\w*|debug\w*|"
    r"optimi[sz]e|prove|proof|compare|trade-?offs?|investigate|root cause|diagnose|"
    r"plan|strategy|migrate|implement)\b"
    r"|为什么|为何|分析|设计|架构|重构|调试|排查|优化|证明|比较|对比|权衡|规划|方案|原因|解释|实现|迁移",
    re.IGNORECASE,
)
_STEPS = re.compile(
    r"\b(step[- ]by[- ]step|steps|first\b.*\bthen|and then|after that|finally|"
    r"multiple|several|each of|all of the)\b"
    r"|步骤|首先|然后|接着|之后|最后|第一步|分步|逐步|每个|所有的|多个",
    re.IGNORECASE | re.DOTALL,
)
_NUMBERED = re.compile(r"^\s*(?:\d+[.)、]|[-*] )", re.MULTILINE)
_TRACE = re.compile(r"Traceback \(most recent call last\)|^\s+at \S+\(|Exception:|Error:", re.M)

STRONG_SCORE = 2


def complexity(text: str) -> int:
    """A small score: 0-1 is a light task, 2 and more a strong one."""
    score = 0
    tokens = count_tokens(text)
    if tokens > 250:
        score += 2
    elif tokens > 100:
        score += 1
    if "```" in text:
        score += 2
    if _TRACE.search(text):
        score += 2
    score += 2 * min(2, len(_REASONING.findall(text)))
    score += min(2, len(_STEPS.findall(text)))
    if len(_NUMBERED.findall(text)) >= 3:
        score += 2
    return score


def classify(text: str) -> Tier:
    """``"strong"`` for a complex task, ``"light"`` for a simple one."""
    return "strong" if complexity(text) >= STRONG_SCORE else "light"


def task_text(messages: list[Message]) -> str:
    """The text of the latest user message that has any (tool results carry no task)."""
    for message in reversed(messages):
        if message["role"] != "user":
            continue
        texts = [b["text"] for b in message["content"] if b.get("type") == "text"]
        if texts:
            return "\n".join(texts)
    return ""


def _rank(tier: Tier) -> int:
    return TIERS.index(tier)


class Router(StreamingChatModel):
    """A :class:`StreamingChatModel` over several configured models.

    ``models`` are providers built by the registry (each has ``settings`` with a
    ``tier``), in preference order. :attr:`last_model` and each
    ``Completion.model`` name the model that answered; :attr:`failures` lists
    ``(model, error)`` for the models that failed during the last call.
    """

    def __init__(self, models: Sequence[StreamingChatModel], *, tier: Tier = "light") -> None:
        if not models:
            raise ConfigError("the router needs at least one model")
        self.models = list(models)
        self.name = "router"
        self.tier: Tier = tier
        self.last_model: str | None = None
        self.failures: list[tuple[str, ModelError]] = []
        # (count, first and last message, task text) of the last scan
        self._task: tuple[int, Message, Message, str] | None = None

    @classmethod
    def from_config(
        cls,
        config: ModelsConfig,
        *,
        pinned: str | None = None,
        tier: Tier = "light",
        client: httpx.Client | None = None,
    ) -> Router:
        """All configured models, or only ``pinned`` (``--model``: no routing, no fallback)."""
        options = HttpOptions.from_config(config)
        chosen = [resolve(pinned, config)] if pinned else configured_models(config)
        if not chosen:
            chosen = [resolve(None, config)]  # raises the "no model configured" error
        windows = config.context_windows
        return cls([build(s, options, client=client, windows=windows) for s in chosen], tier=tier)

    def close(self) -> None:
        for model in self.models:
            model.close()

    def cancel(self) -> None:
        for model in self.models:
            model.cancel()

    @staticmethod
    def tier_of(model: StreamingChatModel) -> Tier:
        settings = getattr(model, "settings", None)
        return getattr(settings, "tier", "strong")

    @staticmethod
    def key_of(model: StreamingChatModel) -> str:
        settings = getattr(model, "settings", None)
        return getattr(settings, "name", model.name)

    def plan(self, tier: Tier) -> list[StreamingChatModel]:
        """Models to try for ``tier``, in order: same tier (last good one first), then up."""
        order: list[StreamingChatModel] = []
        for rank in range(_rank(tier), len(TIERS)):
            same = [m for m in self.models if _rank(self.tier_of(m)) == rank]
            same.sort(key=lambda m: self.key_of(m) != self.last_model)  # stable: keeps order
            order.extend(same)
        return order

    def _task_text(self, messages: list[Message]) -> str:
        """:func:`task_text`, without walking a long tool loop back to its prompt each step.

        Why: the messages scanned last time are remembered by their count and the
        identity of the last one; when they are still there, only the newer ones are
        looked at, and the text found before stands if none of them has any.
        """
        start, before = 0, ""
        if self._task is not None:
            count, first, last, text = self._task
            # Why both ends: a compaction replaces the first, a rewind the last.
            if 0 < count <= len(messages) and messages[0] is first and messages[count - 1] is last:
                start, before = count, text
        found = task_text(messages[start:]) or before
        if messages:
            self._task = (len(messages), messages[0], messages[-1], found)
        return found

    def choose(self, messages: list[Message]) -> Tier:
        """Raise the sticky tier if the latest task needs it; return the tier to use."""
        wanted = classify(self._task_text(messages))
        if _rank(wanted) > _rank(self.tier):
            self.tier = wanted
        return self.tier

    @property
    def context_window(self) -> int:  # type: ignore[override]
        """The smallest window among the models the current tier may use (all must fit)."""
        candidates = self.plan(self.tier) or self.models
        return min(m.context_window for m in candidates)

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        tier = self.choose(request.messages)
        self.failures = []
        candidates = self.plan(tier)
        if not candidates:
            raise ModelError(f"no model of tier {tier!r} or above is configured", kind="config")
        for model in candidates:
            key = self.key_of(model)
            yielded = False
            try:
                for event in model.stream(request):
                    if isinstance(event, Done):
                        # Why: record before yielding; a caller may stop at Done.
                        self.last_model = key
                        if _rank(self.tier_of(model)) > _rank(self.tier):
                            self.tier = self.tier_of(model)
                        event = Done(replace(event.completion, model=key))
                    yielded = True
                    yield event
            except ModelError as exc:
                if yielded or exc.kind == "deadline":
                    # Why: text already reached the caller (switching models now would
                    # splice two different answers together), or the time is up for all.
                    raise
                self.failures.append((key, exc))
                continue
            return
        if len(self.failures) == 1:
            raise self.failures[0][1]
        summary = "; ".join(str(err) for _, err in self.failures)
        raise ModelError(
            f"every {tier} model failed: {summary}",
            kind=self.failures[-1][1].kind,
            failures=[k for k, _ in self.failures],
        )
