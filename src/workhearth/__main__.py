"""``python -m workhearth``: the ``hearth`` command."""

from workhearth.main import run

run()
