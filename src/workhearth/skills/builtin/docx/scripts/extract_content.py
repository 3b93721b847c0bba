"""Read a .docx: text, headings (with levels), lists, tables (as rows), images, tracked
changes and comments → JSON or Markdown.

Usage: PYTHON SKILL_DIR/scripts/extract_content.py INPUT.docx [-o OUT.json|OUT.md]
       [--changes accept|reject] [--images-dir DIR]

Blocks come out in document order, their text read as if every tracked change were
accepted (default) or rejected (--changes reject); the changes themselves (insert or
delete, author, date, text) and the comments (author, text, the text they mark) are
listed after the blocks. Images are saved only when --images-dir is given (image1.png,
image2.jpeg, … in order of first appearance).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from _docx_common import input_file, open_docx, output_file

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_path, run

NAME = "extract_content.py"
CODE_STYLES = ("Code Block", "Code", "HTML Preformatted", "Source Code")
HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*(\d)$", re.IGNORECASE)


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(
        prog=NAME, description="Extract text, headings, tables and images from a .docx."
    )
    p.add_argument("input", help="the .docx to read")
    p.add_argument("-o", "--output", help="file to write (.json or .md); default: print to stdout")
    p.add_argument(
        "--format",
        choices=("json", "markdown"),
        help="output format (default: from the -o suffix, else json)",
    )
    p.add_argument(
        "--changes",
        choices=("accept", "reject"),
        default="accept",
        help="read tracked changes as accepted (default) or rejected; both are listed anyway",
    )
    p.add_argument("--images-dir", help="folder to save the embedded images in (created if needed)")
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT and images if they exist")
    args = p.parse_args(argv)

    src = input_file(args.input, (".docx", ".docm", ".dotx"), "input")
    fmt = args.format or (
        "markdown" if args.output and args.output.lower().endswith(".md") else "json"
    )
    out = None
    if args.output:
        out = output_file(args.output, (".json", ".md", ".txt"), force=args.force, inputs=(src,))
    images_dir = Path(args.images_dir) if args.images_dir else None
    if images_dir is not None and images_dir.exists() and not images_dir.is_dir():
        raise UserError(f"--images-dir is not a folder: {images_dir}")

    document = open_docx(src)
    result = extract(document, src, args.changes)
    if images_dir is not None:
        _save_images(document, result, images_dir, force=args.force)
    text = (
        to_markdown(result)
        if fmt == "markdown"
        else json.dumps(result, ensure_ascii=False, indent=2)
    )
    if out is None:
        sys.stdout.write(text + "\n")
        return 0
    with atomic_path(out) as tmp:
        tmp.write_text(text + "\n", encoding="utf-8")
    print(
        f"wrote {out} ({len(result['headings'])} headings, {len(result['tables'])} tables, "
        f"{len(result['images'])} images, {len(result['changes'])} tracked changes, "
        f"{len(result['comments'])} comments)"
    )
    return 0


def extract(document: Any, src: Path, view: str = "accept") -> dict[str, Any]:
    """Blocks in document order, read with every tracked change accepted or rejected (``view``)."""
    from _docx_revisions import changes, comments
    from docx.table import Table

    blocks: list[dict[str, Any]] = []
    headings: list[dict[str, Any]] = []
    tables: list[list[list[str]]] = []
    images: list[dict[str, Any]] = []
    formats = _list_formats(document)
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = _rows(item, view)
            tables.append(rows)
            blocks.append({"type": "table", "rows": rows})
            continue
        blocks += _image_blocks(document, item, images)
        block = _paragraph_block(item, formats, view)
        if block is None:
            continue
        blocks.append(block)
        if block["type"] == "heading":
            headings.append({"level": block["level"], "text": block["text"]})

    full_text = "\n".join(
        b["text"] if "text" in b else "\n".join("\t".join(r) for r in b["rows"])
        for b in blocks
        if b["type"] != "image"
    )
    return {
        "source": str(src),
        "title": document.core_properties.title or None,
        "changes_view": view,
        "headings": headings,
        "tables": tables,
        "images": images,
        "blocks": blocks,
        "text": full_text,
        "changes": changes(document.element.body),
        "comments": comments(document, view),
    }


def _image_blocks(document: Any, para: Any, images: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Image blocks for the pictures first seen in ``para``; ``images`` grows with them."""
    from docx.oxml.ns import qn

    seen = {image["rel_id"] for image in images}
    blocks = []
    for blip in para._p.iter(qn("a:blip")):
        r_id = blip.get(qn("r:embed"))
        if not r_id or r_id in seen or r_id not in document.part.rels:
            continue
        seen.add(r_id)
        part = document.part.rels[r_id].target_part
        alt = _alt_text(blip)
        images.append(
            {
                "index": len(images) + 1,
                "rel_id": r_id,
                "content_type": part.content_type,
                "alt": alt,
            }
        )
        blocks.append({"type": "image", "index": len(images), "alt": alt})
    return blocks


def _paragraph_block(
    para: Any, formats: dict[tuple[int, int], str], view: str
) -> dict[str, Any] | None:
    """A heading, code, list item or paragraph block; None for an empty paragraph."""
    from _docx_revisions import paragraph_text

    text = paragraph_text(para._p, view)
    if not text.strip():
        return None
    level = _heading_level(para)
    if level is not None:
        return {"type": "heading", "level": level, "text": text}
    if (para.style.name if para.style is not None else "") in CODE_STYLES:
        return {"type": "code", "text": text}
    num = para._p.pPr.numPr if para._p.pPr is not None else None
    if num is not None and num.numId is not None:
        ilvl = num.ilvl.val if num.ilvl is not None else 0
        ordered = formats.get((num.numId.val, ilvl), "bullet") != "bullet"
        return {"type": "list_item", "level": ilvl, "ordered": ordered, "text": text}
    return {"type": "paragraph", "text": text}


def _heading_level(para: Any) -> int | None:
    name = para.style.name if para.style is not None else ""
    if name == "Title":
        return 0
    m = HEADING_STYLE.match(name or "")
    if m:
        return int(m.group(1))
    ppr = para._p.pPr
    # Why: some documents mark headings only by outline level, with a custom style.
    if ppr is not None:
        from docx.oxml.ns import qn

        outline = ppr.find(qn("w:outlineLvl"))
        if outline is not None and outline.get(qn("w:val"), "9").isdigit():
            level = int(outline.get(qn("w:val"))) + 1
            return level if level <= 9 else None
    return None


def _rows(table: Any, view: str) -> list[list[str]]:
    from _docx_revisions import cell_text, row_hidden

    rows = []
    for row in table.rows:
        if row_hidden(row._tr, view):
            continue
        cells: list[str] = []
        last = None
        for cell in row.cells:
            # Why: a horizontally merged cell appears once per grid column; keep it once.
            if cell._tc is last:
                continue
            last = cell._tc
            cells.append(cell_text(cell._tc, view))
        rows.append(cells)
    return rows


def _alt_text(blip: Any) -> str:
    from docx.oxml.ns import qn

    node = blip
    while node is not None and node.tag not in (qn("wp:inline"), qn("wp:anchor")):
        node = node.getparent()
    if node is None:
        return ""
    doc_pr = node.find(qn("wp:docPr"))
    return (doc_pr.get("descr") or "") if doc_pr is not None else ""


def _list_formats(document: Any) -> dict[tuple[int, int], str]:
    """(numId, level) → numFmt, so lists read back as numbered or bulleted."""
    from docx.oxml.ns import qn

    try:
        numbering = document.part.numbering_part.element
    except (KeyError, NotImplementedError):
        return {}
    abstract: dict[str, dict[int, str]] = {}
    for a in numbering.findall(qn("w:abstractNum")):
        levels = {}
        for lvl in a.findall(qn("w:lvl")):
            fmt = lvl.find(qn("w:numFmt"))
            levels[int(lvl.get(qn("w:ilvl"), "0"))] = (
                fmt.get(qn("w:val")) if fmt is not None else "bullet"
            )
        abstract[a.get(qn("w:abstractNumId"))] = levels
    out: dict[tuple[int, int], str] = {}
    for num in numbering.findall(qn("w:num")):
        ref = num.find(qn("w:abstractNumId"))
        if ref is None:
            continue
        for ilvl, fmt in abstract.get(ref.get(qn("w:val")), {}).items():
            out[(int(num.get(qn("w:numId"))), ilvl)] = fmt
    return out


def _save_images(document: Any, result: dict[str, Any], folder: Path, *, force: bool) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    planned = []
    for image in result["images"]:
        part = document.part.rels[image["rel_id"]].target_part
        ext = Path(str(part.partname)).suffix.lower() or ".bin"
        target = folder / f"image{image['index']}{ext}"
        if target.exists() and not force:
            raise UserError(f"image exists (use --force to overwrite): {target}")
        planned.append((image, part, target))
    for image, part, target in planned:
        with atomic_path(target) as tmp:
            tmp.write_bytes(part.blob)
        image["path"] = str(target)
    for block in result["blocks"]:
        if block["type"] == "image":
            block["path"] = result["images"][block["index"] - 1].get("path")


def to_markdown(result: dict[str, Any]) -> str:
    lines: list[str] = []
    previous: dict[str, Any] = {}
    for block in result["blocks"]:
        kind = block["type"]
        if previous.get("type") == "list_item" and (
            kind != "list_item" or (block["level"] == 0 and block["ordered"] != previous["ordered"])
        ):
            lines.append("")  # Why: a blank line ends a list (or starts a list of the other kind)
        previous = block
        if kind == "heading":
            lines += [f"{'#' * max(1, block['level'])} {block['text']}", ""]
        elif kind == "code":
            lines += ["```", block["text"], "```", ""]
        elif kind == "paragraph":
            lines += [block["text"], ""]
        elif kind == "list_item":
            marker = "1." if block["ordered"] else "-"
            lines.append(f"{'   ' * block['level']}{marker} {block['text']}")
        elif kind == "table":
            rows = block["rows"]
            width = max(len(r) for r in rows) if rows else 0
            for n, row in enumerate(rows):
                cells = [c.replace("|", "\\|").replace("\n", " ") for c in row]
                cells += [""] * (width - len(cells))
                lines.append("| " + " | ".join(cells) + " |")
                if n == 0:
                    lines.append("|" + "---|" * width)
            lines.append("")
        elif kind == "image":
            lines += [
                f"![{block['alt']}]({block.get('path') or 'image' + str(block['index'])})",
                "",
            ]
    review = _review_lines(result)
    return "\n".join(lines).rstrip() + ("\n\n" + "\n".join(review) if review else "") + "\n"


def _review_lines(result: dict[str, Any]) -> list[str]:
    """The tracked changes and comments as Markdown lists (nothing when there are none)."""
    lines: list[str] = []
    if result["changes"]:
        lines += [f"## Tracked changes (text above: {result['changes_view']}ed)", ""]
        for c in result["changes"]:
            row = " row" if c["of"] == "row" else ""
            when = f" {c['date']}" if c["date"] else ""
            lines.append(f"- {c['kind']}{row} by {c['author'] or '?'}{when}: {c['text']!r}")
    if result["comments"]:
        lines += ["", "## Comments", ""] if lines else ["## Comments", ""]
        for c in result["comments"]:
            lines.append(f"- {c['author'] or '?'} on {c['anchor']!r}: {c['text']}")
    return lines


if __name__ == "__main__":
    sys.exit(run(NAME, main))
