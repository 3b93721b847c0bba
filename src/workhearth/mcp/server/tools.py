"""``hearth mcp``: memory, the wiki, sessions and skills as MCP tools (DESIGN §6), plus
skill prompts.

Each tool answers with a shape of :mod:`workhearth.api` (the REST API's own classes),
so the SDK derives its output schema from the class the REST route names.

Every tool goes through the library (``Workhearth(config=…, workspace=…)``), so the
limits and errors are the REST API's: a ``HearthError`` becomes an MCP tool error
carrying its one clear line; a malformed argument is rejected by the SDK from the
JSON schema the typed signature gives.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Prompt, PromptArgument
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, ToolAnnotations
from pydantic import Field

from workhearth.api.args import checked_workspace
from workhearth.api.errors import MemoryNotFound
from workhearth.api.models import ContextIn, DeletedOut, EntryListOut, EntryOut, SearchOut
from workhearth.api.session_models import (
    LatestOut,
    RewindPlanOut,
    SessionListOut,
    TaskStarted,
    TaskStatus,
    TranscriptOut,
)
from workhearth.api.skill_models import SkillDetailOut, SkillListOut
from workhearth.api.skills import skill_detail, skill_summary
from workhearth.api.wiki_models import WikiPageOut
from workhearth.app import Workhearth
from workhearth.config import Config
from workhearth.errors import HearthError, NotFoundError
from workhearth.tasks.service import transcript_status

T = TypeVar("T")
WORKSPACES_KEPT = 8

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DELETE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

Workspace = Annotated[
    str | None,
    Field(
        description="Project folder whose memory and sessions to use "
        "(absolute path; default: the server's working folder).",
    ),
]


# Why named: the local and the team memory tools (server/team.py) take the same arguments.
Content = Annotated[str, Field(description="One plain sentence the user confirmed.")]
Level = Annotated[Literal["critical", "normal", "low"], Field(description="Importance.")]
Tags = Annotated[list[str] | None, Field(description="Up to 32 tags of 64.")]
Query = Annotated[str, Field(description="Words to find (Chinese included), up to 512.")]
SearchLimit = Annotated[int, Field(description="How many hits, 1..50.")]
ListLimit = Annotated[int, Field(description="Entries per page, 1..100.")]
Cursor = Annotated[str | None, Field(description="next_cursor of the previous page.")]
EntryId = Annotated[str, Field(description="The entry's id (from memory_list or a hit).")]


Contexts = Annotated[
    list[ContextIn] | None,
    Field(description="Provenance, up to 16: where the sentence came from."),
]


# ------------------------------------------------------------------- the server
class Hearths:
    """One ``Workhearth`` per workspace asked for, the few most recent kept open.

    Why a lock: tool functions run in worker threads, and one memory object (its
    SQLite connections, its freshness clock) is not meant to be used by two at once.
    """

    def __init__(self, config: Config, workspace: Path, inline: bool = True) -> None:
        self.config = config
        self.inline = inline
        self.default = Path(workspace).absolute()
        self.lock = threading.Lock()
        self._open: OrderedDict[Path, Workhearth] = OrderedDict()

    def resolve(self, workspace: str | None) -> Path:
        if workspace is None or not workspace.strip():
            return self.default
        # Why the shared check: the REST API's rules and words, so both answer alike.
        return checked_workspace(workspace, self.config.paths.home)

    def get(self, workspace: str | None) -> Workhearth:
        path = self.resolve(workspace)
        wh = self._open.get(path)
        if wh is None:
            wh = Workhearth(config=self.config, workspace=path)
            self._open[path] = wh
            if len(self._open) > WORKSPACES_KEPT:
                _, old = self._open.popitem(last=False)
                if "memory" in old.__dict__:  # Why: only close what was opened
                    old.memory.close()
        self._open.move_to_end(path)
        return wh

    def call(self, workspace: str | None, fn: Callable[[Workhearth], T]) -> T:
        """Run ``fn`` on the workspace's library object; a HearthError becomes a tool error."""
        try:
            with self.lock:
                return fn(self.get(workspace))
        except HearthError as exc:
            raise ToolError(str(exc)) from exc
        except UnicodeError as exc:
            raise ToolError(f"text is not valid UTF-8 ({getattr(exc, 'reason', exc)})") from exc


def build_server(config: Config, workspace: Path | str, *, inline: bool = True) -> MCPServer:
    """The MCP server over ``config``'s home; tools default to ``workspace``.

    ``inline``: run each tool on the event loop instead of a worker thread. Why:
    handing a call to a thread and back costs more than a memory search itself
    (milliseconds on a busy machine); one stdio client waits for its answer anyway.
    A server shared by many clients (``/mcp`` in ``hearth serve``) passes False.
    """
    from workhearth import __version__

    hearths = Hearths(config, Path(workspace), inline)
    server: MCPServer = MCPServer(
        name="hearth",
        title="workhearth",
        version=__version__,
        instructions=(
            "hearth's memory (plain Markdown the user can edit, searched by words, Chinese "
            "included), the project's wiki (pages hearth wrote about its code and documents), "
            "its saved agent sessions, and its skills. Save only plain sentences "
            "the user confirmed. Each tool takes an optional `workspace` folder."
        ),
        log_level="WARNING",
    )
    _memory_tools(server, hearths)
    _wiki_tools(server, hearths)
    _session_tools(server, hearths)
    _team_tools(server, hearths)
    _skill_tools(server, hearths)
    _skill_prompts(server, hearths)
    return server


def _tool(
    server: MCPServer, hearths: Hearths, *, annotations: ToolAnnotations, title: str
) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``server.tool``, but a sync tool runs inline (an async wrapper) when asked."""

    def register(fn: Callable[..., T]) -> Callable[..., T]:
        target: Callable[..., Any] = fn
        if hearths.inline:

            @functools.wraps(fn)
            async def run_inline(**kwargs: Any) -> T:
                return fn(**kwargs)

            target = run_inline
        server.add_tool(target, annotations=annotations, title=title)
        return fn

    return register


def _memory_tools(server: MCPServer, hearths: Hearths) -> None:
    @_tool(server, hearths, annotations=WRITE, title="Save to memory")
    def memory_save(
        content: Content,
        level: Level = "normal",
        tags: Tags = None,
        contexts: Contexts = None,
        workspace: Workspace = None,
    ) -> EntryOut:
        """Save a sentence to the project's memory; saving the same sentence again returns it."""
        provenance = [c.model_dump() for c in contexts or []]
        entry = hearths.call(
            workspace, lambda wh: wh.memory.save(content, level, tags or [], provenance)
        )
        return EntryOut.model_validate(entry.as_dict())

    @_tool(server, hearths, annotations=READ, title="Search memory")
    def memory_search(
        query: Query,
        limit: SearchLimit = 6,
        workspace: Workspace = None,
    ) -> SearchOut:
        """Find memory entries and notes by words; best first, scores relative to the best."""
        hits = hearths.call(workspace, lambda wh: wh.memory.search(query, limit=limit))
        return SearchOut.model_validate({"results": [h.as_dict() for h in hits]})

    @_tool(server, hearths, annotations=READ, title="List memory entries")
    def memory_list(
        limit: ListLimit = 20,
        cursor: Cursor = None,
        workspace: Workspace = None,
    ) -> EntryListOut:
        """Memory entries, newest first, a page at a time."""
        entries, nxt = hearths.call(workspace, lambda wh: wh.memory.list(limit, cursor))
        return EntryListOut.model_validate(
            {"entries": [e.as_dict() for e in entries], "next_cursor": nxt}
        )

    @_tool(server, hearths, annotations=DELETE, title="Delete a memory entry")
    def memory_delete(
        id: EntryId,
        workspace: Workspace = None,
    ) -> DeletedOut:
        """Remove an entry from memory (a copy stays in .memory_evicted.log; restorable)."""

        def delete(wh: Workhearth) -> None:
            try:
                wh.memory.delete(id)
            except NotFoundError:
                # Why: as the REST API, one text for unknown and malformed ids.
                raise MemoryNotFound() from None

        hearths.call(workspace, delete)
        return DeletedOut(deleted=id)


def _wiki_tools(server: MCPServer, hearths: Hearths) -> None:
    @_tool(server, hearths, annotations=READ, title="Search the wiki")
    def wiki_search(
        query: Query,
        limit: SearchLimit = 6,
        workspace: Workspace = None,
    ) -> SearchOut:
        """Find pages of the project's wiki (hearth wiki build) by words; best first."""
        hits = hearths.call(workspace, lambda wh: wh.memory.search(query, limit, layer="wiki"))
        return SearchOut.model_validate({"results": [h.as_dict() for h in hits]})

    @_tool(server, hearths, annotations=READ, title="Read a wiki page")
    def wiki_read(
        page: Annotated[
            str, Field(description="The page's name: overview, or one from a hit's path.")
        ],
        workspace: Workspace = None,
    ) -> WikiPageOut:
        """A page of the project's wiki: its Markdown, when and from which sources it was
        written, and whether a source changed since (stale) or the user edited it."""
        found = hearths.call(workspace, lambda wh: wh.wiki.read(page))
        return WikiPageOut.model_validate(found.as_dict())


def _session_tools(server: MCPServer, hearths: Hearths) -> None:
    @_tool(server, hearths, annotations=READ, title="List sessions")
    def session_list(
        limit: Annotated[int, Field(description="How many, newest first, 1..100.")] = 30,
        workspace: Workspace = None,
    ) -> SessionListOut:
        """hearth's agent sessions of the workspace, newest first, with title, size and status."""
        if not 1 <= limit <= 100:
            raise ToolError("session list limit must be between 1 and 100")

        def listing(wh: Workhearth) -> SessionListOut:
            infos = wh.sessions.list(limit=limit, workspace=wh.workspace)
            sessions = [{**i.as_dict(), "status": _status(wh, i.session_id)} for i in infos]
            return SessionListOut.model_validate({"sessions": sessions})

        return hearths.call(workspace, listing)

    @_tool(server, hearths, annotations=READ, title="Read a session")
    def session_read(
        id: Annotated[str, Field(description="The session id.")],
        count: Annotated[
            int, Field(description="Last messages to return (clamped to 1..30).")
        ] = 10,
        workspace: Workspace = None,
    ) -> TranscriptOut:
        """The last messages of a session (found from any workspace)."""
        out = hearths.call(workspace, lambda wh: wh.sessions.read_transcript(id, count))
        return TranscriptOut.model_validate(out.as_dict())

    @_tool(server, hearths, annotations=READ, title="Latest message of a session")
    def session_latest(
        id: Annotated[str, Field(description="The session id.")],
        workspace: Workspace = None,
    ) -> LatestOut:
        """The newest message of a session."""
        out = hearths.call(workspace, lambda wh: wh.sessions.latest_message(id))
        return LatestOut.model_validate(out.as_dict())

    @_tool(server, hearths, annotations=DELETE, title="Rewind a session")
    def session_rewind(
        id: Annotated[str, Field(description="The session id.")],
        to: Annotated[int, Field(description="The turn to undo, with every later one (from 1).")],
        dry_run: Annotated[bool, Field(description="Only say what would change.")] = False,
        files_only: Annotated[
            bool, Field(description="Put back the files; keep the conversation.")
        ] = False,
        conversation_only: Annotated[
            bool, Field(description="Rewind the conversation; leave the files.")
        ] = False,
        force: Annotated[
            bool, Field(description="Also replace files changed outside the task (trashed first).")
        ] = False,
        workspace: Workspace = None,
    ) -> RewindPlanOut:
        """Undo what a session's turns did, files (also what commands changed) and
        conversation; a file changed outside the task is refused unless ``force``."""

        def rewind(wh: Workhearth) -> RewindPlanOut:
            with wh.sessions.open(id) as session:
                plan = session.rewind(
                    to,
                    dry_run=dry_run,
                    files_only=files_only,
                    conversation_only=conversation_only,
                    force=force,
                )
            return RewindPlanOut.model_validate(plan)

        return hearths.call(workspace, rewind)


def _team_tools(server: MCPServer, hearths: Hearths) -> None:
    services: dict[Path, Any] = {}

    @_tool(server, hearths, annotations=WRITE, title="Start a team task")
    def team_start(
        task: Annotated[str, Field(description="What the team should deliver, in words.")],
        answers: Annotated[
            dict[str, str] | None,
            Field(description="Answers to the lead's questions, by question id."),
        ] = None,
        workspace: Workspace = None,
    ) -> TaskStarted:
        """A team of specialists plans and delivers the task in quest mode (alone inside
        the folder's boundaries); returns the lead's session id at once. Questions the
        lead asks take ``answers`` or their defaults; read progress with session_read."""
        from workhearth.tasks.service import TaskService
        from workhearth.tasks.team.run import TeamOptions

        def start(wh: Workhearth) -> TaskStarted:
            service = services.get(wh.workspace)
            if service is None:
                service = services[wh.workspace] = TaskService(wh.config, wh.workspace)
            team = TeamOptions(answers=answers, yes=True)
            started = service.start(task, workspace=str(wh.workspace), mode="quest", team=team)
            return TaskStarted(session_id=started.session_id, status=started.status)

        return hearths.call(workspace, start)


def _status(wh: Workhearth, session_id: str) -> TaskStatus:
    """What the session's transcript says of its task (``done`` when it cannot be read).

    Why the transcript: this server runs no tasks; and "done", as the REST API says of
    a session whose status nobody can tell.
    """
    try:
        return transcript_status(wh.sessions.open(session_id))[0]
    except HearthError:
        return "done"


def _skill_tools(server: MCPServer, hearths: Hearths) -> None:
    @_tool(server, hearths, annotations=READ, title="List skills")
    def skill_list(workspace: Workspace = None) -> SkillListOut:
        """Skills hearth has (folders with SKILL.md), broken ones with their problems."""

        def listing(wh: Workhearth) -> SkillListOut:
            lib = wh.skills
            lib.refresh()  # Why: a long-lived server sees skills installed since
            skills = [skill_summary(s) for s in lib.list()]
            return SkillListOut.model_validate({"skills": skills, "warnings": lib.warnings()})

        return hearths.call(workspace, listing)

    @_tool(server, hearths, annotations=READ, title="Get a skill")
    def skill_get(
        name: Annotated[str, Field(description="The skill's name.")],
        workspace: Workspace = None,
    ) -> SkillDetailOut:
        """A skill's instructions (SKILL.md body) and its example tasks."""

        def detail(wh: Workhearth) -> SkillDetailOut:
            lib = wh.skills
            lib.refresh()
            skill = lib.get(name)
            data = skill_detail(skill, lib.body(skill.name) if skill.ok else None)
            data["examples"] = [e.as_dict() for e in lib.examples(skill.name)] if skill.ok else []
            return SkillDetailOut.model_validate(data)

        return hearths.call(workspace, detail)


def prompt_name(skill: str, example_id: str) -> str:
    return f"{skill}__{example_id}"


def _skill_prompts(server: MCPServer, hearths: Hearths) -> None:
    """Each ok skill's example tasks as prompts; the arguments are the example's variables.

    Why at start only: prompts are listed from the server's own workspace (a prompt
    list takes no workspace), and a broken skill must not stop the server.
    """
    from workhearth.skills.model import localized

    try:
        wh = hearths.get(None)
        lib = wh.skills
        skills = [s for s in lib.list() if s.ok]
    except HearthError:
        return
    for skill in skills:
        try:
            examples = lib.examples(skill.name)
        except HearthError:
            continue
        for ex in examples:
            server.add_prompt(
                ExamplePrompt(
                    name=prompt_name(skill.name, ex.id),
                    title=localized(ex.title, lib.language) or ex.id,
                    description=localized(ex.description, lib.language) or skill.description,
                    arguments=[
                        PromptArgument(
                            name=v.name,
                            description=localized(v.description, lib.language) or None,
                            required=v.required and v.default is None,
                        )
                        for v in ex.variables
                    ],
                    fn=_renderer(hearths, skill.name, ex.id),
                    context_kwarg=None,
                )
            )


class ExamplePrompt(Prompt):
    async def render(self, arguments: dict[str, Any] | None, context: Any) -> Any:
        # Why: the SDK reports a missing argument as an internal error, without its name.
        given = arguments or {}
        missing = [a.name for a in self.arguments or [] if a.required and a.name not in given]
        if missing:
            raise MCPError(INVALID_PARAMS, f"missing prompt argument: {', '.join(missing)}")
        return await super().render(arguments, context)


def _renderer(hearths: Hearths, skill: str, example_id: str) -> Callable[..., str]:
    def render(**values: Any) -> str:
        given = {k: str(v) for k, v in values.items() if v is not None}
        try:
            with hearths.lock:
                return hearths.get(None).skills.render(skill, example_id, given)
        except HearthError as exc:
            # Why: the SDK replaces any other error with a generic "Error rendering prompt".
            raise MCPError(INVALID_PARAMS, str(exc)) from exc

    return render


def run_stdio(config: Config, workspace: Path | str) -> None:
    """Serve over stdin/stdout until the client closes them."""
    build_server(config, workspace).run("stdio")
