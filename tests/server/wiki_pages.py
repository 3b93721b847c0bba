"""Wiki pages written the way ``hearth wiki build`` writes them (the spec's file format), so
the surfaces' tests need no model: the file format is the contract between writer and readers.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from workhearth.config import Config

MODEL = "openai:qwen-plus"
WRITTEN = "2026-11-29T09:30:00Z"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write_page(
    config: Config,
    workspace: Path,
    name: str,
    title: str,
    body: str,
    *,
    sources: dict[str, str] | None = None,
    unreadable: dict[str, str] | None = None,
    links: list[str] | None = None,
    written: str = WRITTEN,
    body_sha256: str | None = None,
) -> Path:
    """``<wiki>/<name>.md``: front matter and ``body``. ``sources``: path -> sha256 (omitted:
    the file's hash in ``workspace`` now); ``body_sha256``: another hash makes it edited."""
    folder = config.paths.project_wiki(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["---", f'title: "{title}"', f"written: {written}", f'model: "{MODEL}"']
    lines.append("sources:" + ("" if sources else " []"))
    for path, sha in (sources or {}).items():
        lines.append(f'  - {{path: "{path}", sha256: {sha}}}')
    lines.append("unreadable:" + ("" if unreadable else " []"))
    for path, reason in (unreadable or {}).items():
        lines.append(f'  - {{path: "{path}", reason: "{reason}"}}')
    if links is not None:
        lines.append(f"links: [{', '.join(links)}]")
    lines += [f"body_sha256: {body_sha256 or sha256_text(body)}", "---", ""]
    page = folder / f"{name}.md"
    page.write_text("\n".join(lines) + body, encoding="utf-8")
    return page


def file_sha(workspace: Path, path: str) -> str:
    return hashlib.sha256((workspace / path).read_bytes()).hexdigest()


def small_wiki(config: Config, workspace: Path, written: str = WRITTEN) -> None:
    """A wiki of a small project, as a build writes it: an overview (no sources, its links),
    a code page (its source changed since: stale), a documents page (one source unreadable,
    edited by the user, so an update waits beside it) and a page the user wrote (with HTML
    the page must not run)."""
    (workspace / "src" / "billing").mkdir(parents=True, exist_ok=True)
    (workspace / "src" / "billing" / "invoice.py").write_text("def total(lines):\n    return 0\n")
    (workspace / "docs").mkdir(exist_ok=True)
    (workspace / "docs" / "guide.md").write_text("# Guide\n\nHow refunds work.\n")
    (workspace / "docs" / "scan.pdf").write_text("a scanner's text file, not a PDF\n")
    invoice_then = sha256_text("def total(lines):\n    return sum(lines)\n")
    write_page(
        config,
        workspace,
        "overview",
        "Overview",
        "# Overview\n\nA billing service. Invoices are in [src/billing](src-billing.md); "
        "the refund guide is in [docs](docs.md).\n\n"
        "| Part | Where |\n|---|---|\n| Invoices | `src/billing` |\n| Guide | `docs` |\n",
        links=["docs", "notes", "src-billing"],
        written=written,
    )
    write_page(
        config,
        workspace,
        "src-billing",
        "src/billing",
        "# src/billing\n\nThe `total` function sums an invoice's lines "
        "(`src/billing/invoice.py:1`).\n\n## Sources\n"
        "- [src/billing/invoice.py](file:///w/src/billing/invoice.py)\n",
        sources={"src/billing/invoice.py": invoice_then},
        written=written,
    )
    write_page(
        config,
        workspace,
        "docs",
        "docs",
        "# docs\n\nThe guide explains how refunds work: a refund reverses an invoice "
        "(`docs/guide.md:3`). 退款会冲销一张发票。\n",
        # Why scan.pdf in both lists: its bytes have a hash; their text could not be read.
        sources={
            "docs/guide.md": file_sha(workspace, "docs/guide.md"),
            "docs/scan.pdf": file_sha(workspace, "docs/scan.pdf"),
        },
        unreadable={"docs/scan.pdf": "not a PDF (no %PDF header)"},
        written=written,
        body_sha256=sha256_text("# docs\n\nwhat hearth wrote before the user's edit\n"),
    )
    (config.paths.project_wiki(workspace) / "docs.update.md").write_text("# docs\n\nnewer\n")
    write_page(
        config,
        workspace,
        "notes",
        "notes",
        "# notes\n\nThe user rewrote this: payroll runs on Fridays.\n\n"
        '<img src="x" onerror="window.pwned = 1"> <script>window.pwned = 2</script>\n',
        body_sha256=sha256_text("# notes\n\nwhat hearth wrote\n"),
        written=written,
    )
