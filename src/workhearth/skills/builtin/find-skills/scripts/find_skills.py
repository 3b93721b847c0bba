"""Search the installed skills by words in their name, description, keywords and body
(Chinese included).

Uses hearth's skill library, so what it finds is what hearth would load: one skill
per name by precedence (workspace, user, built-in, .agents, .claude), broken skills
marked as such. Ranked: a word in the name counts most, then the keywords (SKILL.md's
``metadata: {keywords: "表格, spreadsheet, …"}``), then the description (and its
Chinese ``metadata.description-zh``), then the body. Chinese and Japanese words match
as substrings (no spaces to split on); Latin words match whole words, case-insensitive,
plurals included ("merge" does not match "emerged", "table" matches "tables").
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from workhearth.skills.scriptkit import OneLineParser, UserError

PROG = "find_skills.py"
WEIGHTS = {"name": 5.0, "keywords": 4.0, "description": 3.0, "body": 1.0}
LATIN = re.compile(r"[0-9a-z]+(?:['-][0-9a-z]+)*")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def terms(query: str) -> dict[str, float]:
    """Lower-case Latin words, and CJK runs with their two-character pieces, with weights.

    Why: Chinese has no spaces; 生成文档 should find a text saying 文档的生成, so a
    long run also contributes its bigrams, each worth less than the whole run.
    """
    text = query.lower()
    found: dict[str, float] = {w: 1.0 for w in LATIN.findall(text) if len(w) > 1 or w.isdigit()}
    for run in CJK.findall(text):
        found[run] = 1.0
        if len(run) > 2:
            for i in range(len(run) - 1):
                found.setdefault(run[i : i + 2], 0.5)
    return found


def contains(text: str, term: str) -> bool:
    """``term`` in lower-case ``text``: a CJK run as a substring, a Latin word as a word."""
    if CJK.match(term):
        return term in text
    # Why: whole words, so "art" does not find every skill that says "start".
    stem = term[:-1] if term.endswith("s") and not term.endswith("ss") and len(term) > 3 else term
    return re.search(rf"(?<![0-9a-z]){re.escape(stem)}(?:s|es)?(?![0-9a-z])", text) is not None


def weight_in(field: str, text: str, term: str) -> float:
    """What ``term`` found in ``field`` is worth (0 when absent)."""
    if not contains(text, term):
        return 0.0
    if field == "keywords" and term not in text.split("\n"):
        # Why: 表格 as a keyword of its own beats 表格 inside another skill's 提取表格.
        return WEIGHTS[field] / 2
    return WEIGHTS[field]


def score(fields: dict[str, str], query_terms: dict[str, float]) -> tuple[float, list[str]]:
    total, matched = 0.0, []
    for term, weight in query_terms.items():
        hits = [w for field, text in fields.items() if (w := weight_in(field, text, term))]
        if hits:
            total += sum(hits) * weight
            matched.append(term)
    # Why: a skill matching every word of the query beats one matching a single word often.
    coverage = len(matched) / len(query_terms) if query_terms else 0.0
    return round(total * (0.5 + coverage), 2), matched


def keywords(skill: Any) -> str:
    """The skill's ``metadata.keywords``, lower case, one keyword a line."""
    raw = getattr(skill, "metadata", {}).get("keywords", "")
    return "\n".join(k.strip() for k in re.split(r"[,，、;；\n]", raw.lower()) if k.strip())


def search(skills: list[Any], query: str, limit: int) -> list[dict[str, Any]]:
    query_terms = terms(query)
    if not query_terms:
        raise UserError(f"nothing to search for in {query!r}")
    results = []
    for skill in skills:
        try:
            body = (Path(skill.path) / "SKILL.md").read_text(encoding="utf-8", errors="replace")
        except OSError:
            body = ""
        fields = {
            "name": skill.name.lower().replace("-", " ") + " " + skill.name.lower(),
            "keywords": keywords(skill),
            "description": " ".join(
                (skill.description or "", skill.metadata.get("description-zh", ""))
            ).lower(),
            "body": body.lower(),
        }
        value, matched = score(fields, query_terms)
        if value <= 0:
            continue
        if skill.status != "ok":
            value = round(value / 4, 2)  # Why: listed so the user sees it, never above a usable one
        results.append(skill.as_dict() | {"score": value, "matched": matched})
    results.sort(key=lambda r: (-r["score"], r["name"]))
    return results[:limit]


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(
        prog=PROG, description="Search installed skills by words (Chinese included)."
    )
    parser.add_argument("query", nargs="+", help="words to look for, e.g. 文档 or 'pdf merge'")
    parser.add_argument(
        "--limit", type=int, default=10, help="at most this many results (default 10)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON list (skills list shape + score, matched)"
    )
    parser.add_argument("--home", help="HEARTH_HOME (default: the environment)")
    parser.add_argument("--workspace", help="the workspace whose skills count too (default: .)")
    args = parser.parse_args(argv)
    try:
        if args.limit < 1:
            raise UserError("--limit must be at least 1")
        from workhearth import Workhearth
        from workhearth.errors import HearthError

        try:
            skills = Workhearth(home=args.home, workspace=args.workspace).skills.list()
        except HearthError as exc:
            raise UserError(str(exc)) from None
        results = search(skills, " ".join(args.query), args.limit)
    except UserError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
        return 0
    if not results:
        print(f"no skill matches {' '.join(args.query)!r}")
        return 0
    for r in results:
        broken = f" [broken: {r['problems'][0]}]" if r["status"] != "ok" and r["problems"] else ""
        print(f"{r['name']} ({r['source']}, {r['score']}){broken}: {r['description']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
