"""Running a built-in skill's script as the model runs it, and checking a refusal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import workhearth

BUILTIN = Path(workhearth.__file__).parent / "skills" / "builtin"


def run_script(
    path: Path, *args: object, timeout: float = 300, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """``python PATH ARGS`` with hearth's interpreter, output captured as text."""
    # Why: generous timeouts; the machine is shared and LibreOffice can take a while to start.
    return subprocess.run(
        [sys.executable, str(path), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


# Why ``sys.modules[name] = None``: Python's own way to say a module is absent: an import
# of it raises ImportError and ``importlib.util.find_spec`` answers None, as on a machine
# where the package was never installed. The script then runs as ``python SCRIPT``.
_WITHOUT = (
    "import os, runpy, sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = sys.argv[2:]\n"
    "sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0])))\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def run_script_without(
    packages: tuple[str, ...], path: Path, *args: object, timeout: float = 300, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """:func:`run_script` in an interpreter where ``packages`` cannot be imported."""
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT, ",".join(packages), str(path), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        **kwargs,
    )


def one_error_line(proc: subprocess.CompletedProcess[str], prog: str) -> str:
    """A user mistake: exit 2 and one stderr line starting with ``PROG: ``, no traceback."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{prog}: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]
