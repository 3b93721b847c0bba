"""``wh.memory``: one object over both faces of memory (DESIGN §4, §8).

The awareness face (files, index, search, context) and the bank face (save,
list, edit, delete with provenance) work on the same entries in the same files.

With a team bank (``[bank] url``: any :class:`~workhearth.memory.faces.MemoryBank`,
in practice :class:`workhearth.bank.client.facade.TeamBank`), the bank face routes:

- confirmed saves → the team bank; saves still *pending* the user's confirmation
  (quest mode) and daily notes → the local Markdown, as before: the bank holds only
  sentences a person confirmed (DESIGN §4), and the user confirms pending ones later;
- search → the team bank's hits and the local ones, merged by score (the local files
  still hold hand-written notes, pending entries and the daily log);
- list → the team bank's entries (``layer=`` asks for a local layer instead);
- edit / delete / restore → the local entry with that id when there is one, else the
  team bank's;
- context injection, index, reflection → the local Markdown, untouched: a session
  starts offline as fast as it always did.

The project's wiki (``hearth wiki``'s pages, :mod:`~workhearth.memory.wiki_source`)
is searched and injected beside the layers, at level ``low`` and within
``WIKI_SHARE`` of the context budget; memory never writes it.
"""

from __future__ import annotations

import builtins  # Why: Memory.list shadows list in the class body's annotations
import functools
import os
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workhearth.config import MemoryConfig
from workhearth.errors import HearthError, NotFoundError, UsageError
from workhearth.memory.bank import (
    LIST_LIMIT_MAX,
    Entry,
    Provenance,
    decode_cursor,
    encode_cursor,
    validate,
)
from workhearth.memory.context import WIKI_SHARE, ChunkSource, pick_chunks, render
from workhearth.memory.decode import decode_file
from workhearth.memory.entries import ID_RE, written_span
from workhearth.memory.evict import evict
from workhearth.memory.faces import MemoryBank
from workhearth.memory.files import (
    LAYERS,
    MEMORY_FILE,
    RACY_NS,
    USER_FILE,
    FolderLook,
    Layer,
    SearchLayer,
    daily_file,
    markdown_files,
)
from workhearth.memory.index import IndexReport
from workhearth.memory.layer import LayerStore
from workhearth.memory.meta import EntryMeta
from workhearth.memory.plain_text import require_plain_text
from workhearth.memory.schema import cannot_write
from workhearth.memory.search import DEFAULT_LIMIT, Hit, check_search
from workhearth.memory.text import latin_words, word_terms
from workhearth.memory.wiki_source import WIKI, WikiSource
from workhearth.paths import HearthPaths

if TYPE_CHECKING:
    # Why: reflection (and the model types) cost ~25 ms to import; only reflect() needs them.
    from workhearth.memory import reflect as reflection
    from workhearth.models.base import ChatModel

REFRESH_SECONDS = 2.0


class Memory:
    def __init__(
        self,
        paths: HearthPaths,
        workspace: Path,
        config: MemoryConfig | None = None,
        *,
        autorefresh: bool = True,
        team_bank: MemoryBank | None = None,
    ) -> None:
        """``autorefresh=False``: reads never bring the index up to date by themselves
        (which may wait on the layer lock while a save holds it); the owner calls
        :meth:`sync` when it chooses (``hearth serve``'s event-loop reader).
        ``team_bank``: where confirmed sentences go (see the module doc); closed with this."""
        self.config = config or MemoryConfig()
        self.team_bank = team_bank
        self._autorefresh = autorefresh
        self._folders: dict[Layer, Path] = {
            "user": paths.user_awareness,
            "project": paths.project_awareness(workspace),
        }
        self._stores: dict[Layer, LayerStore] = {}
        self._wiki = WikiSource(paths.project_wiki(workspace))
        self._fresh_until = 0.0
        self._last_look: tuple[tuple[Any, ...], int] | None = None
        self._looks: dict[str, FolderLook] = {
            name: FolderLook(folder) for name, folder in self._folders.items()
        }
        self._looks[WIKI] = FolderLook(self._wiki.folder)

    # ---------------------------------------------------------------- layers
    def folder(self, layer: Layer = "project") -> Path:
        """The Markdown folder of a layer ("user" | "project"): drop notes here."""
        if layer not in self._folders:
            raise _not_a_layer(layer)
        return self._folders[layer]

    def store(self, layer: Layer) -> LayerStore:
        if layer not in self._stores:
            self._stores[layer] = LayerStore(layer, self.folder(layer))
        return self._stores[layer]

    def _layers(self, layer: SearchLayer | None) -> list[Layer]:
        """The writable layers ``layer`` names (None: all; "wiki": none)."""
        if layer is None:
            return list(LAYERS)
        if layer == WIKI:
            return []
        self.folder(layer)
        return [layer]

    def _wiki_in(self, layer: SearchLayer | None) -> bool:
        """Whether ``layer`` takes in the wiki, and there is one (no folder: no work)."""
        return layer in (None, WIKI) and self._wiki.exists()

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._wiki.close()
        if self.team_bank is not None:
            self.team_bank.close()

    # ----------------------------------------------------------- awareness
    def index(self, layer: SearchLayer | None = None, *, prune: bool = False) -> IndexReport:
        """Bring the index up to date with the Markdown (only changed files are read);
        the wiki's too (``layer=None`` or ``"wiki"``).

        ``prune``: also drop the metadata of entries no Markdown file holds any more,
        which an index keeps when it cannot tell (a file it cannot read as text).
        """
        total = IndexReport(0, 0, 0, 0)
        for name in self._layers(layer):
            if not self.folder(name).is_dir():
                continue
            store = self.store(name)
            total.add(store.update_index())
            if prune:
                total.pruned += store.prune_orphans()
        if self._wiki_in(layer):
            total.add(self._wiki.index.update())
        self._fresh_until = time.monotonic() + REFRESH_SECONDS
        return total

    def _refresh(self) -> None:
        if self._autorefresh and time.monotonic() >= self._fresh_until:
            self.index()

    def stale(self) -> bool:
        """Whether :meth:`sync` has catching up to do: stat calls only, no reads."""
        taken = time.time_ns()
        state = self._disk_state(taken)
        last = self._last_look
        if last is not None and state == last[0] and _newest(state) < last[1] - RACY_NS:
            self._last_look = (state, taken)
            self._fresh_until = time.monotonic() + REFRESH_SECONDS
            return False
        return True

    def sync(self) -> bool:
        """Catch up with what another process or an editor changed; cheap when nothing did.

        For a long-lived object (``hearth serve``): each layer's Markdown files and
        meta (and the wiki's pages) are compared by (inode, mtime_ns, size) with the
        last look; on any change the cached meta is dropped and the indexes brought
        up to date. Returns whether it had to.
        """
        if not self.stale():
            return False
        taken = time.time_ns()
        self._last_look = (self._disk_state(taken), taken)
        for store in self._stores.values():
            store.forget_meta_if_changed()  # Why: read again at next use, as under the lock
        for name in LAYERS:
            if self.folder(name).is_dir():
                # Why not index(): its clean-up takes the layer lock, so a read would
                # wait for a save in progress (whose meta is written before its Markdown).
                self.store(name).index.update()
        if self._wiki.exists():
            self._wiki.index.update()
        self._fresh_until = time.monotonic() + REFRESH_SECONDS
        return True

    def _disk_state(self, taken: int) -> tuple[Any, ...]:
        """Each layer's Markdown files and meta, and the wiki's, by (inode, mtime_ns,
        size); ``taken``: the time (``time_ns``) just before."""
        return tuple(look.state(taken) for look in self._looks.values())

    def search(
        self, query: str, limit: int = DEFAULT_LIMIT, layer: SearchLayer | None = None
    ) -> list[Hit]:
        """Find memory by words (Chinese included); best hits first, scores relative to the best.

        ``layer=None``: the user and project layers and the wiki's pages, ranked
        together; with a team bank, its hits too (``layer``: that local layer only,
        ``"wiki"``: the wiki's pages only).
        """
        local = self._search_files(query, limit, layer)
        if self.team_bank is None or layer is not None:
            return local
        team = self.team_bank.search(query, limit) if query.strip() else []
        # Why a stable sort with the team bank first: each source's scores are relative
        # to its own best hit, so a tie goes to the shared bank.
        return sorted(team + local, key=lambda h: -h.score)[:limit]

    def _search_files(self, query: str, limit: int, layer: SearchLayer | None) -> list[Hit]:
        check_search(query, limit)
        self._refresh()
        hits: list[Hit] = []
        for name in self._layers(layer):
            if not os.path.isdir(self._folders[name]):
                continue
            store = self.store(name)
            found = store.index.searcher().search(query, limit, layer=name)
            found += _tagged(store, query, found, limit)
            for hit in found:
                if hit.entry_id:
                    meta = store.meta.get(hit.entry_id) or EntryMeta()
                    hit.level = meta.level
                    hit.tags = list(meta.tags)
                hits.append(hit)
        if self._wiki_in(layer):
            for hit in self._wiki.index.searcher().search(query, limit, layer=WIKI):
                hit.path = self._wiki.shown(hit.path)
                hit.level = self._wiki.level(hit.entry_id)
                hits.append(hit)
        if not hits:
            return []
        best = max(h.score for h in hits)
        for h in hits:
            h.score = round(h.score / best, 4)
        hits.sort(key=lambda h: -h.score)
        return [h for h in hits if h.score >= 0.1][:limit]

    def context(self, topic: str | None = None, budget: int | None = None) -> str:
        """What would be injected at session start: each layer within its token budget,
        and the whole text (headings included) within ``budget`` when given.

        The wiki's pages, when there is a wiki, take at most ``WIKI_SHARE`` of the
        budget (``budget``, else the user and project budgets together), and the
        whole text then stays within that budget: the wiki takes a share of it,
        never more context on top.
        """
        if budget is not None and budget <= 0:
            raise UsageError("budget must be a positive number of tokens")
        self._refresh()
        budgets = {"user": self.config.user_budget, "project": self.config.project_budget}
        sources: list[ChunkSource] = [
            self.store(name) for name in LAYERS if self.folder(name).is_dir()
        ]
        whole = budget
        if self._wiki.exists():
            whole = budget if budget is not None else sum(budgets.values())
            budgets[WIKI] = int(whole * WIKI_SHARE)
            sources.append(self._wiki)
        return render(pick_chunks(sources, topic, budgets, whole))

    # ---------------------------------------------------------------- bank
    def save(
        self,
        content: str,
        level: str = "normal",
        tags: list[str] | None = None,
        contexts: Sequence[Provenance | dict[str, Any]] | None = None,
        *,
        layer: Layer = "project",
        file: str | None = None,
        source: str = "user",
        redact: bool = False,
        pending: bool = False,
    ) -> Entry:
        """Save a confirmed sentence as an entry (``pending`` when nobody could confirm it yet).

        With a team bank, a confirmed sentence (no ``pending``, no ``file``) goes there.
        """
        if layer not in self._folders:
            # Why before the team bank: a save to the wiki is refused wherever it would go.
            raise _not_a_layer(layer)
        if self.team_bank is not None and not pending and file is None:
            return self.team_bank.save(content, level, tags, contexts, source=source, redact=redact)
        content, tags, provenance = validate(content, level, tags or [], contexts or [], redact)
        rel = file or (USER_FILE if layer == "user" else MEMORY_FILE)
        if not rel.endswith(".md") or rel.startswith(("/", ".")) or ".." in Path(rel).parts:
            raise UsageError(f"memory file must be a visible .md path inside the layer: {rel!r}")
        now = time.time()
        meta = EntryMeta(level, tags, source, provenance, now, now, pending)
        store = self.store(layer)
        entry_id, line, new = store.add_entry(rel, content, meta)
        if not new:
            return replace(self.get(entry_id), existed=True)
        capacity = self.config.user_capacity if layer == "user" else self.config.project_capacity
        evicted = True
        try:
            # Why: the sentence the user just confirmed is never the one evicted for it.
            evicted = bool(evict(store, capacity, keep={entry_id}))
        except (OSError, HearthError) as exc:
            # Why: the entry is saved (Markdown and meta are durable); a full disk only
            # postpones eviction to the next save.
            if not cannot_write(exc):
                raise
        if evicted:
            return self.get(entry_id)  # Why: lines above it may have gone
        # Why not get(): it reads the whole file again to find what was just written.
        span = written_span(content, entry_id)
        return self._entry(store, entry_id, (rel, line - 1, line - 1 + span.end, span.content))

    def log_daily(self, text: str, day: str | None = None, **kwargs: Any) -> Entry:
        """Append a short-term note to today's daily log of the project layer."""
        day = day or time.strftime("%Y-%m-%d")
        return self.save(text, file=daily_file(day), source=kwargs.pop("source", "daily"), **kwargs)

    def _find(self, entry_id: str) -> tuple[LayerStore, tuple[str, int, int, str]]:
        if not ID_RE.search(" ^" + entry_id):
            raise NotFoundError(f"no memory entry {entry_id!r}")
        for name in LAYERS:
            if not self.folder(name).is_dir():
                continue
            store = self.store(name)
            where = store.locate(entry_id)
            if where is not None:
                return store, where
        raise NotFoundError(f"no memory entry {entry_id!r}")

    def _entry(self, store: LayerStore, entry_id: str, where: tuple[str, int, int, str]) -> Entry:
        meta = store.meta.get(entry_id) or EntryMeta()
        return Entry(
            id=entry_id,
            content=where[3],
            level=meta.level,
            tags=list(meta.tags),
            layer=store.layer,
            path=where[0],
            line=where[1] + 1,
            created=meta.created,
            updated=meta.updated,
            source=meta.source,
            provenance=list(meta.provenance),
            pending=meta.pending,
        )

    def get(self, entry_id: str) -> Entry:
        store, where = self._find(entry_id)
        return self._entry(store, entry_id, where)

    def edit(self, entry_id: str, content: str, redact: bool = False) -> Entry:
        try:
            return self._edit_here(entry_id, content, redact)
        except NotFoundError:
            if self.team_bank is None:
                raise
            return self.team_bank.edit(entry_id, content, redact)

    def _edit_here(self, entry_id: str, content: str, redact: bool) -> Entry:
        store, _ = self._find(entry_id)
        meta = store.meta.get(entry_id) or EntryMeta()
        content, _, _ = validate(content, meta.level, [], [], redact)
        store.edit_entry(entry_id, content)
        if meta.pending:
            # Why: a pending entry (saved in quest mode) is confirmed by the user's edit.
            return self.confirm(entry_id)
        return self.get(entry_id)

    def confirm(self, entry_id: str) -> Entry:
        """Confirm a pending entry (saved in quest mode while nobody could be asked)."""
        store, _ = self._find(entry_id)
        with store.locked():
            meta = store.meta.get(entry_id) or EntryMeta()
            store.meta.put(entry_id, replace(meta, pending=False))
            store.meta.save()
        return self.get(entry_id)

    def delete(self, entry_id: str) -> None:
        """Remove an entry from the Markdown; a copy goes to ``.memory_evicted.log``
        (with a team bank: its entry, when no local one has this id)."""
        try:
            self._delete_here(entry_id)
        except NotFoundError:
            if self.team_bank is None:
                raise
            self.team_bank.delete(entry_id)

    def _delete_here(self, entry_id: str) -> None:
        store, _ = self._find(entry_id)
        store.remove_entries([entry_id], reason="deleted")

    def restore(self, entry_id: str) -> Entry:
        """Bring back a deleted or evicted entry (from ``.memory_evicted.log``) under its id
        (with a team bank: its entry, when no local one has this id)."""
        try:
            return self._restore_here(entry_id)
        except NotFoundError:
            if self.team_bank is None:
                raise
            return self.team_bank.restore(entry_id)

    def _restore_here(self, entry_id: str) -> Entry:
        if not ID_RE.search(" ^" + entry_id):
            raise NotFoundError(f"no memory entry {entry_id!r}")
        for name in LAYERS:
            if not self.folder(name).is_dir():
                continue
            store = self.store(name)
            if store.locate(entry_id) is not None:
                raise UsageError(
                    f"memory entry {entry_id} is not deleted: nothing to restore",
                    code="memory_not_deleted",
                )
            record = store.removed_record(entry_id)
            if record is None:
                continue
            rel = str(record.get("file") or "")
            if not rel.endswith(".md") or rel.startswith(("/", ".")) or ".." in Path(rel).parts:
                rel = USER_FILE if name == "user" else MEMORY_FILE
            raw = record.get("meta")
            meta = replace(
                EntryMeta.parse(raw if isinstance(raw, dict) else {}), updated=time.time()
            )
            store.add_entry(rel, str(record.get("content") or ""), meta, entry_id=entry_id)
            return self.get(entry_id)
        raise NotFoundError(f"no deleted or evicted memory entry {entry_id!r}")

    def list(
        self,
        limit: int = 20,
        cursor: str | None = None,
        layer: SearchLayer | None = None,
        tag: str | None = None,
    ) -> tuple[list[Entry], str | None]:
        """Entries newest first (``tag``: only those tagged so); pass the returned cursor
        to get the next page. With a team bank, its entries (``layer``: a local layer's)."""
        if layer == WIKI:
            raise UsageError(
                "the wiki holds pages, not memory entries: `hearth wiki show` lists them"
            )
        if self.team_bank is not None and layer is None:
            return self.team_bank.list(limit, cursor, tag=tag)
        if not 1 <= limit <= LIST_LIMIT_MAX:
            raise UsageError(f"list limit must be between 1 and {LIST_LIMIT_MAX}")
        if tag is not None:
            require_plain_text(tag, "tag", one_line=True)
        after = decode_cursor(cursor) if cursor else None
        self.index(layer)
        rows: list[tuple[float, str, LayerStore, str, int]] = []
        for name in self._layers(layer):
            if not self.folder(name).is_dir():
                continue
            store = self.store(name)
            for entry_id, path, line in store.index.entry_starts():
                meta = store.meta.get(entry_id) or EntryMeta()
                if tag is not None and tag.casefold() not in {t.casefold() for t in meta.tags}:
                    continue
                rows.append((meta.created, entry_id, store, path, line))
        rows.sort(key=lambda r: (-r[0], r[1]))
        if after is not None:
            rows = [r for r in rows if (-r[0], r[1]) > (-after[0], after[1])]
        page = rows[:limit]
        entries = []
        for _created, entry_id, store, _path, _line in page:
            where = store.locate(entry_id)
            if where is not None:
                entries.append(self._entry(store, entry_id, where))
        next_cursor = encode_cursor(page[-1][0], page[-1][1]) if len(rows) > limit else None
        return entries, next_cursor

    def status(self) -> dict[str, Any]:
        self.index()
        out: dict[str, Any] = {}
        for name in LAYERS:
            folder = self.folder(name)
            info: dict[str, Any] = {"folder": str(folder), "exists": folder.is_dir()}
            if folder.is_dir():
                store = self.store(name)
                info["files"], info["chunks"] = store.index.counts()
                info["entries"] = len(store.meta.entries)
                info["tokens"] = store.total_tokens()
                info["capacity"] = (
                    self.config.user_capacity if name == "user" else self.config.project_capacity
                )
                info["entries"] = len(store.meta.entries)
                info["meta_damage"] = store.meta_damage
                info["skipped"], info["decoded"] = self._file_notes(folder)
            out[name] = info
        wiki: dict[str, Any] = {"folder": str(self._wiki.folder), "exists": self._wiki.exists()}
        if wiki["exists"]:
            # Why here too: its pages are found by search and take a share of the context.
            wiki["files"], wiki["chunks"] = self._wiki.index.counts()
        out[WIKI] = wiki
        out["maintenance"] = self.config.maintenance
        if self.team_bank is not None:
            out["bank"] = self.team_bank.status()
        return out

    def skipped_files(self) -> builtins.list[str]:
        """``layer:path`` of every memory file that is not text (never indexed nor injected)."""
        return [
            f"{name}:{item['path']}"
            for name in LAYERS
            for item in self._file_notes(self.folder(name))[0]
        ]

    @staticmethod
    def _file_notes(
        folder: Path,
    ) -> tuple[builtins.list[dict[str, str]], builtins.list[dict[str, str]]]:
        """Files that are not text (skipped) and files read in another encoding than UTF-8."""
        skipped: list[dict[str, str]] = []
        decoded: list[dict[str, str]] = []
        for rel, _st in markdown_files(folder):
            try:
                result = decode_file((folder / rel).read_bytes())
            except OSError:
                continue
            if result.text is None:
                skipped.append({"path": rel, "reason": result.note or "binary"})
            elif result.note:
                decoded.append({"path": rel, "note": result.note})
        return skipped, decoded

    # ------------------------------------------------------------ reflection
    def reflect(
        self, model: ChatModel | None, *, now: float | None = None, layer: Layer | None = None
    ) -> reflection.ReflectionReport:
        """Distill old daily logs and tidy MEMORY.md / USER.md with ``model``, now.

        Runs whatever ``maintenance`` says; automatic runs go through
        :func:`workhearth.memory.reflect.maybe_reflect`, which ``"manual"`` silences.
        """
        from workhearth.memory import reflect as reflection

        return reflection.reflect(self, model, now=now, layer=layer)


def _not_a_layer(layer: object) -> UsageError:
    """The refusal of a layer memory cannot write (the wiki) or does not know."""
    if layer == WIKI:
        return UsageError(
            "the wiki is read-only memory: `hearth wiki build` and `hearth wiki update`"
            " write its pages (save to layer user or project)"
        )
    return UsageError(f"layer must be one of {', '.join(LAYERS)}, not {layer!r}")


def _newest(state: tuple[Any, ...]) -> int:
    """The latest mtime_ns in a :meth:`Memory._disk_state`."""
    return max((f[2] for files, meta in state for f in (*files, meta) if f), default=0)


def _tagged(store: LayerStore, query: str, found: list[Hit], limit: int) -> list[Hit]:
    """Entries whose tags the query names, that the word search did not find.

    Why: tags live in ``memory_meta.json``, not in the Markdown the index is built
    from; putting them into the contentless word index would make its deletes
    depend on meta that changes on its own (a delete drops the meta first). The
    meta is small and already read for the hits' levels, so tags are matched here:
    a tag is named when the query holds it whole, or all of its words (stemmed
    like the word index).
    """
    asked = {t for terms in word_terms(latin_words(query)) for t in terms}
    asked.add(query.strip().casefold())
    if not asked:
        return []
    named = [
        ids
        for tag, ids in store.meta.by_tag().items()
        if (terms := _tag_terms(tag))[0] in asked or (terms[1] and terms[1] <= asked)
    ]
    if not named:
        return []
    # Why: in the order of the meta, as a walk over its entries would find them.
    ordered = named[0] if len(named) == 1 else sorted(set().union(*named))
    have = {h.entry_id for h in found if h.entry_id}
    best = max((h.score for h in found), default=1.0)
    out: list[Hit] = []
    for _pos, entry_id in ordered:
        if entry_id in have:
            continue
        row = store.index.entry_chunk(entry_id)
        if row is not None:
            out.append(Hit(row[0], row[1], row[2], row[3], best, "normal", entry_id, store.layer))
        if len(out) >= limit:
            break
    return out


@functools.lru_cache(maxsize=4096)
def _tag_terms(tag: str) -> tuple[str, frozenset[str]]:
    """A tag folded, and its words stemmed as the word index stems them."""
    return tag.casefold(), frozenset(t for ts in word_terms(latin_words(tag)) for t in ts)
