"""The ``hearth`` entry point: builds the command tree and turns errors into one line."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from workhearth.cli import audit as audit_cmd
from workhearth.cli import check as check_cmd
from workhearth.cli import doctor as doctor_cmd
from workhearth.cli import mcp as mcp_cmd
from workhearth.cli import memory as memory_cmd
from workhearth.cli import models as models_cmd
from workhearth.cli import run as run_cmd
from workhearth.cli import serve as serve_cmd
from workhearth.cli import sessions as sessions_cmd
from workhearth.cli import shell as shell_cmd
from workhearth.cli import skills as skills_cmd
from workhearth.cli import team as team_cmd
from workhearth.cli import trash as trash_cmd
from workhearth.cli import workspace as workspace_cmd
from workhearth.cli.help import HearthTyper

app = HearthTyper(
    name="hearth",
    help="workhearth: a local-first agent workbench.",
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
app.add_typer(sessions_cmd.app, name="sessions")
app.add_typer(memory_cmd.app, name="memory")
app.add_typer(mcp_cmd.app, name="mcp")
app.add_typer(models_cmd.app, name="models")
app.add_typer(shell_cmd.app, name="shell")
app.add_typer(skills_cmd.app, name="skills")
app.add_typer(trash_cmd.app, name="trash")
app.add_typer(team_cmd.app, name="team")
app.command("run")(run_cmd.run)
app.command("resume")(run_cmd.resume)
app.command("audit")(audit_cmd.audit)
app.command("check")(check_cmd.check)
app.add_typer(workspace_cmd.app, name="workspace")
app.command("doctor")(doctor_cmd.doctor)
app.command("serve")(serve_cmd.serve)


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", help="Print the version.")] = False,
    mode: run_cmd.ModeOpt = None,
    model: Annotated[
        str | None,
        typer.Option(metavar="MODEL", help=run_cmd.MODEL_HELP + " Also for run and resume."),
    ] = None,
) -> None:
    """Run `hearth` in a folder to work there with the agent."""
    if version:
        from workhearth import __version__

        print(__version__)
        raise typer.Exit(0)
    run_cmd.check_globals(mode, model)
    if ctx.invoked_subcommand is None:
        run_cmd.interactive(mode=mode, model=model)


def _fail(message: str, code: int) -> int:
    first = message.strip().splitlines()[0] if message.strip() else "failed"
    print(f"hearth: {first}", file=sys.stderr)
    return code


def run(argv: list[str] | None = None) -> int:
    """Console-script entry: exit codes, and one clear stderr line for every user error."""
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


if __name__ == "__main__":
    run()
