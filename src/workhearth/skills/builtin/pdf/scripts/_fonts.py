"""Finding and embedding a font with Chinese glyphs: the lookup, the face of a collection,
a small cached subset of that face, and the rewrite of fpdf2's CFF encodings to Identity-H.
Shared by md_to_pdf and fill_form."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


# Why: a subset always holds what most documents use besides their own words (ASCII,
# Latin-1, common punctuation, CJK symbols, full-width forms), so the cache is rarely
# rebuilt; kept small because every glyph costs subsetting time (~1 ms).
BASE_RANGES = (
    (0x20, 0x7F),
    (0xA0, 0x100),
    (0x2010, 0x2027),
    (0x2030, 0x203B),
    (0x3000, 0x3020),
    (0xFF01, 0xFF5F),
)
BASE_CHARS = frozenset(chr(c) for lo, hi in BASE_RANGES for c in range(lo, hi))
# Why a cap: subsetting costs ~0.6 s plus ~1 ms a glyph; past this the cache starts over.
CACHE_CAP = 1200
CACHE_VERSION = 1

Face = tuple[Path, int]  # a font file and the face's number in it (0 unless a .ttc)


@dataclass
class _Entry:
    """One face's place in the cache: its index file, what it covers, its subset file."""

    face: Face
    ident: str
    index_file: Path
    covered: set[str]
    current: Path | None


def face_subsets(wanted: dict[Face, set[str]], cache: Path | None) -> dict[Face, Path]:
    """For each face, a small font file with its glyphs for at least the given characters.

    Why: fpdf2 parses the whole face on every add_font (a CJK face has 65,000 glyphs:
    about a second each). A subset with the document's characters is parsed in
    milliseconds; it is kept in ``cache`` (grown as new characters come) across runs.
    Faces missing from the cache are subset side by side, one process each.
    """
    folder = _writable(cache)
    found: dict[Face, Path] = {}
    missing: dict[Face, tuple[_Entry, set[str]]] = {}
    for face, chars in wanted.items():
        entry = _entry(folder, face)
        if entry.current is not None and chars <= entry.covered:
            found[face] = entry.current
            continue
        keep = entry.covered if len(entry.covered) < CACHE_CAP else set()
        missing[face] = (entry, BASE_CHARS | chars | keep)
    jobs = [(face[0], face[1], chars) for face, (_, chars) in missing.items()]
    for (face, (entry, chars)), (data, suffix) in zip(
        missing.items(), _run_subsets(jobs), strict=True
    ):
        found[face] = _store(folder, entry, chars, data, suffix)
    return found


def _entry(folder: Path, face: Face) -> _Entry:
    stat = face[0].stat()
    ident = f"{face[0].resolve()}|{face[1]}|{stat.st_size}|{stat.st_mtime_ns}|{CACHE_VERSION}"
    key = hashlib.sha256(ident.encode()).hexdigest()[:16]
    entry = _Entry(face, ident, folder / f"{key}.json", set(), None)
    try:
        known = json.loads(entry.index_file.read_text(encoding="utf-8"))
        current = folder / Path(known["file"]).name
        if known["font"] == ident and current.is_file():
            entry.covered, entry.current = set(known["chars"]), current
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return entry


def _store(folder: Path, entry: _Entry, chars: set[str], data: bytes, suffix: str) -> Path:
    name = f"{entry.index_file.stem}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"
    _write_atomic(folder / name, data)
    record = {"font": entry.ident, "file": name, "chars": "".join(sorted(chars))}
    _write_atomic(entry.index_file, json.dumps(record, ensure_ascii=False).encode())
    if entry.current is not None and entry.current.name != name:
        # Why it may fail quietly: another run may still hold it (Windows), or took it first.
        try:
            entry.current.unlink()
        except OSError:
            pass
    return folder / name


def _run_subsets(jobs: list[tuple[Path, int, set[str]]]) -> list[tuple[bytes, str]]:
    if len(jobs) < 2 or (os.cpu_count() or 1) < 2:
        return [_subset_bytes(*job) for job in jobs]
    from concurrent.futures import ProcessPoolExecutor

    try:
        with ProcessPoolExecutor(max_workers=min(len(jobs), os.cpu_count() or 1)) as pool:
            return list(pool.map(_subset_bytes, *zip(*jobs, strict=True)))
    except (OSError, RuntimeError):
        # Why: no processes allowed here (a sandbox): subset one after another instead.
        return [_subset_bytes(*job) for job in jobs]


def _writable(cache: Path | None) -> Path:
    """The cache folder, else this user's one in the temp folder, else a fresh one."""
    user = os.getuid() if hasattr(os, "getuid") else "user"
    for folder in (cache, Path(tempfile.gettempdir()) / f"hearth-fonts-{user}"):
        if folder is None:
            continue
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            if os.access(folder, os.W_OK) and (folder == cache or folder.stat().st_uid == user):
                return folder
        except OSError:
            continue
    return Path(tempfile.mkdtemp(prefix="hearth-fonts-"))


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _subset_bytes(font: Path, index: int, chars: set[str]) -> tuple[bytes, str]:
    import io
    import logging

    from fontTools import subset  # type: ignore[import-untyped]
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    logging.getLogger("fontTools").setLevel(logging.ERROR)
    face = TTFont(str(font), fontNumber=index, lazy=True, recalcBBoxes=False)
    options = subset.Options()
    options.notdef_outline = True
    # Why: fpdf2 neither shapes nor reads the layout tables, and recomputing bounds
    # runs every glyph program: both would cost seconds for nothing.
    options.layout_features = []
    options.drop_tables += ["GSUB", "GPOS", "GDEF", "BASE", "VORG", "JSTF", "MATH"]
    options.recalc_bounds = False
    options.recalc_max_context = False
    options.prune_unicode_ranges = False
    options.name_IDs = ["*"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(chars))
    subsetter.subset(face)
    out = io.BytesIO()
    face.save(out)
    return out.getvalue(), ".otf" if "CFF " in face else ".ttf"


def identity_encode(data: bytes) -> bytes:
    """Rewrite fonts that carry an embedded encoding CMap to /Identity-H (code = CID).

    Why: fpdf2 embeds CFF (OpenType/.ttc, e.g. Noto CJK) fonts with a custom encoding
    CMap stream; viewers render it, but pypdf and other simple extractors read such
    strings one byte at a time and return garbage. With Identity-H every reader agrees.
    """
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    remapped: dict[int, dict[int, int] | None] = {}  # font object id → code → CID
    changed = False
    for page in writer.pages:
        fonts = page.get("/Resources", {}).get("/Font", {})
        page_maps: dict[str, dict[int, int]] = {}
        for name, ref in fonts.items():
            font = ref.get_object()
            if id(font) not in remapped:
                remapped[id(font)] = _to_identity(writer, font)
            mapping = remapped[id(font)]
            if mapping is not None:
                page_maps[str(name)] = mapping
        if page_maps:
            changed = True
            _recode_page(writer, page, page_maps)
    if not changed:
        return data
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _to_identity(writer: Any, font: Any) -> dict[int, int] | None:
    """Switch one font to Identity-H; its code → CID map, or None when it has no CMap."""
    from pypdf.generic import DecodedStreamObject, NameObject, StreamObject

    enc = font.get("/Encoding")
    enc = enc.get_object() if enc is not None else None
    if not isinstance(enc, StreamObject):
        return None
    cmap = enc.get_data().decode("latin-1")
    mapping = {
        int(code, 16): int(cid) for code, cid in re.findall(r"<([0-9A-Fa-f]{4})>\s+(\d+)", cmap)
    }
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
    return mapping


def _recode(s: Any, mapping: dict[int, int]) -> Any:
    from pypdf.generic import ByteStringObject

    raw = s.original_bytes if hasattr(s, "original_bytes") else bytes(s)
    out = bytearray()
    for j in range(0, len(raw) - 1, 2):
        code = (raw[j] << 8) | raw[j + 1]
        out += mapping.get(code, code).to_bytes(2, "big")
    return ByteStringObject(bytes(out))


def _recode_page(writer: Any, page: Any, page_maps: dict[str, dict[int, int]]) -> None:
    """Rewrite the page's text strings from the old codes to CIDs, font by font."""
    from pypdf.generic import ArrayObject, ContentStream

    content = ContentStream(page.get_contents(), writer)
    current: dict[int, int] | None = None
    stack: list[dict[int, int] | None] = []
    for operands, op in content.operations:
        if op == b"q":
            stack.append(current)
        elif op == b"Q":
            current = stack.pop() if stack else None
        elif op == b"Tf":
            current = page_maps.get(str(operands[0]))
        elif current is None:
            continue
        elif op in (b"Tj", b"'"):
            operands[0] = _recode(operands[0], current)
        elif op == b'"':
            operands[2] = _recode(operands[2], current)
        elif op == b"TJ":
            operands[0] = ArrayObject(
                _recode(x, current) if isinstance(x, (str, bytes)) else x for x in operands[0]
            )
    page.replace_contents(content)


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
