"""Appearance streams for filled form fields, drawn with an embedded font that has the glyphs,
and flattening that paints those appearances into the page.

Why not pypdf's own appearances: they use the form's /Helv (no CJK glyphs), so 张三 becomes
``(??) Tj``. Here fpdf2 draws each field's text on a page the size of the field, with the
CJK font embedded as a subset; each such page becomes the field's /AP /N form XObject.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _fonts import collection_index, face_subsets, identity_encode  # type: ignore[import-not-found]

MULTILINE = 1 << 12
COMBO = 1 << 17
PASSWORD = 1 << 13
HIDDEN = 1 << 1
DA_SIZE = re.compile(r"([0-9.]+)\s+Tf")


@dataclass
class Box:
    """One widget to draw: its size in points, its text and how to lay it out."""

    widget: Any  # the widget annotation (a pypdf DictionaryObject in the writer)
    width: float
    height: float
    text: str
    size: float  # 0: fit the box
    align: int  # 0 left, 1 centre, 2 right
    multiline: bool


def _inherited(widget: Any, key: str) -> Any:
    node = widget
    while node is not None:
        node = node.get_object()
        if key in node:
            return node[key]
        node = node.get("/Parent")
    return None


def qualified_name(widget: Any) -> str:
    parts = []
    node = widget
    while node is not None:
        node = node.get_object()
        if "/T" in node:
            parts.append(str(node["/T"]))
        node = node.get("/Parent")
    return ".".join(reversed(parts))


def text_boxes(writer: Any, names: set[str], default_da: str) -> list[Box]:
    """The visible text and combo-box widgets of the fields in ``names``."""
    boxes = []
    for page in writer.pages:
        for ref in page.get("/Annots", []) or []:
            widget = ref.get_object()
            if widget.get("/Subtype") != "/Widget" or int(widget.get("/F", 0)) & HIDDEN:
                continue
            kind = _inherited(widget, "/FT")
            flags = int(_inherited(widget, "/Ff") or 0)
            if kind not in ("/Tx", "/Ch") or (kind == "/Ch" and not flags & COMBO):
                continue
            if flags & PASSWORD or qualified_name(widget) not in names:
                continue
            value = _inherited(widget, "/V")
            if isinstance(value, list):
                value = value[0] if value else ""
            x1, y1, x2, y2 = (float(v) for v in widget["/Rect"])
            da = str(_inherited(widget, "/DA") or default_da)
            size = DA_SIZE.search(da)
            boxes.append(
                Box(
                    widget=widget,
                    width=abs(x2 - x1),
                    height=abs(y2 - y1),
                    text="" if value is None else str(value),
                    size=float(size.group(1)) if size else 0.0,
                    align=int(_inherited(widget, "/Q") or 0),
                    multiline=bool(flags & MULTILINE) and kind == "/Tx",
                )
            )
    return boxes


def _fit_size(pdf: Any, box: Box, pad: float) -> float:
    """DA's size, or (size 0, 'auto') the largest that fits the box, at most 12 pt."""
    if box.size > 0:
        return box.size
    size = min(12.0, max(box.height - 2 * pad, 4.0) * 0.75)
    if not box.multiline:
        pdf.set_font_size(size)
        width = pdf.get_string_width(box.text)
        if width > box.width - 2 * pad > 0:
            size = max(4.0, size * (box.width - 2 * pad) / width)
    return size


def render_boxes(boxes: list[Box], font: Path | None) -> bytes:
    """A PDF with one page per box, the box's text drawn as a viewer would draw the field."""
    import logging

    from fpdf import FPDF

    logging.getLogger("fpdf").setLevel(logging.ERROR)
    logging.getLogger("fontTools").setLevel(logging.ERROR)
    pdf = FPDF(unit="pt")
    pdf.set_margins(0, 0, 0)
    pdf.set_auto_page_break(False)
    pdf.c_margin = 0
    if font is not None:
        face = (font, collection_index(font) or 0)
        # Why a subset: fpdf2 parses a whole CJK face in about a second; a subset is instant.
        subset = face_subsets({face: {ch for box in boxes for ch in box.text}}, None)[face]
        pdf.add_font("field", "", str(subset))
        pdf.set_font("field", "", 12)
    else:
        pdf.set_font("helvetica", "", 12)
    align = {0: "L", 1: "C", 2: "R"}
    pad = 2.0
    for box in boxes:
        pdf.add_page(format=(max(box.width, 1.0), max(box.height, 1.0)))
        size = _fit_size(pdf, box, pad)
        pdf.set_font_size(size)
        if box.multiline:
            pdf.set_xy(pad, pad)
            pdf.multi_cell(
                box.width - 2 * pad, size * 1.15, box.text, align=align.get(box.align, "L")
            )
        else:
            pdf.set_xy(pad, 0)
            pdf.cell(box.width - 2 * pad, box.height, box.text, align=align.get(box.align, "L"))
    return identity_encode(bytes(pdf.output()))


def attach_appearances(writer: Any, boxes: list[Box], rendered: bytes) -> None:
    """Make page i of ``rendered`` the normal appearance of ``boxes[i]``."""
    from pypdf import PdfReader
    from pypdf.generic import (
        ArrayObject,
        DecodedStreamObject,
        DictionaryObject,
        FloatObject,
        NameObject,
    )

    pages = PdfReader(io.BytesIO(rendered)).pages
    for box, page in zip(boxes, pages, strict=True):
        stream = DecodedStreamObject()
        contents = page.get_contents()
        body = contents.get_data() if contents is not None else b""
        stream.set_data(b"/Tx BMC\nq\n" + body + b"\nQ\nEMC\n")
        stream[NameObject("/Type")] = NameObject("/XObject")
        stream[NameObject("/Subtype")] = NameObject("/Form")
        stream[NameObject("/BBox")] = ArrayObject(
            FloatObject(v) for v in (0, 0, box.width, box.height)
        )
        resources = page.get("/Resources")
        if resources is not None:
            stream[NameObject("/Resources")] = resources.get_object().clone(writer)
        box.widget[NameObject("/AP")] = DictionaryObject(
            {NameObject("/N"): writer._add_object(stream)}
        )


def _normal_appearance(widget: Any) -> Any:
    from pypdf.generic import StreamObject

    ap = widget.get("/AP")
    normal = ap.get_object().get("/N") if ap is not None else None
    normal = normal.get_object() if normal is not None else None
    if normal is not None and not isinstance(normal, StreamObject):
        state = widget.get("/AS")
        normal = normal.get(state).get_object() if state is not None and state in normal else None
    return normal if isinstance(normal, StreamObject) else None


def flatten(writer: Any) -> None:
    """Paint every widget's normal appearance into its page; drop the widgets and the form."""
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject

    for page in writer.pages:
        annots = page.get("/Annots")
        if annots is None:
            continue
        kept, ops = ArrayObject(), []
        resources = page.get("/Resources")
        resources = resources.get_object() if resources is not None else DictionaryObject()
        page[NameObject("/Resources")] = resources
        xobjects = resources.get("/XObject")
        xobjects = xobjects.get_object() if xobjects is not None else DictionaryObject()
        resources[NameObject("/XObject")] = xobjects
        for ref in annots.get_object():
            widget = ref.get_object()
            if widget.get("/Subtype") != "/Widget":
                kept.append(ref)
                continue
            normal = _normal_appearance(widget)
            if normal is None or int(widget.get("/F", 0)) & HIDDEN:
                continue
            name = f"/HearthField{len(xobjects)}"
            xobjects[NameObject(name)] = normal.indirect_reference or writer._add_object(normal)
            x1, y1, x2, y2 = (float(v) for v in widget["/Rect"])
            bx1, by1, bx2, by2 = (float(v) for v in normal.get("/BBox", [0, 0, 1, 1]))
            sx = (x2 - x1) / ((bx2 - bx1) or 1)
            sy = (y2 - y1) / ((by2 - by1) or 1)
            ops.append(
                f"q {sx:.4f} 0 0 {sy:.4f} {x1 - bx1 * sx:.2f} {y1 - by1 * sy:.2f} cm {name} Do Q"
            )
        contents = page.get_contents()
        old = contents.get_data() if contents is not None else b""
        stream = DecodedStreamObject()
        stream.set_data(b"q\n" + old + b"\nQ\n" + "\n".join(ops).encode() + b"\n")
        page[NameObject("/Contents")] = writer._add_object(stream)
        if kept:
            page[NameObject("/Annots")] = kept
        else:
            page.pop(NameObject("/Annots"), None)
    writer._root_object.pop(NameObject("/AcroForm"), None)
