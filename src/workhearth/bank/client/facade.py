"""``TeamBank``: the team bank as a :class:`~workhearth.memory.faces.MemoryBank`.

``wh.memory`` gets one when ``[bank] url`` is set (:class:`workhearth.memory.api.Memory`
decides which sentences go here and which stay in the local Markdown), so the CLI's
``hearth memory save|search|list|edit|delete|restore``, the agent's ``memory_save`` /
``memory_search`` and the interactive prompt need no change of their own.

A save always goes through the outbox: queued durably first, then sent in order; an
unreachable server leaves it queued (``hearth memory sync`` sends it later).
"""

from __future__ import annotations

import builtins  # Why: TeamBank.list shadows list in the class body's annotations
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from workhearth.bank.client.queue import Outbox, QueuedSave
from workhearth.bank.client.remote import BankRefused, BankUnreachable, RemoteBank
from workhearth.config import BankConfig
from workhearth.errors import ConfigError
from workhearth.memory.bank import Entry, Provenance, validate
from workhearth.memory.search import DEFAULT_LIMIT, Hit
from workhearth.paths import HearthPaths

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


class TeamBank:
    """The team bank for this hearth: its server (``remote``) and the outbox of saves
    not sent yet, kept in ``$HEARTH_HOME/bank/``."""

    def __init__(
        self, paths: HearthPaths, bank: BankConfig, *, remote: RemoteBank | None = None
    ) -> None:
        self.remote = remote or RemoteBank(bank)
        self.outbox = Outbox(paths.home / BANK_FOLDER)
        self.last_sync: SyncReport | None = None

    @property
    def url(self) -> str:
        return self.remote.url

    def close(self) -> None:
        self.remote.close()
        self.outbox.close()

    # ------------------------------------------------------------ saves
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
        """Queue a confirmed sentence, then send what is queued.

        Returns the bank's entry when it was sent now, else an entry whose layer
        is ``"queued"`` and whose id is the save's idempotency key.
        """
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
        item = self.outbox.add(self.url, body)
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
        report = SyncReport(self.url)
        with self.outbox.draining():
            for item in self.outbox.pending(self.url):
                try:
                    entry = self.remote.save(item.body, item.key)
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
        report.queued = [q for q in pending if q.url == self.url]
        report.other_urls = len(pending) - len(report.queued)
        report.dead_total = len(self.outbox.dead())
        self.last_sync = report
        return report

    # ------------------------------------------------------------ reads
    def search(self, query: str, limit: int = DEFAULT_LIMIT) -> builtins.list[Hit]:
        return self.remote.search(query, limit)

    def list(
        self, limit: int = 20, cursor: str | None = None, *, tag: str | None = None
    ) -> tuple[builtins.list[Entry], str | None]:
        return self.remote.list(limit, cursor, tag)

    # ------------------------------------------------------------ changes
    def edit(self, entry_id: str, content: str, redact: bool = False) -> Entry:
        return self.remote.edit(entry_id, content, redact)

    def delete(self, entry_id: str) -> None:
        self.remote.delete(entry_id)

    def restore(self, entry_id: str) -> Entry:
        return self.remote.restore(entry_id)

    def status(self) -> dict[str, Any]:
        """The outbox (no call to the server)."""
        pending = self.outbox.pending()
        return {
            "url": self.url,
            "queued": sum(1 for q in pending if q.url == self.url),
            "queued_other_urls": sum(1 for q in pending if q.url != self.url),
            "dead_letters": len(self.outbox.dead()),
            "outbox": str(self.outbox.path),
        }
