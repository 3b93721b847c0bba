"""``hearth memory save`` / ``edit`` refuse a secret in any field, or mask it with --redact."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.e2e.conftest import Hearth, make_hearth
from tests.e2e.test_cli_memory import files_digest, library, one_line_error

KEY = "glpat-p8XzRs0LU5XO-XIdlu_a"
CORE = "p8XzRs0LU5XO"
FIELDS = {
    "content": ["save", f"deploy with {KEY}"],
    "tag": ["save", "a fact", "--tag", KEY],
    "snippet": ["save", "a fact", "--snippet", f"pasted {KEY}"],
    "session": ["save", "a fact", "--snippet", "s", "--session", KEY],
    "message": ["save", "a fact", "--snippet", "s", "--message", f"password={KEY}"],
    "edit": ["edit", "{id}", f"now {KEY}"],
}


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Hearth, str]]:
    def one(case: str) -> tuple[Hearth, str]:
        h = make_hearth(tmp_path_factory.mktemp("secret"))
        wh = library(h)
        entry = wh.memory.save("an existing fact")
        wh.memory.index()
        wh.memory.close()
        return h, entry.id

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(FIELDS, pool.map(one, FIELDS), strict=True))


@pytest.mark.parametrize("field", FIELDS)
def test_a_secret_is_refused_then_masked_with_redact(
    homes: dict[str, tuple[Hearth, str]], field: str
) -> None:
    h, entry_id = homes[field]
    args = [a.replace("{id}", entry_id) for a in FIELDS[field]]
    before = files_digest(h)
    line = one_line_error(h.run("memory", *args))
    assert line.startswith("hearth: refused") and "secret" in line and CORE not in line
    assert "--redact" in line
    assert files_digest(h) == before  # nothing written

    masked = h.run("memory", *args, "--redact", "--json")
    assert masked.code == 0, masked.err
    assert CORE not in masked.out and "[REDACTED" in masked.out
    assert not any(CORE.encode() in p.read_bytes() for p in h.home.rglob("*") if p.is_file())


def test_passwords_stated_in_sentences_are_refused_and_masked(tmp_path) -> None:
    """Issue #17 hole 10: five sentences that each state a password were stored as given."""
    from tests.memory.secrets_corpus import PROSE_LOOKALIKES, PROSE_PASSWORDS
    from workhearth.memory.secrets import scan

    h = make_hearth(tmp_path)
    for sentence in PROSE_PASSWORDS:
        (finding,) = scan(sentence)
        value = sentence[finding.start : finding.end]
        line = one_line_error(h.run("memory", "save", sentence))
        assert line.startswith("hearth: refused") and "password" in line, line
        assert value not in line
        masked = h.json("memory", "save", sentence, "--redact")
        assert value not in masked["content"] and "[REDACTED password]" in masked["content"]
    stored = b"".join(p.read_bytes() for p in h.home.rglob("*") if p.is_file())
    assert not any(s[scan(s)[0].start : scan(s)[0].end].encode() in stored for s in PROSE_PASSWORDS)
    # A few look-alikes go through the real command too (the whole list: tests/memory).
    for sentence in PROSE_LOOKALIKES[:5]:
        saved = h.json("memory", "save", sentence)
        assert saved["content"] == sentence
