"""Plain option values (text, whole numbers, flags, repeated text) read without pydantic.

Typer 0.29 checks every parameter with a pydantic ``TypeAdapter``: importing pydantic
and building the adapters costs ~70 ms, a third of a ``hearth memory search``. Nearly
all our parameters are plain ``str``/``int``/``bool``/``list[str]`` without bounds, and
their values need no checking (or a whole number's digits). For those, a value that is
plainly valid is returned as Typer would return it; anything else (bounds, paths,
choices, a missing required value, a value that is not plainly valid) goes to Typer's
own check, so results and error messages stay exactly Typer's.

Only public API: click's ``Parameter.process_value(ctx, value)`` turns a raw value
into the final one, and :func:`make_plain` (called by every hearth command and group,
see ``cli/help.py``) gives each plain parameter of that command a subclass of Typer's
``TyperOption`` / ``TyperArgument`` whose ``process_value`` reads plain values and
hands the rest to Typer's (``super()``). Typer itself is not patched. A Typer whose
parameters carry no ``type_descriptor`` (before 0.29) has no plain parameters: its
own checks run unchanged. tests/cli/test_params.py compares both paths value by value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import typer.core

# Why no leading zeros or signs beyond "-": those the fast path leaves to Typer.
_WHOLE = re.compile(r"-?[1-9][0-9]{0,17}|0")
_PLAIN = (str, int, bool, list[str])
_CONSTRAINTS = ("parser", "click_type", "min", "max", "clamp", "formats", "path_type")


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


def _set(value: Any) -> bool:
    # Why identity: a bound of 0 (``min=0``) is a constraint too, unlike None or False.
    return value is not None and value is not False


def is_plain(param: Any) -> bool:
    """True when ``param``'s type and settings leave nothing for pydantic to check."""
    descriptor = getattr(param, "type_descriptor", None)
    info = getattr(descriptor, "parameter_info", None)
    if descriptor is None or info is None:
        return False  # Why: another Typer; its own checks, unchanged
    return (
        getattr(descriptor, "annotation", None) in _PLAIN
        and getattr(descriptor, "file_annotation", None) is None
        and not any(_set(getattr(info, name, None)) for name in _CONSTRAINTS)
        and not getattr(info, "allow_dash", False)
        and not getattr(info, "resolve_path", False)
    )


def _process(param: Any, ctx: Any, value: Any, typer_own: Callable[[Any, Any], Any]) -> Any:
    """What ``typer_own(ctx, value)`` returns, without it when the value is plainly valid."""
    if value is None:
        ok, out = True, (() if param.multiple or param.nargs == -1 else None)
    else:
        ok, out = _plain_value(param.type_descriptor.annotation, value)
    if not ok or (param.required and param.value_is_missing(out)):
        return typer_own(ctx, value)
    return param.callback(ctx, param, out) if param.callback is not None else out


class PlainOption(typer.core.TyperOption):
    """An option whose plain values are read here; see the module docstring."""

    def process_value(self, ctx: Any, value: Any) -> Any:
        return _process(self, ctx, value, super().process_value)


class PlainArgument(typer.core.TyperArgument):
    """An argument whose plain values are read here; see the module docstring."""

    def process_value(self, ctx: Any, value: Any) -> Any:
        return _process(self, ctx, value, super().process_value)


def make_plain(params: list[Any]) -> None:
    """Make each plain parameter of one command a :class:`PlainOption` / :class:`PlainArgument`.

    Why a class change: Typer builds the parameters and offers no hook to pick their
    class; the subclass adds one method and no state, so the object is otherwise the same.
    """
    for param in params:
        if type(param) is typer.core.TyperOption and is_plain(param):
            param.__class__ = PlainOption
        elif type(param) is typer.core.TyperArgument and is_plain(param):
            param.__class__ = PlainArgument
