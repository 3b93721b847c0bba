"""OOXML packages (.docx .xlsx .pptx): the causes of a repair prompt that can be checked
without the program that prompts.

Checked: the zip opens; every XML part is well-formed; every part has a content type;
every internal relationship points at a part that exists; the root relationship names
the main document. Not checked (and not claimed): schema validity, and the many
application rules Excel or Word enforce on top.
"""

from __future__ import annotations

import functools
import posixpath
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from workhearth.check.receipt import Problem

if TYPE_CHECKING:
    from lxml import etree

PKG_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
CT_NS = "{http://schemas.openxmlformats.org/package/2006/content-types}"
OFFICE_DOCUMENT = "/officeDocument"
# Why a ceiling: a zip is small on disk and can unpack to gigabytes (a zip bomb).
MAX_UNPACKED = 1 << 30


# Why lxml is imported when a part is parsed: opening the zip comes first, and
# LibreOffice is started before any part is read (checker.py); the import waits till then.
@functools.cache
def _parser() -> etree.XMLParser:
    from lxml import etree

    # Why these settings: parts come from files the agent or anyone made; no entity
    # expansion, no network, no giant trees.
    return etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


class MalformedXML(ValueError):
    """A part that is not well-formed XML (``msg`` says where, as lxml does)."""

    def __init__(self, msg: str) -> None:
        super().__init__(msg)
        self.msg = msg


def parse_xml(data: bytes) -> etree._Element:
    """A part's XML root; :class:`MalformedXML` when it is not well-formed."""
    from lxml import etree

    try:
        return etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise MalformedXML(str(exc.msg)) from None


def _rels_source(rels_name: str) -> str:
    """``word/_rels/document.xml.rels`` -> ``word/document.xml``; ``_rels/.rels`` -> ``""``."""
    folder, name = posixpath.split(rels_name)
    return posixpath.join(posixpath.dirname(folder), name.removesuffix(".rels"))


def _target(source: str, target: str) -> str:
    if target.startswith("/"):
        return target.lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(source), target))


class Package:
    """An opened OOXML zip: its part names and their bytes, read once each."""

    def __init__(self, path: Path) -> None:
        self.zip = zipfile.ZipFile(path)
        self.names = {i.filename for i in self.zip.infolist() if not i.is_dir()}
        self.unpacked = sum(i.file_size for i in self.zip.infolist())

    def read(self, name: str) -> bytes:
        return self.zip.read(name)

    def xml(self, name: str) -> etree._Element | None:
        """A part's XML root, or None when the part is absent or malformed."""
        if name not in self.names:
            return None
        try:
            return parse_xml(self.read(name))
        except MalformedXML:
            return None

    def relations(self, part: str) -> dict[str, tuple[str, str]]:
        """``part``'s internal relationships: id -> (type, target part name)."""
        folder, name = posixpath.split(part)
        root = self.xml(posixpath.join(folder, "_rels", f"{name}.rels"))
        if root is None:
            return {}
        return {
            rel.get("Id") or "": (rel.get("Type") or "", _target(part, rel.get("Target") or ""))
            for rel in root.iter(PKG_REL)
            if rel.get("TargetMode") != "External"
        }

    def close(self) -> None:
        self.zip.close()


def open_package(path: Path) -> tuple[Package | None, list[Problem]]:
    try:
        package = Package(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        return None, [Problem("opens", "", f"not a valid Office file (zip): {exc}", "not_zip")]
    if package.unpacked > MAX_UNPACKED:
        package.close()
        return None, [Problem("opens", "", "unpacks to more than 1 GiB (a zip bomb?)", "zip_bomb")]
    return package, []


def integrity(package: Package) -> list[Problem]:
    """Every problem in the package's structure, each with the part it is in."""
    problems = list(_malformed(package))
    types = package.xml("[Content_Types].xml")
    if types is None:
        problems.append(
            Problem("opens", "[Content_Types].xml", "missing or malformed", "content_types")
        )
    else:
        problems += _untyped(package, types)
    problems += _dangling(package)
    return problems


def _malformed(package: Package) -> Iterator[Problem]:
    for name in sorted(package.names):
        if not name.endswith((".xml", ".rels")):
            continue
        try:
            parse_xml(package.read(name))
        except MalformedXML as exc:
            yield Problem("opens", name, f"malformed XML: {exc.msg}", "malformed_xml")


def _untyped(package: Package, types: etree._Element) -> Iterator[Problem]:
    defaults = {(d.get("Extension") or "").lower() for d in types.iter(f"{CT_NS}Default")}
    overrides = {(o.get("PartName") or "").lstrip("/") for o in types.iter(f"{CT_NS}Override")}
    for name in sorted(package.names - {"[Content_Types].xml"}):
        # Why not splitext: it reads "_rels/.rels" as a name without extension.
        ext = posixpath.basename(name).rpartition(".")[2].lower()
        if name not in overrides and ext not in defaults:
            yield Problem("opens", name, "part has no content type", "untyped_part")
    for name in sorted(overrides - package.names):
        yield Problem(
            "opens", name, "content type listed for a part that is missing", "missing_part"
        )


def _dangling(package: Package) -> Iterator[Problem]:
    main_found = False
    for rels in sorted(n for n in package.names if n.endswith(".rels")):
        root = package.xml(rels)
        if root is None:
            continue  # already reported as malformed
        source = _rels_source(rels)
        if source and source not in package.names:
            yield Problem(
                "opens",
                rels,
                f"relationships of a missing part {source}",
                "orphan_rels",
                {"part": source},
            )
        for rel in root.iter(PKG_REL):
            if rel.get("TargetMode") == "External":
                continue
            target = _target(source, rel.get("Target") or "")
            if rel.get("Type", "").endswith(OFFICE_DOCUMENT) and not source:
                main_found = target in package.names
            if target not in package.names:
                yield Problem(
                    "opens",
                    rels,
                    f"relationship {rel.get('Id')} points at {target}, which is missing",
                    "dangling_rel",
                    {"target": target},
                )
    if not main_found:
        yield Problem("opens", "_rels/.rels", "no main document part", "no_main_part")
