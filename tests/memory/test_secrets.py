"""Secrets are refused in every field of memory (DESIGN §4), measured on a corpus.

The corpus (tests/memory/secrets_corpus.py) has a held-out part written before the
detector and never tuned against: its recall is the honest estimate for formats the
tests never saw. Every innocent look-alike must pass.
"""

from __future__ import annotations

import base64
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.memory.secrets_corpus import HELD_OUT, LOOKALIKES, TUNED, measure
from workhearth import Workhearth
from workhearth.errors import UsageError
from workhearth.memory.secrets import find_secrets, redact


@pytest.fixture
def wh(tmp_path: Path) -> Iterator[Workhearth]:
    w = Workhearth(home=tmp_path / "home", workspace=tmp_path / "ws")
    yield w
    w.memory.close()


def stored_bytes(wh: Workhearth) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(wh.home.rglob("*")) if p.is_file())


# ------------------------------------------------------------------ corpus
def test_corpus_is_big_enough() -> None:
    assert len(HELD_OUT) + len(TUNED) >= 50 and len(LOOKALIKES) >= 50
    assert len(HELD_OUT) >= 30


def test_held_out_recall_is_at_least_90_percent() -> None:
    numbers = measure()
    missed = [line[:60] for line in HELD_OUT if not find_secrets(line)]
    assert numbers["held_out_recall"] >= 0.90, missed


@pytest.mark.parametrize("line", TUNED, ids=lambda s: s[:40])
def test_every_tuned_secret_is_found(line: str) -> None:
    assert find_secrets(line)


@pytest.mark.parametrize("line", LOOKALIKES, ids=lambda s: s[:40])
def test_no_look_alike_is_flagged(line: str) -> None:
    assert find_secrets(line) == []
    assert redact(line) == line


def test_redaction_masks_only_the_secret() -> None:
    line = "db is postgres://app:Zq8Wx7Vc6Bn5@db.internal:5432/app, ask Bob"
    assert (
        redact(line)
        == "db is postgres://app:[REDACTED URL credentials]@db.internal:5432/app, ask Bob"
    )
    assert "hunter2" not in redact('{"user": "svc", "password": "hunter2"}')
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5v\nAAAAC3Nz\n"
    assert redact(f"key:\n{pem}-----END OPENSSH PRIVATE KEY-----\nthanks") == (
        "key:\n[REDACTED private key]\nthanks"
    )
    # A key cut short (by a length limit) is masked to its end.
    assert redact(f"key: {pem}") == "key: [REDACTED private key]"


def test_a_key_wrapped_in_base64_is_found() -> None:
    pem = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBx8mW2nL9qP4rT6vY1zA3cE5gH7jK9mN2pQ4sT6vW8y\n-----END EC PRIVATE KEY-----\n"
    wrapped = base64.b64encode(pem.encode()).decode()
    assert find_secrets(f"key: {wrapped}")
    # ...but base64 of ordinary text, or of a certificate, is not a secret.
    assert not find_secrets(base64.b64encode(b"-----BEGIN CERTIFICATE-----\nMIIB").decode())


def test_start_up_does_not_load_the_detector() -> None:
    code = (
        "import contextlib, io, sys, workhearth.agent.audit, workhearth.memory.bank\n"
        "from workhearth.main import run\n"
        "with contextlib.redirect_stdout(io.StringIO()): run(['--help'])\n"
        "print('detect_secrets' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ------------------------------------------------------------ every field
# Formats an attacker got stored before (issue #8), one per field below.
LEAKED = {  # secret: the part of it that must never reach the disk
    "glpat-p8XzRs0LU5XO-XIdlu_a": "p8XzRs0LU5XO",
    "sk_live_FeJMVHoKMuJNhlQkOw17vwWM": "FeJMVHoKMuJN",
    "hf_9VLa4wFGyQp74pkJeCZAXVEd1sd2qQscAp": "9VLa4wFGyQp7",
    "https://hooks.slack.com/services/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": "4xMXBFL52E",
    "postgres://user:password@db.internal/app": "user:password@",
    "Authorization: Basic YWRtaW46elc5WjVpaWpneg==": "YWRtaW46elc5",
    "AccountKey=HqWelWEgpme1IaLXNyYl5Qri8cfNJHMMGN4Vfo3P2ul5zMWn+XQrE/VY+75u5o==": "HqWelWEgpme1",
    '{"password": "jrjwstOOa4ZeQe"}': "jrjwstOOa4ZeQe",
    "MYSQL_PWD=LFrRYPzkcgo7": "LFrRYPzkcgo7",
    "my password is u0ongc42": "u0ongc42",
}


def fields(secret: str) -> dict[str, dict[str, Any]]:
    """save() arguments that put ``secret`` in one field each."""
    prov = {"snippet": "user said so", "session_id": "s1", "message_id": "m1", "origin": "cli"}
    return {
        "content": {"content": f"remember {secret}"},
        "tag": {"tags": [secret[:64]]},
        "snippet": {"contexts": [{**prov, "snippet": f"pasted {secret}"}]},
        "session_id": {"contexts": [{**prov, "session_id": secret}]},
        "message_id": {"contexts": [{**prov, "message_id": secret}]},
        "origin": {"contexts": [{**prov, "origin": secret[:64]}]},
    }


@pytest.mark.parametrize("field", list(fields("x")))
@pytest.mark.parametrize("secret", LEAKED, ids=lambda s: s[:16])
def test_a_secret_in_any_field_is_refused(wh: Workhearth, field: str, secret: str) -> None:
    kw = fields(secret)[field]
    content = kw.pop("content", "a clean fact")
    if field == "tag" and len(secret) > 64:
        pytest.skip("a tag this long is refused by the length limit")
    with pytest.raises(UsageError, match="secret"):
        wh.memory.save(content, **kw)
    assert LEAKED[secret].encode() not in stored_bytes(wh)


@pytest.mark.parametrize("field", list(fields("x")))
def test_redact_masks_a_secret_in_any_field(wh: Workhearth, field: str) -> None:
    secret = "glpat-p8XzRs0LU5XO-XIdlu_a"
    kw = fields(secret)[field]
    entry = wh.memory.save(kw.pop("content", "a clean fact"), redact=True, **kw)
    wh.memory.index()
    assert b"p8XzRs0LU5XO" not in stored_bytes(wh)
    got = wh.memory.get(entry.id)
    shown = [got.content, *got.tags, *(str(v) for p in got.provenance for v in p.values())]
    assert any("[REDACTED" in s for s in shown)


def test_clean_provenance_is_kept_as_given(wh: Workhearth) -> None:
    prov = {
        "snippet": "we ship on fridays",
        "session_id": "20250613-101500-0123456789abcdef",
        "message_id": "msg_01H8XGJWBWBAQ4Z6TNZ9W7QK3M",
        "origin": "cli",
    }
    entry = wh.memory.save("ship on fridays", contexts=[prov])
    assert wh.memory.get(entry.id).provenance == [prov]


def test_origin_longer_than_64_is_refused(wh: Workhearth) -> None:
    with pytest.raises(UsageError, match="origin"):
        wh.memory.save("a fact", contexts=[{"snippet": "s", "origin": "o" * 65}])


def test_edit_refuses_a_secret_and_redacts_when_asked(wh: Workhearth) -> None:
    entry = wh.memory.save("a clean fact")
    with pytest.raises(UsageError):
        wh.memory.edit(entry.id, "use hf_9VLa4wFGyQp74pkJeCZAXVEd1sd2qQscAp")
    edited = wh.memory.edit(entry.id, "use hf_9VLa4wFGyQp74pkJeCZAXVEd1sd2qQscAp", redact=True)
    assert edited.content == "use [REDACTED Hugging Face token]"
    assert b"9VLa4wFGyQp74" not in stored_bytes(wh)


def test_the_plugin_prefilter_never_hides_what_the_plugins_find() -> None:
    """The cheap check that spares importing detect-secrets (~90 ms of every save) must
    pass every line in which a plugin finds something."""
    from workhearth.memory import secrets

    lines = [*HELD_OUT, *TUNED, *LOOKALIKES, "https://bob:pw@example.org/x", "xoxb-1-a2"]
    for text in lines:
        for line in text.splitlines(keepends=True):
            found = any(
                value for plugin in secrets._plugins() for value in plugin.analyze_string(line)
            )
            if found:
                assert secrets._PLUGIN_CANDIDATE.search(line), line
