"""The model interface (DESIGN §5): one small abstract class.

A model answers one :class:`ModelRequest` with a stream of events
(:meth:`ChatModel.stream`) and releases its connections in :meth:`ChatModel.close`;
:meth:`~ChatModel.generate` and :meth:`~ChatModel.complete` are that stream,
consumed. Providers (OpenAI-compatible, Anthropic), the :class:`~workhearth.models.router.Router`
and :class:`workhearth.models.scripted.ScriptedModel` (for tests) implement it.
Everything that needs a model (the agent, memory reflection) takes a ``ChatModel``
as an argument and never builds one itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workhearth.errors import ModelError
from workhearth.models.messages import Message

if TYPE_CHECKING:
    from workhearth.models.streaming import Completion, StreamEvent, ToolLike


@dataclass(frozen=True)
class ModelRequest:
    """One call to a model: everything a provider turns into its request body.

    ``messages`` are canonical, oldest first. ``tools``: specs or
    ``{"name", "description", "parameters"}`` dicts. ``max_tokens``: None takes the
    model's configured limit. ``deadline`` (a :func:`time.monotonic` value) bounds
    the whole call, waits and retries included: past it the call fails with a
    ``deadline`` ModelError.
    """

    system: str | None
    messages: list[Message]
    tools: Sequence[ToolLike] | None = None
    max_tokens: int | None = None
    deadline: float | None = None


class Cancelled(KeyboardInterrupt):
    """The request under way was cancelled from another thread (the user stopped the task).

    Why a KeyboardInterrupt: the agent loop already ends a turn cleanly on one (the
    transcript stays resumable), exactly as Ctrl-C does.
    """


class ChatModel(ABC):
    """A chat model: answers a :class:`ModelRequest` with streamed events.

    The last event of :meth:`stream` is always :class:`~workhearth.models.streaming.Done`
    (or the iterator raises :class:`~workhearth.errors.ModelError`).
    """

    #: ``provider:model`` as written in config, e.g. ``openai:qwen-plus``.
    name: str
    #: The model's context window in tokens, for compaction.
    context_window: int = 32_768

    @abstractmethod
    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        """Yield events for one reply to ``request``; the last one is ``Done``.

        Provider failures raise a :class:`workhearth.errors.HearthError`.
        """

    def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release what the model holds (connections); callers close every model they build."""

    def cancel(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Abort the request under way now, from any thread: its stream raises :class:`Cancelled`.

        The model is not used again after (a stopped run builds a new one to resume).
        """

    def generate(self, request: ModelRequest) -> Completion:
        """The whole reply with usage and stop reason (the stream, consumed)."""
        # Why: the event types live in .streaming, which builds on this module.
        from workhearth.models.streaming import Done

        result: Completion | None = None
        for event in self.stream(request):
            if isinstance(event, Done):
                result = event.completion
        if result is not None:
            return result
        raise ModelError(f"{self.name}: the reply stream ended without a result", kind="stream_cut")

    def complete(
        self,
        system: str | None,
        messages: list[Message],
        *,
        max_tokens: int | None = None,
        tools: Sequence[ToolLike] | None = None,
    ) -> Message:
        """The assistant message answering ``messages`` under ``system`` (a shorthand)."""
        request = ModelRequest(system, messages, tools=tools, max_tokens=max_tokens)
        return self.generate(request).message
