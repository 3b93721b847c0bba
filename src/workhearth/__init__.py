"""workhearth: a local-first agent workbench.

``from workhearth import Workhearth`` is the library entry point (DESIGN §8).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Workhearth", "__version__"]

if TYPE_CHECKING:
    from workhearth.app import Workhearth


def __getattr__(name: str) -> Any:
    # Why: keep `import workhearth` (and so `hearth --help`) cheap; load on first use.
    if name == "Workhearth":
        from workhearth.app import Workhearth

        return Workhearth
    raise AttributeError(name)
