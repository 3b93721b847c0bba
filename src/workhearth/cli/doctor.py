"""``hearth doctor``: what this install sees, with no model or server needed."""

from __future__ import annotations

import os
import shutil
import sys
from typing import Annotated

import typer

from workhearth import __version__
from workhearth.cli.context import hearth
from workhearth.cli.output import print_json


def doctor(json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Check the install: home folder, config, sessions, encryption, shell, sandbox."""
    from workhearth.agent.approval import Policy
    from workhearth.agent.tools.shell import quest_hidden

    wh = hearth()
    cfg = wh.config
    # Why: [quest] is read when a run starts; a mistake in it is reported here too.
    policy = Policy.from_config(cfg.raw, str(cfg.paths.config_file))
    home = cfg.home
    sessions = wh.sessions.list(limit=0)
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
        "config_file": str(cfg.paths.config_file) if cfg.paths.config_file.is_file() else None,
        "workspace": str(wh.workspace),
        "fsync": cfg.fsync,
        "sessions": len(sessions),
        "encryption": {"new_sessions": enc.enabled, "key_source": key_source},
        "model": cfg.models.default or next(iter(cfg.models.entries), None),
        "shell": os.environ.get("SHELL"),
        "sandbox": shutil.which("bwrap"),
        "quest_hides": [str(p) for p in quest_hidden(cfg.paths, policy, os.environ)],
    }
    if json:
        print_json(report)
        return
    print(f"workhearth {report['version']} (Python {report['python']})")
    print(f"home        {home}{'' if report['home_exists'] else ' (created on first use)'}")
    print(f"config      {report['config_file'] or 'none (embedded defaults)'}")
    print(f"workspace   {report['workspace']}")
    print(f"sessions    {report['sessions']} (fsync policy: {cfg.fsync})")
    print(
        f"encryption  {'on' if enc.enabled else 'off'}" + (f" ({key_source})" if key_source else "")
    )
    print(
        f"model       {report['model'] or 'none configured (memory and sessions work without one)'}"
    )
    print(f"sandbox     {report['sandbox'] or 'bubblewrap not installed'}")
    print(f"quest hides {', '.join(report['quest_hides'])} (where present)")
