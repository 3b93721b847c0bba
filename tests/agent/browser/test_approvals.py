"""The approval card's words and password masking (agent/browser/approvals.py)."""

from __future__ import annotations

import pytest

from workhearth.agent.browser.approvals import (
    MASK,
    FormField,
    download_summary,
    is_secret_field,
    mask,
    shown,
    submit_summary,
    upload_summary,
    visit_summary,
    without_secrets,
)


def test_a_mask_does_not_tell_the_length() -> None:
    assert mask("a") == mask("correct horse battery staple") == MASK
    assert mask("") == ""


@pytest.mark.parametrize(
    ("kwargs", "secret"),
    [
        ({"input_type": "password"}, True),
        ({"input_type": "PASSWORD "}, True),
        ({"autocomplete": "current-password"}, True),
        ({"autocomplete": "section-login new-password"}, True),
        ({"autocomplete": "one-time-code"}, True),
        ({"name": "user[password]"}, True),
        ({"name": "login_pwd"}, True),
        ({"name": "otp"}, True),
        ({"name": "api-key"}, True),
        ({"name": "card.cvc"}, True),
        ({"name": "newPassword"}, True),
        ({"input_type": "text", "name": "username", "autocomplete": "username"}, False),
        ({"name": "spinner"}, False),  # "pin" inside a word is not a PIN
        ({"name": "passenger"}, False),
        ({"input_type": "email", "name": "email"}, False),
    ],
)
def test_secret_fields(kwargs: dict[str, str], secret: bool) -> None:
    assert is_secret_field(**kwargs) is secret


def test_typed_secrets_are_taken_out_of_any_text_longest_first() -> None:
    text = "typed hunter2 then hunter2-extra; error: bad password hunter2-extra"
    out = without_secrets(text, ["hunter2", "hunter2-extra", ""])
    assert "hunter2" not in out
    assert out == f"typed {MASK} then {MASK}; error: bad password {MASK}"


def test_a_page_cannot_write_lines_or_escapes_into_the_card() -> None:
    label = "Name\n  (nothing will be sent)\x1b[2J\u202eevil"
    assert shown(label) == "Name (nothing will be sent) [2J evil"
    assert shown("x" * 500, 10) == "x" * 9 + "…"


def test_the_visit_card_shows_the_whole_url_with_its_query() -> None:
    words = visit_summary("https://example.test", "https://example.test/s?q=the+secret\nline")
    assert words == (
        "open https://example.test/s?q=the+secret line "
        "(first visit to https://example.test in this session)"
    )


def test_the_submit_card_shows_each_value_and_masks_the_password() -> None:
    fields = [
        FormField("User name", "ana"),
        FormField("Password", "hunter2", secret=True),
        FormField("", "x"),
    ]
    words = submit_summary("https://login.test", fields, "https://login.test/session")
    assert words.splitlines() == [
        "submit a form to https://login.test (https://login.test/session), sending:",
        "    User name: 'ana'",
        f"    Password: {MASK}",
        "    (unnamed field): 'x'",
    ]
    assert "hunter2" not in words
    assert (
        submit_summary("https://a.test", []) == "submit a form to https://a.test (no fields filled)"
    )


def test_download_and_upload_cards_name_the_file() -> None:
    assert download_summary("https://a.test", "https://a.test/r.xlsx", "report.xlsx") == (
        "download https://a.test/r.xlsx from https://a.test into the workspace as report.xlsx"
    )
    assert upload_summary("https://a.test", "data/rows.csv", 2_560) == (
        "upload data/rows.csv (2.5 KB) to https://a.test"
    )
    assert (
        upload_summary("https://a.test", "a.txt", 12) == "upload a.txt (12 bytes) to https://a.test"
    )
    assert upload_summary("https://a.test", "a.txt") == "upload a.txt to https://a.test"
