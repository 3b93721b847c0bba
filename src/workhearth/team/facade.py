"""``wh.memory`` when ``[bank] url`` is set: the bank face goes to the team server.

The seam is the one object every caller already holds (``wh.memory``): the CLI's
``hearth memory save|search|list|edit|delete|restore``, the agent's
``memory_save`` / ``memory_search`` and the interactive prompt all get this
subclass of :class:`Memory` instead, and need no change of their own.

What goes where, and why:

- confirmed saves → the team bank, always through the outbox (queued durably
  first, then sent in order; an unreachable server leaves them queued);
- saves still *pending* the user's confirmation (quest mode, ``--yes``) and daily
  notes → the local Markdown, as before: the bank holds only sentences a person
  confirmed (DESIGN §4), and the user confirms pending ones at leisure;
- search → the bank's hits and the local ones, merged by score (the local files
  still hold hand-written notes, pending entries and the daily log);
- list → the bank's entries (``layer=`` asks for a local layer instead);
- edit / delete / restore → the local entry with that id when there is one,
  else the bank's;
- context injection, index, reflection, status → the local Markdown, untouched:
  a session starts offline as fast as it always did.
"""

from __future__ import annotations

import builtins  # Why: BankMemory.list shadows list in the class body's annotations
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workhearth.config import BankConfig, MemoryConfig
from workhearth.errors import ConfigError, NotFoundError
from workhearth.memory.api import Memory
from workhearth.memory.bank import Entry, Provenance, validate
from workhearth.memory.files import Layer
from workhearth.memory.search import DEFAULT_LIMIT, Hit
from workhearth.paths import HearthPaths
from workhearth.team.queue import Outbox, QueuedSave
from workhearth.team.remote import BankRefused, BankUnreachable, RemoteBank

QUEUED = "queued"  # the layer of an Entry that is still in the outbox
BANK_FOLDER = "bank"


@dataclass
class SyncReport:
    """What one pass over the outbox did."""

    url: str
    sent: dict[str, Entry] = field(default_factory=dict)
    dead: builtins.list[dict[str, Any]] = field(default_factory=list)
    queued: builtins.list[QueuedSave] = field(default_factory=list)
    problem: str | None = None  # why the rest stays queued
    dead_total: int = 0
    other_urls: int = 0  # saves queued for a bank url no longer configured

    def as_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "sent": [{"key": k, "id": e.id, "existed": e.existed} for k, e in self.sent.items()],
            "dead": self.dead,
            "queued": [q.as_dict() for q in self.queued],
            "problem": self.problem,
            "dead_total": self.dead_total,
            "other_urls": self.other_urls,
        }


class BankMemory(Memory):
    def __init__(
        self,
        paths: HearthPaths,
        workspace: Path,
        config: MemoryConfig | None,
        bank: BankConfig,
        *,
        remote: RemoteBank | None = None,
    ) -> None:
        super().__init__(paths, workspace, config)
        self.bank = remote or RemoteBank(bank)
        self.outbox = Outbox(paths.home / BANK_FOLDER)
        self.last_sync: SyncReport | None = None

    def close(self) -> None:
        super().close()
        self.bank.close()
        self.outbox.close()

    # ------------------------------------------------------------ saves
    def save(
        self,
        content: str,
        level: str = "normal",
        tags: builtins.list[str] | None = None,
        contexts: Sequence[Provenance | dict[str, Any]] | None = None,
        *,
        layer: Layer = "project",
        file: str | None = None,
        source: str = "user",
        redact: bool = False,
        pending: bool = False,
    ) -> Entry:
        """A confirmed sentence goes to the team bank (queued first); see the module doc.

        Returns the bank's entry when it was sent now, else an entry whose layer
        is ``"queued"`` and whose id is the save's idempotency key.
        """
        if pending or file is not None:
            return super().save(
                content,
                level,
                tags,
                contexts,
                layer=layer,
                file=file,
                source=source,
                redact=redact,
                pending=pending,
            )
        # Why validate here: a save the bank would refuse fails now, in front of the
        # user, instead of in a later sync; and a redacted secret is masked before
        # it is written to the outbox.
        content, tags, provenance = validate(content, level, tags or [], contexts or [], redact)
        body: dict[str, Any] = {
            "content": content,
            "level": level,
            "tags": tags,
            "contexts": provenance,
        }
        if redact:
            body["redact"] = True
        item = self.outbox.add(self.bank.url, body)
        report = self.send_queued()
        if item.key in report.sent:
            return report.sent[item.key]
        for dead in report.dead:
            if dead["key"] == item.key:
                raise BankRefused(str(dead["error"]), int(dead["status"]))
        return Entry(
            id=item.key,
            content=content,
            level=level,
            tags=tags,
            layer=QUEUED,
            path=str(self.outbox.path),
            line=item.seq,
            created=item.queued,
            updated=item.queued,
            source=source,
            provenance=provenance,
        )

    def send_queued(self) -> SyncReport:
        """Send what the outbox holds for this bank, oldest first, until the server
        stops answering; refused saves go to the dead letters."""
        report = SyncReport(self.bank.url)
        with self.outbox.draining():
            for item in self.outbox.pending(self.bank.url):
                try:
                    entry = self.bank.save(item.body, item.key)
                except BankRefused as exc:
                    if exc.dead:
                        self.outbox.bury(item, exc.status, str(exc))
                        report.dead.append(
                            {**item.as_dict(), "status": exc.status, "error": str(exc)}
                        )
                        continue
                    report.problem = str(exc)
                except (BankUnreachable, ConfigError) as exc:
                    report.problem = str(exc)
                else:
                    self.outbox.sent(item.key)
                    report.sent[item.key] = entry
                    continue
                # Why stop at the first save that could not go: the next ones would
                # meet the same server, and sending them first would reorder saves.
                self.outbox.failed(item.key, report.problem)
                break
        pending = self.outbox.pending()
        report.queued = [q for q in pending if q.url == self.bank.url]
        report.other_urls = len(pending) - len(report.queued)
        report.dead_total = len(self.outbox.dead())
        self.last_sync = report
        return report

    # ------------------------------------------------------------ reads
    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, layer: Layer | None = None
    ) -> builtins.list[Hit]:
        """The bank's hits and the local ones, best first (``layer``: that local layer only)."""
        local = super().search(query, limit, layer)
        if layer is not None:
            return local
        team = self.bank.search(query, limit) if query.strip() else []
        # Why a stable sort with the bank first: each source's scores are relative
        # to its own best hit, so a tie goes to the shared bank.
        return sorted(team + local, key=lambda h: -h.score)[:limit]

    def list(
        self,
        limit: int = 20,
        cursor: str | None = None,
        layer: Layer | None = None,
        tag: str | None = None,
    ) -> tuple[builtins.list[Entry], str | None]:
        if layer is not None:
            return super().list(limit, cursor, layer, tag)
        return self.bank.list(limit, cursor, tag)

    # ------------------------------------------------------------ changes
    def edit(self, entry_id: str, content: str, redact: bool = False) -> Entry:
        try:
            return super().edit(entry_id, content, redact)
        except NotFoundError:
            return self.bank.edit(entry_id, content, redact)

    def delete(self, entry_id: str) -> None:
        try:
            super().delete(entry_id)
        except NotFoundError:
            self.bank.delete(entry_id)

    def restore(self, entry_id: str) -> Entry:
        try:
            return super().restore(entry_id)
        except NotFoundError:
            return self.bank.restore(entry_id)

    def status(self) -> dict[str, Any]:
        """The local layers, and the outbox (no call to the server)."""
        data = super().status()
        pending = self.outbox.pending()
        data["bank"] = {
            "url": self.bank.url,
            "queued": sum(1 for q in pending if q.url == self.bank.url),
            "queued_other_urls": sum(1 for q in pending if q.url != self.bank.url),
            "dead_letters": len(self.outbox.dead()),
            "outbox": str(self.outbox.path),
        }
        return data
