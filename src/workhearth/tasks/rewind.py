"""Rewind: a session's files and conversation back to just before turn N (issue 22).

Turns are the user's prompts in the rebuilt conversation, numbered from 1 (DESIGN
§6). ``--to N`` undoes turn N and every later one. What a turn changed on disk is in
its manifests (agent/checkpoints.py): each call's paths with their state before and
after. Going back puts every path to the "before" of its earliest change in those
turns; the content comes from ``checkpoints-store/``.

Safety:

* **Conflicts.** Hearth knows the state it last left each path in (the "after" of its
  newest change, or what the last rewind wrote). A path that holds anything else now
  was changed outside the task: the rewind is refused, naming it, unless ``force``,
  and then the outside version goes to the trash first.
* **Nothing lost.** What a rewind replaces is kept in the store and its deletions go
  to the trash, so ``--undo`` puts back what the last rewind changed.
* **Crash safe.** The plan is written as a journal (``checkpoints/rewind-<k>.json``,
  sealed when the session is encrypted) before any file changes; each file is replaced
  atomically (its before or its after bytes, never a mix); the conversation's
  ``rewind`` event comes after the files, then the journal is marked done. A journal
  left pending is completed exactly by the next rewind or resume of the session.
* The conversation is never erased: a ``rewind`` event makes the rebuilt conversation
  end before turn N; ``--undo`` appends one that brings the messages back.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from workhearth.agent.checkpoints import (
    FOLDER,
    STORE,
    CallRecord,
    ContentStore,
    FileState,
    is_prompt,
    prompt_seqs,
    read_records,
    sha256,
)
from workhearth.agent.safefs import SafeFS
from workhearth.agent.workspace import Workspaces
from workhearth.app import Workhearth
from workhearth.errors import ConfigError, HearthError, NotFoundError, UsageError
from workhearth.fsutil import syncfs
from workhearth.models.messages import message_text
from workhearth.sessions.session import RewindRequest, Session
from workhearth.tasks.words import NO_MODEL
from workhearth.trash import Trash

__all__ = ["FileAction", "RewindPlan", "RewindRefused", "Rewinder", "Turn", "summarize_turns"]

Action = Literal["restore", "create", "delete"]
JOURNAL = "rewind-{k}.json"
# Why: a diff is for reading; past this a text file shows as changed without one.
DIFF_MAX_BYTES = 256 * 1024
PROMPT_CHARS = 200


class RewindRefused(HearthError):
    """A rewind that would clobber work it does not own, or needs content not kept."""

    code = "rewind_refused"


@dataclass(frozen=True)
class Turn:
    """One prompt of the session. ``number`` is None for a turn a rewind took out of the
    conversation; ``files_undone``: a rewind put its file changes back."""

    number: int | None
    seq: int
    prompt: str
    files: tuple[str, ...]
    undone: bool
    files_undone: bool
    skipped: tuple[str, ...] = ()  # "path (why)": changes whose bytes were not kept

    def as_dict(self) -> dict[str, Any]:
        return {
            "turn": self.number,
            "seq": self.seq,
            "prompt": self.prompt,
            "files": list(self.files),
            "undone": self.undone,
            "files_undone": self.files_undone,
            "skipped": list(self.skipped),
        }


@dataclass(frozen=True)
class FileAction:
    """What a rewind does to one path (DESIGN §8 ``files``)."""

    path: str
    action: Action
    conflict: bool
    diff: str | None
    target: FileState | None  # what the path goes back to (None: absent)
    found: FileState | None  # what it holds now
    missing: str | None = None  # why the target cannot be put back

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "action": self.action,
            "conflict": self.conflict,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class RewindPlan:
    """DESIGN §8: ``{"session_id", "to_turn", "files", "conversation"}``, plus what the
    journal needs to apply and undo it."""

    session_id: str
    to_turn: int
    files: tuple[FileAction, ...]
    conversation: bool
    to_seq: int | None = None  # the conversation ends at this seq
    restore: tuple[dict[str, Any], ...] = ()  # messages an undo brings back
    undo: tuple[int, ...] = ()  # turns (prompt seqs) whose file changes this undoes
    redo: tuple[int, ...] = ()  # turns whose undone changes this puts back
    undo_of: int | None = None
    summary: str | None = None
    gaps: tuple[str, ...] = ()  # changes that were never kept (checkpoints stopped)

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "to_turn": self.to_turn,
            "files": [f.as_dict() for f in self.files],
            "conversation": self.conversation,
        }

    @property
    def conflicts(self) -> list[str]:
        return [f.path for f in self.files if f.conflict]

    @property
    def missing(self) -> list[str]:
        return [f"{f.path} ({f.missing})" for f in self.files if f.missing] + list(self.gaps)


@dataclass
class _History:
    """What the session's manifests and past rewinds say."""

    records: list[CallRecord]
    journals: list[dict[str, Any]]
    undone: set[int] = field(default_factory=set)
    known: dict[str, FileState | None] = field(default_factory=dict)


def _state(data: object) -> FileState | None:
    return FileState.from_json(data)


def _json(state: FileState | None) -> dict[str, Any] | None:
    return None if state is None else state.as_json()


class Rewinder:
    """Plans and applies rewinds of one session (its workspace's folders, its store)."""

    def __init__(
        self,
        session: Session,
        fs: SafeFS,
        *,
        on_step: Callable[[str], None] | None = None,
    ) -> None:
        self.session = session
        self.fs = fs
        self.store = ContentStore(session.folder.parent.parent / STORE, session.cipher)
        # Why: crash tests kill the real process at each named step (none in normal use).
        self.on_step = on_step or (lambda _step: None)

    @classmethod
    def for_session(
        cls, session: Session, *, on_step: Callable[[str], None] | None = None
    ) -> Rewinder:
        """Through the folders the session's tools had: its workspace and the authorized
        ones, hearth's home off limits, deletions to the trash."""
        paths = session.config.paths
        workspaces = Workspaces(paths, session.workspace)
        fs = SafeFS(workspaces.roots(), trash=Trash(paths.trash), protected=workspaces.protected())
        return cls(session, fs, on_step=on_step)

    # ------------------------------------------------------------ history
    def _journal_names(self) -> list[int]:
        folder = self.session.folder / FOLDER
        try:
            names = [p.name for p in folder.iterdir()]
        except FileNotFoundError:
            return []
        found = []
        for name in names:
            if name.startswith("rewind-") and name.endswith(".json"):
                try:
                    found.append(int(name[7:-5]))
                except ValueError:
                    continue
        return sorted(found)

    def _read_journal(self, k: int) -> dict[str, Any]:
        data = orjson.loads(self.session.read_file(f"{FOLDER}/{JOURNAL.format(k=k)}"))
        if not isinstance(data, dict):
            raise ValueError("not a journal")
        return data

    def _write_journal(self, journal: dict[str, Any]) -> None:
        name = f"{FOLDER}/{JOURNAL.format(k=journal['k'])}"
        self.session.write_file(name, orjson.dumps(journal))

    def _history(self) -> _History:
        journals = []
        for k in self._journal_names():
            try:
                journals.append(self._read_journal(k))
            except (ValueError, OSError, HearthError):
                continue
        history = _History(read_records(self.session), journals)
        timeline: list[tuple[float, int, dict[str, FileState | None]]] = [
            (r.time, 0, {path: after for path, _before, after in r.changes})
            for r in history.records
        ]
        for j in journals:
            history.undone -= set(j.get("redo", ()))
            history.undone |= set(j.get("undo", ()))
            timeline.append(
                (float(j["time"]), 1, {f["path"]: _state(f.get("after")) for f in j["files"]})
            )
        for _t, _order, states in sorted(timeline, key=lambda x: (x[0], x[1])):
            history.known.update(states)
        return history

    # ------------------------------------------------------------ turns
    def turns(self) -> list[Turn]:
        """Every prompt of the session in order, live ones numbered, with its files."""
        history = self._history()
        files: dict[int, list[str]] = {}
        skipped: dict[int, list[str]] = {}
        for r in history.records:
            seen = files.setdefault(r.turn, [])
            seen += [path for path, _b, _a in r.changes if path not in seen]
            if r.stopped:
                skipped.setdefault(r.turn, []).append(f"every later change ({r.stopped})")
            for path, before, after in r.changes:
                why = next((s.skipped for s in (before, after) if s and s.skipped), None)
                note = f"{path} ({why})"
                if why and note not in skipped.setdefault(r.turn, []):
                    skipped[r.turn].append(note)
        live_seqs = set(prompt_seqs(self.session.load()))
        out: list[Turn] = []
        number = 0
        for event in self.session.events():
            message = event.get("message") if event.get("type") == "message" else None
            if not isinstance(message, dict) or not is_prompt(message):
                continue
            seq = event["seq"]
            alive = seq in live_seqs
            number += alive
            out.append(
                Turn(
                    number if alive else None,
                    seq,
                    _short(message_text(message)),  # type: ignore[arg-type]
                    tuple(files.get(seq, ())),
                    undone=not alive,
                    files_undone=seq in history.undone and bool(files.get(seq)),
                    skipped=tuple(skipped.get(seq, ())),
                )
            )
        return out

    # ------------------------------------------------------------ planning
    def plan(
        self,
        to: int,
        *,
        files: bool = True,
        conversation: bool = True,
        summary: str | None = None,
        diffs: bool = True,
    ) -> RewindPlan:
        """What rewinding to just before turn ``to`` would do (nothing is changed);
        ``diffs``: with a unified diff per text file (a preview; applying needs none)."""
        if not (files or conversation):
            raise UsageError("a rewind of neither files nor conversation does nothing")
        prompts = prompt_seqs(self.session.load())
        if not prompts:
            raise UsageError(f"session {self.session.id} has no turns to rewind")
        if not 1 <= to <= len(prompts):
            raise UsageError(
                f"turn {to} does not exist: session {self.session.id} has turns 1 to "
                f"{len(prompts)}",
                code="rewind_no_turn",
            )
        turn_seq = prompts[to - 1]
        to_seq = turn_seq - 1 if conversation else None
        if conversation:
            self._check_not_compacted(turn_seq)
        history = self._history()
        undo: tuple[int, ...] = ()
        gaps: tuple[str, ...] = ()
        actions: list[FileAction] = []
        if files:
            applicable = [
                r for r in history.records if r.turn >= turn_seq and r.turn not in history.undone
            ]
            undo = tuple(sorted({r.turn for r in applicable}))
            gaps = tuple(
                f"changes after a point in turn {self._number(r.turn)} ({r.stopped})"
                for r in applicable
                if r.stopped
            )
            targets: dict[str, FileState | None] = {}
            for record in applicable:  # oldest first: the first change's "before" wins
                for path, before, _after in record.changes:
                    targets.setdefault(path, before)
            actions = self._actions(targets, history.known, diffs)
        return RewindPlan(
            self.session.id,
            to,
            tuple(actions),
            conversation,
            to_seq=to_seq,
            undo=undo,
            summary=summary,
            gaps=gaps,
        )

    def _number(self, turn_seq: int) -> str:
        for i, seq in enumerate(prompt_seqs(self.session.load()), 1):
            if seq == turn_seq:
                return str(i)
        return "(undone)"

    def _check_not_compacted(self, turn_seq: int) -> None:
        state = self.session.load()
        for message, seq in zip(state.messages, state.seqs, strict=True):
            if str(message.get("id", "")).startswith("compact-") and seq >= turn_seq:
                raise UsageError(
                    "that turn was compacted into a summary; its conversation cannot be "
                    "rewound (rewind the files only with --files-only)",
                    code="rewind_compacted",
                )

    def plan_undo(
        self, *, files: bool = True, conversation: bool = True, diffs: bool = True
    ) -> RewindPlan:
        """What putting back the last rewind's changes would do."""
        names = self._journal_names()
        if not names:
            raise NotFoundError(f"session {self.session.id} has no rewind to undo")
        last = self._read_journal(names[-1])
        if last.get("status") != "done":
            raise UsageError("the last rewind did not finish; run `hearth rewind` to complete it")
        history = self._history()
        targets = {f["path"]: _state(f.get("before")) for f in last["files"]} if files else {}
        actions = self._actions(targets, history.known, diffs)
        to_seq: int | None = None
        restore: tuple[dict[str, Any], ...] = ()
        if conversation and last.get("conversation"):
            to_seq, restore = self._undo_conversation(last)
        return RewindPlan(
            self.session.id,
            int(last["to_turn"]),
            tuple(actions),
            bool(to_seq is not None or restore),
            to_seq=to_seq,
            restore=restore,
            undo=tuple(last.get("redo", ())) if files else (),
            redo=tuple(last.get("undo", ())) if files else (),
            undo_of=int(last["k"]),
        )

    def _undo_conversation(
        self, last: dict[str, Any]
    ) -> tuple[int | None, tuple[dict[str, Any], ...]]:
        event_seq = last.get("event_seq")
        if not isinstance(event_seq, int):
            return None, ()
        later = [e for e in self.session.events(after_seq=event_seq) if e["type"] == "message"]
        if later:
            raise UsageError(
                "the conversation went on after that rewind; undo its files only with --files-only",
                code="rewind_undo_conversation",
            )
        restored = last.get("restore") or []
        if restored:  # undoing an undo: cut again where the first brought-back message was
            return int(restored[0]["seq"]) - 1, ()
        dropped = set(last.get("dropped", ()))
        messages = tuple(
            {"seq": e["seq"], "message": e["message"]}
            for e in self.session.events()
            if e["type"] == "message" and e["seq"] in dropped
        )
        return None, messages

    def _actions(
        self,
        targets: dict[str, FileState | None],
        known: dict[str, FileState | None],
        diffs: bool = True,
    ) -> list[FileAction]:
        actions: list[FileAction] = []
        for path, target in targets.items():
            found, content = self._disk(path)
            if target is not None and target.same(found):
                continue
            if target is None and found is None:
                continue
            expected = known.get(path, target)
            conflict = not (
                (expected is None and found is None)
                or (expected is not None and expected.same(found))
            )
            missing = self._missing(target)
            action: Action = (
                "delete" if target is None else "create" if found is None else "restore"
            )
            diff = self._diff(path, content, target) if diffs and not missing else None
            actions.append(FileAction(path, action, conflict, diff, target, found, missing))
        # Deletions deepest first, then the rest shallowest first (a folder before its files).
        deletes = sorted(
            (a for a in actions if a.action == "delete"),
            key=lambda a: a.path.split("/"),
            reverse=True,
        )
        rest = sorted((a for a in actions if a.action != "delete"), key=lambda a: a.path.split("/"))
        return deletes + rest

    def _disk(self, path: str) -> tuple[FileState | None, bytes | None]:
        """What ``path`` holds now (and a file's bytes)."""
        try:
            info = self.fs.stat(path, follow=False)
        except NotFoundError:
            return None, None
        except (OSError, HearthError):
            return FileState("other", 0, skipped="could not be read"), None
        if info.kind == "dir":
            return FileState("dir", info.mode), None
        if info.kind == "symlink":
            return FileState("symlink", info.mode, link=info.link), None
        if info.kind != "file":
            return FileState(info.kind, info.mode, info.size, skipped="not a regular file"), None
        try:
            data = self.fs.read_bytes(path, max_bytes=max(info.size, 1) * 2 + 1024 * 1024)
        except (OSError, HearthError):
            return FileState("file", info.mode, info.size, skipped="could not be read"), None
        return FileState("file", info.mode, len(data), sha=sha256(data)), data

    def _missing(self, target: FileState | None) -> str | None:
        if target is None or target.kind != "file":
            return None
        if target.skipped:
            return f"not kept: {target.skipped}"
        if target.sha is None or not self.store.has(target.sha):
            return "no longer kept"
        return None

    def _diff(self, path: str, found: bytes | None, target: FileState | None) -> str | None:
        old = found if found is not None else b""
        new = b""
        if target is not None and target.kind == "file" and target.sha:
            new = self.store.get(target.sha)
        elif target is not None:
            return None
        if len(old) > DIFF_MAX_BYTES or len(new) > DIFF_MAX_BYTES:
            return None
        try:
            a, b = old.decode("utf-8"), new.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if b"\0" in old or b"\0" in new:
            return None
        lines = difflib.unified_diff(
            a.splitlines(keepends=True),
            b.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
        return "".join(lines)

    # ------------------------------------------------------------ applying
    def apply(self, plan: RewindPlan, *, force: bool = False) -> RewindPlan:
        """Carry out ``plan``: journal, files, conversation, done. Refuses conflicts and
        content no longer kept unless ``force`` (then those are trashed / left as they are)."""
        if plan.conflicts and not force:
            raise RewindRefused(
                "changed outside this task since it last touched them: "
                + ", ".join(plan.conflicts)
                + " (nothing was changed; --force moves them to the trash first)",
                code="rewind_conflict",
                params={"paths": ", ".join(plan.conflicts)},
            )
        if plan.missing and not force:
            raise RewindRefused(
                "cannot be put back: "
                + ", ".join(plan.missing)
                + " (nothing was changed; --force rewinds the rest)",
                code="rewind_expired",
                params={"paths": ", ".join(plan.missing)},
            )
        self.session.writer()  # Why first: a running task holds it; refused before any change
        actions = [a for a in plan.files if a.missing is None]
        for action in actions:  # Why: what is replaced stays in the store for --undo
            self._keep_found(action)
        self.store.flush()
        names = self._journal_names()
        journal: dict[str, Any] = {
            "k": (names[-1] + 1) if names else 1,
            "time": time.time(),
            "to_turn": plan.to_turn,
            "to_seq": plan.to_seq,
            "conversation": plan.conversation,
            "undo": list(plan.undo),
            "redo": list(plan.redo),
            "undo_of": plan.undo_of,
            "restore": list(plan.restore),
            "summary": plan.summary,
            "dropped": self._dropped(plan.to_seq),
            "log_seq": self.session.load().last_seq,
            "files": [
                {
                    "path": a.path,
                    "before": _json(a.found),
                    "after": _json(a.target),
                    "conflict": a.conflict,
                }
                for a in actions
            ],
            "status": "pending",
        }
        self._write_journal(journal)
        self.on_step("journal")
        self._finish(journal)
        return plan

    def _dropped(self, to_seq: int | None) -> list[int]:
        if to_seq is None:
            return []
        state = self.session.load()
        return [seq for seq in state.seqs if seq > to_seq]

    def _keep_found(self, action: FileAction) -> None:
        found = action.found
        if found is None or found.kind != "file" or found.sha is None:
            return
        if not self.store.has(found.sha):
            _state_now, data = self._disk(action.path)
            if data is not None and sha256(data) == found.sha:
                self.store.put(data, found.sha)

    def _finish(self, journal: dict[str, Any]) -> None:
        staged = self._stage(journal)
        for i, entry in enumerate(journal["files"]):
            self._apply_file(entry, *staged.get(i, (None, None)))
            self.on_step(f"file-{i + 1}")
        if staged:
            # Why one sync: each staged file was made durable before its rename (the first
            # sync); this one makes the renames durable, instead of two fsyncs a file.
            syncfs(self.fs.roots[0].real)
        if not self._event_written(journal):
            payload: dict[str, Any] = {"rewind": journal["k"], "turn": journal["to_turn"]}
            if journal["to_seq"] is not None:
                payload["to_seq"] = journal["to_seq"]
            if journal["restore"]:
                payload["restore"] = journal["restore"]
            if journal.get("summary"):
                payload["summary"] = journal["summary"]
            if journal["undo_of"] is not None:
                payload["undo_of"] = journal["undo_of"]
            payload["files"] = len(journal["files"])
            journal["event_seq"] = self.session.append("rewind", payload)
            self.session.turn_end()
            self.on_step("event")
        journal["status"] = "done"
        self._write_journal(journal)

    def _event_written(self, journal: dict[str, Any]) -> bool:
        for event in self.session.events(after_seq=int(journal["log_seq"])):
            if event.get("type") == "rewind" and event.get("rewind") == journal["k"]:
                journal["event_seq"] = event["seq"]
                return True
        return False

    def _stage(self, journal: dict[str, Any]) -> dict[int, tuple[str, FileState | None]]:
        """Write every file the rewind puts back beside its place, then sync them all once:
        the renames that follow each put a whole, durable file in place. For each staged
        file: its temp name, and what its path held when staged (the apply reads no file
        twice; nothing else changes a staged file's path meanwhile, the writer lock held)."""
        staged: dict[int, tuple[str, FileState | None]] = {}
        for i, entry in enumerate(journal["files"]):
            target = _state(entry.get("after"))
            if target is None or target.kind != "file" or target.sha is None:
                continue
            found, _data = self._disk(entry["path"])
            tmp = _staged_name(entry["path"], journal["k"])
            if target.same(found):
                self.fs.discard_staged(entry["path"], tmp)  # left by an interrupted run
                continue
            try:
                self.fs.stage_file(entry["path"], self.store.get(target.sha), target.mode, tmp)
            except (OSError, HearthError):
                continue  # Why: written in place, the slow way, when its turn comes
            staged[i] = (tmp, found)
        if staged and not syncfs(self.fs.roots[0].real):
            staged.clear()  # no syncfs here: every file goes the fsync way
        return staged

    def _apply_file(
        self, entry: dict[str, Any], staged: str | None = None, found: FileState | None = None
    ) -> None:
        """Put one path to its ``after`` state; a path already there is left alone (so
        completing an interrupted rewind repeats nothing). ``found``: what the path held
        when its file was ``staged`` (read then); otherwise it is read here."""
        path = entry["path"]
        target = _state(entry.get("after"))
        if staged is None:
            found, _data = self._disk(path)
        if (target is not None and target.same(found)) or (target is None and found is None):
            if staged:
                self.fs.discard_staged(path, staged)
            return
        sid = self.session.id
        if found is not None and (target is None or found.kind != target.kind or entry["conflict"]):
            self.fs.delete(path, reason="rewind", session=sid)
        if target is None:
            return
        if target.kind == "dir":
            self.fs.put_dir(path, target.mode)
        elif target.kind == "symlink" and target.link is not None:
            self.fs.put_link(path, target.link)
        elif target.kind == "file" and target.sha is not None:
            if staged is None or not self.fs.commit_file(path, staged):
                self.fs.put_file(path, self.store.get(target.sha), target.mode)

    def complete_pending(self) -> dict[str, Any] | None:
        """Finish a rewind a crash interrupted (its journal is still pending)."""
        names = self._journal_names()
        if not names:
            return None
        try:
            journal = self._read_journal(names[-1])
        except (ValueError, OSError, HearthError):
            return None
        if journal.get("status") == "done":
            return None
        self.session.writer()
        self._finish(journal)
        return journal


def _staged_name(path: str, k: int) -> str:
    """The name a file is staged under beside ``path`` (the same when a rewind is completed)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return f".{name[:180]}.hearth-rewind-{k}.tmp"


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…"


def rewind_session(
    wh: Workhearth,
    session: Session,
    request: RewindRequest,
    *,
    summarize: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> RewindPlan:
    """Plan a rewind of ``session`` and carry it out unless a dry run: a rewind a crash cut
    short is completed first; another process running the session refuses it."""
    if (request.to is None) == (not request.undo):
        raise UsageError("give the turn to rewind to, or undo")
    if request.files_only and request.conversation_only:
        raise UsageError("rewind the files only or the conversation only, not both")
    files, conversation = not request.conversation_only, not request.files_only
    rewinder = Rewinder.for_session(session, on_step=on_step)
    if not request.dry_run:
        session.writer()  # Why first: a task running the session holds it
        rewinder.complete_pending()
    if request.undo:
        plan = rewinder.plan_undo(files=files, conversation=conversation, diffs=request.dry_run)
    else:
        assert request.to is not None
        summary = None
        if summarize and conversation and not request.dry_run:
            summary = summarize_turns(wh, session, request.to)
        plan = rewinder.plan(
            request.to,
            files=files,
            conversation=conversation,
            summary=summary,
            diffs=request.dry_run,
        )
    return plan if request.dry_run else rewinder.apply(plan, force=request.force)


def summarize_turns(wh: Workhearth, session: Session, to: int) -> str:
    """A summary, by the session's model, of turn ``to`` and every later one."""
    from workhearth.agent.compact import summarise
    from workhearth.agent.runner import RunOptions, check_model, session_model
    from workhearth.models.router import Router

    state = session.load()
    prompts = prompt_seqs(state)
    if not 1 <= to <= len(prompts):
        raise UsageError(f"turn {to} does not exist", code="rewind_no_turn")
    undone = [
        m for m, seq in zip(state.messages, state.seqs, strict=True) if seq >= prompts[to - 1]
    ]
    pinned = session_model(wh, session, RunOptions())
    if pinned is None and not wh.config.models.configured:
        raise ConfigError("--summarize needs a model: " + NO_MODEL, code="model_none")
    check_model(wh, pinned)
    router = Router.from_config(wh.config.models, pinned=pinned)
    try:
        return summarise(router, undone)
    finally:
        router.close()
