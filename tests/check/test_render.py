"""LibreOffice's round trip to PDF on a kept profile, and poppler's thumbnails."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.check import files as F
from workhearth.check import Tools
from workhearth.check.pdf import pdf_facts
from workhearth.check.render import RenderError, thumbnails, to_pdf


def test_a_docx_becomes_a_pdf_and_the_source_is_untouched(
    made: Callable[[str], Path], office: Tools, tmp_path: Path
) -> None:
    source = made("good.docx")
    before = source.read_bytes()
    pdf = to_pdf(office, source, tmp_path)
    assert pdf.parent == tmp_path and pdf.read_bytes().startswith(b"%PDF")
    assert "Quarterly report" in pdf_facts(pdf).text
    assert source.read_bytes() == before


def test_thumbnails_are_pngs_of_the_first_pages(office: Tools, tmp_path: Path) -> None:
    pdf = F.pdf(tmp_path / "five.pdf", pages=5)
    made = thumbnails(office, pdf, tmp_path / "thumbs", "abc", pages=3)
    assert [p.name for p in made] == ["abc-1.png", "abc-2.png", "abc-3.png"]
    assert all(p.read_bytes().startswith(F.PNG_MAGIC) for p in made)


def test_poppler_failing_is_a_render_error(office: Tools, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf")
    with pytest.raises(RenderError, match="poppler could not render it"):
        thumbnails(office, bad, tmp_path / "thumbs", "x")


def _ours(profile: Path) -> list[int]:
    """Processes whose command line names ``profile`` (LibreOffice's, on that profile)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if profile.as_uri().encode() in cmdline:
            found.append(int(proc.name))
    return found


def test_a_timeout_is_a_render_error_and_leaves_no_libreoffice(
    made: Callable[[str], Path], office: Tools, tmp_path: Path
) -> None:
    hurried = Tools(office.soffice, office.pdftoppm, tmp_path / "profile", timeout=0.5)
    with pytest.raises(RenderError, match="did not finish within"):
        to_pdf(hurried, made("good.docx"), tmp_path)
    deadline = time.monotonic() + 10
    while _ours(hurried.profile) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _ours(hurried.profile) == []


def test_libreoffice_gets_none_of_the_users_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workhearth.check.render import _soffice_env

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    env = _soffice_env("/usr/bin/soffice", tmp_path)
    assert set(env) == {"PATH", "HOME", "LANG", "SAL_USE_VCLPLUGIN"}
    assert env["HOME"] == str(tmp_path) and "sk-secret" not in str(env)


def test_the_benches_run_the_checks_own_libreoffice_command(tmp_path: Path) -> None:
    """One definition of LibreOffice's command line: the benches compare hearth check with
    the very conversion it runs, not with a copy that could drift from it."""
    from workhearth.check.render import soffice_command

    command = soffice_command("/usr/bin/soffice", tmp_path / "p", tmp_path / "a.docx", tmp_path)
    assert command[0] == "/usr/bin/soffice" and command[-1] == str(tmp_path / "a.docx")
    assert f"-env:UserInstallation={(tmp_path / 'p').as_uri()}" in command
    bench = Path(__file__).resolve().parents[2] / "bench"
    for script in ("check.py", "md_to_pdf.py"):
        text = (bench / script).read_text("utf-8")
        assert "soffice_command(" in text and '"--convert-to"' not in text, script


def test_a_conversion_stopped_early_leaves_no_libreoffice_and_frees_the_profile(
    made: Callable[[str], Path], office: Tools, tmp_path: Path
) -> None:
    """Leaving a started conversion unread (a broken file, an exception) stops LibreOffice;
    the next conversion on the same profile is not blocked."""
    from workhearth.check.render import Conversion

    (tmp_path / "a").mkdir()
    with Conversion(office, made("good.docx"), tmp_path / "a") as started:
        assert started.proc is not None
    assert started.proc.returncode is not None
    pdf = to_pdf(office, made("good.docx"), tmp_path)
    assert pdf.read_bytes().startswith(b"%PDF")
