"""``--mode`` and ``--model``: hearth's global options, and ``run`` / ``resume``'s own.

Why apart from ``cli/run.py``: the global options are declared on ``hearth`` itself, and
reading them must not import the run command (``hearth check`` never runs a task).
"""

from __future__ import annotations

from typing import Annotated

import typer

MODE_HELP = "ask (read only) | agent (asks before each change) | quest (works alone)."
MODEL_HELP = "A [models.NAME] from config.toml, or openai:NAME / anthropic:NAME."
ModeOpt = Annotated[str | None, typer.Option(metavar="MODE", help=MODE_HELP)]
