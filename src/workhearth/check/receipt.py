"""What a check found about one file: the receipt (DESIGN §8 ``hearth check --json``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Format = Literal["docx", "xlsx", "pptx", "pdf"]
FORMATS: dict[str, Format] = {".docx": "docx", ".xlsx": "xlsx", ".pptx": "pptx", ".pdf": "pdf"}

# Why kinds: a program (and the page, in the user's language) tells an unopenable file
# from a formula error or a layout slip without parsing the message.
ProblemKind = Literal[
    "opens",  # the file does not open, a part is malformed or missing
    "formula",  # an error cell, or formulas with no cached values
    "text",  # a character with no glyph, '?' standing in for text
    "layout",  # wider than the page, text overflowing its box
    "fonts",  # a PDF font not embedded
    "skipped",  # a check that could not run here (LibreOffice absent); not a failure
]


def plural(n: int, word: str) -> str:
    """``1 page``, ``2 pages``: English counts, said the same way everywhere."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    where: str  # "word/document.xml", "Sheet1!B7", "slide 3", "page 2", "" for the file
    message: str  # English, for terminals, logs and the model
    # Why: the page words a problem in the user's language by its code and params.
    code: str = ""
    params: dict[str, str | int] = field(default_factory=dict, compare=False)

    @property
    def fails(self) -> bool:
        return self.kind != "skipped"


@dataclass(frozen=True)
class FormulaError:
    sheet: str
    cell: str
    value: str  # "#DIV/0!", "#REF!", ...


@dataclass
class Receipt:
    """The verdict on one file, with the evidence for it."""

    path: str
    format: Format
    sha256: str
    problems: list[Problem] = field(default_factory=list)
    pages: int | None = None  # pages, sheets or slides as rendered
    thumbnails: list[str] = field(default_factory=list)
    formula_errors: list[FormulaError] = field(default_factory=list)
    text: str = ""  # extractable text (the start of it)
    tracked_changes: int = 0
    comments: int = 0
    checked: list[str] = field(default_factory=list)  # the checks that ran
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not any(p.fails for p in self.problems)

    @property
    def skipped(self) -> list[Problem]:
        return [p for p in self.problems if p.kind == "skipped"]

    def verdict(self, *, brief: bool = False) -> str:
        """One line for a terminal or a tool result: the first failing problem and how
        many more. ``brief``: only how many (for a terminal that lists them below)."""
        failing = [p for p in self.problems if p.fails]
        if not failing:
            head = "ok"
        elif brief:
            head = f"FAILS: {plural(len(failing), 'problem')}"
        else:
            first = failing[0]
            where = f" ({first.where})" if first.where else ""
            more = f" and {len(failing) - 1} more" if len(failing) > 1 else ""
            head = f"FAILS: {first.message}{where}{more}"
        if self.skipped and brief:
            head += f"; {plural(len(self.skipped), 'check')} not run here"
        elif self.skipped:
            head += f"; not checked here: {', '.join(p.where or p.message for p in self.skipped)}"
        return head

    def summary(self, *, brief: bool = False) -> str:
        """The verdict and the pages as rendered: ``ok · 1 page``."""
        pages = f" · {plural(self.pages, 'page')}" if self.pages else ""
        return f"{self.verdict(brief=brief)}{pages}"

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Receipt:
        """A receipt back from :meth:`to_json` (a kept one), for its verdict and summary."""
        problems = [
            Problem(
                p.get("kind", "opens"),
                p.get("where", ""),
                p.get("message", ""),
                p.get("code", ""),
                dict(p.get("params") or {}),
            )
            for p in data.get("problems", [])
        ]
        return cls(
            path=str(data.get("path", "")),
            format=data.get("format", "pdf"),
            sha256=str(data.get("sha256", "")),
            problems=problems,
            pages=data.get("pages"),
            thumbnails=list(data.get("thumbnails") or []),
            formula_errors=[FormulaError(**e) for e in data.get("formula_errors", [])],
            text=str(data.get("text", "")),
            tracked_changes=int(data.get("tracked_changes", 0)),
            comments=int(data.get("comments", 0)),
            checked=list(data.get("checked") or []),
            seconds=float(data.get("seconds", 0.0)),
        )

    def to_json(self) -> dict[str, Any]:
        """DESIGN §8: ``{path, format, ok, problems, pages, thumbnails, formula_errors}``
        plus what else the check learned."""
        return {
            "path": self.path,
            "format": self.format,
            "ok": self.ok,
            "problems": [asdict(p) for p in self.problems],
            "pages": self.pages,
            "thumbnails": list(self.thumbnails),
            "formula_errors": [asdict(e) for e in self.formula_errors],
            "sha256": self.sha256,
            "tracked_changes": self.tracked_changes,
            "comments": self.comments,
            "text": self.text,
            "checked": list(self.checked),
            "seconds": round(self.seconds, 3),
        }
