"""The words an approval card shows for the browser (issue 25), and password masking.

What the user approves must be exactly what will happen: the site, the URL in full (a
query string is where a model would put data it read), each field value a form sends,
the file. Everything here comes from a web page or the model, so it is shown as data:
control and formatting characters (a newline that fakes a second line, an ANSI escape,
a right-to-left override) are removed and long values cut, so a page cannot write its
own approval card.

A password is never shown, logged or given to the model: its field value is
:data:`MASK`, and :func:`without_secrets` takes typed secrets out of any text (a
snapshot, an error, an audit line) before it is kept.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from workhearth.agent.audit import MASK  # Why: one fixed length: it does not tell the length

URL_LIMIT = 300
VALUE_LIMIT = 120
_SECRET_TYPES = frozenset({"password"})
_SECRET_AUTOCOMPLETE = frozenset(
    {"current-password", "new-password", "one-time-code", "cc-number", "cc-csc"}
)
# A whole word of the field's name ("user[password]", "login_pwd", "newPassword"), so
# "spinner" holds no PIN and "passenger" no pass.
_SECRET_NAME = re.compile(
    r"(?<![a-z])(pass(word|wd|code|phrase)?|pwd|secret|token|otp|pin|cvc|cvv|csc"
    r"|api[-_]?key)(?![a-z])"
)


@dataclass(frozen=True)
class FormField:
    """One value a form submission sends: its label (or name) and the value typed."""

    label: str
    value: str
    secret: bool = False


def mask(value: str) -> str:
    """A password as shown anywhere: :data:`MASK` (empty stays empty: nothing was typed)."""
    return MASK if value else ""


def is_secret_field(*, input_type: str = "", name: str = "", autocomplete: str = "") -> bool:
    """Whether a field's value is a secret: a password input, a password or card code by
    its ``autocomplete``, or a name that says so (``pin``, ``otp``, ``api_key``)."""
    if input_type.strip().lower() in _SECRET_TYPES:
        return True
    if set(autocomplete.lower().split()) & _SECRET_AUTOCOMPLETE:
        return True
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).lower()
    return _SECRET_NAME.search(words) is not None


def without_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every typed secret replaced by :data:`MASK` (longest first, so a
    password that contains another is masked whole)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def shown(text: str, limit: int = VALUE_LIMIT) -> str:
    """``text`` safe to show on one line of an approval card: controls and formatting
    characters become spaces, and it is cut to ``limit`` characters."""
    clean = "".join(
        " " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text
    )
    clean = re.sub(r" {2,}", " ", clean).strip()
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def secret_summary(site: str, label: str, url: str) -> str:
    """Typing a secret the user gives: which field of which page (the value is never shown)."""
    return f"type a password you give into {shown(label, 60)} on {site} ({shown(url, URL_LIMIT)})"


def visit_summary(site: str, url: str) -> str:
    """The first visit to a site: the URL in full, since its query can carry data out."""
    return f"open {shown(url, URL_LIMIT)} (first visit to {site} in this session)"


def submit_summary(site: str, fields: Sequence[FormField], action: str | None = None) -> str:
    """A form submission: where it goes and each value it sends, secrets masked."""
    where = f"{site} ({shown(action, URL_LIMIT)})" if action else site
    if not fields:
        return f"submit a form to {where} (no fields filled)"
    lines = [f"submit a form to {where}, sending:"]
    for field in fields:
        value = mask(field.value) if field.secret else repr(shown(field.value))
        lines.append(f"    {shown(field.label, 60) or '(unnamed field)'}: {value}")
    return "\n".join(lines)


def download_summary(site: str, url: str, name: str) -> str:
    """A download: what is fetched, and the workspace file it becomes."""
    return f"download {shown(url, URL_LIMIT)} from {site} into the workspace as {shown(name)}"


def upload_summary(site: str, file: str, size: int | None = None) -> str:
    """An upload: the workspace file that leaves the machine, and where to."""
    bytes_ = f" ({_size(size)})" if size is not None else ""
    return f"upload {shown(file)}{bytes_} to {site}"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    size = float(n)
    for unit in ("KB", "MB", "GB"):
        size /= 1024
        if size < 1024 or unit == "GB":
            break
    return f"{size:.1f} {unit}"
