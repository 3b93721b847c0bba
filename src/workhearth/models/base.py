"""The model interface (DESIGN §5): one small abstract class with one method.

Providers (OpenAI-compatible, Anthropic) implement :class:`ChatModel`; so does
:class:`workhearth.models.scripted.ScriptedModel`, which tests use. Everything that needs a model (the agent, memory
reflection) takes a ``ChatModel`` as an argument and never builds one itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from workhearth.models.messages import Message


class ChatModel(ABC):
    """A chat model that answers a conversation with one canonical assistant message."""

    #: ``provider:model`` as written in config, e.g. ``openai:qwen-plus``.
    name: str

    @abstractmethod
    def complete(
        self,
        system: str | None,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
    ) -> Message:
        """Answer ``messages`` (canonical, oldest first) under the ``system`` prompt.

        Returns an assistant message (``{"role": "assistant", "content": [...]}``).
        Provider failures raise a :class:`workhearth.errors.HearthError`.
        """

    def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release what the model holds (connections); callers close every model they build."""
