"""``hearth doctor``: what this install sees, with no model or server needed."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from workhearth import __version__
from workhearth.cli.context import hearth
from workhearth.cli.output import JsonOpt, print_json
from workhearth.config import Config, default_home, load_config
from workhearth.errors import ConfigError

if TYPE_CHECKING:
    from workhearth.app import Workhearth

# Why: below this a long session or a memory index can fill the disk mid-write.
LOW_SPACE_BYTES = 100 * 1024 * 1024


def doctor(json: JsonOpt = False) -> None:
    """Check the install: home folder, config, sessions, encryption, shell, sandbox, browser."""
    from workhearth.agent.approval import Policy
    from workhearth.agent.browser.finder import browser_status
    from workhearth.agent.tools.shell import quest_hidden

    config_error: str | None = None
    try:
        wh = hearth()
    except ConfigError as exc:
        # Why: doctor is what a person runs when something is wrong; a broken config
        # is reported on its line while everything else is still checked.
        config_error = str(exc)
        wh = _without_config_file()
    cfg = wh.config
    try:
        # Why: [quest] is read when a run starts; a mistake in it is reported here too.
        policy = Policy.from_config(cfg.raw, str(cfg.paths.config_file))
    except ConfigError as exc:
        config_error = config_error or str(exc)
        policy = Policy()
    home = cfg.home
    storage = _storage(home)
    enc = cfg.encryption
    key_source = (
        "passphrase"
        if enc.passphrase
        else "key file"
        if enc.key_file
        else "keyring"
        if enc.keyring_service
        else None
    )
    report = {
        "version": __version__,
        "python": sys.version.split()[0],
        "home": str(home),
        "home_exists": home.is_dir(),
        "home_writable": storage["writable"],
        "home_free_bytes": storage["free"],
        "storage": storage["line"],
        "config_file": str(cfg.paths.config_file) if cfg.paths.config_file.is_file() else None,
        "config_error": config_error,
        "workspace": str(wh.workspace),
        "fsync": cfg.fsync,
        "sessions": wh.sessions.count(),
        "memory_skipped": wh.memory.skipped_files(),
        "encryption": {"new_sessions": enc.enabled, "key_source": key_source},
        "model": cfg.models.default or next(iter(cfg.models.entries), None),
        "shell": os.environ.get("SHELL"),
        "sandbox": shutil.which("bwrap"),
        "quest_hides": [str(p) for p in quest_hidden(cfg.paths, policy, os.environ)],
        "office_check": _office_check(),
        "browser": browser_status(cfg.browser, os.environ),
    }
    if json:
        print_json(report)
    else:
        _print(report, cfg)
    if config_error:
        print(f"hearth: the config is broken: {config_error}", file=sys.stderr)
        raise typer.Exit(1)


def _print(report: dict[str, Any], cfg: Config) -> None:
    home = cfg.home
    enc = cfg.encryption
    key_source = report["encryption"]["key_source"]
    print(f"workhearth {report['version']} (Python {report['python']})")
    print(f"home        {home}{'' if report['home_exists'] else ' (created on first use)'}")
    print(f"storage     {report['storage']}")
    if report["config_error"]:
        print(f"config      BROKEN: {report['config_error']}")
    else:
        print(f"config      {report['config_file'] or 'none (embedded defaults)'}")
    print(f"workspace   {report['workspace']}")
    print(f"sessions    {report['sessions']} (fsync policy: {cfg.fsync})")
    skipped = report["memory_skipped"]
    print(f"memory      {'not text, skipped: ' + ', '.join(skipped) if skipped else 'ok'}")
    print(
        f"encryption  {'on' if enc.enabled else 'off'}" + (f" ({key_source})" if key_source else "")
    )
    print(
        f"model       {report['model'] or 'none configured (memory and sessions work without one)'}"
    )
    print(f"sandbox     {report['sandbox'] or 'bubblewrap not installed'}")
    print(f"quest hides {', '.join(report['quest_hides'])} (where present)")
    office = report["office_check"]
    missing = [f"{m['what']} ({m['install']})" for m in office["missing"]]
    print(f"office check {'complete' if not missing else 'partial: install ' + '; '.join(missing)}")
    print(f"browser     {report['browser']['line']}")


# Why: hearth check runs what it can without these and lists the rest as skipped; the
# user learns here what to install for a complete receipt.
_OFFICE_TOOLS = (
    ("soffice", "LibreOffice: opens, renders and recalculates office files",
     "apt-get install libreoffice-writer libreoffice-calc libreoffice-impress"),
    ("pdftoppm", "poppler: thumbnails", "apt-get install poppler-utils"),
    ("fc-list", "fontconfig: which characters a font can draw", "apt-get install fontconfig"),
)  # fmt: skip


def _office_check() -> dict[str, Any]:
    found, missing = {}, []
    for program, what, install in _OFFICE_TOOLS:
        where = shutil.which(program) or (
            shutil.which("libreoffice") if program == "soffice" else None
        )
        found[program] = where
        if where is None:
            missing.append({"program": program, "what": what, "install": install})
    return {"found": found, "missing": missing}


def _without_config_file() -> Workhearth:
    """The install as it is without ``config.toml`` (environment variables still apply)."""
    from workhearth.app import Workhearth

    try:
        config = load_config(os.environ, read_file=False)
    except ConfigError:
        config = Config(home=default_home(os.environ))
    return Workhearth(config=config, workspace=os.getcwd())


def _storage(home: Path) -> dict[str, Any]:
    """Whether hearth can save under ``home`` and how much room is left, in one line.

    Reading never needs to write, so a read-only or full home is reported, not fatal.
    """
    probe = home
    while not probe.is_dir() and probe != probe.parent:
        probe = probe.parent
    free: int | None = None
    try:
        free = shutil.disk_usage(probe).free
    except OSError:
        pass
    problem = None
    try:
        fd, tmp = tempfile.mkstemp(dir=probe, prefix=".hearth-doctor-")
        try:
            os.write(fd, b"x")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(tmp)
    except OSError as exc:
        problem = exc.strerror or str(exc)
    room = "" if free is None else f", {_size(free)} free"
    if problem:
        line = f"NOT WRITABLE ({problem}{room}): reading works, nothing new can be saved"
    elif free is not None and free < LOW_SPACE_BYTES:
        line = f"writable, LOW SPACE: only {_size(free)} free"
    else:
        line = "writable" + room
    return {"writable": problem is None, "free": free, "line": line}


def _size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n:.1f} TB"
