"""Turn a Markdown file into a PDF whose text (Chinese included) is visible and extractable.

Headings, paragraphs (bold, italic, strikethrough, links, inline code), bullet and numbered
lists, block quotes, tables (column alignment, bold and italic in cells), code blocks and
rules. A CJK font is looked up on this machine (or given with --font) and embedded as a
subset (kept in --font-cache between runs); without one, Chinese text falls back to a non-embedded
Adobe CID font (extractable, but its look depends on the viewer) with a warning.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pdfio  # type: ignore[import-not-found]
from _fonts import bold_sibling, collection_index, face_subsets, find_cjk_font, identity_encode  # type: ignore[import-not-found]
from _mdblocks import Block, Run, parse_markdown  # type: ignore[import-not-found]

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_write, check_output, warn

PROG = "md_to_pdf.py"
CJK_RE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u3000-\u303f]")


# ---------------------------------------------------------------- rendering with fpdf2

SIZES = {1: 20, 2: 16, 3: 14, 4: 12.5, 5: 12, 6: 11.5}
BODY = 11
QUOTE_INDENT = 6.0  # mm per block-quote level
QUOTE_GREY = (90, 90, 90)
LINK_BLUE = (5, 99, 193)


def runs_of(block: Block) -> list[Run]:
    return [*block.runs, *(r for row in block.cells for cell in row for r in cell)]


def face_chars(blocks: list[Block]) -> dict[str, set[str]]:
    """The characters each face draws: regular (all text), bold, mono (code).

    Why per face: each face's subset is made for its own characters, so a cache
    miss costs the bold and mono faces only the few characters they draw.
    """
    regular: set[str] = set()
    bold: set[str] = set()
    mono: set[str] = set()
    for b in blocks:
        regular.update(b.marker)
        if b.kind == "code":
            mono.update(b.text)
        for run in runs_of(b):
            target = mono if run.code else bold if run.bold or b.kind == "heading" else regular
            target.update(run.text)
        for row in b.rows:
            # Why: fpdf2 draws header cells (and bold cells) in the bold face.
            bold.update(ch for cell in row for ch in cell)
    regular |= bold | mono  # a fallback face draws anything
    return {"": regular, "B": bold, "mono": mono}


class Renderer:
    """Draws blocks on A4 with fpdf2, in the body font (a CJK face when there is one)."""

    def __init__(self, blocks: list[Block], font: Path | None, title: str, cache: Path | None):
        import logging

        from fpdf import FPDF

        # Why: fpdf2 logs subsetting details at WARNING for some fonts; the script prints one line.
        logging.getLogger("fpdf").setLevel(logging.ERROR)
        logging.getLogger("fontTools").setLevel(logging.ERROR)
        self.pdf = pdf = FPDF(format="A4")
        pdf.set_title(title)
        pdf.set_margins(20, 18, 20)
        pdf.set_auto_page_break(True, margin=18)
        self.family, self.mono = "helvetica", "courier"
        if font is not None:
            self._add_fonts(blocks, font, cache)
        pdf.add_page()

    def _add_fonts(self, blocks: list[Block], font: Path, cache: Path | None) -> None:
        """Register the faces the blocks need, each as a cached subset of the CJK font."""
        chars = face_chars(blocks)
        bold_file = bold_sibling(font) or font
        regular = (font, collection_index(font) or 0)
        bold = (bold_file, collection_index(bold_file) or 0) if bold_file != font else regular
        mono_index = collection_index(font, mono=True) if chars["mono"] else None
        mono = (font, mono_index) if mono_index is not None else None
        wanted: dict[tuple[Path, int], set[str]] = {regular: set(chars[""])}
        wanted[bold] = wanted.get(bold, set()) | chars["B"]
        if mono is not None:
            wanted[mono] = chars["mono"]
        files = face_subsets(wanted, cache)
        self.family = "body"
        italic = any(r.italic for b in blocks for r in runs_of(b))
        # Why: CJK fonts have no italics; italic text keeps the upright face. fpdf2 embeds
        # every face added, so the italic ones come only when the text has italics.
        for style, face in (("", regular), ("B", bold), ("I", regular), ("BI", bold))[
            : 4 if italic else 2
        ]:
            self.pdf.add_font("body", style, str(files[face]))
        if chars["mono"]:
            self.mono = "body" if mono is None else "mono"
            if mono is not None:
                self.pdf.add_font("mono", "", str(files[mono]))

    def render(self, blocks: list[Block]) -> bytes:
        draw = {
            "heading": self.heading,
            "para": self.paragraph,
            "item": self.paragraph,
            "code": self.code,
            "rule": self.rule,
            "table": self.table,
        }
        for block in blocks:
            self.pdf.set_x(self.pdf.l_margin)
            top, page = self.pdf.get_y(), self.pdf.page
            left = self.pdf.l_margin
            if block.quote:
                self.pdf.set_left_margin(left + QUOTE_INDENT * block.quote)
            draw[block.kind](block)
            self.pdf.set_left_margin(left)
            if block.quote:
                self.quote_bar(block.quote, top, page)
        return bytes(self.pdf.output())

    def write_runs(self, runs: list[Run], size: float, *, bold: bool = False, grey: bool = False):
        pdf = self.pdf
        line_h = size * 0.55
        base = QUOTE_GREY if grey else (0, 0, 0)
        for run in runs:
            style = ("B" if run.bold or bold else "") + ("I" if run.italic else "")
            style += ("S" if run.strike else "") + ("U" if run.link else "")
            if run.code:
                pdf.set_font(self.mono, "S" if run.strike else "", size * 0.95)
                pdf.set_text_color(150, 30, 30)
            else:
                pdf.set_font(self.family, style, size)
                pdf.set_text_color(*(LINK_BLUE if run.link else base))
            pdf.write(line_h, run.text, link=run.link)
        pdf.set_text_color(0, 0, 0)
        pdf.ln(line_h)

    def heading(self, block: Block) -> None:
        pdf = self.pdf
        size = SIZES.get(block.level, BODY)
        pdf.ln(size * 0.3)
        self.write_runs(block.runs, size, bold=True, grey=bool(block.quote))
        if block.level <= 2:
            y = pdf.get_y() + 1
            pdf.set_draw_color(180, 180, 180)
            pdf.line(pdf.l_margin, y, pdf.w - pdf.r_margin, y)
            pdf.ln(2)
        pdf.ln(1.5)

    def paragraph(self, block: Block) -> None:
        pdf = self.pdf
        left = pdf.l_margin
        indent = 6 * max(block.level - (1 if block.kind == "item" else 0), 0)
        if block.kind == "item":
            pdf.set_font(self.family, "", BODY)
            pdf.set_x(left + indent)
            pdf.cell(7, BODY * 0.55, block.marker)
            pdf.set_left_margin(left + indent + 7)
        elif indent:
            pdf.set_left_margin(left + indent)
            pdf.set_x(left + indent)
        self.write_runs(block.runs, BODY, grey=bool(block.quote))
        pdf.set_left_margin(left)
        pdf.ln(1.5 if block.kind == "item" else 2.5)

    def code(self, block: Block) -> None:
        pdf = self.pdf
        indent = 6 * block.level
        pdf.set_font(self.mono, "", 9.5)
        pdf.set_fill_color(243, 243, 243)
        pdf.set_x(pdf.l_margin + indent)
        pdf.multi_cell(pdf.epw - indent, 5, block.text, fill=True, border=0, padding=2)
        pdf.ln(2.5)

    def rule(self, block: Block) -> None:
        pdf = self.pdf
        y = pdf.get_y() + 2
        pdf.set_draw_color(150, 150, 150)
        pdf.line(pdf.l_margin, y, pdf.w - pdf.r_margin, y)
        pdf.ln(5)

    def table(self, block: Block) -> None:
        from fpdf.fonts import FontFace

        pdf = self.pdf
        pdf.set_font(self.family, "", 10)
        pdf.set_draw_color(120, 120, 120)
        heading = FontFace(emphasis="BOLD", fill_color=(230, 230, 230))
        # Why markdown=True: fpdf2 then draws **bold**/__italic__/~~strike~~ inside a cell;
        # the cell's runs are written back in that syntax, everything else escaped.
        with pdf.table(
            line_height=6,
            headings_style=heading,
            text_align=tuple(block.aligns),
            padding=1.5,
            markdown=True,
        ) as table:
            for row in block.cells:
                cells = table.row()
                for runs in row:
                    cells.cell(fpdf_markdown(runs))
        pdf.ln(3)

    def quote_bar(self, depth: int, top: float, page: int) -> None:
        """The grey bars left of a block quote (one per level), on each page it reached."""
        pdf = self.pdf
        pdf.set_draw_color(200, 200, 200)
        pdf.set_line_width(0.8)
        end, bottom = pdf.page, pdf.get_y()
        for number in range(page, end + 1):
            pdf.page = number
            y1 = top - 1 if number == page else pdf.t_margin
            y2 = bottom - 1 if number == end else pdf.h - pdf.b_margin
            for level in range(depth):
                x = pdf.l_margin + QUOTE_INDENT * level + 1.5
                pdf.line(x, y1, x, y2)
        pdf.page = end
        pdf.set_line_width(0.2)


FPDF_MARKERS = ("**", "__", "~~", "--")


def fpdf_markdown(runs: list[Run]) -> str:
    """A cell's runs in fpdf2's small markdown (bold **, italic __, strike ~~)."""
    out = []
    for run in runs:
        text = run.text.replace("\\", "\\\\")
        for marker in FPDF_MARKERS:
            text = text.replace(marker, "\\" + marker)
        if not text.strip():
            out.append(text)
            continue
        for flag, marker in ((run.strike, "~~"), (run.italic, "__"), (run.bold, "**")):
            if flag:
                text = f"{marker}{text}{marker}"
        out.append(text)
    return "".join(out)


def render_fpdf(blocks: list[Block], font: Path | None, title: str, cache: Path | None) -> bytes:
    return Renderer(blocks, font, title, cache).render(blocks)


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
    font = choose_font(args)
    blocks = parse_markdown(text)
    title = args.title or next(
        ("".join(r.text for r in b.runs) for b in blocks if b.kind == "heading"), source.stem
    )
    data, note = render(blocks, font, title, args, has_cjk=bool(CJK_RE.search(text)))
    atomic_write(output, lambda tmp: tmp.write_bytes(data))
    counts = {k: sum(b.kind == k for b in blocks) for k in ("heading", "table")}
    return f"wrote {output} ({counts['heading']} headings, {counts['table']} tables{note})"


def choose_font(args: argparse.Namespace) -> Path | None:
    if args.font:
        font = Path(args.font)
        if not font.is_file() or font.suffix.lower() not in (".ttf", ".otf", ".ttc"):
            raise UserError(f"--font must be an existing .ttf, .otf or .ttc file: {font}")
        return font
    return None if args.cid_fallback else find_cjk_font()


def render(
    blocks: list[Block], font: Path | None, title: str, args: argparse.Namespace, *, has_cjk: bool
) -> tuple[bytes, str]:
    """The PDF's bytes and a note for the summary line (which font it used)."""
    if font is None and has_cjk:
        if not args.cid_fallback:
            warn(
                PROG,
                "no CJK font found (install fonts-noto-cjk or pass --font);"
                " using the non-embedded STSong-Light font: the text is extractable but its"
                " look depends on the viewer",
            )
        return render_cid_fallback(blocks, title), ", non-embedded CJK font"
    try:
        data = identity_encode(render_fpdf(blocks, font, title, Path(args.font_cache)))
    except UnicodeEncodeError:
        raise UserError("the text has characters the built-in font lacks; pass --font") from None
    except Exception as exc:  # fpdf2/fontTools raise plain exceptions for bad font files
        module = type(exc).__module__
        if font is not None and ("font" in str(exc).lower() or module.startswith("fontTools")):
            raise UserError(f"cannot use font {font}: {exc}") from None
        raise
    return data, f", font {font.name}" if font is not None else ""


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
    parser.add_argument(
        "--font-cache",
        default=str(default_font_cache()),
        help="folder for the font subsets kept between runs (default: %(default)s)",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    args = parser.parse_args(argv)
    return _pdfio.run(PROG, lambda: build(args))


def default_font_cache() -> Path:
    """$HEARTH_HOME/cache/fonts when hearth runs the script, else the user's cache folder."""
    home = os.environ.get("HEARTH_HOME")
    if home:
        return Path(home) / "cache" / "fonts"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "workhearth" / "fonts"


if __name__ == "__main__":
    sys.exit(main())
