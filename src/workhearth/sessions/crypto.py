"""Optional AES-256-GCM encryption for session transcripts (DESIGN §3 Encryption).

Each transcript line is sealed on its own, so appends never re-encrypt and a torn
line loses one line only. Everything derived from an encrypted session (snapshot,
tool outputs, bundles) is sealed whole with :meth:`SessionCipher.seal_blob`.

Every session has its own key:

- ``passphrase``: scrypt over the passphrase with a random per-session salt;
- ``key_file`` / ``keyring``: a 32-byte master key, stretched per session with
  HKDF-SHA256 (salt = session id), so the master key never encrypts anything.

The meta line stores only the key source, the KDF parameters and a key-check tag
(HMAC of a fixed string under the session key): a wrong key is reported as a
wrong key, never mistaken for damaged lines. No key material is ever logged or
put in an exception message.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
import stat
import struct
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from workhearth.config import EncryptionConfig
from workhearth.errors import CorruptDataError, EncryptionKeyError
from workhearth.fsutil import make_private_dir

ALG = "aes-256-gcm"
KEY_LEN = 32
NONCE_LEN = 12
SALT_LEN = 16
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
# Why: meta lines are read from disk, so cap what a hostile one can make scrypt spend.
_SCRYPT_MAX_MEMORY = 2**30
KEYRING_USERNAME = "workhearth-master-key"

_HKDF_INFO = b"workhearth session key"
_KEY_CHECK_MSG = b"workhearth key check"
_BLOB_MAGIC = b"WHENC1\n"
_SOURCES = ("passphrase", "key_file", "keyring")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: object) -> bytes | None:
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _field(data: bytes) -> bytes:
    """Length-prefix a field so concatenated associated data is unambiguous."""
    return struct.pack(">I", len(data)) + data


def _key_check(key: bytes) -> bytes:
    return hmac.new(key, _KEY_CHECK_MSG, hashlib.sha256).digest()[:16]


# ---------------------------------------------------------------- key file


def generate_key_file(path: Path) -> None:
    """Write 32 random bytes to ``path`` with mode 0600, atomically.

    The key is written to a temporary file in the same folder, fsynced, then moved
    into place. An existing file is never replaced (it may hold the only key to
    older sessions): that, like any I/O failure, raises :class:`EncryptionKeyError`.
    """
    path = Path(path)
    try:
        make_private_dir(path.parent)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise EncryptionKeyError(f"cannot create key file {path} ({exc.strerror})") from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            if hasattr(os, "fchmod"):  # mkstemp already uses 0600; say it outright
                os.fchmod(fh.fileno(), 0o600)
            fh.write(secrets.token_bytes(KEY_LEN))
            fh.flush()
            os.fsync(fh.fileno())
        _install_exclusive(tmp, path)
    except OSError as exc:
        raise EncryptionKeyError(f"cannot create key file {path} ({exc.strerror})") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _fsync_dir(path.parent)


def _install_exclusive(tmp: Path, path: Path) -> None:
    exists = EncryptionKeyError(f"key file {path} already exists; not replacing it")
    try:
        # Why: link() fails if the target exists, so two processes creating
        # sessions at once cannot overwrite each other's freshly made key.
        os.link(tmp, path)
    except FileExistsError:
        raise exists from None
    except OSError:
        # Filesystems without hard links: check, then rename (atomic, not exclusive).
        if path.exists():
            raise exists from None
        os.replace(tmp, path)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def _parse_key(raw: bytes) -> bytes | None:
    """Accept 32 raw bytes, or their hex or base64 text (whitespace ignored)."""
    if len(raw) == KEY_LEN:
        return raw
    text = b"".join(raw.split())
    if len(text) == 2 * KEY_LEN:
        with contextlib.suppress(ValueError):
            return bytes.fromhex(text.decode("ascii"))
    try:
        key = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return key if len(key) == KEY_LEN else None


def _read_key_file(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise EncryptionKeyError(f"key file {path} does not exist") from None
    except OSError as exc:
        raise EncryptionKeyError(f"cannot read key file {path} ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise EncryptionKeyError(f"key file {path} is not a regular file")
        mode = stat.S_IMODE(st.st_mode)
        if os.name == "posix" and mode & 0o077:
            raise EncryptionKeyError(
                f"key file {path} is readable by group or others (mode {mode:04o}); "
                f"run: chmod 600 {path}"
            )
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(4096)
    except OSError as exc:
        raise EncryptionKeyError(f"cannot read key file {path} ({exc.strerror})") from None
    finally:
        os.close(fd)
    key = _parse_key(raw)
    if key is None:
        raise EncryptionKeyError(
            f"key file {path} does not hold a 32-byte key (raw, hex or base64)"
        )
    return key


# ---------------------------------------------------------------- keyring


def _keyring_module(service: str) -> Any:
    try:
        import keyring
    except ImportError:
        raise EncryptionKeyError(
            f"keyring service {service!r} is configured but the 'keyring' package is not "
            "installed (pip install 'workhearth[keyring]')"
        ) from None
    return keyring


def _keyring_error(service: str, exc: Exception) -> EncryptionKeyError:
    # Why: keyring errors name the backend and the reason; they never carry the secret.
    return EncryptionKeyError(
        f"OS keyring unavailable for service {service!r}: {type(exc).__name__}: {exc}"
    )


def _read_keyring(service: str, *, create: bool) -> bytes:
    keyring = _keyring_module(service)
    try:
        stored = keyring.get_password(service, KEYRING_USERNAME)
        if stored is None and create:
            keyring.set_password(service, KEYRING_USERNAME, _b64(secrets.token_bytes(KEY_LEN)))
            stored = keyring.get_password(service, KEYRING_USERNAME)
    except Exception as exc:  # keyring backends raise assorted errors
        raise _keyring_error(service, exc) from None
    if stored is None:
        raise EncryptionKeyError(f"no key in the OS keyring for service {service!r}")
    key = _parse_key(stored.encode("utf-8"))
    if key is None:
        raise EncryptionKeyError(
            f"the OS keyring entry for service {service!r} does not hold a 32-byte key"
        )
    return key


# ---------------------------------------------------------------- key derivation


def _hkdf(master: bytes, session_id: str) -> bytes:
    return HKDF(
        algorithm=hashes.SHA256(),
        length=KEY_LEN,
        salt=session_id.encode("utf-8"),
        info=_HKDF_INFO,
    ).derive(master)


def _scrypt(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=KEY_LEN, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def _scrypt_params(session_id: str, kdf: object) -> tuple[bytes, int, int, int]:
    bad = CorruptDataError(f"session {session_id}: meta line has unusable scrypt parameters")
    if not isinstance(kdf, Mapping) or kdf.get("name") != "scrypt":
        raise bad
    salt = _unb64(kdf.get("salt"))
    if salt is None or not 8 <= len(salt) <= 64:
        raise bad
    values: list[int] = []
    for value in (kdf.get("n"), kdf.get("r"), kdf.get("p")):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise bad
        values.append(value)
    n, r, p = values
    if n < 2 or n & (n - 1) or r > 32 or p > 16 or 128 * n * r > _SCRYPT_MAX_MEMORY:
        raise bad
    return salt, n, r, p


def _pick_source(cfg: EncryptionConfig) -> str:
    if cfg.passphrase:
        return "passphrase"
    if cfg.key_file is not None:
        return "key_file"
    if cfg.keyring_service:
        return "keyring"
    raise EncryptionKeyError(
        "encryption is on but no key is configured: set HEARTH_PASSPHRASE, "
        "a key_file, or a keyring_service under [encryption]"
    )


def _master_key(cfg: EncryptionConfig, source: str, session_id: str, *, create: bool) -> bytes:
    if source == "key_file":
        if cfg.key_file is None:
            raise EncryptionKeyError(
                f"session {session_id} is encrypted with a key file, but no key_file is configured"
            )
        path = Path(cfg.key_file)
        if create and not path.exists():
            try:
                generate_key_file(path)
            except EncryptionKeyError:
                # Another process may have won the race to create it; then read theirs.
                if not path.exists():
                    raise
        return _read_key_file(path)
    if not cfg.keyring_service:
        raise EncryptionKeyError(
            f"session {session_id} is encrypted with an OS keyring key, "
            "but no keyring_service is configured"
        )
    return _read_keyring(cfg.keyring_service, create=create)


def _session_key(cfg: EncryptionConfig, session_id: str, meta: Mapping[str, Any]) -> bytes:
    """The session key from the configured secret and a meta ``encryption`` record."""
    source = meta.get("source")
    if source not in _SOURCES:
        raise CorruptDataError(f"session {session_id}: unknown key source {source!r}")
    if source == "passphrase":
        salt, n, r, p = _scrypt_params(session_id, meta.get("kdf"))
        if not cfg.passphrase:
            raise EncryptionKeyError(
                f"session {session_id} is encrypted with a passphrase; "
                "set HEARTH_PASSPHRASE to open it"
            )
        return _scrypt(cfg.passphrase, salt, n, r, p)
    return _hkdf(_master_key(cfg, source, session_id, create=False), session_id)


# ---------------------------------------------------------------- cipher


class SessionCipher:
    """Seals and opens the lines and files of one encrypted session."""

    __slots__ = ("_aead", "_key_check", "_name_key", "session_id")

    def __init__(self, session_id: str, key: bytes) -> None:
        if len(key) != KEY_LEN:
            raise ValueError("session key must be 32 bytes")
        self.session_id = session_id
        self._aead = AESGCM(key)
        self._key_check = _key_check(key)
        # Why a key of its own: names must not reveal content (a bare sha256 of a known
        # file would), and a key used for naming is never used for sealing.
        self._name_key = hmac.new(key, b"workhearth/names", hashlib.sha256).digest()

    def __repr__(self) -> str:
        return f"SessionCipher(session_id={self.session_id!r})"

    @classmethod
    def create(cls, cfg: EncryptionConfig, session_id: str) -> tuple[SessionCipher, dict[str, Any]]:
        """Start a new encrypted session.

        Returns the cipher and the JSON-ready ``encryption`` dict for the meta line.
        Raises :class:`EncryptionKeyError` when no key source is configured or the
        configured one cannot be used.
        """
        source = _pick_source(cfg)
        info: dict[str, Any] = {"alg": ALG, "source": source}
        if source == "passphrase":
            assert cfg.passphrase is not None
            salt = secrets.token_bytes(SALT_LEN)
            key = _scrypt(cfg.passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
            info["kdf"] = {
                "name": "scrypt",
                "salt": _b64(salt),
                "n": SCRYPT_N,
                "r": SCRYPT_R,
                "p": SCRYPT_P,
            }
        else:
            key = _hkdf(_master_key(cfg, source, session_id, create=True), session_id)
            info["kdf"] = {"name": "hkdf-sha256"}
        cipher = cls(session_id, key)
        info["key_check"] = _b64(cipher._key_check)
        return cipher, info

    @classmethod
    def open(
        cls, cfg: EncryptionConfig, session_id: str, meta: Mapping[str, Any] | None
    ) -> SessionCipher:
        """Open an existing session from its meta ``encryption`` dict.

        Raises :class:`EncryptionKeyError` for a missing, unreadable or wrong key,
        and :class:`CorruptDataError` when ``meta`` itself is malformed.
        """
        if not isinstance(meta, Mapping):
            raise CorruptDataError(f"session {session_id}: meta line has no encryption record")
        if meta.get("alg") != ALG:
            raise CorruptDataError(
                f"session {session_id}: unsupported encryption {meta.get('alg')!r}"
            )
        source = meta.get("source")
        if source not in _SOURCES:
            raise CorruptDataError(f"session {session_id}: unknown key source {source!r}")
        want = _unb64(meta.get("key_check"))
        if want is None or len(want) != 16:
            raise CorruptDataError(f"session {session_id}: meta line has no valid key check")
        cipher = cls(session_id, _session_key(cfg, session_id, meta))
        if not hmac.compare_digest(cipher._key_check, want):
            raise EncryptionKeyError(
                f"wrong key for session {session_id} (key source: {source.replace('_', ' ')})"
            )
        return cipher

    @classmethod
    def recover(
        cls,
        cfg: EncryptionConfig,
        session_id: str,
        salvaged: object,
        probes: Sequence[tuple[int, Mapping[str, Any]]],
    ) -> tuple[SessionCipher, dict[str, Any]]:
        """Open a session whose meta line is damaged, proving the key on its other lines.

        ``salvaged`` is whatever could still be read of the damaged ``encryption``
        record (it may be wrong); a key file or keyring key needs none of it, since
        its session key derives from the master key and the session id alone. A
        candidate key is accepted only when it decrypts one of ``probes`` (good
        encrypted lines: AES-GCM authenticates them), so a guess is never trusted.
        Returns the cipher and a repaired ``encryption`` record for the rebuilt meta.
        """
        candidates: list[dict[str, Any]] = []
        if isinstance(salvaged, Mapping):
            candidates.append({**salvaged, "alg": ALG})
        for source in ("key_file", "keyring"):
            configured = cfg.key_file if source == "key_file" else cfg.keyring_service
            if configured:
                candidates.append({"alg": ALG, "source": source, "kdf": {"name": "hkdf-sha256"}})
        problems: list[str] = []
        for info in candidates:
            try:
                cipher = cls(session_id, _session_key(cfg, session_id, info))
            except (EncryptionKeyError, CorruptDataError) as exc:
                problems.append(str(exc))
                continue
            if any(cipher.open_event(seq, env) is not None for seq, env in probes):
                return cipher, {**info, "key_check": _b64(cipher._key_check)}
        if not cfg.passphrase and not cfg.key_file and not cfg.keyring_service:
            raise EncryptionKeyError(
                f"session {session_id} is encrypted and its header (meta line) is damaged; "
                "configure its key (HEARTH_PASSPHRASE, a key_file or a keyring_service) to open it"
            )
        reason = f" ({problems[0]})" if problems else ""
        raise EncryptionKeyError(
            f"session {session_id}: its header (meta line) is damaged and the configured key "
            "does not open its other lines: a wrong key, or the damage hit the passphrase's "
            f"salt that the header held{reason}"
        )

    # -- transcript lines

    def _event_ad(self, seq: int) -> bytes:
        return (
            b"workhearth/event" + _field(self.session_id.encode("utf-8")) + struct.pack(">Q", seq)
        )

    def seal_event(self, seq: int, plaintext: bytes) -> dict[str, Any]:
        """Encrypt one event's JSON; the result goes on the line next to ``seq``."""
        if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < 2**64:
            raise ValueError("seq must be a non-negative integer")
        nonce = secrets.token_bytes(NONCE_LEN)
        ct = self._aead.encrypt(nonce, plaintext, self._event_ad(seq))
        return {"enc": ALG, "nonce": _b64(nonce), "ct": _b64(ct)}

    def open_event(self, seq: int, envelope: Mapping[str, Any]) -> bytes | None:
        """Decrypt one event; ``None`` when it was tampered with, moved or is foreign."""
        if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < 2**64:
            return None
        if not isinstance(envelope, Mapping) or envelope.get("enc") != ALG:
            return None
        nonce, ct = _unb64(envelope.get("nonce")), _unb64(envelope.get("ct"))
        if nonce is None or ct is None or len(nonce) != NONCE_LEN:
            return None
        try:
            return self._aead.decrypt(nonce, ct, self._event_ad(seq))
        except InvalidTag:
            return None

    # -- whole files

    def keyed_name(self, digest: str) -> str:
        """A file name for content whose sha256 is ``digest`` that says nothing of it
        without the key (checkpoint contents, issue 22)."""
        return hmac.new(self._name_key, digest.encode("ascii"), hashlib.sha256).hexdigest()

    def _blob_ad(self, label: str) -> bytes:
        return (
            b"workhearth/blob"
            + _field(self.session_id.encode("utf-8"))
            + _field(label.encode("utf-8"))
        )

    def seal_blob(self, label: str, data: bytes) -> bytes:
        """Encrypt a whole file (snapshot, tool output, bundle); ``label`` names its role."""
        nonce = secrets.token_bytes(NONCE_LEN)
        return _BLOB_MAGIC + nonce + self._aead.encrypt(nonce, data, self._blob_ad(label))

    def open_blob(self, label: str, data: bytes) -> bytes:
        """Decrypt :meth:`seal_blob` output; :class:`CorruptDataError` if it does not verify."""
        head = len(_BLOB_MAGIC)
        if len(data) < head + NONCE_LEN + 16 or not data.startswith(_BLOB_MAGIC):
            raise CorruptDataError(
                f"session {self.session_id}: {label} is not an encrypted workhearth file"
            )
        nonce = data[head : head + NONCE_LEN]
        try:
            return self._aead.decrypt(nonce, data[head + NONCE_LEN :], self._blob_ad(label))
        except InvalidTag:
            raise CorruptDataError(
                f"session {self.session_id}: {label} is damaged or belongs to another session"
            ) from None
