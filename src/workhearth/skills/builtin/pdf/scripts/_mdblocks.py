"""Markdown → a flat list of blocks for md_to_pdf: headings, paragraphs, list items,
block quotes, code, tables (cells keep bold/italic/code and the column alignment), rules."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Run:
    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    strike: bool = False
    link: str = ""


@dataclass
class Block:
    kind: str  # heading | para | item | code | table | rule
    level: int = 0  # heading level, or list depth
    marker: str = ""  # list marker ("•", "3.")
    runs: list[Run] = field(default_factory=list)
    text: str = ""  # code block text
    quote: int = 0  # block-quote depth
    cells: list[list[list[Run]]] = field(default_factory=list)  # table: header row first
    aligns: list[str] = field(default_factory=list)  # table: LEFT | CENTER | RIGHT per column

    @property
    def rows(self) -> list[list[str]]:
        """The table's cells as plain text."""
        return [["".join(r.text for r in cell) for cell in row] for row in self.cells]


def inline_runs(token) -> list[Run]:
    runs: list[Run] = []
    state = {"bold": False, "italic": False, "strike": False}
    link = ""
    switches = {"strong": "bold", "em": "italic", "s": "strike"}
    for child in token.children or []:
        t = child.type
        base, _, edge = t.rpartition("_")
        if base in switches and edge in ("open", "close"):
            state[switches[base]] = edge == "open"
            continue
        if t == "link_open":
            link = child.attrGet("href") or ""
            continue
        if t == "link_close":
            link = ""
            continue
        if t == "code_inline":
            text, code = child.content, True
        elif t in ("softbreak", "hardbreak"):
            text, code = ("\n" if t == "hardbreak" else " "), False
        elif t == "image":
            text, code = f"[{child.content or 'image'}]", False
        elif child.content:
            text, code = child.content, False
        else:
            continue
        runs.append(Run(text, code=code, link=link, **state))
    return runs


ALIGNS = {"text-align:right": "RIGHT", "text-align:center": "CENTER"}


class _Parser:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.lists: list[list] = []  # stack of [ordered, next_number]
        self.quote = 0
        self.pending: Block | None = None  # the heading/paragraph/item whose inline comes next
        self.table: Block | None = None

    def feed(self, tokens: list, i: int) -> None:
        tok = tokens[i]
        t = tok.type
        if self.table is not None:
            self._table(tok)
        elif t == "heading_open":
            self.pending = Block("heading", level=int(tok.tag[1]), quote=self.quote)
        elif t == "paragraph_open":
            if self.lists and tokens[i - 1].type == "list_item_open":
                ordered, number = self.lists[-1]
                marker = f"{number}." if ordered else "•"
                self.lists[-1][1] += 1
                self.pending = Block("item", len(self.lists), marker, quote=self.quote)
            else:
                self.pending = Block("para", level=len(self.lists), quote=self.quote)
        elif t == "inline" and self.pending is not None:
            self.pending.runs = inline_runs(tok)
            self.blocks.append(self.pending)
            self.pending = None
        elif t in ("bullet_list_open", "ordered_list_open"):
            self.lists.append([t == "ordered_list_open", int(tok.attrGet("start") or 1)])
        elif t in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
        elif t in ("blockquote_open", "blockquote_close"):
            self.quote += 1 if t == "blockquote_open" else -1
        elif t in ("fence", "code_block"):
            text = tok.content.rstrip("\n")
            self.blocks.append(Block("code", level=len(self.lists), text=text, quote=self.quote))
        elif t == "hr":
            self.blocks.append(Block("rule"))
        elif t == "table_open":
            self.table = Block("table", quote=self.quote)
        elif t == "html_block":
            self.blocks.append(Block("para", runs=[Run(tok.content.strip())], quote=self.quote))

    def _table(self, tok) -> None:
        table = self.table
        assert table is not None
        t = tok.type
        if t == "tr_open":
            table.cells.append([])
        elif t in ("th_open", "td_open") and len(table.cells) == 1:
            style = (tok.attrGet("style") or "").replace(" ", "")
            table.aligns.append(ALIGNS.get(style, "LEFT"))
        elif t == "inline":
            table.cells[-1].append(inline_runs(tok))
        elif t == "table_close":
            width = max(len(r) for r in table.cells)
            table.cells = [r + [[]] * (width - len(r)) for r in table.cells]
            table.aligns += ["LEFT"] * (width - len(table.aligns))
            self.blocks.append(table)
            self.table = None


def parse_markdown(text: str) -> list[Block]:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").enable("strikethrough").parse(text)
    parser = _Parser()
    for i in range(len(tokens)):
        parser.feed(tokens, i)
    return parser.blocks
