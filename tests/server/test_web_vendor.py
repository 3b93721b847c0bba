"""The page's vendored libraries (issue #19 item 3): each ships with its licence, the hashes in
vendor/README.md are the files' own, and the page loads nothing from another host."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

WEB = Path(__file__).parents[2] / "src" / "workhearth" / "server" / "web"
VENDOR = WEB / "vendor"
HASH_LINE = re.compile(r"^([0-9a-f]{64})  (\S+)$", re.MULTILINE)


def listed_hashes() -> dict[str, str]:
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```sha256\n(.*?)^```$", readme, re.MULTILINE | re.DOTALL)
    assert block, "vendor/README.md has no ```sha256 block"
    return {path: digest for digest, path in HASH_LINE.findall(block.group(1))}


def test_each_vendored_package_has_its_build_and_its_licence() -> None:
    for build in ("markdown-it/markdown-it.esm.min.js", "dompurify/purify.es.js"):
        assert (VENDOR / build).stat().st_size > 10_000, build
    for package in ("markdown-it", "dompurify"):
        licence = (VENDOR / package / "LICENSE").read_text(encoding="utf-8")
        assert "Permission is hereby granted" in licence or "Apache License" in licence
    bundled = (VENDOR / "markdown-it" / "LICENSES-bundled.txt").read_text(encoding="utf-8")
    for dep in ("entities", "linkify-it", "mdurl", "punycode.js", "uc.micro"):
        assert f"\n{dep} " in bundled, dep


def test_the_readme_hashes_are_the_files_hashes_and_name_every_file() -> None:
    listed = listed_hashes()
    on_disk = {
        path.relative_to(VENDOR).as_posix()
        for path in VENDOR.rglob("*")
        if path.is_file() and path.parent != VENDOR
    }
    assert set(listed) == on_disk, "vendor/README.md must list exactly the vendored files"
    for name, digest in listed.items():
        actual = hashlib.sha256((VENDOR / name).read_bytes()).hexdigest()
        assert actual == digest, f"{name} changed: update its sha256 in vendor/README.md"


def test_the_readme_names_the_versions_in_the_builds() -> None:
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    head = (VENDOR / "markdown-it" / "markdown-it.esm.min.js").read_text(encoding="utf-8")[:200]
    version = re.search(r"markdown-it (\d+\.\d+\.\d+)", head)
    assert version and f"| {version.group(1)} |" in readme
    head = (VENDOR / "dompurify" / "purify.es.js").read_text(encoding="utf-8")[:200]
    version = re.search(r"DOMPurify (\d+\.\d+\.\d+)", head)
    assert version and f"| {version.group(1)} |" in readme


def test_the_page_loads_nothing_from_another_host() -> None:
    remote = re.compile(
        r"""(?:src|href)\s*=\s*["']\s*(?:https?:)?//|(?:import|from)\s*\(?\s*["'](?:https?:)?//"""
    )
    for path in [*WEB.glob("*.html"), *WEB.glob("*.js"), *WEB.glob("*.css")]:
        text = path.read_text(encoding="utf-8")
        assert not remote.search(text), f"{path.name} loads from another host"
        assert "@import" not in text or path.suffix != ".css", path.name
    markdown = (WEB / "markdown.js").read_text(encoding="utf-8")
    imports = re.findall(r"""^import .* from "([^"]+)";$""", markdown, re.MULTILINE)
    assert imports == [
        "./vendor/markdown-it/markdown-it.esm.min.js",
        "./vendor/dompurify/purify.es.js",
    ]
