"""Secrets never enter memory: detect API keys, tokens, private keys, passwords."""

from __future__ import annotations

import re

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "private key",
        re.compile(
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
        ),
    ),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    ),
    ("bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=]{20,}")),
    (
        "password",
        re.compile(r"(?i)\b(?:password|passwd|pwd|passphrase)\s*[:=]\s*['\"]?[^\s'\"]{4,}"),
    ),
    (
        "secret assignment",
        re.compile(
            r"(?i)\b[\w.\-]*(?:api[_\-]?key|secret|token|access[_\-]?key)\s*[:=]\s*['\"]?[A-Za-z0-9_\-\./+=]{16,}"
        ),
    ),
]


def find_secrets(text: str) -> list[str]:
    """Kinds of secret found in ``text`` (empty when clean)."""
    return [kind for kind, pattern in PATTERNS if pattern.search(text)]


def redact(text: str) -> str:
    for kind, pattern in PATTERNS:
        text = pattern.sub(f"[REDACTED {kind}]", text)
    return text
