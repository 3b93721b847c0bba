"""The Repowiki (issue 24): a knowledge base of the user's project, written by the model.

Pages are Markdown files in ``projects/<workspace>/wiki/`` (DESIGN §2): an overview and
one page per folder (:mod:`.grouping` says the rule), each stating in its front matter
when, by which model and from which source versions (content hashes) it was written
(:mod:`.pages`). :mod:`.sources` finds the files and hashes them through a stat cache,
:mod:`.office` reads office files through the office skills' extractors, :mod:`.plan`
decides what to write without a model call, :mod:`.writer` writes it, :mod:`.api` is
``wh.wiki``.
"""

from workhearth.wiki.api import Wiki
from workhearth.wiki.pages import PageInfo, WikiPage
from workhearth.wiki.plan import PlannedPage, WikiPlan
from workhearth.wiki.writer import WikiReport

__all__ = ["PageInfo", "PlannedPage", "Wiki", "WikiPage", "WikiPlan", "WikiReport"]
