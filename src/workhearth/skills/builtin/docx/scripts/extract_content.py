"""Read a .docx: text, headings (with levels), lists, tables (as rows), images → JSON or Markdown.

Usage: python scripts/extract_content.py INPUT.docx [-o OUT.json|OUT.md] [--images-dir DIR]

Blocks come out in document order. Images are saved only when --images-dir is given
(image1.png, image2.jpeg, … in order of first appearance).
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
    result = extract(document, src)
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
        f"{len(result['images'])} images)"
    )
    return 0


def extract(document: Any, src: Path) -> dict[str, Any]:
    from docx.oxml.ns import qn
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    blocks: list[dict[str, Any]] = []
    headings: list[dict[str, Any]] = []
    tables: list[list[list[str]]] = []
    images: list[dict[str, Any]] = []
    seen_images: dict[str, int] = {}
    formats = _list_formats(document)

    for item in document.iter_inner_content():
        if isinstance(item, Table):
            rows = _rows(item)
            tables.append(rows)
            blocks.append({"type": "table", "rows": rows})
            continue
        assert isinstance(item, Paragraph)
        for blip in item._p.iter(qn("a:blip")):
            r_id = blip.get(qn("r:embed"))
            if r_id and r_id not in seen_images and r_id in document.part.rels:
                seen_images[r_id] = len(images)
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
        text = item.text
        if not text.strip():
            continue
        level = _heading_level(item)
        if level is not None:
            headings.append({"level": level, "text": text})
            blocks.append({"type": "heading", "level": level, "text": text})
            continue
        if (item.style.name if item.style is not None else "") in CODE_STYLES:
            blocks.append({"type": "code", "text": text})
            continue
        num = item._p.pPr.numPr if item._p.pPr is not None else None
        if num is not None and num.numId is not None:
            ilvl = num.ilvl.val if num.ilvl is not None else 0
            ordered = formats.get((num.numId.val, ilvl), "bullet") != "bullet"
            blocks.append({"type": "list_item", "level": ilvl, "ordered": ordered, "text": text})
            continue
        blocks.append({"type": "paragraph", "text": text})

    full_text = "\n".join(
        b["text"] if "text" in b else "\n".join("\t".join(r) for r in b["rows"])
        for b in blocks
        if b["type"] != "image"
    )
    return {
        "source": str(src),
        "title": document.core_properties.title or None,
        "headings": headings,
        "tables": tables,
        "images": images,
        "blocks": blocks,
        "text": full_text,
    }


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


def _rows(table: Any) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        last = None
        for cell in row.cells:
            # Why: a horizontally merged cell appears once per grid column; keep it once.
            if cell._tc is last:
                continue
            last = cell._tc
            cells.append(cell.text)
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
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.exit(run(NAME, main))
