"""Hearth checks the office files a tool call produced, before the model sees the result.

After each call with side effects, every .docx/.xlsx/.pptx/.pdf it created or modified
(agent/changes.py says which) is checked by :mod:`workhearth.check`, here in hearth's
process and outside any sandbox: skill scripts never call hearth, and a check the
model ran itself would be its own word. The verdict is added to the tool's result, so
the model reads "FAILS: shows #DIV/0! (Sheet1!D4)" before it reports success, and the
receipt (with its thumbnails) is kept in the session's ``receipts/`` folder, sealed
when the session is encrypted (DESIGN §2).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Why these two modules only: the readers (lxml, pypdf, openpyxl, python-pptx) load
# when a call produced an office file, not with every agent.
from workhearth.check.receipt import FORMATS, Receipt
from workhearth.check.render import Tools, work_dir
from workhearth.errors import HearthError

if TYPE_CHECKING:
    from workhearth.agent.changes import Change
    from workhearth.agent.tools.context import ToolContext, ToolResult
    from workhearth.sessions.session import Session

# Why a cap: a call that unpacked a hundred documents must not launch LibreOffice a
# hundred times before the model hears back; the rest are named as not checked.
MAX_PER_CALL = 5
MAX_BYTES = 200 * 1024 * 1024


class OfficeChecker:
    """Checks produced office files for one session (one per :class:`ToolContext`)."""

    def __init__(self, tools: Tools) -> None:
        self.tools = tools

    def after_call(
        self, ctx: ToolContext, result: ToolResult, changes: Sequence[Change]
    ) -> ToolResult:
        produced = [
            c.path
            for c in changes
            if c.kind != "deleted" and c.entries is None and Path(c.path).suffix.lower() in FORMATS
        ]
        if not produced:
            return result
        lines = []
        for shown in produced[:MAX_PER_CALL]:
            lines.append(self._check_one(ctx, shown))
        for shown in produced[MAX_PER_CALL:]:
            lines.append(
                f"{shown}: not checked (more than {MAX_PER_CALL} office files in one call)"
            )
        note = "\n".join(f"[hearth check] {line}" for line in lines)
        return dataclasses.replace(result, content=f"{result.content}\n\n{note}")

    def _check_one(self, ctx: ToolContext, shown: str) -> str:
        from workhearth.check import check_file

        try:
            with work_dir(self.tools, "receipt-") as tmp:
                # Why through the tool's SafeFS into a private copy: a file the model
                # swapped for a link out of the authorized folders is refused, never read,
                # rendered or kept in the session.
                if ctx.fs.stat(shown).size > MAX_BYTES:
                    return f"{shown}: not checked (larger than {MAX_BYTES >> 20} MB)"
                copy = tmp / f"file{Path(shown).suffix.lower()}"
                copy.write_bytes(ctx.fs.read_bytes(shown))
                receipt = check_file(copy, self.tools, tmp)
                receipt.path = shown
                self._keep(ctx, receipt, shown)
        except (HearthError, OSError) as exc:
            return f"{shown}: could not be checked ({exc})"
        return f"{shown}: {receipt.summary()}"

    def _keep(self, ctx: ToolContext, receipt: Receipt, shown: str) -> None:
        """The receipt and its thumbnails into the session (thumbnails named by sha256)."""
        session = ctx.session
        kept_thumbs = []
        for n, thumb in enumerate(receipt.thumbnails, 1):
            name = f"{receipt.sha256}-{n}.png"
            session.write_receipt_file(name, Path(thumb).read_bytes())
            kept_thumbs.append(name)
        data = receipt.to_json()
        data.update(
            path=shown, thumbnails=kept_thumbs, call_id=ctx.call_id, tool_session=session.id
        )
        body = json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")
        session.write_receipt_file(f"{receipt.sha256}.json", body)


def kept_receipts(session: Session) -> list[dict[str, Any]]:
    """Every receipt kept in ``session`` (decoded), oldest first; a damaged one skipped."""
    out: list[dict[str, Any]] = []
    for name in session.receipt_names():
        try:
            out.append(json.loads(session.read_receipt_file(name)))
        except (OSError, ValueError, HearthError):
            continue
    return out


def failing_products(session: Session, workspace: Path) -> list[dict[str, Any]]:
    """The produced files that are still there, unchanged since a receipt failed them:
    what makes a task end ``failed``. A file rewritten since (its latest receipt) or
    deleted since does not count against the task.

    Each file is read through the tools' confined reads (the session's authorized
    folders, hearth's home refused), never by a plain open: a file swapped since for a
    link out of those folders is not read, and counts as failing, saying so."""
    from workhearth.agent.safefs import PathDenied, SafeFS
    from workhearth.agent.workspace import Workspaces
    from workhearth.check.checker import sha256_stream

    latest: dict[str, dict[str, Any]] = {}
    for receipt in kept_receipts(session):
        latest[receipt["path"]] = receipt
    pending = {shown: r for shown, r in latest.items() if not r.get("ok")}
    if not pending:
        return []
    workspaces = Workspaces(session.config.paths, workspace)
    roots = workspaces.roots()
    if not roots:
        return []  # the workspace is gone, and the files with it
    fs = SafeFS(roots, protected=workspaces.protected())
    failing = []
    for shown, receipt in pending.items():
        try:
            with fs.open_read(shown) as fh:
                digest = sha256_stream(fh)
        except PathDenied:
            failing.append({**receipt, "problems": [_LINKED_OUT]})
            continue
        except (HearthError, OSError):
            continue  # gone since (or a folder now): nothing the user will open
        if digest == receipt.get("sha256"):
            failing.append(receipt)
    return failing


# Why a problem of its own: the file the user will open is now something hearth may not
# read; its old receipt no longer speaks for it, and the task cannot say it is done.
_LINKED_OUT: dict[str, Any] = {
    "kind": "opens",
    "where": "",
    "message": "is now a link out of the authorized folders; hearth did not read it",
    "code": "linked_out",
    "params": {},
}
