"""Encryption at rest for the team bank: AES-256-GCM values and a blind search index.

One 32-byte secret (a key file the server reads; the database never sees it) is
stretched with HKDF-SHA256 into three keys that never encrypt each other:

- the *content* key seals each value (content, provenance snippets) with its own
  random nonce; the associated data binds the ciphertext to its entry id, owner
  and field, so a row copied onto another entry or user fails to open;
- the *blind* key makes the search terms: HMAC-SHA256 of owner + term, so the
  server can match a query's terms without holding the text, and the same word of
  two users never looks the same;
- the *check* key makes a fixed tag stored in ``settings``: a wrong key is
  reported as a wrong key, never as damaged rows.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
from collections.abc import Iterable
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from workhearth.errors import CorruptDataError, EncryptionKeyError

KEY_LEN = 32
NONCE_LEN = 12
_CHECK_MSG = b"workhearth team bank key check"


def _derive(secret: bytes, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=KEY_LEN, salt=None, info=info).derive(secret)


def read_key_file(path: Path) -> bytes:
    """A 32-byte key from a file: raw bytes, 64 hex digits or base64 text."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise EncryptionKeyError(f"cannot read the team key file {path}: {exc.strerror}") from None
    if len(raw) == KEY_LEN:
        return raw
    text = raw.strip()
    for decode in (binascii.unhexlify, base64.b64decode):
        try:
            key = decode(text)
        except (ValueError, binascii.Error):
            continue
        if len(key) == KEY_LEN:
            return key
    raise EncryptionKeyError(
        f"the team key file {path} must hold {KEY_LEN} bytes (raw, hex or base64)"
    )


class BankCipher:
    """Seals values and makes blind terms with keys derived from one secret."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) != KEY_LEN:
            raise EncryptionKeyError(f"the team key must be {KEY_LEN} bytes")
        self._aead = AESGCM(_derive(secret, b"workhearth team content"))
        self._blind = _derive(secret, b"workhearth team blind index")
        self._check = _derive(secret, b"workhearth team key check")

    def key_check(self) -> str:
        return hmac.new(self._check, _CHECK_MSG, hashlib.sha256).hexdigest()

    @staticmethod
    def _aad(entry_id: str, owner: str, field: str) -> bytes:
        return b"\0".join(part.encode() for part in (entry_id, owner, field))

    def seal(self, text: str, entry_id: str, owner: str, field: str) -> bytes:
        nonce = os.urandom(NONCE_LEN)
        aad = self._aad(entry_id, owner, field)
        return nonce + self._aead.encrypt(nonce, text.encode("utf-8"), aad)

    def open(self, blob: bytes, entry_id: str, owner: str, field: str) -> str:
        blob = bytes(blob)
        try:
            plain = self._aead.decrypt(
                blob[:NONCE_LEN], blob[NONCE_LEN:], self._aad(entry_id, owner, field)
            )
        except InvalidTag:
            raise CorruptDataError(
                f"memory entry {entry_id}: its {field} does not open with this key"
            ) from None
        return plain.decode("utf-8")

    def blind(self, owner: str, terms: Iterable[str]) -> list[bytes]:
        """The blind index terms: HMAC-SHA256(owner + term) of each distinct term."""
        prefix = owner.encode() + b"\0"
        return [
            hmac.new(self._blind, prefix + term.encode("utf-8"), hashlib.sha256).digest()
            for term in dict.fromkeys(terms)
        ]

    def digest(self, owner: str, text: str) -> bytes:
        """A keyed digest of an entry's content, to find the same sentence saved twice."""
        return self.blind(owner, ["\0digest\0" + text])[0]
