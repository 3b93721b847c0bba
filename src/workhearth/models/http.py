"""HTTP plumbing the providers share: options, error mapping, retries with backoff.

A call is retried (exponential backoff with jitter, ``retry-after`` honoured) on
429, 408, 409, 5xx, connection errors, timeouts and streams that drop — but only
while nothing has been handed to the caller yet: once a text delta is out, a
cut stream is an error, never a silent restart that would repeat the text.
"""

from __future__ import annotations

import contextlib
import email.utils
import functools
import json
import random
import re
import socket
import ssl
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from workhearth.config import ModelsConfig, ModelSettings
from workhearth.errors import ModelError
from workhearth.models.base import Cancelled, ModelRequest
from workhearth.models.streaming import StreamEvent, StreamingChatModel

T = TypeVar("T")

_RETRY_STATUSES = frozenset({408, 409, 429})
# Why: several OpenAI-compatible servers answer an unknown model with 400, not 404.
_UNKNOWN_MODEL = re.compile(
    r"model\b.*\b(not found|not exist|does not exist|unknown|not supported)"
    r"|unknown model|invalid model|no such model|model_not_found",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class HttpOptions:
    """``timeout`` is the longest wait for the next bytes of a reply (not its total time)."""

    timeout: float = 120.0
    connect_timeout: float = 10.0
    max_retries: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    retry_after_max: float = 60.0

    @classmethod
    def from_config(cls, models: ModelsConfig) -> HttpOptions:
        return cls(timeout=models.timeout, max_retries=models.max_retries)

    def httpx_timeout(self, remaining: float | None = None) -> httpx.Timeout:
        """Per-read timeouts; never longer than ``remaining`` seconds when that is given."""
        wait = self.timeout if remaining is None else max(0.05, min(self.timeout, remaining))
        return httpx.Timeout(wait, connect=min(self.connect_timeout, wait))


class RetryableError(Exception):
    """A failure worth another attempt; becomes a :class:`ModelError` when retries run out."""

    def __init__(
        self, kind: str, reason: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


def new_client(options: HttpOptions) -> httpx.Client:
    return httpx.Client(timeout=options.httpx_timeout(), follow_redirects=True, verify=_tls())


@functools.cache
def _tls() -> ssl.SSLContext:
    """The TLS settings every client shares: httpx's defaults (certifi, or ``SSL_CERT_FILE``
    / ``SSL_CERT_DIR``), made once. Why once: reading the certificate store takes ~19 ms,
    which every model session (a team task's specialists, a subagent) paid again."""
    return httpx.create_ssl_context()


def provider_message(body: bytes) -> str:
    """The provider's own error text from a JSON error body, on one short line."""
    text = body.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
    text = " ".join(text.split())
    return text[:200] + ("…" if len(text) > 200 else "")


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``retry-after`` secs or date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def raise_for_status(response: httpx.Response, settings: ModelSettings) -> None:
    """Raise the right error for a non-2xx response (reads its body first)."""
    status = response.status_code
    if status < 300:
        return
    detail = provider_message(response.read())
    label = settings.name
    if status in _RETRY_STATUSES or status >= 500:
        kind = "rate_limit" if status == 429 else "server"
        raise RetryableError(
            kind,
            f"HTTP {status}: {detail}" if detail else f"HTTP {status}",
            status=status,
            retry_after=retry_after_seconds(response.headers),
        )
    if status in (401, 403):
        hint = (
            f"check {settings.api_key_env}"
            if settings.api_key
            else f"{settings.api_key_env} is not set"
        )
        raise ModelError(
            f"{label}: the provider refused the credentials (HTTP {status}); {hint}",
            kind="auth",
            status=status,
            model=label,
        )
    if status == 404 or _UNKNOWN_MODEL.search(detail):
        raise ModelError(
            f"{label}: model {settings.model!r} not found at {settings.base_url} "
            f"(HTTP {status}{': ' + detail if detail else ''}); check the model name and base_url",
            kind="not_found",
            status=status,
            model=label,
        )
    raise ModelError(
        f"{label}: the provider rejected the request (HTTP {status}){': ' + detail if detail else ''}",
        kind="bad_request",
        status=status,
        model=label,
    )


def backoff_delay(
    attempt: int, options: HttpOptions, retry_after: float | None, rng: random.Random
) -> float:
    """Seconds to wait before retry number ``attempt + 1``."""
    if retry_after is not None and retry_after <= options.retry_after_max:
        return retry_after
    ceiling = min(options.backoff_max, options.backoff_base * 2.0**attempt)
    # Why: "equal jitter" keeps at least half the backoff while spreading clients apart.
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


_rng = random.Random()


def with_retries(
    attempt: Callable[[httpx.Timeout], Iterator[T]],
    options: HttpOptions,
    settings: ModelSettings,
    *,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float | None = None,
) -> Iterator[T]:
    """Run ``attempt`` (one HTTP call, as an iterator) until it succeeds or retries run out.

    An attempt that fails before yielding anything is retried when the failure is
    transient; once something was yielded, a failure raises :class:`ModelError`.
    With a ``deadline`` (monotonic seconds), every wait is cut to the time left and
    no attempt or backoff starts past it (a ``deadline`` ModelError instead).
    """
    label = settings.name
    tries = 0

    def left() -> float | None:
        if deadline is None:
            return None
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ModelError(f"{label}: out of time", kind="deadline", model=label)
        return remaining

    while True:
        yielded = False
        try:
            for item in attempt(options.httpx_timeout(left())):
                yielded = True
                yield item
            return
        except RetryableError as exc:
            failure = exc
        except httpx.TimeoutException as exc:
            left()  # Why: a wait cut short by the deadline is the deadline, not a timeout
            failure = RetryableError(
                "timeout", f"no answer within {options.timeout:g}s ({type(exc).__name__})"
            )
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ModelError(
                f"{label}: bad base_url {settings.base_url!r} ({exc})",
                kind="bad_request",
                model=label,
            ) from None
        except httpx.TransportError as exc:
            kind = "stream_cut" if isinstance(exc, httpx.RemoteProtocolError) else "connection"
            failure = RetryableError(kind, f"{type(exc).__name__}: {exc or 'connection failed'}")
        if yielded:
            raise ModelError(
                f"{label}: the reply was cut off midway ({failure.reason})",
                kind=failure.kind if failure.kind != "server" else "stream_cut",
                status=failure.status,
                model=label,
            )
        if tries >= options.max_retries:
            attempts = f"{tries + 1} attempt{'s' if tries else ''}"
            raise ModelError(
                f"{label}: gave up after {attempts}: {failure.reason}",
                kind=failure.kind,
                status=failure.status,
                model=label,
            )
        delay = backoff_delay(tries, options, failure.retry_after, _rng)
        remaining = left()
        if remaining is not None and delay >= remaining:
            raise ModelError(
                f"{label}: out of time before the next attempt ({failure.reason})",
                kind="deadline",
                model=label,
            )
        sleep(delay)
        tries += 1


class HttpChatModel(StreamingChatModel):
    """A provider reached over HTTP: one client, one request body, one streamed attempt.

    Subclasses say how a request looks (:meth:`request_body`) and how one attempt
    reads its reply (:meth:`attempt`); transient failures are retried here.
    """

    prefix = ""  # the provider part of ``name`` ("openai", "anthropic")
    default_context_window: int | None = None

    def __init__(
        self,
        settings: ModelSettings,
        options: HttpOptions | None = None,
        *,
        client: httpx.Client | None = None,
        context_window: int | None = None,
    ) -> None:
        self.settings = settings
        self.name = f"{self.prefix}:{settings.model}"
        self.options = options or HttpOptions()
        self.context_window = (
            context_window
            or settings.context_window
            or self.default_context_window
            or self.context_window
        )
        self._client = client or new_client(self.options)
        self._cancelled = False
        # The connection the request under way uses: what cancel() shuts down.
        self._network: Any = None
        self._client.event_hooks["request"].append(self._watch_request)
        self._client.event_hooks["response"].append(self._watch_response)

    def close(self) -> None:
        self._client.close()

    def _watch_request(self, request: httpx.Request) -> None:
        request.extensions["trace"] = self._trace

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            self._network = info.get("return_value")

    def _watch_response(self, response: httpx.Response) -> None:
        # Why: a kept-alive connection reports no connect; its response names it.
        self._network = response.extensions.get("network_stream", self._network)

    def cancel(self) -> None:
        """Abort the request under way: its socket is shut down, so a read blocked on a
        silent server returns at once (closing a socket another thread reads does not)."""
        self._cancelled = True
        network = self._network
        sock = network.get_extra_info("socket") if network is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._client.close()

    def _attempt_unless_cancelled(
        self, body: dict[str, Any], timeout: httpx.Timeout
    ) -> Iterator[StreamEvent]:
        """One attempt; after :meth:`cancel`, whatever it raises is the user's stop."""
        if self._cancelled:
            raise Cancelled
        try:
            yield from self.attempt(body, timeout)
        except Exception:
            # Why: the connection was closed under it on purpose; never a failure to retry.
            if self._cancelled:
                raise Cancelled from None
            raise

    @abstractmethod
    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of one streamed request (``request.deadline`` is not part of it)."""

    @abstractmethod
    def attempt(self, body: dict[str, Any], timeout: httpx.Timeout) -> Iterator[StreamEvent]:
        """Send ``body`` once and yield the reply's events (raise RetryableError to retry)."""

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        body = self.request_body(request)
        return with_retries(
            lambda timeout: self._attempt_unless_cancelled(body, timeout),
            self.options,
            self.settings,
            deadline=request.deadline,
        )
