"""Turn a Markdown file into a PDF whose text (Chinese included) is visible and extractable.

Headings, paragraphs (bold, italic, inline code), bullet and numbered lists, tables,
code blocks and rules. A CJK font is looked up on this machine (or given with --font)
and embedded as a subset; without one, Chinese text falls back to a non-embedded
Adobe CID font (extractable, but its look depends on the viewer) with a warning.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pdfio  # type: ignore[import-not-found]

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_write, check_output, warn

PROG = "md_to_pdf.py"
CJK_RE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")

# Why: well-known places first, so the result does not depend on fontconfig's mood;
# TrueType-outline fonts (wqy, Droid, Windows) and CFF ones (Noto CJK) both work.
FONT_CANDIDATES = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/truetype/arphic/uming.ttc",
    "C:/Windows/Fonts/msyh.ttc",
    "C:/Windows/Fonts/simhei.ttf",
    "C:/Windows/Fonts/simsun.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "/System/Library/Fonts/STHeiti Light.ttc",
    "/System/Library/Fonts/Hiragino Sans GB.ttc",
    "/Library/Fonts/Arial Unicode.ttf",
)


# ---------------------------------------------------------------- Markdown → blocks


@dataclass
class Run:
    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False


@dataclass
class Block:
    kind: str  # heading | para | item | code | table | rule
    level: int = 0  # heading level, or list depth
    marker: str = ""  # list marker ("•", "3.")
    runs: list[Run] = field(default_factory=list)
    text: str = ""  # code block text
    rows: list[list[str]] = field(default_factory=list)  # table: header first


def _inline_runs(token) -> list[Run]:
    runs: list[Run] = []
    bold = italic = False
    for child in token.children or []:
        t = child.type
        if t == "strong_open":
            bold = True
        elif t == "strong_close":
            bold = False
        elif t == "em_open":
            italic = True
        elif t == "em_close":
            italic = False
        elif t == "code_inline":
            runs.append(Run(child.content, bold, italic, code=True))
        elif t in ("softbreak", "hardbreak"):
            runs.append(Run("\n" if t == "hardbreak" else " ", bold, italic))
        elif t == "image":
            runs.append(Run(f"[{child.content or 'image'}]", bold, italic))
        elif child.content:
            runs.append(Run(child.content, bold, italic))
    return runs


def parse_markdown(text: str) -> list[Block]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(text)
    blocks: list[Block] = []
    lists: list[list] = []  # stack of [ordered, next_number]
    pending: Block | None = None  # the heading/paragraph/item whose inline comes next
    table: list[list[str]] | None = None
    for i, tok in enumerate(tokens):
        t = tok.type
        if t == "heading_open":
            pending = Block("heading", level=int(tok.tag[1]))
        elif t == "paragraph_open":
            if lists and tokens[i - 1].type == "list_item_open":
                ordered, number = lists[-1]
                marker = f"{number}." if ordered else "•"
                lists[-1][1] += 1
                pending = Block("item", level=len(lists), marker=marker)
            else:
                pending = Block("para", level=len(lists))
        elif t == "inline" and table is not None:
            table[-1].append("".join(r.text for r in _inline_runs(tok)))
        elif t == "inline" and pending is not None:
            pending.runs = _inline_runs(tok)
            blocks.append(pending)
            pending = None
        elif t in ("bullet_list_open", "ordered_list_open"):
            lists.append([t == "ordered_list_open", int(tok.attrGet("start") or 1)])
        elif t in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif t in ("fence", "code_block"):
            blocks.append(Block("code", level=len(lists), text=tok.content.rstrip("\n")))
        elif t == "hr":
            blocks.append(Block("rule"))
        elif t == "table_open":
            table = []
        elif t == "tr_open" and table is not None:
            table.append([])
        elif t == "table_close" and table is not None:
            width = max(len(r) for r in table)
            blocks.append(Block("table", rows=[r + [""] * (width - len(r)) for r in table]))
            table = None
        elif t == "html_block":
            blocks.append(Block("para", runs=[Run(tok.content.strip())]))
    return blocks


# ---------------------------------------------------------------- fonts


def find_cjk_font() -> Path | None:
    for candidate in FONT_CANDIDATES:
        if Path(candidate).is_file():
            return Path(candidate)
    if shutil.which("fc-list"):
        try:
            out = subprocess.run(
                ["fc-list", ":lang=zh", "file"], capture_output=True, text=True, timeout=10
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        files = sorted(line.split(":")[0].strip() for line in out.splitlines() if line.strip())
        # Why: prefer regular weights over Bold/Light when fontconfig lists several.
        files.sort(key=lambda f: ("Bold" in f or "Light" in f or "Thin" in f, f))
        for f in files:
            if f.lower().endswith((".ttf", ".otf", ".ttc")) and Path(f).is_file():
                return Path(f)
    return None


def collection_index(path: Path, *, mono: bool = False) -> int | None:
    """Pick the Simplified Chinese face of a font collection (.ttc), else the first.

    With mono=True: the monospaced Chinese face, or None when the collection has none.
    """
    if path.suffix.lower() != ".ttc":
        return None if mono else 0
    from fontTools.ttLib import TTCollection  # type: ignore[import-untyped]

    collection = TTCollection(str(path), lazy=True)
    names = [str(font["name"].getDebugName(4) or "") for font in collection.fonts]
    for wanted in (" SC", "GB", " CN", "Hans", "Micro Hei", "Zen Hei", "YaHei", "PingFang SC"):
        for i, name in enumerate(names):
            if wanted in name and ("Mono" in name) == mono:
                return i
    return None if mono else 0


def bold_sibling(path: Path) -> Path | None:
    for old, new in (("-Regular", "-Bold"), ("Regular", "Bold"), ("msyh.", "msyhbd.")):
        if old in path.name:
            sibling = path.with_name(path.name.replace(old, new))
            if sibling.is_file():
                return sibling
    return None


# ---------------------------------------------------------------- rendering with fpdf2

SIZES = {1: 20, 2: 16, 3: 14, 4: 12.5, 5: 12, 6: 11.5}
BODY = 11


def render_fpdf(blocks: list[Block], font: Path | None, title: str) -> bytes:
    import logging

    from fpdf import FPDF
    from fpdf.fonts import FontFace

    # Why: fpdf2 logs subsetting details at WARNING for some fonts; the script prints one line.
    logging.getLogger("fpdf").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)

    pdf = FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_margins(20, 18, 20)
    pdf.set_auto_page_break(True, margin=18)
    if font is not None:
        index = collection_index(font) or 0
        bold = bold_sibling(font) or font
        bold_index = collection_index(bold) or 0 if bold != font else index
        family, mono = "body", "body"
        mono_index = collection_index(font, mono=True)
        if mono_index is not None:
            mono = "mono"
            pdf.add_font(mono, "", str(font), collection_font_number=mono_index)
        for style, path, idx in (("", font, index), ("B", bold, bold_index)):
            pdf.add_font(family, style, str(path), collection_font_number=idx)
        # Why: CJK fonts have no italics; italic text keeps the upright face.
        pdf.add_font(family, "I", str(font), collection_font_number=index)
        pdf.add_font(family, "BI", str(bold), collection_font_number=bold_index)
    else:
        family, mono = "helvetica", "courier"
    pdf.add_page()
    width = pdf.epw

    def write_runs(runs: list[Run], size: float, base_bold: bool = False) -> None:
        line_h = size * 0.55
        for run in runs:
            style = ("B" if run.bold or base_bold else "") + ("I" if run.italic else "")
            if run.code:
                pdf.set_font(mono, "", size * 0.95)
                pdf.set_text_color(150, 30, 30)
            else:
                pdf.set_font(family, style, size)
                pdf.set_text_color(0, 0, 0)
            pdf.write(line_h, run.text)
        pdf.set_text_color(0, 0, 0)
        pdf.ln(line_h)

    for block in blocks:
        indent = 6 * max(block.level - (1 if block.kind == "item" else 0), 0)
        pdf.set_x(pdf.l_margin)
        if block.kind == "heading":
            size = SIZES.get(block.level, BODY)
            pdf.ln(size * 0.3)
            write_runs(block.runs, size, base_bold=True)
            if block.level <= 2:
                y = pdf.get_y() + 1
                pdf.set_draw_color(180, 180, 180)
                pdf.line(pdf.l_margin, y, pdf.l_margin + width, y)
                pdf.ln(2)
            pdf.ln(1.5)
        elif block.kind in ("para", "item"):
            left = pdf.l_margin
            if block.kind == "item":
                pdf.set_font(family, "", BODY)
                pdf.set_x(left + indent)
                pdf.cell(7, BODY * 0.55, block.marker)
                pdf.set_left_margin(left + indent + 7)
            elif indent:
                pdf.set_left_margin(left + indent)
                pdf.set_x(left + indent)
            write_runs(block.runs, BODY)
            pdf.set_left_margin(left)
            pdf.ln(1.5 if block.kind == "item" else 2.5)
        elif block.kind == "code":
            pdf.set_font(mono, "", 9.5)
            pdf.set_fill_color(243, 243, 243)
            pdf.set_x(pdf.l_margin + indent)
            pdf.multi_cell(width - indent, 5, block.text, fill=True, border=0, padding=2)
            pdf.ln(2.5)
        elif block.kind == "rule":
            y = pdf.get_y() + 2
            pdf.set_draw_color(150, 150, 150)
            pdf.line(pdf.l_margin, y, pdf.l_margin + width, y)
            pdf.ln(5)
        elif block.kind == "table":
            pdf.set_font(family, "", 10)
            pdf.set_draw_color(120, 120, 120)
            heading = FontFace(emphasis="BOLD", fill_color=(230, 230, 230))
            with pdf.table(
                line_height=6, headings_style=heading, text_align="LEFT", padding=1.5
            ) as table:
                for row in block.rows:
                    cells = table.row()
                    for value in row:
                        cells.cell(value)
            pdf.ln(3)
    return bytes(pdf.output())


def identity_encode(data: bytes) -> bytes:
    """Rewrite fonts that carry an embedded encoding CMap to /Identity-H (code = CID).

    Why: fpdf2 embeds CFF (OpenType/.ttc, e.g. Noto CJK) fonts with a custom encoding
    CMap stream; viewers render it, but pypdf and other simple extractors read such
    strings one byte at a time and return garbage. With Identity-H every reader agrees.
    """
    import io

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import (
        ArrayObject,
        ByteStringObject,
        ContentStream,
        DecodedStreamObject,
        NameObject,
        StreamObject,
    )

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    remapped: dict[int, dict[int, int]] = {}  # font object id → code → CID
    changed = False
    for page in writer.pages:
        fonts = page.get("/Resources", {}).get("/Font", {})
        page_maps: dict[str, dict[int, int]] = {}
        for name, ref in fonts.items():
            font = ref.get_object()
            key = id(font)
            if key not in remapped:
                enc = font.get("/Encoding")
                enc = enc.get_object() if enc is not None else None
                if not isinstance(enc, StreamObject):
                    continue
                cmap = enc.get_data().decode("latin-1")
                mapping = {
                    int(code, 16): int(cid)
                    for code, cid in re.findall(r"<([0-9A-Fa-f]{4})>\s+(\d+)", cmap)
                }
                remapped[key] = mapping
                tounicode = font.get("/ToUnicode")
                if tounicode is not None:
                    text = tounicode.get_object().get_data().decode("latin-1")
                    pairs = re.findall(r"<([0-9A-Fa-f]{4})>\s+<([0-9A-Fa-f]+)>", text)
                    lines = [
                        f"<{mapping.get(int(c, 16), int(c, 16)):04X}> <{u}>"
                        for c, u in pairs
                        if int(u, 16) != 0
                    ]
                    stream = DecodedStreamObject()
                    stream.set_data(_tounicode_cmap(lines).encode("latin-1"))
                    font[NameObject("/ToUnicode")] = writer._add_object(stream)
                font[NameObject("/Encoding")] = NameObject("/Identity-H")
            page_maps[str(name)] = remapped[key]
        if not page_maps:
            continue
        changed = True
        content = ContentStream(page.get_contents(), writer)
        current: dict[int, int] | None = None
        stack: list[dict[int, int] | None] = []

        def recode(s, mapping: dict[int, int]) -> ByteStringObject:
            raw = s.original_bytes if hasattr(s, "original_bytes") else bytes(s)
            out = bytearray()
            for j in range(0, len(raw) - 1, 2):
                code = (raw[j] << 8) | raw[j + 1]
                out += mapping.get(code, code).to_bytes(2, "big")
            return ByteStringObject(bytes(out))

        for operands, op in content.operations:
            if op == b"q":
                stack.append(current)
            elif op == b"Q":
                current = stack.pop() if stack else None
            elif op == b"Tf":
                current = page_maps.get(str(operands[0]))
            elif current is not None and op in (b"Tj", b"'"):
                operands[0] = recode(operands[0], current)
            elif current is not None and op == b'"':
                operands[2] = recode(operands[2], current)
            elif current is not None and op == b"TJ":
                operands[0] = ArrayObject(
                    recode(x, current) if isinstance(x, (str, bytes)) else x for x in operands[0]
                )
        page.replace_contents(content)
    if not changed:
        return data
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _tounicode_cmap(lines: list[str]) -> str:
    chunks = [lines[i : i + 100] for i in range(0, len(lines), 100)]
    body = "".join(f"{len(c)} beginbfchar\n" + "\n".join(c) + "\nendbfchar\n" for c in chunks if c)
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        f"{body}endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    )


# ---------------------------------------------------------------- fallback: Adobe CID font


def render_cid_fallback(blocks: list[Block], title: str) -> bytes:
    """A plain PDF in the non-embedded STSong-Light font (UniGB-UCS2-H: text is UTF-16)."""
    page_w, page_h, margin = 595.0, 842.0, 56.0
    lines: list[tuple[float, str, float]] = []  # size, text, indent

    def wrap(text: str, size: float, indent: float) -> None:
        limit = page_w - 2 * margin - indent
        for para in text.split("\n"):
            line, used = "", 0.0
            for ch in para:
                w = size if CJK_RE.match(ch) or ord(ch) > 0x2000 else size * 0.5
                if used + w > limit and line:
                    lines.append((size, line, indent))
                    line, used = "", 0.0
                line += ch
                used += w
            lines.append((size, line, indent))

    for block in blocks:
        text = "".join(r.text for r in block.runs)
        if block.kind == "heading":
            wrap(text, SIZES.get(block.level, BODY) + 1, 0)
        elif block.kind == "item":
            wrap(f"{block.marker} {text}", BODY, 14.0 * block.level)
        elif block.kind == "para":
            wrap(text, BODY, 14.0 * block.level)
        elif block.kind == "code":
            wrap(block.text, 9.5, 14.0 * block.level + 8)
        elif block.kind == "table":
            for row in block.rows:
                wrap(" | ".join(row), 10, 0)
        elif block.kind == "rule":
            wrap("-" * 40, BODY, 0)
        lines.append((BODY * 0.5, "", 0))

    pages: list[list[str]] = [[]]
    y = page_h - margin
    for size, text, indent in lines:
        y -= size * 1.45
        if y < margin:
            pages.append([])
            y = page_h - margin - size * 1.45
        if text:
            hexed = text.encode("utf-16-be").hex().upper()
            pages[-1].append(f"BT /F1 {size:g} Tf {margin + indent:.1f} {y:.1f} Td <{hexed}> Tj ET")

    objects: list[bytes] = []
    n_pages = len(pages)
    kids = " ".join(f"{5 + 2 * i} 0 R" for i in range(n_pages))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode())
    objects.append(
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H"
        b" /DescendantFonts [4 0 R] >>"
    )
    objects.append(
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light"
        b" /CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 2 >>"
        b" /FontDescriptor << /Type /FontDescriptor /FontName /STSong-Light /Flags 6"
        b" /FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120"
        b" /CapHeight 880 /StemV 93 >> /DW 1000 >>"
    )
    for i, ops in enumerate(pages):
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page_w:g} {page_h:g}]"
            f" /Resources << /Font << /F1 3 0 R >> >> /Contents {6 + 2 * i} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    info = title.encode("utf-16-be").hex().upper()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info << /Title <FEFF{info}> >> >>\n".encode()
    out += f"startxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


# ---------------------------------------------------------------- main


def build(args: argparse.Namespace) -> str:
    source = Path(args.input)
    output = Path(args.output) if args.output else source.with_suffix(".pdf")
    if not source.is_file():
        raise UserError(f"no such Markdown file: {source}")
    check_output(
        output,
        inputs=(source,),
        force=args.force,
        messages={**_pdfio.OUTPUT_MESSAGES, "input": "the output would overwrite the input"},
    )
    try:
        text = source.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"{source} is not UTF-8 text") from None
    font: Path | None = None
    if args.font:
        font = Path(args.font)
        if not font.is_file() or font.suffix.lower() not in (".ttf", ".otf", ".ttc"):
            raise UserError(f"--font must be an existing .ttf, .otf or .ttc file: {font}")
    elif not args.cid_fallback:
        font = find_cjk_font()
    blocks = parse_markdown(text)
    title = args.title or next(
        ("".join(r.text for r in b.runs) for b in blocks if b.kind == "heading"), source.stem
    )
    has_cjk = bool(CJK_RE.search(text))
    note = ""
    if font is None and has_cjk:
        if not args.cid_fallback:
            warn(
                PROG,
                "no CJK font found (install fonts-noto-cjk or pass --font);"
                " using the non-embedded STSong-Light font: the text is extractable but its"
                " look depends on the viewer",
            )
        data = render_cid_fallback(blocks, title)
        note = ", non-embedded CJK font"
    else:
        try:
            data = identity_encode(render_fpdf(blocks, font, title))
        except UnicodeEncodeError:
            raise UserError(
                "the text has characters the built-in font lacks; pass --font"
            ) from None
        except Exception as exc:  # fpdf2/fontTools raise plain exceptions for bad font files
            if font is not None and ("font" in str(exc).lower() or "TTLib" in type(exc).__module__):
                raise UserError(f"cannot use font {font}: {exc}") from None
            raise
        if font is not None:
            note = f", font {font.name}"
    atomic_write(output, lambda tmp: tmp.write_bytes(data))
    counts = {k: sum(b.kind == k for b in blocks) for k in ("heading", "table")}
    return f"wrote {output} ({counts['heading']} headings, {counts['table']} tables{note})"


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("input", help="the Markdown file (UTF-8)")
    parser.add_argument("-o", "--output", help="the PDF to write (default: INPUT with .pdf)")
    parser.add_argument("--font", help="a .ttf/.otf/.ttc font with CJK glyphs to embed")
    parser.add_argument("--title", help="document title (default: the first heading)")
    parser.add_argument(
        "--cid-fallback",
        action="store_true",
        help="do not embed a font: use the viewer's STSong-Light (smaller file, plainer layout)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    args = parser.parse_args(argv)
    return _pdfio.run(PROG, lambda: build(args))


if __name__ == "__main__":
    sys.exit(main())
