"""The library entry point (DESIGN §8): ``Workhearth(home=…, workspace=…)``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workhearth.config import Config, load_config
from workhearth.paths import HearthPaths

if TYPE_CHECKING:
    from workhearth.check import Receipt
    from workhearth.memory.api import Memory
    from workhearth.sessions.session import RewindRequest, Session
    from workhearth.sessions.store import SessionStore
    from workhearth.skills.library import SkillLibrary
    from workhearth.trust import FolderTrust
    from workhearth.wiki import Wiki


class Workhearth:
    """One home, one workspace: the object the CLI, the server and scripts share."""

    def __init__(
        self,
        home: Path | str | None = None,
        workspace: Path | str | None = None,
        *,
        config: Config | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        if config is None:
            config = load_config(env, Path(home) if home is not None else None)
        self.config = config
        self.workspace = Path(workspace if workspace is not None else os.getcwd()).absolute()
        # The workspace whose project folder (sessions, shell snapshots) this one uses:
        # itself, or the project a copy was made of (see in_copy).
        self.project = self.workspace

    def in_copy(
        self, folder: Path | str, *, config: Config | None = None, memory: Memory | None = None
    ) -> Workhearth:
        """This workspace's hearth working in a copy of it (a team specialist's scratch
        folder): files, commands and trust are ``folder``'s; memory and skills stay this
        project's, since the copy is the same project. Why trust is not shared: what the
        copy holds may have been written by the task itself. ``memory``: one of
        :meth:`open_memory`'s to use (a Memory is not for two threads at once)."""
        other = Workhearth(config=config or self.config, workspace=folder)
        other.project = self.project
        if memory is not None:
            other.__dict__["memory"] = memory
        # Why shared: a listing each run reads; scanning the same folders per copy cost ~1 ms.
        other.__dict__["skills"] = self.skills
        return other

    @property
    def home(self) -> Path:
        return self.config.home

    @property
    def paths(self) -> HearthPaths:
        return self.config.paths

    @cached_property
    def memory(self) -> Memory:
        return self.open_memory()

    def open_memory(self) -> Memory:
        """A new :class:`Memory` of this project (``memory`` is the one this object keeps);
        the caller closes it."""
        from workhearth.memory.api import Memory

        if self.config.bank.url:
            # Why here: one seam gives the CLI, the agent's tools and scripts the team
            # bank when [bank] url is set (workhearth.memory.api says what goes where).
            from workhearth.bank.client.facade import TeamBank

            team = TeamBank(self.paths, self.config.bank)
            return Memory(self.paths, self.project, self.config.memory, team_bank=team)
        return Memory(self.paths, self.project, self.config.memory)

    @cached_property
    def sessions(self) -> SessionStore:
        # Why imported here: memory commands never need the session store (~25 ms).
        from workhearth.sessions.store import SessionStore

        return SessionStore(
            self.config, self.workspace, rewinder=self._rewind, project=self.project
        )

    def _rewind(self, session: Session, request: RewindRequest) -> dict[str, Any]:
        """``session.rewind(…)`` (DESIGN §8): the plan as a dict, carried out unless a dry run."""
        from workhearth.tasks.rewind import rewind_session

        return rewind_session(self, session, request).as_dict()

    @cached_property
    def skills(self) -> SkillLibrary:
        """Skills visible from this workspace; its own skill folders only when it is
        authorized and the user trusts them (DESIGN §5 Trust)."""
        from workhearth.agent.workspace import Workspaces
        from workhearth.skills.library import SkillLibrary
        from workhearth.trust import TrustStore

        roots = Workspaces(self.paths, current=self.workspace).roots()
        return SkillLibrary(
            self.paths,
            self.workspace,
            user_home=self.config.user_home,
            workspace_authorized=self.workspace in roots,
            # Why a fresh check at each scan: a long-lived server (MCP, REST) sees the
            # user's trust, and a change to the folder, as they happen.
            trusted=lambda: TrustStore(self.paths).check(self.workspace).trusted_items,
            language=self.config.language,
        )

    @cached_property
    def wiki(self) -> Wiki:
        """The workspace's Repowiki: pages the model writes about its folders (issue 24)."""
        from workhearth.wiki import Wiki

        return Wiki(self.paths, self.workspace, self.config)

    @cached_property
    def trust(self) -> FolderTrust:
        """What this workspace brings (.mcp.json, skills, agents) and what the user trusted."""
        from workhearth.trust import TrustStore

        return TrustStore(self.paths).check(self.workspace)

    def refresh_trust(self) -> None:
        """Check the workspace's trust again (after the user trusted it), skills with it."""
        self.__dict__.pop("trust", None)
        self.__dict__.pop("skills", None)

    def check(self, *paths: Path | str, thumbnails: bool = True) -> list[Receipt]:
        """``hearth check``: a receipt per office file (.docx .xlsx .pptx .pdf), relative
        paths from the workspace; thumbnails under the cache (``receipt.thumbnails``)."""
        from workhearth.check import Tools, check_file

        tools = Tools.find(self.paths.office_profile)
        thumbs = self.paths.cache / "check" if thumbnails else None
        return [check_file(self.workspace / Path(p), tools, thumbs) for p in paths]
