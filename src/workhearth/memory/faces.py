"""``MemoryBank``: the bank face of memory (DESIGN §4, §8) as a small Protocol.

What a caller may do with confirmed sentences: save, search, list, edit, delete and
restore them, and ask how things stand. :class:`~workhearth.memory.api.Memory` offers it
over the Markdown files; the team bank (:class:`workhearth.bank.client.facade.TeamBank`)
offers it over a shared server. ``Memory`` takes a team bank and decides, in one place,
which sentences go where (:meth:`Memory.save` and its neighbours say how).
"""

from __future__ import annotations

import builtins  # Why: MemoryBank.list shadows list in the class body's annotations
from collections.abc import Sequence
from typing import Any, Protocol

from workhearth.memory.bank import Entry, Provenance
from workhearth.memory.search import DEFAULT_LIMIT, Hit


class MemoryBank(Protocol):
    """Confirmed sentences, whoever keeps them (local files or a team server)."""

    def save(
        self,
        content: str,
        level: str = "normal",
        tags: builtins.list[str] | None = None,
        contexts: Sequence[Provenance | dict[str, Any]] | None = None,
        *,
        source: str = "user",
        redact: bool = False,
    ) -> Entry:
        """Keep a sentence; ``redact`` masks secrets instead of refusing them."""
        ...

    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> builtins.list[Hit]:
        """Best hits first, scores relative to this bank's best."""
        ...

    def list(
        self, limit: int = 20, cursor: str | None = None, *, tag: str | None = None
    ) -> tuple[builtins.list[Entry], str | None]:
        """Entries newest first, and the cursor of the next page."""
        ...

    def edit(self, entry_id: str, content: str, redact: bool = False) -> Entry: ...

    def delete(self, entry_id: str) -> None: ...

    def restore(self, entry_id: str) -> Entry: ...

    def status(self) -> dict[str, Any]:
        """How the bank stands, without a call to a server."""
        ...

    def close(self) -> None: ...


__all__ = ["MemoryBank"]
