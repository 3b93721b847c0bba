"""Diagnose a failed command from its exit code and error output; print the likely fix as JSON.

Deterministic: the rules live in rules.py beside this script (first match wins).
Output: {"kind", "cause", "fix", "confidence", "evidence", ...} on stdout, exit 0.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path, PurePosixPath

from rules import PACKAGE_OF_COMMAND, PACKAGE_OF_MODULE, PYPI_COMMANDS, RULES

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "diagnose.py"
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?$', re.M)
EXCEPTION = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Fault)\b.*)$", re.M
)
ERRORISH = re.compile(r"(?i)\b(error|fatal|failed|cannot|can't|denied|not found|refused)\b")


class _Blank(dict):
    # Why: a template may name a group its matching pattern lacks; render it empty.
    def __missing__(self, key: str) -> str:
        return ""


def _python_of(command: str) -> str:
    """The interpreter the failed command ran, when the command names one."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words[:3]:
        name = PurePosixPath(word).name
        if re.fullmatch(r"python(\d(\.\d+)?)?", name):
            return word
    return "python3"


def _first_word(command: str) -> str:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    words = [w for w in words if "=" not in w.split("/")[0]]  # skip VAR=value prefixes
    return words[0] if words else ""


def _traceback(text: str) -> dict:
    """The last frame and the exception line of the last Python traceback in ``text``."""
    start = text.rfind("Traceback (most recent call last)")
    if start < 0:
        return {}
    tail = text[start:]
    frames = list(FRAME.finditer(tail))
    found: dict = {}
    if frames:
        last = frames[-1]
        found["frame"] = {
            "file": last["file"],
            "line": int(last["line"]),
            "function": (last["func"] or "").strip(),
        }
    exceptions = list(EXCEPTION.finditer(tail))
    if exceptions:
        found["exception"] = exceptions[-1]["type"].strip()
    return found


def _package_hint(cmd: str) -> str:
    name = PurePosixPath(cmd).name
    if name in PYPI_COMMANDS:
        return f"It comes from PyPI: `python3 -m pip install {PYPI_COMMANDS[name]}` (or pipx)."
    if name in PACKAGE_OF_COMMAND:
        return f"On Debian/Ubuntu it is in the package `{PACKAGE_OF_COMMAND[name]}`: `sudo apt-get install {PACKAGE_OF_COMMAND[name]}`."
    if name:
        return f"Install the program that provides `{name}` (Debian/Ubuntu: `apt-cache search {name}`)."
    return "Install the missing program."


def _fields(groups: dict, command: str, extra: dict) -> _Blank:
    values = _Blank({k: v for k, v in groups.items() if v})
    values["command"] = command
    values["python"] = _python_of(command)
    cmd = values.get("cmd") or _first_word(command)
    values["cmd"] = cmd
    values["package_hint"] = _package_hint(cmd)
    module = values.get("module", "")
    if module:
        top = module.split(".")[0]
        values["package"] = PACKAGE_OF_MODULE.get(module) or PACKAGE_OF_MODULE.get(top) or top
    path = values.get("path", "")
    values["in_path"] = f" in `{path}`" if path else ""
    values["to_path"] = f" (`{path}`)" if path else ""
    values["path_or_PATH"] = shlex.quote(path) if path else "PATH"
    values["parent_or_DOT"] = shlex.quote(str(PurePosixPath(path).parent)) if path else "."
    values["basename_or_NAME"] = PurePosixPath(path).name if path else "NAME"
    port = values.get("port", "")
    values["on_port"] = f" {port}" if port else ""
    values["port_or_N"] = port or "PORT"
    frame = extra.get("frame")
    values["frame"] = f"{frame['file']}:{frame['line']}" if frame else "the program"
    values["frame_file"] = frame["file"] if frame else "the file named last in the traceback"
    values["frame_line"] = str(frame["line"]) if frame else "?"
    values["exception"] = extra.get("exception", "an exception")
    return values


def _evidence(text: str, span: tuple[int, int] | None) -> str:
    if span is None:
        return ""
    start = text.rfind("\n", 0, span[0]) + 1
    end = text.find("\n", span[1])
    return text[start : end if end >= 0 else len(text)].strip()[:300]


def diagnose(command: str, exit_code: int, stderr: str, stdout: str = "") -> dict:
    """Classify one failure; always returns a diagnosis (kind ``unknown`` when no rule fits)."""
    extra = _traceback(stderr) or _traceback(stdout)
    for rule in RULES:
        for text in (stderr, stdout):
            match = next((m for p in rule.get("patterns", []) if (m := re.search(p, text))), None)
            if match:
                break
        if match is None and not (
            rule.get("exit_code_alone") and exit_code in rule.get("exit_codes", [])
        ):
            continue
        values = _fields(match.groupdict() if match else {}, command, extra)
        result = {
            "kind": rule["kind"],
            "cause": rule["cause"].format_map(values),
            "fix": rule["fix"].format_map(values),
            "confidence": rule["confidence"] if match else round(rule["confidence"] * 0.7, 2),
            "evidence": _evidence(text, match.span()) if match else f"exit code {exit_code}",
        }
        return result | extra
    line = next((ln.strip() for ln in stderr.splitlines() if ERRORISH.search(ln)), "")
    line = line or next((ln.strip() for ln in reversed(stderr.splitlines()) if ln.strip()), "")
    return {
        "kind": "unknown",
        "cause": f"No known pattern; the command exited with {exit_code}."
        + (f" Its error output says: {line[:200]}" if line else " It printed nothing on stderr."),
        "fix": "Read the first error line above, run the command again with more output (--verbose, -x), "
        "and check its --help for the arguments it expects.",
        "confidence": 0.2,
        "evidence": line[:300],
    } | extra


def _read(source: str | None, what: str) -> str:
    if source is None:
        return ""
    if source == "-":
        return sys.stdin.buffer.read().decode("utf-8", errors="replace")
    path = Path(source)
    if not path.is_file():
        raise UserError(f"{what} file not found: {source}")
    return path.read_bytes().decode("utf-8", errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog=PROG,
        description="Diagnose a failed command and propose a fix (JSON on stdout).",
    )
    parser.add_argument("--command", required=True, help="the command line that failed")
    parser.add_argument("--exit-code", required=True, type=int, help="its exit status")
    parser.add_argument(
        "--stderr",
        required=True,
        metavar="FILE|-",
        help="file holding its error output, or - for stdin",
    )
    parser.add_argument(
        "--stdout", metavar="FILE", help="optional file holding its standard output"
    )
    args = parser.parse_args(argv)
    try:
        if args.exit_code == 0:
            raise UserError("exit code 0 means the command succeeded: nothing to diagnose")
        if args.stdout == "-" and args.stderr == "-":
            raise UserError("only one of --stderr and --stdout can be read from stdin")
        stderr = _read(args.stderr, "--stderr")
        stdout = _read(args.stdout, "--stdout")
    except UserError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(
        json.dumps(
            diagnose(args.command, args.exit_code, stderr, stdout), ensure_ascii=False, indent=2
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
