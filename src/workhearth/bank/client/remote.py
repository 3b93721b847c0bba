"""``RemoteBank``: the team bank's REST API (DESIGN §6 ``/v1/memory``) seen from a client.

Errors come back as one line naming the server. What happened decides what a
queued save does next (see :mod:`workhearth.bank.client.queue`):

- :class:`BankUnreachable`: no answer, a timeout, 408/429 or a 5xx — try again later;
- :class:`BankRefused` with ``dead=True``: any other 4xx (400, 409, 413, 422, …):
  the server will never take this save as it is — it goes to the dead letters, so
  it never holds the saves behind it;
- :class:`BankRefused` otherwise (401, 403, 404, 405, 407, 421): something about
  this client or server is wrong, not the save — it stays queued until that is fixed.
"""

from __future__ import annotations

import builtins  # Why: RemoteBank.list shadows list in the class body's annotations
from dataclasses import fields
from typing import Any

import httpx

from workhearth.config import BankConfig
from workhearth.errors import ConfigError, HearthError, NotFoundError, UsageError
from workhearth.memory.bank import Entry
from workhearth.memory.search import DEFAULT_LIMIT, Hit

IDEMPOTENCY_HEADER = "Idempotency-Key"
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
# Why these stay queued: they are about the token, the URL or the Host this client
# uses, which the user fixes, and every save would meet them alike. Any other 4xx
# says the save itself is wrong (malformed, too big, over a limit, a secret, a
# control character): sending it again can never succeed.
CLIENT_STATUSES = frozenset({401, 403, 404, 405, 407, 421})
_ENTRY_FIELDS = tuple(f.name for f in fields(Entry) if f.name != "existed")
_HIT_FIELDS = tuple(f.name for f in fields(Hit))


def is_dead(status: int) -> bool:
    """Whether a save answered with ``status`` can never be taken as it is."""
    return 400 <= status < 500 and status not in RETRY_STATUSES | CLIENT_STATUSES


class BankUnreachable(HearthError):
    """The team bank did not answer, or answered "not now"; a save stays queued."""


class BankRefused(HearthError):
    """The team bank answered with an error; ``dead``: this save can never be taken."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message, status=status)
        self.status = status
        self.dead = is_dead(status)


def _detail(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        data = None
    detail = data.get("detail") if isinstance(data, dict) else None
    if isinstance(detail, list):
        # Why: FastAPI's validation errors are a list; the first message says enough.
        first = detail[0] if detail else {}
        detail = first.get("msg") if isinstance(first, dict) else str(first)
    if not isinstance(detail, str) or not detail.strip():
        detail = response.reason_phrase or "error"
    return " ".join(detail.split())[:300]


def entry_from(data: Any) -> Entry:
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        raise HearthError("the team bank answered with something that is not a memory entry")
    values: dict[str, Any] = {name: data.get(name) for name in _ENTRY_FIELDS}
    values["tags"] = list(values["tags"] or [])
    values["provenance"] = list(values["provenance"] or [])
    values["pending"] = bool(values["pending"])
    for name in ("layer", "path", "source", "level", "content"):
        values[name] = str(values[name] or "")
    values["line"] = int(values["line"] or 0)
    values["created"] = float(values["created"] or 0)
    values["updated"] = float(values["updated"] or 0)
    return Entry(**values)


def hit_from(data: Any) -> Hit:
    if not isinstance(data, dict):
        raise HearthError("the team bank answered with something that is not a search hit")
    values: dict[str, Any] = {name: data.get(name) for name in _HIT_FIELDS}
    values["tags"] = list(values["tags"] or [])
    values["layer"] = str(values["layer"] or "team")
    values["path"] = str(values["path"] or "")
    return Hit(**values)


class RemoteBank:
    """One team bank server, called with this user's Bearer token."""

    def __init__(self, config: BankConfig, *, transport: httpx.BaseTransport | None = None) -> None:
        if not config.url:
            raise ConfigError("no team bank: set [bank] url in config.toml")
        self.url = config.url
        self.config = config
        self._transport = transport
        self._client: httpx.Client | None = None

    def _http(self) -> httpx.Client:
        if self._client is None:
            if not self.config.token:
                raise ConfigError(
                    f"no token for the team bank {self.url}: {self.config.token_source} is "
                    "empty or missing (`hearth team user add NAME` prints one)"
                )
            self._client = httpx.Client(
                base_url=self.url,
                headers={"Authorization": f"Bearer {self.config.token}"},
                timeout=self.config.timeout,
                transport=self._transport,
                follow_redirects=False,
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _call(self, method: str, path: str, **kw: Any) -> httpx.Response:
        try:
            response = self._http().request(method, path, **kw)
        except httpx.TimeoutException:
            raise BankUnreachable(
                f"the team bank {self.url} did not answer within {self.config.timeout:g} s"
            ) from None
        except httpx.TransportError as exc:
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise BankUnreachable(f"cannot reach the team bank {self.url}: {reason}") from None
        if response.status_code < 400:
            return response
        detail = _detail(response)
        status = response.status_code
        if status in RETRY_STATUSES:
            raise BankUnreachable(f"the team bank {self.url} is not available ({status}: {detail})")
        if status == 401:
            raise BankRefused(
                f"the team bank {self.url} refused the token from {self.config.token_source} "
                f"(401: {detail})",
                status,
            )
        if status == 404 and path.startswith("/v1/memory/"):
            raise NotFoundError(detail)
        if is_dead(status):
            raise BankRefused(f"the team bank refused it ({status}): {detail}", status)
        raise BankRefused(f"the team bank {self.url} answered {status}: {detail}", status)

    # ---------------------------------------------------------------- calls
    def save(self, body: dict[str, Any], idempotency_key: str) -> Entry:
        """POST a save; the same key sent again gives the first save's entry."""
        response = self._call(
            "POST", "/v1/memory", json=body, headers={IDEMPOTENCY_HEADER: idempotency_key}
        )
        entry = entry_from(self._json(response))
        entry.existed = response.status_code == 200
        return entry

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> builtins.list[Hit]:
        data = self._json(
            self._call("GET", "/v1/memory/search", params={"q": query, "limit": limit})
        )
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, builtins.list):
            raise HearthError("the team bank answered a search without results")
        return [hit_from(h) for h in results]

    def list(
        self, limit: int = 20, cursor: str | None = None, tag: str | None = None
    ) -> tuple[builtins.list[Entry], str | None]:
        params: dict[str, Any] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        if tag:
            params["tag"] = tag
        data = self._json(self._call("GET", "/v1/memory", params=params))
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, builtins.list):
            raise HearthError("the team bank answered a list without entries")
        next_cursor = data.get("next_cursor")
        return [entry_from(e) for e in entries], next_cursor if isinstance(
            next_cursor, str
        ) else None

    def edit(self, entry_id: str, content: str, redact: bool = False) -> Entry:
        response = self._call(
            "PATCH", f"/v1/memory/{_quote(entry_id)}", json={"content": content, "redact": redact}
        )
        return entry_from(self._json(response))

    def delete(self, entry_id: str) -> None:
        self._call("DELETE", f"/v1/memory/{_quote(entry_id)}")

    def restore(self, entry_id: str) -> Entry:
        try:
            response = self._call("POST", f"/v1/memory/{_quote(entry_id)}/restore")
        except BankRefused as exc:
            if exc.status == 409:
                raise UsageError(str(exc)) from None
            raise
        return entry_from(self._json(response))

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError:
            raise HearthError(
                f"the team bank {self.url} answered {response.status_code} without JSON"
            ) from None


def _quote(entry_id: str) -> str:
    from urllib.parse import quote

    return quote(entry_id, safe="")
