"""Encryption at rest: ciphertext on disk, a blind index for search, the key never stored."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.bank.conftest import Server
from tests.bank.corpus import QUERIES, SENTENCES
from workhearth.bank.server.crypto import BankCipher, read_key_file
from workhearth.bank.server.store import PgBank, connect
from workhearth.bank.server.users import add_user
from workhearth.errors import CorruptDataError, EncryptionKeyError

KEY = bytes(range(32))


def _found_on_disk(server: Server, url: str, needles: list[bytes]) -> set[bytes]:
    with connect(url) as conn:
        conn.execute("CHECKPOINT")
    assert server.data is not None
    found: set[bytes] = set()
    for folder, _dirs, files in os.walk(server.data):
        for name in files:
            try:
                data = Path(folder, name).read_bytes()
            except OSError:
                continue
            found |= {n for n in needles if n in data}
    return found


@pytest.fixture
def keyed(pg_url: str) -> Iterator[PgBank]:
    with PgBank(pg_url, key=KEY) as bank, connect(pg_url) as conn:
        add_user(conn, "ann")
        add_user(conn, "bob")
        yield bank


def test_no_plaintext_in_the_database_files(pg_server: Server, pg_url: str) -> None:
    if pg_server.data is None:
        pytest.skip("HEARTH_TEST_PG_DATA is not set: the data directory cannot be read")
    marker = "zebracrossing" + uuid.uuid4().hex
    snippet = "snippetmark" + uuid.uuid4().hex
    chinese = "机密" + uuid.uuid4().hex[:6] + "银河计划"
    needles = [s.encode() for s in (marker, snippet, chinese)]
    with PgBank(pg_url, key=KEY) as bank, connect(pg_url) as conn:
        add_user(conn, "ann")
        entry = bank.save("ann", f"{marker} {chinese}", contexts=[{"snippet": snippet}])
        bank.edit("ann", entry.id, f"{marker} {chinese} edited")
        assert [h.entry_id for h in bank.search("ann", marker)] == [entry.id]
        assert [h.entry_id for h in bank.search("ann", "银河")] == [entry.id]
        assert bank.get("ann", entry.id).provenance[0]["snippet"] == snippet
    assert _found_on_disk(pg_server, pg_url, needles) == set()


def test_a_plain_bank_does_hold_plaintext(pg_server: Server, pg_url: str) -> None:
    """The control for the test above: the same search of the files finds a plain save."""
    if pg_server.data is None:
        pytest.skip("HEARTH_TEST_PG_DATA is not set: the data directory cannot be read")
    marker = "plainmarker" + uuid.uuid4().hex
    with PgBank(pg_url) as bank, connect(pg_url) as conn:
        add_user(conn, "ann")
        bank.save("ann", marker)
    assert _found_on_disk(pg_server, pg_url, [marker.encode()]) == {marker.encode()}


def test_encrypted_bank_searches_like_the_plain_one(
    keyed: PgBank, new_db: Callable[[], str]
) -> None:
    """Recall of the blind index against the plain bank's search, on a small corpus."""
    ids_k = {keyed.save("ann", s).id: s for s in SENTENCES}
    plain_url = new_db()
    with PgBank(plain_url) as plain, connect(plain_url) as conn:
        add_user(conn, "ann")
        ids_p = {plain.save("ann", s).id: s for s in SENTENCES}
        missed, total = 0, 0
        for q in QUERIES:
            want = [ids_p[h.entry_id] for h in plain.search("ann", q, limit=10)]
            got = [ids_k[h.entry_id] for h in keyed.search("ann", q, limit=10)]
            assert want, q
            total += len(want)
            missed += len(set(want) - set(got))
    assert missed / total <= 0.05, (missed, total)


def test_blind_terms_differ_per_user_and_key(keyed: PgBank) -> None:
    c = BankCipher(KEY)
    assert c.blind("ann", ["w:x"]) != c.blind("bob", ["w:x"])
    assert c.blind("ann", ["w:x"]) != BankCipher(bytes(32)).blind("ann", ["w:x"])
    keyed.save("ann", "shared words")
    keyed.save("bob", "shared words")
    assert len(keyed.search("bob", "shared")) == 1


def test_the_key_must_match_the_store(pg_url: str) -> None:
    PgBank(pg_url, key=KEY).close()
    with pytest.raises(EncryptionKeyError, match="wrong key"):
        PgBank(pg_url, key=bytes(32))
    with pytest.raises(EncryptionKeyError, match="encrypted: configure its key"):
        PgBank(pg_url)


def test_a_plain_store_cannot_be_given_a_key_later(pg_url: str) -> None:
    PgBank(pg_url).close()
    with pytest.raises(EncryptionKeyError, match="created without encryption"):
        PgBank(pg_url, key=KEY)


def test_a_ciphertext_moved_to_another_entry_does_not_open(keyed: PgBank, pg_url: str) -> None:
    a = keyed.save("ann", "first")
    b = keyed.save("ann", "second")
    with connect(pg_url) as conn:
        conn.execute(
            "UPDATE entries SET content_enc = (SELECT content_enc FROM entries WHERE id = %s) "
            "WHERE id = %s",
            (a.id, b.id),
        )
    with pytest.raises(CorruptDataError, match=b.id):
        keyed.get("ann", b.id)


def test_read_key_file(tmp_path: Path) -> None:
    raw, hexed, bad = tmp_path / "raw", tmp_path / "hex", tmp_path / "bad"
    raw.write_bytes(KEY)
    hexed.write_text(KEY.hex() + "\n")
    bad.write_text("short")
    assert read_key_file(raw) == KEY == read_key_file(hexed)
    with pytest.raises(EncryptionKeyError, match="32 bytes"):
        read_key_file(bad)
    with pytest.raises(EncryptionKeyError, match="cannot read"):
        read_key_file(tmp_path / "missing")
