"""Secrets never enter memory or the audit log: find API keys, tokens, private keys, passwords.

Three sources of findings, merged into spans of the text:

- the named plugins of ``detect-secrets`` (AWS, Stripe, Slack, JWT, private keys…),
  called through ``analyze_string`` only, which never verifies a key over the network;
- our own rules for formats those plugins miss, from the gitleaks catalogue
  (provider prefixes such as ``glpat-``, ``hf_``, ``npm_``; webhook URLs; credentials
  in URLs; ``Authorization`` headers; PEM blocks, also base64-wrapped);
- values assigned to secret-looking keys (``password=``, ``"api_key": …``,
  ``MYSQL_PWD=``), and passwords stated in sentences (``my password is …``,
  ``the root pass for db1 is …``, ``数据库密码是 …``). Entropy is judged only there: on its own a
  random-looking string is as likely a commit id, a UUID or a checksum.

``detect-secrets`` costs ~90 ms to import, so it is loaded on the first check, never
at start-up.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

_B64 = r"[A-Za-z0-9+/]"
_TOKEN = r"[A-Za-z0-9_\-]"

# (kind, pattern). When a pattern has a group named "s", only that group is the secret.
_RULES: list[tuple[str, str]] = [
    (
        "private key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    ),
    ("private key", r"PuTTY-User-Key-File-\d+:[\s\S]*?(?:Private-MAC: *[0-9a-f]+|\Z)"),
    ("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    ("Anthropic API key", r"\bsk-ant-[a-z]*\d*-?[A-Za-z0-9_\-]{20,}"),
    ("OpenAI API key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,}"),
    ("AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    (
        "GitLab token",
        r"\b(?:glpat|gldt|glrt|glptt|glsoat|glcbt|glffct|glft|glimt|glagent|gloas)-"
        r"[A-Za-z0-9_\-]{20,}",
    ),
    ("GitLab token", r"\bGR1348941[A-Za-z0-9_\-]{20,}"),
    ("Slack token", r"\bxox[abposrce]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{20,}"),
    (
        "webhook URL",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]{20,}"
        r"|https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,}"
        r"|https://[\w.\-]*webhook\.office\.com/webhookb2/[^\s\"'<>]{40,}",
    ),
    ("Google API key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    ("Google OAuth secret", r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"),
    ("Google OAuth token", r"\bya29\.[A-Za-z0-9_\-]{30,}"),
    ("Stripe key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}"),
    ("Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("SendGrid key", r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    ("Twilio key", r"\b(?:SK|AC)[0-9a-f]{32}\b"),
    ("DigitalOcean token", r"\bdo[por]_v1_[0-9a-f]{64}\b"),
    ("Shopify token", r"\bshp(?:at|ca|pa|ss)_[0-9a-fA-F]{32}\b"),
    (
        "Discord bot token",
        r"\b[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}\b",
    ),
    ("Telegram bot token", r"\b\d{8,10}:AA[A-Za-z0-9_\-]{32,33}\b"),
    ("Atlassian token", r"\bATATT3[A-Za-z0-9_\-=]{150,}"),
    ("Linear key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    ("Doppler token", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9.]{40,}"),
    ("Postman key", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b"),
    ("Databricks token", r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
    ("Grafana token", r"\bgl(?:sa|c)_[A-Za-z0-9_=+/]{32,}"),
    ("New Relic key", r"\bNR(?:AK|AA|II|JS)-[A-Z0-9]{27}\b"),
    ("Mailgun key", r"\bkey-[0-9a-f]{32}\b"),
    ("Mailchimp key", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("Square token", r"\bsq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,43}"),
    ("Vault token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    ("Terraform Cloud token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}"),
    ("Pulumi token", r"\bpul-[0-9a-f]{40}\b"),
    ("Docker token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}"),
    ("Fly.io token", r"\bfo1_[A-Za-z0-9_\-]{40,}"),
    ("Groq key", r"\bgsk_[A-Za-z0-9]{48,}"),
    ("Replicate token", r"\br8_[A-Za-z0-9]{30,}"),
    ("Perplexity key", r"\bpplx-[A-Za-z0-9]{40,}"),
    ("xAI key", r"\bxai-[A-Za-z0-9]{60,}"),
    ("Alibaba access key", r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    ("Facebook token", r"\bEAA[A-Za-z0-9]{90,}"),
    ("1Password token", r"\bops_eyJ[A-Za-z0-9+/=]{60,}"),
    ("Sentry token", r"\bsntr[ysu]_[A-Za-z0-9+/=_]{40,}"),
    ("Heroku key", r"\bHRKU-[A-Za-z0-9_\-]{40,}"),
    (
        "JSON web token",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
    ),
    (
        "Azure key",
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=(?P<s>[A-Za-z0-9+/%]{20,}=*)",
    ),
    # Why: a password in a URL is a password whatever it looks like (user:password@host).
    ("URL credentials", r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]*:(?P<s>[^\s/@]{3,})@[\w\-.\[]"),
    (
        "authorization header",
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:basic|bearer|token|digest|apikey)?"
        r"\s*(?P<s>[A-Za-z0-9+/=._~\-]{12,})",
    ),
    ("bearer token", r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9_\-.=~+/]{20,})"),
    ("password", r"(?:^|\s)(?:-u|--user)[ =][^\s:]+:(?P<s>[^\s\"']{4,})"),
    ("password", r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]*?\s-p(?P<s>[^\s\-]\S{3,})"),
    (
        "session cookie",
        r"(?i)\b(?:set-)?cookie\s*:[^\n]*?\b\w*(?:sess|token|auth|sid)\w*=(?P<s>[^;\s]{16,})",
    ),
]

_BASIC = re.compile(rf"\bBasic\s+(?P<s>{_B64}{{8,}}={{0,2}})")
_LONG_B64 = re.compile(rf"{_B64}{{24,}}={{0,2}}")

# Key names whose values are passwords: any value that is not a placeholder counts.
_PASSWORD_KEY = r"[\w.\-]*(?:password|passwd|passphrase|pwd|_pass|-pass|pass_?code|\bpass|\bpin)"
# Key names whose values are keys or tokens: the value must also look random.
_TOKEN_KEY = (
    r"[\w.\-]*(?:secret|token|api[_\-]?key|apikey|access[_\-]?key|auth[_\-]?key|private[_\-]?key|"
    r"account[_\-]?key|client[_\-]?secret|credentials?|signing[_\-]?key|encryption[_\-]?key|"
    r"master[_\-]?key|session[_\-]?key|secret[_\-]?key|auth)"
)
_VALUE = r"(?:\"(?P<dq>[^\"\n]{1,200})\"|'(?P<sq>[^'\n]{1,200})'|(?P<bare>[^\s\"',;&)}\]]{1,200}))"
_ASSIGN = re.compile(
    rf"(?i)(?<![\w.\-])[\"']?(?P<key>{_PASSWORD_KEY}|{_TOKEN_KEY})[\"']?"
    rf"(?P<op>[ \t]*(?:=>|:=|=|:)[ \t]*|[ \t]+)(?=[\"'\w$<{{*~!@#%^&+/.\-])(?:{_VALUE})"
    r"(?P<rest>[^\n]*)"
)
# "password is X", "the root pass for db1 is X", "password for the test VM is X": a
# key word, maybe what it is for (a few words after for/of/to/on/at), then is/was/:/=.
_PROSE = re.compile(
    r"(?i)\b(?P<key>password|passwd|passphrase|passcode|pass|pwd|pin)"
    r"(?:\s+(?:for|of|to|on|at)(?:\s+[^\s\"'=:]+){1,4}?)?"
    r"(?:\s+(?:is|was)|\s*[:=])\s+"
    r"(?:\"(?P<dq>[^\"\n]{3,100})\"|'(?P<sq>[^'\n]{3,100})'|(?P<bare>\S{3,100}))"
)
# "数据库密码是hunter2hunter2", "服务器登录口令为 Zx9!qW3e": 密码 / 口令 then 是 / 为 / a colon,
# then a run of ASCII (a password typed in Chinese prose is Latin letters, digits, symbols).
_PROSE_ZH = re.compile(
    r"(?:密码|密碼|口令|通行码|PIN码|pin码)\s*(?:就是|是|为|為|：|:|=|＝)\s*(?P<bare>[!-~]{3,100})"
)
_FLAG = re.compile(r"(?i)--(?:password|passwd|token|api-key|secret)[= ](?P<s>[^\s\"']{4,})")
_PLACEHOLDER = re.compile(
    r"(?i)^(?:none|null|nil|true|false|undefined|empty|required|optional|string|str|"
    r"redacted|hidden|secret|password|token|changeme|example|xxx+|\*+|\.+|-+|_+|"
    r"<[^>]*>|\[[^\]]*\]|\{.*|\$\{.*|%[^%]+%|"
    r"\$\w+|os\.environ.*|process\.env.*|env\(.*|getenv.*|[\w.]+\(.*)$"
)


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int


def _entropy(text: str) -> float:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(text: str) -> int:
    return sum(
        (
            any(c.islower() for c in text),
            any(c.isupper() for c in text),
            any(c.isdigit() for c in text),
            any(not c.isalnum() for c in text),
        )
    )


def _looks_random(value: str) -> bool:
    """A key or token, not a word, a number or a name (judged only for secret-looking keys)."""
    if len(value) < 8 or value.isdigit():
        return False
    # Why: snake_case / kebab-case / dotted lower-case names are identifiers, not keys.
    if re.fullmatch(r"[a-z]+(?:[_\-.][a-z]+)*\d{0,2}|[A-Z]+(?:_[A-Z]+)*", value):
        return False
    return _classes(value) >= 2 and _entropy(value) >= 3.0


def _looks_like_password(value: str) -> bool:
    """An unquoted word after "password is": a real one has digits, symbols or mixed case."""
    value = value.rstrip(".,;:!?)")
    if len(value) < 6 or _PLACEHOLDER.match(value):
        return False
    inner = value[1:]
    return (
        any(c.isdigit() for c in value)
        or any(c.isupper() for c in inner)
        or (any(not c.isalnum() and c not in "-'" for c in value))
    )


def _assignments(text: str) -> Iterator[Finding]:
    for m in _ASSIGN.finditer(text):
        found = _assignment(m)
        if found is not None:
            yield found
    yield from _prose(text)
    for m in _FLAG.finditer(text):
        if not _PLACEHOLDER.match(m.group("s")):
            yield Finding("password", *m.span("s"))


def _assignment(m: re.Match[str]) -> Finding | None:
    """The secret a ``key = value`` match (also ``key: value``, ``key value``) holds, if any."""
    op = m.group("op")
    group = "dq" if m.group("dq") is not None else "sq" if m.group("sq") is not None else "bare"
    quoted = group != "bare"
    value = m.group(group)
    if _PLACEHOLDER.match(value.strip()):
        return None
    is_password = re.search(_PASSWORD_KEY + "$", m.group("key").lower()) is not None
    if not _assigns_a_value(m, value, quoted, is_password):
        return None
    if is_password:
        if len(value) < 4 or (not quoted and not op.strip("= ") and " " in value):
            return None
    elif not _looks_random(value):
        return None
    return Finding("password" if is_password else "secret assignment", *m.span(group))


def _assigns_a_value(m: re.Match[str], value: str, quoted: bool, is_password: bool) -> bool:
    """Whether the match's operator and what follows make it an assignment, not prose."""
    op = m.group("op").strip()
    if not op:
        # "password hunter2" (a .netrc line, a command): only credential-looking values.
        return is_password and _looks_like_password(value)
    # Why: "Password: see the vault" is prose; a YAML value ends its line.
    return not (op == ":" and not quoted and m.group("rest").strip(" ,}"))


def _prose(text: str) -> Iterator[Finding]:
    """Passwords stated in sentences, in English and in Chinese."""
    for m in (*_PROSE.finditer(text), *_PROSE_ZH.finditer(text)):
        groups = m.groupdict()
        group = "dq" if groups.get("dq") else "sq" if groups.get("sq") else "bare"
        value = m.group(group)
        if group != "bare":
            found = not _PLACEHOLDER.match(value)
        elif (groups.get("key") or "").lower() == "pass":
            found = _looks_like_password(value) and _mixed_like_a_password(value)
        else:
            found = _looks_like_password(value)
        if found:
            start = m.start(group)
            yield Finding("password", start, start + len(value.rstrip(".,;:!?)")))


def _mixed_like_a_password(value: str) -> bool:
    """Lower case, digits and upper case or symbols: ``Zx9!qW3eRt``, not ``4F7K2Q`` or ``SP-2093``.

    Why for "pass" only: it is also a boarding pass, a ski pass, a pass mark, whose
    codes and seat numbers are upper case and digits.
    """
    value = value.rstrip(".,;:!?)")
    return (
        any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and any(c.isupper() or (not c.isalnum() and c not in "-/") for c in value)
    )


def _decoded(blob: str) -> str | None:
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
        out = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    return out if out.isprintable() or "\n" in out else None


def _wrapped(text: str, depth: int) -> Iterator[Finding]:
    """Secrets hidden in base64 (a PEM file, ``user:password`` of Basic auth)."""
    for m in _BASIC.finditer(text):
        plain = _decoded(m.group("s"))
        if plain and ":" in plain:
            yield Finding("basic auth credentials", *m.span("s"))
    if depth > 0:
        return
    for m in _LONG_B64.finditer(text):
        plain = _decoded(m.group())
        if plain and _scan(plain, depth + 1):
            yield Finding("base64-wrapped secret", *m.span())


@cache
def _compiled() -> list[tuple[str, re.Pattern[str]]]:
    return [(kind, re.compile(pattern, re.MULTILINE)) for kind, pattern in _RULES]


@cache
def _plugins() -> tuple[Any, ...]:
    # Why: imported on first use; detect-secrets pulls in requests (~90 ms).
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.basic_auth import BasicAuthDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.npm import NpmDetector
    from detect_secrets.plugins.openai import OpenAIDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    # Why not the entropy plugins: they flag commit ids, UUIDs and checksums; entropy is
    # judged only for values under secret-looking keys (see _assignments).
    return tuple(
        cls()
        for cls in (
            AWSKeyDetector,
            AzureStorageKeyDetector,
            BasicAuthDetector,
            DiscordBotTokenDetector,
            GitHubTokenDetector,
            GitLabTokenDetector,
            JwtTokenDetector,
            MailchimpDetector,
            NpmDetector,
            OpenAIDetector,
            PrivateKeyDetector,
            PypiTokenDetector,
            SendGridDetector,
            SlackDetector,
            SquareOAuthDetector,
            StripeDetector,
            TelegramBotTokenDetector,
            TwilioKeyDetector,
        )
    )


# Why: importing the detect-secrets plugins costs ~90 ms (most of a `hearth memory
# save`). Every secret they find is a run of 16+ non-space characters, except a URL's
# credentials (``://user:pw@``), a private-key header, an npm ``_authToken`` line and
# a short Slack ``xox?-`` token; text with none of those cannot hold one.
_PLUGIN_CANDIDATE = re.compile(r"\S{16,}|://|PRIVATE KEY|PuTTY-User-Key|_authToken|xox[abposr]-")


def _from_plugins(text: str) -> Iterator[Finding]:
    if not _PLUGIN_CANDIDATE.search(text):
        return
    offset = 0
    for line in text.splitlines(keepends=True):
        for plugin in _plugins():
            # Why analyze_string: analyze_line may try to verify a key over the network.
            for value in plugin.analyze_string(line):
                if not value:
                    continue
                at = line.find(value)
                while at >= 0:
                    yield Finding(plugin.secret_type, offset + at, offset + at + len(value))
                    at = line.find(value, at + len(value))
        offset += len(line)


def _scan(text: str, depth: int = 0) -> list[Finding]:
    found: list[Finding] = []
    for kind, pattern in _compiled():
        for m in pattern.finditer(text):
            group = "s" if "s" in pattern.groupindex else 0
            if m.start(group) < m.end(group):
                found.append(Finding(kind, *m.span(group)))
    found += _assignments(text)
    found += _wrapped(text, depth)
    found += _from_plugins(text)
    return found


def scan(text: str) -> list[Finding]:
    """Every secret found in ``text``, as non-overlapping spans in order."""
    if not text:
        return []
    merged: list[Finding] = []
    for f in sorted(_scan(text), key=lambda f: (f.start, -f.end)):
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.kind, last.start, f.end)
            continue
        merged.append(f)
    return merged


def find_secrets(text: str) -> list[str]:
    """Kinds of secret found in ``text`` (empty when clean)."""
    return list(dict.fromkeys(f.kind for f in scan(text)))


def redact(text: str) -> str:
    """``text`` with every secret replaced by ``[REDACTED kind]``."""
    out, at = [], 0
    for f in scan(text):
        out.append(text[at : f.start])
        out.append(f"[REDACTED {f.kind}]")
        at = f.end
    out.append(text[at:])
    return "".join(out)
