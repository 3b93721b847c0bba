"""One error base for everything workhearth raises on purpose.

The CLI turns a :class:`HearthError` into one clear line on stderr and a non-zero
exit; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class HearthError(Exception):
    """Base of every error a user or caller is expected to handle."""

    exit_code = 1

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.message = message
        self.context = context

    def __str__(self) -> str:
        return self.message


class UsageError(HearthError):
    """The caller asked for something that cannot be done as asked (bad argument)."""

    exit_code = 2


class ConfigError(HearthError):
    """config.toml or the environment holds a value we cannot use."""


class NotFoundError(HearthError):
    """A session, entry or file that was named does not exist."""


class SessionLockedError(HearthError):
    """Another live process is writing the same session."""


class StorageError(HearthError):
    """The disk refused a write (full, read-only, over quota); nothing half-written is kept."""


class CorruptDataError(HearthError):
    """Stored data is damaged beyond what the reader can skip."""


class EncryptionKeyError(HearthError):
    """An encryption key is missing, unreadable or wrong."""


class ImportFormatError(HearthError):
    """A file given to import is not in the format it claims to be."""


class ModelError(HearthError):
    """A model provider refused or failed a call (bad key, unknown model, retries spent).

    ``context`` carries ``kind`` (``auth``, ``not_found``, ``bad_request``,
    ``rate_limit``, ``server``, ``connection``, ``timeout``, ``stream_cut``,
    ``provider``), the HTTP ``status`` when there was one, and the ``model``.
    """

    @property
    def kind(self) -> str:
        return str(self.context.get("kind", "provider"))
