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

    def verdict(self) -> str:
        """One line for a terminal or a tool result."""
        failing = [p for p in self.problems if p.fails]
        if failing:
            first = failing[0]
            where = f" ({first.where})" if first.where else ""
            more = f" and {len(failing) - 1} more" if len(failing) > 1 else ""
            head = f"FAILS: {first.message}{where}{more}"
        else:
            head = "ok"
        if self.skipped:
            head += f"; not checked here: {', '.join(p.where or p.message for p in self.skipped)}"
        return head

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
