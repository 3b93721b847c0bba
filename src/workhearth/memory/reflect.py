"""Reflection (DESIGN §4): the model distills old daily logs and tidies MEMORY.md / USER.md.

Two jobs, both run per layer folder:

* **Distillation**: a daily log ``daily/YYYY-MM-DD.md`` whose day ended more than
  24 h ago (yesterday's log stays, the day before's goes) is turned by the model
  into facts, saved as new entries of ``MEMORY.md`` (source ``reflection``,
  provenance pointing at the log); the log then moves into ``.reflection-bak/``.
  Distillation shrinks by design and is not held to the 65 % rule.
* **Reflection**: the model rewrites the entries of ``MEMORY.md`` and ``USER.md``,
  merging duplicates and dropping stale facts.

Guards:

* **Backup first.** Before the model sees a file, a copy goes to
  ``.reflection-bak/<file>.<UTC stamp>`` with a ``.json`` sidecar holding the
  time and the meta of its entries. Backups are never deleted.
* **65 % floor.** A rewrite that keeps under 65 % of the file's tokens is aborted;
  the file stays as it was.
* **Nothing silently lost.** Entries a rewrite keeps keep their ``^m-…`` id and
  meta; new lines get new ids; dropped entries go to ``.memory_evicted.log``
  (reason ``reflection``). Lines a user wrote by hand (no id) are never rewritten.
* **Same write path as every save.** Under the layer lock: meta first, then the
  Markdown by atomic replace, and only if the file is still byte for byte what the
  model saw (an editor may have saved meanwhile: the run is aborted and retried).
* **Rollback** restores a backup only if no entry was written to that file since.
* ``maintenance = "manual"`` silences :func:`maybe_reflect`; :func:`reflect`
  (``hearth memory reflect``) still runs when asked.
"""

from __future__ import annotations

import copy
import re
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from workhearth.errors import ConfigError, HearthError, NotFoundError
from workhearth.fsutil import fsync_dir
from workhearth.memory.decode import CONTROL, decode_file
from workhearth.memory.entries import find_entries, new_entry_id, strip_ids
from workhearth.memory.evict import evict
from workhearth.memory.files import (
    LAYERS,
    MEMORY_FILE,
    REFLECTION_BACKUPS,
    USER_FILE,
    Layer,
    markdown_files,
)
from workhearth.memory.layer import LayerStore
from workhearth.memory.meta import EntryMeta
from workhearth.memory.reflect_backup import (
    Changed,
    Outcome,
    aborted,
    digest,
    evicted_record,
    read_bytes,
    resolve_backup,
    rollback_store,
    settle,
    settled,
    take_backup,
    text_lines,
)
from workhearth.memory.reflect_text import (
    DISTILL_SYSTEM,
    REWRITE_SYSTEM,
    append_entries,
    clean,
    excerpt,
    norm,
    parse_facts,
    parse_items,
    plan_rewrite,
    rebuild,
)
from workhearth.models.base import ChatModel
from workhearth.models.messages import Message, text_message
from workhearth.models.tokens import count_tokens

if TYPE_CHECKING:
    from workhearth.memory.api import Memory

KEEP_SHARE = 0.65
DISTILL_AFTER = 24 * 3600.0  # seconds since the end of the log's day
REFLECT_EVERY = 7 * 24 * 3600.0  # automatic reflection of one file, at most this often
REFLECTED_FILES = (MEMORY_FILE, USER_FILE)

_DAILY = re.compile(r"^daily/(\d{4}-\d{2}-\d{2})\.md$")


@dataclass
class ReflectionReport:
    outcomes: list[Outcome] = field(default_factory=list)
    skipped: str | None = None  # why nothing ran at all

    def as_dict(self) -> dict[str, Any]:
        return {"outcomes": [o.as_dict() for o in self.outcomes], "skipped": self.skipped}


# ------------------------------------------------------------------ helpers
def _tokens(lines: list[str]) -> int:
    return count_tokens(strip_ids("\n".join(lines)))


def _ask(model: ChatModel, system: str, text: str, max_tokens: int) -> str:
    reply: Message = model.complete(system, [text_message("user", text)], max_tokens=max_tokens)
    return "".join(
        str(b.get("text", "")) for b in reply.get("content", []) if b.get("type") == "text"
    )


def _new_id(store: LayerStore, taken: set[str]) -> str:
    entry_id = new_entry_id()
    while entry_id in store.meta.entries or entry_id in taken:
        entry_id = new_entry_id()
    taken.add(entry_id)
    return entry_id


def _new_meta(rel: str, mark: dict[str, Any], origin: str, snippet: str) -> EntryMeta:
    """Meta of an entry the model wrote; ``mark`` ties it to the backup taken before."""
    return EntryMeta(
        source="reflection",
        provenance=[{"snippet": snippet, "session_id": None, "message_id": None, "origin": origin}],
        created=mark["at"],
        updated=mark["at"],
        file=rel,
        reflection=mark,
    )


# ------------------------------------------------------------ distillation
def _retire_log(store: LayerStore, path: Path, data: bytes) -> list[str]:
    """Take a distilled log out of the layer (lock held); returns the ids it held."""
    # Why: the backup already holds the log byte for byte (and its meta), so
    # removing the live copy completes the move into .reflection-bak/; nothing is lost.
    path.unlink()
    fsync_dir(path.parent)
    moved = list(find_entries(text_lines(data)))
    for entry_id in moved:
        store.meta.drop(entry_id)
    store.meta.save()
    return moved


def due_daily_logs(store: LayerStore, now: float) -> list[str]:
    """Daily logs of the layer whose day ended more than 24 h before ``now`` (epoch seconds)."""
    due = []
    for rel, _st in markdown_files(store.folder):
        m = _DAILY.match(rel)
        if not m:
            continue
        try:
            day = datetime.strptime(m.group(1), "%Y-%m-%d")
        except ValueError:
            continue
        if now - (day + timedelta(days=1)).timestamp() >= DISTILL_AFTER:
            due.append(rel)
    return sorted(due)


def distill_daily(
    store: LayerStore, rel: str, model: ChatModel, *, target: str = MEMORY_FILE
) -> Outcome:
    """Distill the daily log ``rel`` into entries of ``target``, then move the log to the backups."""
    path = store.folder / rel
    with store.locked():
        data = read_bytes(path)
        if data is None:
            return Outcome(store.layer, rel, "skipped", "the log is gone")
        done = _distilled_from(store, rel, data)
        if done:
            # Why: a crash came after the facts were saved but before the log moved:
            # finish the move instead of distilling (and saving) the same facts twice.
            moved = _retire_log(store, path, data)
            backup = (store.meta.entries[done[0]].reflection or {})["backup"]
        else:
            backup = take_backup(store, rel, data, "distillation")
    if done:
        store.index.update(only=[rel])
        reason = "finished a distillation that was interrupted"
        return Outcome(store.layer, rel, "distilled", reason, backup, added=done, dropped=moved)
    decoded = decode_file(data).text
    if decoded is None:
        # Why: a binary file under a daily log's name is no log; it is left as it is.
        return Outcome(store.layer, rel, "skipped", "not a text file; left as it is", backup)
    text = strip_ids(CONTROL.sub("", decoded))
    before = count_tokens(text)
    facts, failure = _ask_facts(model, rel, text, before)
    if failure is not None:
        return aborted(store, rel, failure, backup, before)
    snippet = excerpt(text)
    with store.locked():
        if read_bytes(path) != data:
            reason = "the log changed while it was distilled; it stays for the next run"
            return aborted(store, rel, reason, backup, before)
        mark = {"backup": backup, "from": rel, "hash": digest(data), "at": time.time()}
        items = _save_new_facts(store, target, facts, mark, f"reflection:{rel}", snippet)
        moved = _retire_log(store, path, data)
    store.index.update(only=[target, rel])
    return Outcome(
        store.layer,
        rel,
        "distilled",
        f"{len(items)} facts saved to {target}",
        backup,
        added=[i for _c, i in items],
        dropped=moved,
        tokens_before=before,
        tokens_after=count_tokens("\n".join(c for c, _i in items)),
    )


def _distilled_from(store: LayerStore, rel: str, data: bytes) -> list[str]:
    """Ids of entries already distilled from these very bytes of the log ``rel``."""
    return [
        i
        for i, m in store.meta.entries.items()
        if m.reflection
        and m.reflection.get("from") == rel
        and m.reflection.get("hash") == digest(data)
    ]


def _ask_facts(model: ChatModel, rel: str, text: str, before: int) -> tuple[list[str], str | None]:
    """The facts the model distills from the log's ``text`` (``before`` tokens long), or
    why there are none to trust (the log then stays)."""
    if not text.strip():
        return [], None
    try:
        reply = _ask(model, DISTILL_SYSTEM, f"Daily log {rel}:\n\n{text}", max(1024, before))
    except HearthError as exc:
        return [], f"the model failed: {exc}; the log stays"
    parsed = parse_facts(reply)
    if parsed is None:
        return [], "the model's reply held no facts; the log stays"
    return parsed, None


def _save_new_facts(
    store: LayerStore,
    target: str,
    facts: list[str],
    mark: dict[str, Any],
    origin: str,
    snippet: str,
) -> list[tuple[str, str]]:
    """Append the facts ``target`` does not hold yet as new entries; ``(content, id)`` of each.

    The caller holds the store's lock.
    """
    existing = {
        norm(span.content)
        for span in find_entries(text_lines(read_bytes(store.folder / target) or b"")).values()
    }
    taken: set[str] = set()
    items: list[tuple[str, str]] = []
    for fact in facts:
        content = clean(fact)
        if content is None or norm(content) in existing:
            continue
        existing.add(norm(content))
        entry_id = _new_id(store, taken)
        items.append((content, entry_id))
        store.meta.put(entry_id, _new_meta(target, mark, origin, snippet))
    if items:
        store.meta.save()
        store._replace(target, lambda lines: (append_entries(target, lines, items), None))
    return items


# -------------------------------------------------------------- reflection
def reflect_file(
    store: LayerStore, rel: str, model: ChatModel, *, now: float | None = None
) -> Outcome:
    """Let the model rewrite the entries of ``rel`` (MEMORY.md or USER.md), with every guard."""
    now = time.time() if now is None else now
    path = store.folder / rel
    with store.locked():
        data = read_bytes(path)
        if data is None:
            return Outcome(store.layer, rel, "skipped", "no such file")
        if decode_file(data).damaged:
            # Why: the index skips an entry on a damaged line (a NUL, bytes that are not
            # UTF-8); a rewrite would drop or mangle it, so the file waits until it is mended.
            return Outcome(store.layer, rel, "skipped", "has damaged lines; left as it is")
        lines = text_lines(data)
        spans = find_entries(lines)
        if not spans:
            return Outcome(store.layer, rel, "skipped", "no entries hearth wrote")
        backup = take_backup(store, rel, data, "reflection")
    before = _tokens(lines)
    try:
        text = data.decode("utf-8", errors="replace")
        reply = _ask(model, REWRITE_SYSTEM, f"File {rel}:\n\n{text}", before * 2 + 512)
    except HearthError as exc:
        return aborted(store, rel, f"the model failed: {exc}; {rel} is unchanged", backup, before)
    items = parse_items(reply)
    if not items:
        reason = f"the model's reply held no entries; {rel} is unchanged"
        return aborted(store, rel, reason, backup, before)

    kept, fresh, dropped = plan_rewrite(lines, spans, items)
    taken: set[str] = set(spans)
    new_items = [(content, _new_id(store, taken)) for content in fresh]
    out = append_entries(rel, rebuild(lines, spans, kept), new_items)
    after = _tokens(out)
    result = Outcome(
        store.layer,
        rel,
        "rewritten",
        f"kept {len(kept)}, added {len(new_items)}, dropped {len(dropped)} entries",
        backup,
        added=[i for _c, i in new_items],
        kept=list(kept),
        dropped=dropped,
        tokens_before=before,
        tokens_after=after,
    )
    if after < KEEP_SHARE * before:
        result.action = "aborted"
        result.reason = (
            f"the rewrite kept {after} of {before} tokens ({after / before:.0%}), under the "
            f"{KEEP_SHARE:.0%} floor; {rel} is unchanged"
        )
        settle(store, rel, data, now)
        return result
    if out == lines:
        result.action = "unchanged"
        settle(store, rel, data, now)
        return result

    with store.locked():
        saved = copy.deepcopy(store.meta.entries)
        try:
            if read_bytes(path) != data:
                raise Changed
            at = time.time()
            mark = {"backup": backup, "at": at}
            # Why: log before removing, so a crash in between leaves a copy, never nothing.
            store._log_evicted(
                [evicted_record(store, rel, i, spans[i].content) for i in dropped], "reflection"
            )
            for entry_id, content in kept.items():
                if content != spans[entry_id].content:
                    meta = store.meta.get(entry_id) or EntryMeta()
                    store.meta.put(entry_id, replace(meta, updated=at, reflection=mark))
            for _content, entry_id in new_items:
                store.meta.put(entry_id, _new_meta(rel, mark, f"reflection:{rel}", ""))
            store.meta.save()

            def rewrite(current: list[str]) -> tuple[list[str], None]:
                if current != lines:
                    raise Changed
                return out, None

            store._replace(rel, rewrite)
        except Changed:
            store.meta.entries = saved
            store.meta.save()
            result.action = "aborted"
            result.reason = f"{rel} changed while the model worked; it is kept and retried later"
            return result
        for entry_id in dropped:
            store.meta.drop(entry_id)
        store.meta.save()
    store.index.update(only=[rel])
    settle(store, rel, ("\n".join(out) + "\n").encode("utf-8"), now)
    return result


# ------------------------------------------------------------- entry points
def _stores(memory: Memory, layer: Layer | None) -> list[LayerStore]:
    names = LAYERS if layer is None else (layer,)
    return [memory.store(n) for n in names if memory.folder(n).is_dir()]


def _run(
    memory: Memory, model: ChatModel, now: float, layer: Layer | None, automatic: bool
) -> ReflectionReport:
    report = ReflectionReport()
    for store in _stores(memory, layer):
        distilled = False
        for rel in due_daily_logs(store, now):
            data = read_bytes(store.folder / rel)
            if automatic and data is not None and settled(store, rel, data, now, 0.0):
                continue  # Why: rolled back by the user; only an explicit run distills it again
            outcome = distill_daily(store, rel, model)
            distilled |= outcome.action == "distilled"
            report.outcomes.append(outcome)
        if distilled:
            capacity = (
                memory.config.user_capacity
                if store.layer == "user"
                else memory.config.project_capacity
            )
            evict(store, capacity)
        for rel in REFLECTED_FILES:
            data = read_bytes(store.folder / rel)
            if data is None:
                continue
            if automatic and settled(store, rel, data, now, REFLECT_EVERY):
                continue
            report.outcomes.append(reflect_file(store, rel, model, now=now))
    return report


def reflect(
    memory: Memory,
    model: ChatModel | None,
    *,
    now: float | None = None,
    layer: Layer | None = None,
) -> ReflectionReport:
    """Run reflection now, whatever ``maintenance`` says (``hearth memory reflect``)."""
    if model is None:
        raise ConfigError(
            "memory reflection needs a model, and none is configured; "
            "configure one (HEARTH_MODEL, [models] in config.toml) and run it again"
        )
    return _run(memory, model, time.time() if now is None else now, layer, automatic=False)


def maybe_reflect(
    memory: Memory, model: ChatModel | None, *, now: float | None = None
) -> ReflectionReport:
    """Automatic reflection (e.g. at session start): silenced by ``maintenance = "manual"``.

    Distills due daily logs, and rewrites a file only when it changed since its
    last reflection and that was at least :data:`REFLECT_EVERY` ago.
    """
    if memory.config.maintenance == "manual":
        return ReflectionReport(skipped='maintenance is "manual": run `hearth memory reflect`')
    if model is None:
        return ReflectionReport(skipped="no model configured")
    return _run(memory, model, time.time() if now is None else now, None, automatic=True)


def newest_backup(memory: Memory, *, layer: Layer | None = None) -> str:
    """The newest reflection backup (by its sidecar's time) of the layers, as a path."""
    best: tuple[float, str] | None = None
    for store in _stores(memory, layer):
        for side in (store.folder / REFLECTION_BACKUPS).rglob("*.json"):
            try:
                stamp = float(orjson.loads(side.read_bytes())["time"])
            except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                continue
            if best is None or stamp > best[0]:
                best = (stamp, str(side.with_name(side.name[: -len(".json")])))
    if best is None:
        raise NotFoundError("no reflection backup to roll back to")
    return best[1]


def rollback(memory: Memory, backup: str | Path, *, layer: Layer | None = None) -> Outcome:
    """Restore a reflection backup (a path, or a name inside ``.reflection-bak/``)."""
    for store in _stores(memory, layer):
        if resolve_backup(store, backup) is not None:
            return rollback_store(store, backup)
    raise NotFoundError(f"no reflection backup {str(backup)!r}")
