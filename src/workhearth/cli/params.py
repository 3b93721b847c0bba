"""Plain option values (text, whole numbers, flags, repeated text) read without pydantic.

Typer 0.29 checks every parameter with a pydantic ``TypeAdapter``: importing pydantic
and building the adapters costs ~70 ms, a third of a ``hearth memory search``. Nearly
all our parameters are plain ``str``/``int``/``bool``/``list[str]`` without bounds, and
their values need no checking (or a whole number's digits). For those, a value that is
plainly valid is returned as Typer would return it; anything else (bounds, paths,
choices, a value that is not plainly valid) goes to Typer's own check, so results and
error messages stay exactly Typer's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import typer.core

# Why no leading zeros or signs beyond "-": those the fast path leaves to pydantic.
_WHOLE = re.compile(r"-?[1-9][0-9]{0,17}|0")
_PLAIN = (str, int, bool, list[str])
_CONSTRAINTS = ("parser", "click_type", "min", "max", "clamp", "formats", "path_type")

try:
    from typer._coercion import RuntimeParam, build_runtime_param
except ImportError:  # pragma: no cover - another Typer: keep its own checks
    RuntimeParam = None  # type: ignore[assignment,misc]


def _plain_value(annotation: Any, value: Any) -> tuple[bool, Any]:
    """(True, what Typer would return) when ``value`` is plainly valid for ``annotation``."""
    if annotation is str and isinstance(value, str):
        return True, value
    if annotation is bool and isinstance(value, bool):
        return True, value
    if annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return True, value
        if isinstance(value, str) and _WHOLE.fullmatch(value):
            return True, int(value)
    if (
        annotation == list[str]
        and isinstance(value, list | tuple)
        and all(isinstance(v, str) for v in value)
    ):
        return True, list(value)
    return False, None


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _PlainParam(RuntimeParam):
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            ok, out = _plain_value(self.annotation, value)
            if ok:
                return out
            return build_runtime_param(self.descriptor)._coerce_value(value, param, ctx)


def _set(value: Any) -> bool:
    # Why identity: a bound of 0 (``min=0``) is a constraint too, unlike None or False.
    return value is not None and value is not False


def _is_plain(descriptor: Any) -> bool:
    info = descriptor.parameter_info
    return (
        descriptor.annotation in _PLAIN
        and descriptor.file_annotation is None
        and not any(_set(getattr(info, name, None)) for name in _CONSTRAINTS)
        and not getattr(info, "allow_dash", False)
        and not getattr(info, "resolve_path", False)
    )


def install() -> None:
    """Read plain parameters without pydantic from now on (idempotent)."""
    cls: Any = typer.core._TyperParameter
    typer_own = getattr(cls, "get_runtime_param", None)
    if RuntimeParam is None or typer_own is None or getattr(typer_own, "plain", False):
        return

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None and _is_plain(self.type_descriptor):
            d = self.type_descriptor
            self._runtime_param = _PlainParam(
                parameter_info=d.parameter_info, annotation=d.annotation, descriptor=d
            )
        return typer_own(self)

    get_runtime_param.plain = True  # type: ignore[attr-defined]
    cls.get_runtime_param = get_runtime_param
