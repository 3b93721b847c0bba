"""The receipt: ok only without failing problems, one verdict line, DESIGN §8's JSON."""

from __future__ import annotations

from workhearth.check.receipt import FormulaError, Problem, Receipt

DESIGN_KEYS = {"path", "format", "ok", "problems", "pages", "thumbnails", "formula_errors"}


def receipt(*problems: Problem) -> Receipt:
    return Receipt(path="/w/a.xlsx", format="xlsx", sha256="0" * 64, problems=list(problems))


def test_ok_without_problems_and_with_only_skipped_ones() -> None:
    assert receipt().ok and receipt().verdict() == "ok"
    skipped = receipt(Problem("skipped", "round trip", "LibreOffice is not installed"))
    assert skipped.ok
    assert skipped.verdict() == "ok; not checked here: round trip"


def test_every_other_kind_fails_the_file() -> None:
    for kind in ("opens", "formula", "text", "layout", "fonts"):
        assert not receipt(Problem(kind, "", "x")).ok  # type: ignore[arg-type]


def test_the_verdict_names_the_first_failing_problem_and_counts_the_rest() -> None:
    r = receipt(
        Problem("skipped", "round trip", "no LibreOffice"),
        Problem("formula", "Sales!B2", "shows #DIV/0!"),
        Problem("layout", "Sales", "too wide"),
    )
    assert r.verdict() == (
        "FAILS: shows #DIV/0! (Sales!B2) and 1 more; not checked here: round trip"
    )


def test_json_has_design_keys_with_their_shapes() -> None:
    r = receipt(Problem("formula", "Sales!B2", "shows #DIV/0!"))
    r.formula_errors.append(FormulaError("Sales", "B2", "#DIV/0!"))
    r.pages, r.thumbnails = 2, ["/c/x-1.png"]
    data = r.to_json()
    assert set(data) >= DESIGN_KEYS
    assert data["ok"] is False and data["pages"] == 2 and data["thumbnails"] == ["/c/x-1.png"]
    assert data["problems"] == [
        {
            "kind": "formula",
            "where": "Sales!B2",
            "message": "shows #DIV/0!",
            "code": "",
            "params": {},
        }
    ]
    assert data["formula_errors"] == [{"sheet": "Sales", "cell": "B2", "value": "#DIV/0!"}]
