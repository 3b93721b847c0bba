"""``wh.wiki``: the Repowiki of a workspace (issue 24) — plan, build, update, list, read.

The pages live in ``projects/<workspace>/wiki/`` (DESIGN §2). ``build`` and ``update`` plan
first (no model call), then write each page as soon as its call returns; ``build`` is an
``update`` when pages exist, which is how a run killed midway continues where it stopped.
A folder given as ``dir`` must lie inside an authorized folder (the workspace, or one
added with ``hearth workspace add``): inside the workspace it limits the run to that part
of the workspace's wiki; inside another authorized folder it builds that folder's wiki.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from workhearth.config import Config
from workhearth.errors import ConfigError, NotFoundError, UsageError
from workhearth.paths import HearthPaths
from workhearth.wiki.pages import (
    OVERVIEW,
    PageFile,
    PageInfo,
    WikiPage,
    check_name,
    load,
    page_names,
    update_path,
)
from workhearth.wiki.plan import WikiPlan, make_plan, overview_stale
from workhearth.wiki.sources import StatCache, source_at
from workhearth.wiki.state import WikiState, writing
from workhearth.wiki.writer import OnPage, PageWriter, WikiReport

OnPlan = Callable[[WikiPlan], None]


class Wiki:
    """The wiki of ``workspace``: its pages in ``paths.project_wiki(workspace)``."""

    def __init__(self, paths: HearthPaths, workspace: Path | str, config: Config) -> None:
        self.paths = paths
        self.workspace = Path(workspace)
        self.config = config

    @property
    def folder(self) -> Path:
        return self.paths.project_wiki(self.workspace)

    # ------------------------------------------------------------ where
    def _target(self, dir: Path | str | None) -> tuple[Wiki, Path, str]:
        """The wiki a run on ``dir`` writes, the folder its sources are read from (links
        resolved), and ``dir`` relative to it (``.``: all of it)."""
        from workhearth.agent.workspace import Workspaces

        given = self.workspace if dir is None else Path(dir).expanduser()
        if not given.is_absolute():
            given = self.workspace / given
        real = Path(os.path.realpath(given))
        if not real.is_dir():
            raise UsageError(f"{given} is not an existing folder")
        for root in Workspaces(self.paths, current=self.workspace).roots():
            real_root = Path(os.path.realpath(root))
            if real == real_root or real_root in real.parents:
                own = root == Path(os.path.abspath(self.workspace))
                wiki = self if own else Wiki(self.paths, root, self.config)
                return wiki, real_root, real.relative_to(real_root).as_posix() or "."
        raise UsageError(
            f"{given} is outside the folders hearth may read (the workspace and the folders "
            "added with `hearth workspace add`)"
        )

    # ------------------------------------------------------------ plan
    def plan(self, dir: Path | str | None = None) -> WikiPlan:
        """What a build would do now, without a model call and without writing a page."""
        wiki, root, scope = self._target(dir)
        return make_plan(root, scope, wiki.folder, WikiState.load(wiki.folder), self._excluded())

    def build(
        self,
        dir: Path | str | None = None,
        *,
        max_calls: int | None = None,
        on_page: OnPage | None = None,
        on_plan: OnPlan | None = None,
    ) -> WikiReport:
        """Write every page not written yet or out of date, then the overview.

        ``on_plan`` sees the plan before any call (the CLI says how many calls it makes);
        ``on_page(name, what)`` each page as it lands. Raises ConfigError before touching
        anything when no model is configured."""
        return self._run(dir, max_calls, on_page, on_plan, need_pages=False)

    def update(
        self,
        dir: Path | str | None = None,
        *,
        max_calls: int | None = None,
        on_page: OnPage | None = None,
        on_plan: OnPlan | None = None,
    ) -> WikiReport:
        """Rewrite the pages whose sources changed, appeared or vanished (and the overview
        when a page it links changed); an error when the wiki was never built."""
        return self._run(dir, max_calls, on_page, on_plan, need_pages=True)

    def _run(
        self,
        dir: Path | str | None,
        max_calls: int | None,
        on_page: OnPage | None,
        on_plan: OnPlan | None,
        *,
        need_pages: bool,
    ) -> WikiReport:
        cap = self.config.wiki.max_calls if max_calls is None else max_calls
        if cap < 1:
            raise UsageError(f"the call cap must be at least 1, not {cap}")
        self._require_model()
        wiki, root, scope = self._target(dir)
        if need_pages and not page_names(wiki.folder):
            raise UsageError(
                f"there is no wiki for {wiki.workspace} yet; build it first",
                cli_hint="hearth wiki build",
            )
        with writing(wiki.folder):
            state = WikiState.load(wiki.folder)
            plan = make_plan(root, scope, wiki.folder, state, self._excluded())
            state.stat = plan.cache.as_json()
            if on_plan is not None:
                on_plan(plan)
            model = self._model() if plan.calls else None
            try:
                return PageWriter(root, wiki.folder, state, model, cap, on_page).run(plan)
            finally:
                state.save(wiki.folder)
                if model is not None:
                    model.close()

    def _excluded(self) -> list[Path]:
        """Never a source, even inside the folder: hearth's own home (its wiki included)."""
        return [Path(os.path.realpath(self.paths.home))]

    def _require_model(self) -> None:
        from workhearth.models.registry import require_keys

        models = self.config.models
        if not models.configured:
            raise ConfigError(
                "no model configured: the wiki is written by a model; set HEARTH_MODEL="
                "openai:NAME (or anthropic:NAME), or add a [models.NAME] table to config.toml",
                code="model_none",
            )
        require_keys(None, models)

    def _model(self):  # -> Router (imported late: listing pages needs no HTTP client)
        from workhearth.models.router import Router

        return Router.from_config(self.config.models)

    # ------------------------------------------------------------ read
    def pages(self) -> list[PageInfo]:
        """Every page, the overview first, with whether it was edited, has an update
        waiting, or is stale (a source's content differs now: read from the stat cache)."""
        state = WikiState.load(self.folder)
        cache = StatCache(state.stat)
        files = self._files()
        return [self._info(page, files, state, cache) for page in files.values()]

    def read(self, name: str) -> WikiPage:
        """One page with its body; NotFoundError when there is none by that name."""
        page = load(self.folder, check_name(name))
        if page is None:
            raise NotFoundError(
                f"no wiki page {name!r}", code="wiki_no_page", params={"page": name}
            )
        state = WikiState.load(self.folder)
        # Why: only the overview's staleness looks at the other pages.
        files = self._files() if page.name == OVERVIEW else {}
        info = self._info(page, files, state, StatCache(state.stat))
        return WikiPage(**vars(info), text=page.body)

    def _files(self) -> dict[str, PageFile]:
        return {n: p for n in page_names(self.folder) if (p := load(self.folder, n))}

    def _info(
        self, page: PageFile, files: dict[str, PageFile], state: WikiState, cache: StatCache
    ) -> PageInfo:
        waiting = update_path(self.folder, page.name).exists()
        if page.name == OVERVIEW:
            others = {n: p for n, p in files.items() if n != OVERVIEW}
            stale = overview_stale(self.folder, others, state)
        else:
            recorded = page.sources
            kept = state.kept.get(page.name)
            if kept is not None and page.edited:
                recorded = kept
            stale = self._stale(recorded, cache)
        return page.info(update_waiting=waiting, stale=stale)

    def _stale(self, recorded: dict[str, str | None], cache: StatCache) -> bool:
        root = Path(os.path.realpath(self.workspace))
        for path, sha in recorded.items():
            now = source_at(root, path, cache)
            if now is None or now.sha256 != sha:
                return True
        return False
