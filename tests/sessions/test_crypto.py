"""Per-line AES-256-GCM session encryption (DESIGN §3 Encryption)."""

from __future__ import annotations

import base64
import os
import stat
import sys
import types
from pathlib import Path

import pytest

from workhearth.config import EncryptionConfig
from workhearth.errors import CorruptDataError, EncryptionKeyError
from workhearth.sessions.codec import encode_line
from workhearth.sessions.crypto import SessionCipher, generate_key_file

SECRET = b"the-zebra-sings-at-midnight-4711"
posix_only = pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _assert_round_trip(cipher: SessionCipher, reopened: SessionCipher) -> None:
    envelope = cipher.seal_event(3, SECRET)
    assert set(envelope) == {"enc", "nonce", "ct"}
    assert envelope["enc"] == "aes-256-gcm"
    assert reopened.open_event(3, envelope) == SECRET
    assert reopened.open_blob("snapshot", cipher.seal_blob("snapshot", SECRET)) == SECRET


@pytest.fixture(scope="module")
def pass_session() -> tuple[SessionCipher, dict]:
    return SessionCipher.create(EncryptionConfig(passphrase="correct horse"), "s-pass")


@pytest.fixture
def key_cfg(tmp_path: Path) -> EncryptionConfig:
    return EncryptionConfig(key_file=tmp_path / "keys" / "session.key")


class FakeKeyring(types.ModuleType):
    """Stands in for the optional ``keyring`` package (same two functions)."""

    def __init__(self) -> None:
        super().__init__("keyring")
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password


# ---------------------------------------------------------------- round trips


def test_passphrase_round_trip(pass_session: tuple[SessionCipher, dict]) -> None:
    cipher, meta = pass_session
    assert meta["alg"] == "aes-256-gcm"
    assert meta["source"] == "passphrase"
    kdf = meta["kdf"]
    assert kdf["name"] == "scrypt"
    assert (kdf["n"], kdf["r"], kdf["p"]) == (2**15, 8, 1)
    assert len(base64.b64decode(kdf["salt"])) == 16
    assert len(base64.b64decode(meta["key_check"])) == 16
    reopened = SessionCipher.open(EncryptionConfig(passphrase="correct horse"), "s-pass", meta)
    _assert_round_trip(cipher, reopened)


def test_passphrase_salt_differs_per_session(pass_session: tuple[SessionCipher, dict]) -> None:
    _, other = SessionCipher.create(EncryptionConfig(passphrase="correct horse"), "s-pass")
    assert other["kdf"]["salt"] != pass_session[1]["kdf"]["salt"]


def test_key_file_round_trip_creates_file(key_cfg: EncryptionConfig) -> None:
    assert key_cfg.key_file is not None
    cipher, meta = SessionCipher.create(key_cfg, "s-file")
    assert meta["source"] == "key_file"
    assert len(key_cfg.key_file.read_bytes()) == 32
    if os.name == "posix":
        assert _mode(key_cfg.key_file) == 0o600
    _assert_round_trip(cipher, SessionCipher.open(key_cfg, "s-file", meta))


@pytest.mark.parametrize("encode", [bytes.hex, base64.b64encode], ids=["hex", "base64"])
def test_key_file_text_forms(tmp_path: Path, encode) -> None:
    raw = os.urandom(32)
    path = tmp_path / "text.key"
    text = encode(raw)
    path.write_bytes((text if isinstance(text, bytes) else text.encode()) + b"\n")
    path.chmod(0o600)
    cipher, meta = SessionCipher.create(EncryptionConfig(key_file=path), "s-text")
    # The same key as raw bytes opens it: the text form is only an encoding.
    path.write_bytes(raw)
    _assert_round_trip(cipher, SessionCipher.open(EncryptionConfig(key_file=path), "s-text", meta))


def test_passphrase_wins_over_key_file(key_cfg: EncryptionConfig) -> None:
    cfg = EncryptionConfig(key_file=key_cfg.key_file, passphrase="pw")
    _, meta = SessionCipher.create(cfg, "s-order")
    assert meta["source"] == "passphrase"
    assert key_cfg.key_file is not None and not key_cfg.key_file.exists()


def test_keyring_round_trip_with_fake_module(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeKeyring()
    monkeypatch.setitem(sys.modules, "keyring", fake)
    cfg = EncryptionConfig(keyring_service="workhearth-test")
    cipher, meta = SessionCipher.create(cfg, "s-ring")
    assert meta["source"] == "keyring"
    assert len(fake.store) == 1
    _assert_round_trip(cipher, SessionCipher.open(cfg, "s-ring", meta))


def test_keyring_round_trip_with_real_package(monkeypatch: pytest.MonkeyPatch) -> None:
    keyring = pytest.importorskip("keyring")
    from keyring.backend import KeyringBackend

    class MemoryBackend(KeyringBackend):
        priority = 1  # type: ignore[assignment]

        def __init__(self) -> None:
            super().__init__()
            self.store: dict[tuple[str, str], str] = {}

        def get_password(self, service: str, username: str) -> str | None:
            return self.store.get((service, username))

        def set_password(self, service: str, username: str, password: str) -> None:
            self.store[(service, username)] = password

        def delete_password(self, service: str, username: str) -> None:
            self.store.pop((service, username), None)

    previous = keyring.get_keyring()
    keyring.set_keyring(MemoryBackend())
    try:
        cfg = EncryptionConfig(keyring_service="workhearth-test")
        cipher, meta = SessionCipher.create(cfg, "s-ring")
        _assert_round_trip(cipher, SessionCipher.open(cfg, "s-ring", meta))
    finally:
        keyring.set_keyring(previous)


# ---------------------------------------------------------------- key errors


def test_no_key_source_is_refused() -> None:
    with pytest.raises(EncryptionKeyError, match="no key is configured"):
        SessionCipher.create(EncryptionConfig(enabled=True), "s-none")


def test_wrong_passphrase_is_a_wrong_key(pass_session: tuple[SessionCipher, dict]) -> None:
    with pytest.raises(EncryptionKeyError, match="wrong key for session s-pass") as info:
        SessionCipher.open(
            EncryptionConfig(passphrase="incorrect horse"), "s-pass", pass_session[1]
        )
    assert "horse" not in str(info.value)


def test_missing_passphrase(pass_session: tuple[SessionCipher, dict]) -> None:
    with pytest.raises(EncryptionKeyError, match="passphrase"):
        SessionCipher.open(EncryptionConfig(), "s-pass", pass_session[1])


def test_wrong_key_file_is_a_wrong_key(key_cfg: EncryptionConfig, tmp_path: Path) -> None:
    _, meta = SessionCipher.create(key_cfg, "s-file")
    other = tmp_path / "other.key"
    generate_key_file(other)
    with pytest.raises(EncryptionKeyError, match="wrong key for session s-file"):
        SessionCipher.open(EncryptionConfig(key_file=other), "s-file", meta)


def test_meta_of_another_session_is_a_wrong_key(key_cfg: EncryptionConfig) -> None:
    _, meta = SessionCipher.create(key_cfg, "s-one")
    with pytest.raises(EncryptionKeyError, match="wrong key for session s-two"):
        SessionCipher.open(key_cfg, "s-two", meta)


def test_missing_key_file_on_open(key_cfg: EncryptionConfig, tmp_path: Path) -> None:
    _, meta = SessionCipher.create(key_cfg, "s-file")
    gone = EncryptionConfig(key_file=tmp_path / "nowhere.key")
    with pytest.raises(EncryptionKeyError, match="does not exist"):
        SessionCipher.open(gone, "s-file", meta)
    assert not (tmp_path / "nowhere.key").exists()  # open never invents a key
    with pytest.raises(EncryptionKeyError, match="no key_file is configured"):
        SessionCipher.open(EncryptionConfig(passphrase="pw"), "s-file", meta)


@posix_only
def test_key_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loose.key"
    generate_key_file(path)
    path.chmod(0o644)
    with pytest.raises(EncryptionKeyError, match="readable by group or others"):
        SessionCipher.create(EncryptionConfig(key_file=path), "s-loose")


def test_key_file_of_wrong_length_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.key"
    secret = os.urandom(20)
    path.write_bytes(secret)
    path.chmod(0o600)
    with pytest.raises(EncryptionKeyError, match="32-byte key") as info:
        SessionCipher.create(EncryptionConfig(key_file=path), "s-short")
    assert secret.hex() not in str(info.value)


@posix_only
def test_generated_key_file_is_0600(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "session.key"
    generate_key_file(path)
    assert _mode(path) == 0o600
    assert len(path.read_bytes()) == 32
    assert [p.name for p in path.parent.iterdir()] == ["session.key"]  # no temp file left


def test_generate_key_file_never_replaces_a_key(tmp_path: Path) -> None:
    path = tmp_path / "session.key"
    generate_key_file(path)
    before = path.read_bytes()
    with pytest.raises(EncryptionKeyError, match="already exists"):
        generate_key_file(path)
    assert path.read_bytes() == before


def test_keyring_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "keyring", None)  # makes `import keyring` fail
    with pytest.raises(EncryptionKeyError, match="not installed"):
        SessionCipher.create(EncryptionConfig(keyring_service="workhearth-test"), "s-ring")


def test_keyring_without_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeKeyring()

    def no_backend(service: str, username: str) -> str | None:
        raise RuntimeError("No recommended backend was available")

    fake.get_password = no_backend  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, "keyring", fake)
    with pytest.raises(EncryptionKeyError, match="keyring unavailable"):
        SessionCipher.create(EncryptionConfig(keyring_service="workhearth-test"), "s-ring")


def test_malformed_meta_is_corrupt_data(pass_session: tuple[SessionCipher, dict]) -> None:
    cfg = EncryptionConfig(passphrase="correct horse")
    meta = pass_session[1]
    greedy = {**meta, "kdf": {**meta["kdf"], "n": 2**40}}
    with pytest.raises(CorruptDataError, match="scrypt"):
        SessionCipher.open(cfg, "s-pass", greedy)
    with pytest.raises(CorruptDataError, match="key check"):
        SessionCipher.open(cfg, "s-pass", {**meta, "key_check": "!!"})


# ---------------------------------------------------------------- confidentiality


def test_ciphertext_holds_no_plaintext(key_cfg: EncryptionConfig) -> None:
    cipher, meta = SessionCipher.create(key_cfg, "s-file")
    line = encode_line({"seq": 1, "sid": "s-file", **cipher.seal_event(1, SECRET)})
    blob = cipher.seal_blob("tool-output", SECRET * 4)
    meta_line = encode_line({"seq": 0, "encryption": meta})
    for raw in (line, blob, meta_line):
        assert SECRET not in raw
        assert b"zebra" not in raw
        assert base64.b64encode(SECRET)[:20] not in raw
    assert key_cfg.key_file is not None
    key = key_cfg.key_file.read_bytes()
    assert key not in meta_line and base64.b64encode(key) not in meta_line


def test_nonces_are_fresh(key_cfg: EncryptionConfig) -> None:
    cipher, _ = SessionCipher.create(key_cfg, "s-file")
    a, b = cipher.seal_event(1, SECRET), cipher.seal_event(1, SECRET)
    assert a["nonce"] != b["nonce"] and a["ct"] != b["ct"]
    assert len(base64.b64decode(a["nonce"])) == 12


def test_repr_shows_no_key(key_cfg: EncryptionConfig) -> None:
    cipher, _ = SessionCipher.create(key_cfg, "s-file")
    assert repr(cipher) == "SessionCipher(session_id='s-file')"


# ---------------------------------------------------------------- tampering


def _flip_bit(text: str, index: int = 0) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[index] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


def test_tampered_events_are_rejected(key_cfg: EncryptionConfig) -> None:
    cipher, _ = SessionCipher.create(key_cfg, "s-file")
    env = cipher.seal_event(7, SECRET)
    assert cipher.open_event(7, env) == SECRET
    assert cipher.open_event(7, {**env, "ct": _flip_bit(env["ct"])}) is None
    assert cipher.open_event(7, {**env, "ct": _flip_bit(env["ct"], -1)}) is None  # tag
    assert cipher.open_event(7, {**env, "nonce": _flip_bit(env["nonce"])}) is None
    assert cipher.open_event(8, env) is None  # moved to another seq
    assert cipher.open_event(7, {**env, "enc": "rot13"}) is None
    assert cipher.open_event(7, {**env, "ct": "not base64!"}) is None
    assert cipher.open_event(7, {"enc": "aes-256-gcm"}) is None


def test_event_from_another_session_is_rejected(tmp_path: Path) -> None:
    key = os.urandom(32)
    # Same key, other session id: the associated data alone must refuse it.
    assert (
        SessionCipher("s-b", key).open_event(1, SessionCipher("s-a", key).seal_event(1, SECRET))
        is None
    )
    # Same key file, other session: refused too.
    cfg = EncryptionConfig(key_file=tmp_path / "shared.key")
    one, _ = SessionCipher.create(cfg, "s-one")
    two, _ = SessionCipher.create(cfg, "s-two")
    assert two.open_event(1, one.seal_event(1, SECRET)) is None


def test_tampered_blob_is_corrupt_data(key_cfg: EncryptionConfig) -> None:
    cipher, _ = SessionCipher.create(key_cfg, "s-file")
    blob = cipher.seal_blob("snapshot", SECRET)
    flipped = bytearray(blob)
    flipped[-5] ^= 0x01
    for bad_label, bad in [
        ("snapshot", bytes(flipped)),
        ("snapshot", blob[:-1]),
        ("snapshot", b""),
        ("snapshot", SECRET),  # a plaintext file where a sealed one was expected
        ("bundle", blob),  # sealed for another role
    ]:
        with pytest.raises(CorruptDataError):
            cipher.open_blob(bad_label, bad)
    other = SessionCipher("s-other", os.urandom(32))
    with pytest.raises(CorruptDataError):
        other.open_blob("snapshot", blob)
