"""One error base for everything workhearth raises on purpose.

The CLI turns a :class:`HearthError` into one clear line on stderr and a non-zero
exit; anything else is a bug and keeps its traceback.

Each error has a ``code`` (a stable word: ``not_found``, ``memory_secret``…) and
``params`` (the values its words need: ``{"field": "content", "limit": 8000}``), so
the page words it in the user's language (REST ``{"detail", "code", "params"}``,
DESIGN §6); ``message`` stays English and names no command-line flag. What only a
terminal user can act on (``--redact``) goes in ``cli_hint``, which ``str()`` adds.
"""

from __future__ import annotations

from collections.abc import Mapping

Params = Mapping[str, str | int]


class HearthError(Exception):
    """Base of every error a user or caller is expected to handle."""

    exit_code = 1
    code = "error"

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        params: Params | None = None,
        cli_hint: str | None = None,
        **context: object,
    ) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.params: dict[str, str | int] = dict(params or {})
        self.cli_hint = cli_hint
        self.context = context

    def __str__(self) -> str:
        return f"{self.message} ({self.cli_hint})" if self.cli_hint else self.message


class UsageError(HearthError):
    """The caller asked for something that cannot be done as asked (bad argument)."""

    exit_code = 2
    code = "invalid"


class ConfigError(HearthError):
    """config.toml or the environment holds a value we cannot use."""

    code = "config"


class NotFoundError(HearthError):
    """A session, entry or file that was named does not exist."""

    code = "not_found"


class SessionLockedError(HearthError):
    """Another live process is writing the same session."""

    code = "session_locked"


class BusyError(HearthError):
    """Another process held a store's lock for longer than a reader waits; nothing changed."""

    code = "busy"


class StorageError(HearthError):
    """The disk refused a write (full, read-only, over quota); nothing half-written is kept."""

    code = "disk_refused"


class CorruptDataError(HearthError):
    """Stored data is damaged beyond what the reader can skip."""

    code = "data_damaged"


class EncryptionKeyError(HearthError):
    """An encryption key is missing, unreadable or wrong."""

    code = "encryption_key"


class ImportFormatError(HearthError):
    """A file given to import is not in the format it claims to be."""

    code = "import_format"


class ModelError(HearthError):
    """A model provider refused or failed a call (bad key, unknown model, retries spent).

    ``context`` carries ``kind`` (``auth``, ``not_found``, ``bad_request``,
    ``rate_limit``, ``server``, ``connection``, ``timeout``, ``stream_cut``,
    ``provider``), the HTTP ``status`` when there was one, and the ``model``.
    """

    code = "model_failed"

    @property
    def kind(self) -> str:
        return str(self.context.get("kind", "provider"))
