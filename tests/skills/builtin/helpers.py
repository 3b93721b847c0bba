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


def one_error_line(proc: subprocess.CompletedProcess[str], prog: str) -> str:
    """A user mistake: exit 2 and one stderr line starting with ``PROG: ``, no traceback."""
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"{prog}: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]
