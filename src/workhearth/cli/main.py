"""``hearth`` itself: its global options, its help, and one clear stderr line for every error.

Which commands it has is :mod:`workhearth.main`'s to say (the server and the MCP server
are surfaces of their own, which the CLI never imports); each is imported only when it
runs (:mod:`workhearth.cli.lazy`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Annotated, ClassVar

import typer

from workhearth.cli.help import HearthTyper
from workhearth.cli.lazy import LazyGroup, Loader
from workhearth.cli.options import MODEL_HELP, ModeOpt


def main(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
    mode: ModeOpt = None,
    model: Annotated[
        str | None,
        typer.Option(metavar="MODEL", help=MODEL_HELP + " Also for run and resume."),
    ] = None,
) -> None:
    """Run `hearth` in a folder to work there with the agent."""
    if version:
        from workhearth import __version__

        print(__version__)
        raise typer.Exit(0)
    # Why only then: the run command's module is not imported for `hearth check`.
    if mode is not None or model is not None or ctx.invoked_subcommand is None:
        from workhearth.cli import run as run_cmd

        run_cmd.check_globals(mode, model)
        if ctx.invoked_subcommand is None:
            run_cmd.interactive(mode=mode, model=model)


def hearth_app(commands: Mapping[str, Loader]) -> HearthTyper:
    """``hearth`` with ``commands`` (name: where it is), listed by ``--help`` in that order."""

    class Hearth(LazyGroup):
        lazy: ClassVar[Mapping[str, Loader]] = dict(commands)

    app = HearthTyper(
        name="hearth",
        help="workhearth: a local-first agent workbench.",
        cls=Hearth,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback(invoke_without_command=True)(main)
    return app


def _fail(message: str, code: int) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    print(f"hearth: {first}", file=sys.stderr)
    return code


def run(app: typer.Typer, argv: list[str] | None = None) -> int:
    """Run ``app`` on ``argv`` (the process's arguments if None, then exit): exit codes,
    and one clear stderr line for every user error."""
    from workhearth.errors import HearthError

    command = typer.main.get_command(app)
    try:
        result = command.main(args=argv, prog_name="hearth", standalone_mode=False)
    except HearthError as exc:
        code = _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        code = _fail("interrupted", 130)
    except BrokenPipeError:
        code = 0
    except UnicodeError as exc:
        # Why: only the decode/encode subclasses carry a reason; a bare UnicodeError has none.
        code = _fail(f"text is not valid UTF-8 ({getattr(exc, 'reason', exc)})", 2)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        code = _fail(f"{where}{exc.strerror or exc}", 1)
    except Exception as exc:
        # Why: Typer vendors its own click, so its usage errors, Exit and Abort are
        # recognised by shape (exit_code, format_message), not by class.
        help_ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and help_ctx:
            print(help_ctx.get_help())  # a bare group: show its help, as a person expects
            code = 0
        elif hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            code = _fail(exc.format_message(), exc.exit_code)
        elif type(exc).__name__ == "Abort":
            code = _fail("aborted", 130)
        elif hasattr(exc, "exit_code"):
            code = exc.exit_code
        else:
            raise
    else:
        # Why: without standalone mode click returns an Exit's code instead of exiting.
        code = result if isinstance(result, int) else 0
    sys.exit(code or 0) if argv is None else None
    return code or 0
