"""Markdown → Word (.docx): headings, nested lists, tables, code, links, images, Chinese.

Usage: PYTHON SKILL_DIR/scripts/md_to_docx.py INPUT.md -o OUTPUT.docx [--force]

Markdown is parsed with markdown-it-py (CommonMark + tables + strikethrough). Every
run gets an East-Asian font (``w:eastAsia``) so Chinese text renders in Word and
LibreOffice; image paths are relative to the Markdown file and never downloaded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from _docx_common import input_file, output_file

from workhearth.skills.scriptkit import OneLineParser, UserError, atomic_path, run, warn

NAME = "md_to_docx.py"
INDENT_TWIPS = 425  # Why: about 0.75 cm per list level, the step Word uses for Chinese documents
BULLETS = ("•", "◦", "▪")
ORDERED_FORMATS = ("decimal", "lowerLetter", "lowerRoman")
CODE_SHADE = "F2F3F5"
HEADER_SHADE = "DCE6F2"


def main(argv: list[str] | None = None) -> int:
    p = OneLineParser(prog=NAME, description="Convert a Markdown file to a Word .docx document.")
    p.add_argument("input", help="Markdown file (UTF-8), e.g. report.md")
    p.add_argument("-o", "--output", required=True, help="the .docx file to write")
    p.add_argument("--title", help="document title property (default: the first heading)")
    p.add_argument("--latin-font", default="Calibri", help="font for Latin text (default Calibri)")
    p.add_argument(
        "--cjk-font",
        default="Microsoft YaHei",
        help="East-Asian font written as w:eastAsia (default Microsoft YaHei; viewers "
        "without it fall back to an installed CJK font such as Noto Sans CJK)",
    )
    p.add_argument("--mono-font", default="Consolas", help="font for code (default Consolas)")
    p.add_argument(
        "--allow-missing-images",
        action="store_true",
        help="put a visible [image not found] placeholder instead of failing",
    )
    p.add_argument("--force", action="store_true", help="overwrite OUTPUT if it exists")
    args = p.parse_args(argv)

    src = input_file(args.input, (".md", ".markdown", ".txt"), "Markdown file")
    out = output_file(args.output, (".docx",), force=args.force, inputs=(src,))
    try:
        text = src.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(f"not UTF-8 text: {src}") from None

    import docx
    from markdown_it import MarkdownIt

    # Why: raw HTML stays visible text; we never interpret it.
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    document = docx.Document()
    builder = DocxBuilder(document, src.parent, args)
    builder.render(md.parse(text))
    document.core_properties.title = args.title or builder.first_heading or src.stem
    with atomic_path(out) as tmp:
        document.save(str(tmp))
    c = builder.counts
    print(
        f"wrote {out} ({c['heading']} headings, {c['list_item']} list items, {c['table']} tables, "
        f"{c['code']} code blocks, {c['image']} images)"
    )
    return 0


class DocxBuilder:
    """Walks markdown-it block tokens and appends the matching Word paragraphs."""

    def __init__(self, document: Any, base_dir: Path, args: Any) -> None:
        self.doc = document
        self.base_dir = base_dir
        self.args = args
        self.counts = dict.fromkeys(("heading", "list_item", "table", "code", "image"), 0)
        self.first_heading: str | None = None
        self.lists: list[dict[str, Any]] = []  # open lists, innermost last
        self.quote_depth = 0
        self.numbering = _Numbering(document)
        _set_fonts(document, args.latin_font, args.cjk_font)
        _heading_sizes(document)
        self.code_style = _code_style(document, args)

    # -- blocks --------------------------------------------------------------------------
    def render(self, tokens: list[Any]) -> None:
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            kind = tok.type
            if kind == "heading_open":
                level = int(tok.tag[1])
                para = self.doc.add_heading(level=level)
                self.inline(para, tokens[i + 1].children or [])
                self.counts["heading"] += 1
                if self.first_heading is None:
                    self.first_heading = para.text
                i += 3
                continue
            if kind == "paragraph_open":
                self.paragraph(tokens[i + 1])
                i += 3
                continue
            if kind in ("bullet_list_open", "ordered_list_open"):
                ordered = kind == "ordered_list_open"
                start = int(tok.attrGet("start") or 1) if ordered else 1
                self.lists.append(
                    {
                        "num": self.numbering.new(ordered, start),
                        "level": len(self.lists),
                        "first": False,
                    }
                )
            elif kind in ("bullet_list_close", "ordered_list_close"):
                self.lists.pop()
            elif kind == "list_item_open":
                self.lists[-1]["first"] = True
                self.counts["list_item"] += 1
            elif kind == "blockquote_open":
                self.quote_depth += 1
            elif kind == "blockquote_close":
                self.quote_depth -= 1
            elif kind in ("fence", "code_block"):
                self.code(tok.content)
            elif kind == "table_open":
                end = next(j for j in range(i, len(tokens)) if tokens[j].type == "table_close")
                self.table(tokens[i : end + 1])
                i = end
            elif kind == "hr":
                self.rule()
            elif kind == "html_block":
                self.doc.add_paragraph(tok.content.rstrip("\n"))
            i += 1

    def _block_paragraph(self) -> Any:
        """A new paragraph styled for where we are: list item, continuation, quote or body."""
        if self.lists:
            ctx = self.lists[-1]
            para = self.doc.add_paragraph(style="List Paragraph")
            if ctx["first"]:
                ctx["first"] = False
                num_pr = para._p.get_or_add_pPr().get_or_add_numPr()
                num_pr.get_or_add_ilvl().val = ctx["level"]
                num_pr.get_or_add_numId().val = ctx["num"]
            else:
                from docx.shared import Twips

                para.paragraph_format.left_indent = Twips(INDENT_TWIPS * (ctx["level"] + 1))
            return para
        if self.quote_depth:
            return self.doc.add_paragraph(style="Quote")
        return self.doc.add_paragraph()

    def paragraph(self, inline_tok: Any) -> None:
        para = self._block_paragraph()
        children = inline_tok.children or []
        if len(children) == 1 and children[0].type == "image" and not self.lists:
            from docx.enum.text import WD_ALIGN_PARAGRAPH

            para.alignment = WD_ALIGN_PARAGRAPH.CENTER
        self.inline(para, children)

    def code(self, content: str) -> None:
        para = self._block_paragraph()
        para.style = self.code_style
        if self.lists:
            from docx.shared import Twips

            para.paragraph_format.left_indent = Twips(INDENT_TWIPS * (self.lists[-1]["level"] + 1))
        lines = content.rstrip("\n").split("\n")
        for n, line in enumerate(lines):
            r = para.add_run(line)
            if n < len(lines) - 1:
                r.add_break()
        self.counts["code"] += 1

    def table(self, tokens: list[Any]) -> None:
        rows: list[list[tuple[Any, bool, str]]] = []
        for tok in tokens:
            if tok.type == "tr_open":
                rows.append([])
            elif tok.type in ("th_open", "td_open"):
                style = tok.attrGet("style") or ""
                align = style.split(":", 1)[1].strip() if "text-align" in style else ""
                rows[-1].append((None, tok.type == "th_open", align))
            elif tok.type == "inline" and rows and rows[-1]:
                cell = rows[-1][-1]
                rows[-1][-1] = (tok, cell[1], cell[2])
        if not rows:
            return
        from docx.enum.text import WD_ALIGN_PARAGRAPH
        from docx.oxml import OxmlElement
        from docx.shared import Pt

        aligns = {"center": WD_ALIGN_PARAGRAPH.CENTER, "right": WD_ALIGN_PARAGRAPH.RIGHT}
        ncols = max(len(r) for r in rows)
        table = self.doc.add_table(rows=len(rows), cols=ncols)
        table.style = "Table Grid"
        for r_idx, row in enumerate(rows):
            for c_idx, (tok, header, align) in enumerate(row):
                cell = table.cell(r_idx, c_idx)
                para = cell.paragraphs[0]
                # Why: without a little air the text sits on the cell's bottom border.
                para.paragraph_format.space_before = Pt(2)
                para.paragraph_format.space_after = Pt(2)
                if align in aligns:
                    para.alignment = aligns[align]
                self.inline(
                    para, tok.children if tok is not None and tok.children else [], bold=header
                )
                if header:
                    _shade(cell._tc.get_or_add_tcPr(), HEADER_SHADE)
            if all(h for _, h, _ in row):
                # Why: a header row repeats at the top of every page the table spans.
                tr_pr = table.rows[r_idx]._tr.get_or_add_trPr()
                tr_pr.append(OxmlElement("w:tblHeader"))
        self.doc.add_paragraph()  # Why: keeps the next table or paragraph visually apart
        self.counts["table"] += 1

    def rule(self) -> None:
        from docx.oxml import parse_xml
        from docx.oxml.ns import nsdecls

        para = self.doc.add_paragraph()
        para._p.get_or_add_pPr().append(
            parse_xml(
                f'<w:pBdr {nsdecls("w")}><w:bottom w:val="single" w:sz="6" w:space="1" '
                'w:color="A0A0A0"/></w:pBdr>'
            )
        )

    # -- inline --------------------------------------------------------------------------
    def inline(self, para: Any, children: list[Any], *, bold: bool = False) -> None:
        state = {"bold": bold, "italic": False, "strike": False}
        target = None  # a w:hyperlink element while inside a link
        for tok in children:
            t = tok.type
            if t == "text":
                self._run(para, tok.content, state, target)
            elif t == "code_inline":
                r = self._run(para, tok.content, state, target)
                _mono(r, self.args.mono_font, self.args.cjk_font)
                _shade(r._r.get_or_add_rPr(), CODE_SHADE)
            elif t in ("strong_open", "strong_close"):
                state["bold"] = t == "strong_open" or bold
            elif t in ("em_open", "em_close"):
                state["italic"] = t == "em_open"
            elif t in ("s_open", "s_close"):
                state["strike"] = t == "s_open"
            elif t == "softbreak":
                self._run(para, " ", state, target)
            elif t == "hardbreak":
                self._run(para, "", state, target).add_break()
            elif t == "link_open":
                target = _hyperlink(para, unquote(tok.attrGet("href") or ""))
            elif t == "link_close":
                target = None
            elif t == "image":
                self.image(para, tok)
            elif t == "html_inline":
                self._run(para, tok.content, state, target)

    def _run(self, para: Any, text: str, state: dict[str, bool], target: Any) -> Any:
        r = para.add_run(text)
        r.bold = state["bold"] or None
        r.italic = state["italic"] or None
        if state["strike"]:
            r.font.strike = True
        if target is not None:
            from docx.shared import RGBColor

            r.font.color.rgb = RGBColor(0x05, 0x63, 0xC1)
            r.font.underline = True
            target.append(r._r)  # Why: moves the run into the w:hyperlink element
        return r

    def image(self, para: Any, tok: Any) -> None:
        src = tok.attrGet("src") or ""
        alt = tok.content or ""
        path = self._image_path(src)
        problem = None
        if path is None:
            problem = f"image is not a local file (nothing is downloaded): {src}"
        elif not path.is_file():
            problem = f"image not found: {path}"
        if problem is None:
            from docx.image.exceptions import UnrecognizedImageError

            try:
                shape = para.add_run().add_picture(str(path))
            except UnrecognizedImageError:
                problem = (
                    f"not an image python-docx can embed (use PNG, JPEG, GIF, BMP or TIFF): {path}"
                )
            else:
                limit = _content_width(self.doc)
                if shape.width > limit:
                    shape.height = int(shape.height * limit / shape.width)
                    shape.width = limit
                doc_pr = shape._inline.docPr
                doc_pr.set("descr", alt)
                self.counts["image"] += 1
                return
        if not self.args.allow_missing_images:
            raise UserError(f"{problem} (or use --allow-missing-images for a placeholder)")
        warn(NAME, f"{problem}; wrote a placeholder")
        from docx.shared import RGBColor

        r = para.add_run(f"[image not found: {src}{' — ' + alt if alt else ''}]")
        r.italic = True
        r.font.color.rgb = RGBColor(0xC0, 0x00, 0x00)

    def _image_path(self, src: str) -> Path | None:
        parsed = urlparse(src)
        if parsed.scheme == "file":
            return Path(unquote(parsed.path))
        if parsed.scheme and len(parsed.scheme) > 1:  # Why: one letter is a Windows drive
            return None
        p = Path(unquote(src))
        return p if p.is_absolute() else self.base_dir / p


# -- document set-up helpers -------------------------------------------------------------
class _Numbering:
    """Bullet and numbered list definitions; every ordered list restarts its count."""

    def __init__(self, document: Any) -> None:
        self.el = document.part.numbering_part.element
        self.abstract: dict[bool, int] = {}
        self.bullet_num: int | None = None

    def _next_id(self, tag: str, attr: str) -> int:
        from docx.oxml.ns import qn

        ids = [int(e.get(qn(attr))) for e in self.el.findall(qn(tag))]
        return max(ids, default=0) + 1

    def _abstract_id(self, ordered: bool) -> int:
        if ordered in self.abstract:
            return self.abstract[ordered]
        from docx.oxml import parse_xml
        from docx.oxml.ns import nsdecls, qn

        aid = self._next_id("w:abstractNum", "w:abstractNumId")
        levels = []
        for i in range(9):
            fmt = ORDERED_FORMATS[i % 3] if ordered else "bullet"
            text = f"%{i + 1}." if ordered else BULLETS[i % 3]
            levels.append(
                f'<w:lvl w:ilvl="{i}"><w:start w:val="1"/><w:numFmt w:val="{fmt}"/>'
                f'<w:lvlText w:val="{text}"/><w:lvlJc w:val="left"/>'
                f'<w:pPr><w:ind w:left="{INDENT_TWIPS * (i + 1)}" w:hanging="{INDENT_TWIPS}"/></w:pPr>'
                "</w:lvl>"
            )
        abstract = parse_xml(
            f'<w:abstractNum {nsdecls("w")} w:abstractNumId="{aid}">'
            f'<w:multiLevelType w:val="hybridMultilevel"/>{"".join(levels)}</w:abstractNum>'
        )
        # Why: the schema wants every w:abstractNum before the first w:num.
        first_num = self.el.find(qn("w:num"))
        if first_num is None:
            self.el.append(abstract)
        else:
            first_num.addprevious(abstract)
        self.abstract[ordered] = aid
        return aid

    def new(self, ordered: bool, start: int) -> int:
        if not ordered and self.bullet_num is not None:
            return self.bullet_num
        from docx.oxml import parse_xml
        from docx.oxml.ns import nsdecls

        aid = self._abstract_id(ordered)
        nid = self._next_id("w:num", "w:numId")
        override = (
            f'<w:lvlOverride w:ilvl="0"><w:startOverride w:val="{start}"/></w:lvlOverride>'
            if ordered
            else ""
        )
        self.el.append(
            parse_xml(
                f'<w:num {nsdecls("w")} w:numId="{nid}"><w:abstractNumId w:val="{aid}"/>{override}</w:num>'
            )
        )
        if not ordered:
            self.bullet_num = nid
        return nid


def _set_fonts(document: Any, latin: str, cjk: str) -> None:
    """Default fonts for every run, and the East-Asian font on every style that names one."""
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls, qn

    styles = document.styles.element
    defaults = styles.find(qn("w:docDefaults"))
    if defaults is None:
        defaults = parse_xml(f"<w:docDefaults {nsdecls('w')}/>")
        styles.insert(0, defaults)
    rpr_default = defaults.find(qn("w:rPrDefault"))
    if rpr_default is None:
        rpr_default = parse_xml(f"<w:rPrDefault {nsdecls('w')}/>")
        defaults.insert(0, rpr_default)
    rpr = rpr_default.find(qn("w:rPr"))
    if rpr is None:
        rpr = parse_xml(f"<w:rPr {nsdecls('w')}/>")
        rpr_default.append(rpr)
    for old in rpr.findall(qn("w:rFonts")) + rpr.findall(qn("w:lang")):
        rpr.remove(old)
    rpr.insert(
        0,
        parse_xml(
            f'<w:rFonts {nsdecls("w")} w:ascii="{latin}" w:hAnsi="{latin}" w:cs="{latin}" '
            f'w:eastAsia="{cjk}"/>'
        ),
    )
    rpr.append(parse_xml(f'<w:lang {nsdecls("w")} w:val="en-US" w:eastAsia="zh-CN"/>'))
    # Why: styles (headings, title…) point at the theme's East-Asian font, which is empty in
    # the default template; that would override our default and lose the CJK font.
    for fonts in styles.iter(qn("w:rFonts")):
        if fonts.get(qn("w:eastAsiaTheme")) is not None:
            del fonts.attrib[qn("w:eastAsiaTheme")]
            fonts.set(qn("w:eastAsia"), cjk)


def _heading_sizes(document: Any) -> None:
    """Clearer steps between heading levels than the template's 14/13/11 pt."""
    from docx.shared import Pt

    for level, size in ((1, 18), (2, 15), (3, 13)):
        style = document.styles[f"Heading {level}"]
        style.font.size = Pt(size)
        style.paragraph_format.space_before = Pt(18 if level == 1 else 12)
        style.paragraph_format.space_after = Pt(6)


def _code_style(document: Any, args: Any) -> Any:
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls
    from docx.shared import Pt

    style = document.styles.add_style("Code Block", WD_STYLE_TYPE.PARAGRAPH)
    style.base_style = document.styles["Normal"]
    style.font.size = Pt(9.5)
    fmt = style.paragraph_format
    fmt.space_before = Pt(4)
    fmt.space_after = Pt(8)
    fmt.line_spacing = 1.0
    rpr = style.element.get_or_add_rPr()
    fonts = rpr.get_or_add_rFonts()
    for attr in ("w:ascii", "w:hAnsi", "w:cs"):
        fonts.set(_qn(attr), args.mono_font)
    fonts.set(_qn("w:eastAsia"), args.cjk_font)
    ppr = style.element.get_or_add_pPr()
    ppr.append(
        parse_xml(
            f'<w:pBdr {nsdecls("w")}><w:left w:val="single" w:sz="18" w:space="6" '
            'w:color="B8BEC7"/></w:pBdr>'
        )
    )
    _shade(ppr, CODE_SHADE)
    return style


def _qn(tag: str) -> str:
    from docx.oxml.ns import qn

    return qn(tag)


def _shade(props: Any, fill: str) -> None:
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls

    props.append(parse_xml(f'<w:shd {nsdecls("w")} w:val="clear" w:color="auto" w:fill="{fill}"/>'))


def _mono(r: Any, mono: str, cjk: str) -> None:
    fonts = r._r.get_or_add_rPr().get_or_add_rFonts()
    for attr in ("w:ascii", "w:hAnsi", "w:cs"):
        fonts.set(_qn(attr), mono)
    fonts.set(_qn("w:eastAsia"), cjk)


def _hyperlink(para: Any, href: str) -> Any:
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement

    link = OxmlElement("w:hyperlink")
    if href.startswith("#"):
        link.set(_qn("w:anchor"), href[1:])
    else:
        r_id = para.part.relate_to(href, RT.HYPERLINK, is_external=True)
        link.set(_qn("r:id"), r_id)
    para._p.append(link)
    return link


def _content_width(document: Any) -> int:
    section = document.sections[-1]
    return int(section.page_width - section.left_margin - section.right_margin)


if __name__ == "__main__":
    sys.exit(run(NAME, main))
