"""The page words every problem code a check can give, in English and Chinese, with the
params those words name (web/strings-check.js)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "workhearth"
STRINGS = SRC / "server" / "web" / "strings-check.js"


def _languages() -> dict[str, dict[str, str]]:
    text = STRINGS.read_text("utf-8")
    out = {}
    for lang in ("en", "zh"):
        body = re.search(rf"\n  {lang}: \{{\n(.*?)\n  \}},", text, re.S)
        assert body, lang
        out[lang] = json.loads("{" + body.group(1).rstrip().rstrip(",") + "}")
    return out


def _codes() -> dict[str, set[str]]:
    """Each literal code given to ``Problem(...)`` in check/ -> the keys of its params."""
    found: dict[str, set[str]] = {}
    for path in (SRC / "check").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Problem"):
                continue
            args = list(node.args) + [k.value for k in node.keywords]
            if len(args) < 4 or not isinstance(args[3], ast.Constant):
                continue
            params = args[4] if len(args) > 4 else None
            keys = {k.value for k in getattr(params, "keys", []) if isinstance(k, ast.Constant)}
            found.setdefault(str(args[3].value), set()).update(keys)
    found["linked_out"] = set()  # agent/receipts.py: a file swapped for a link out
    return found


def test_english_and_chinese_have_the_same_keys() -> None:
    langs = _languages()
    assert set(langs["en"]) == set(langs["zh"])


def test_every_code_has_words_naming_only_its_params() -> None:
    langs, codes = _languages(), _codes()
    assert {"chart_apart", "chart_unprinted", "sheet_wide"} <= set(codes)
    for code, params in codes.items():
        for lang, words in langs.items():
            said = words.get(f"check.problem.{code}")
            assert said, f"{lang}: no words for {code}"
            named = set(re.findall(r"\{(\w+)\}", said))
            assert named <= params, f"{lang} {code}: {named - params} is not a param"
