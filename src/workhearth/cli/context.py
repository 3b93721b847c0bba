"""The per-invocation context: config read once, the library object built once."""

from __future__ import annotations

import os
from functools import cache

from workhearth.app import Workhearth


@cache
def hearth() -> Workhearth:
    # Why: the CLI is the one place that reads the process environment; it hands
    # the resulting Config down to the library.
    return Workhearth(env=os.environ, workspace=os.getcwd())
