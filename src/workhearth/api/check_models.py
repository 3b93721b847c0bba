"""Wire shapes of ``hearth check`` receipts: ``POST /v1/check`` and a session's receipts
(DESIGN §8: ``{path, format, ok, problems, pages, thumbnails, formula_errors}``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

PATHS_MAX = 20


class CheckIn(BaseModel):
    paths: list[str] = Field(
        min_length=1,
        max_length=PATHS_MAX,
        description="Files inside the authorized folders, relative to the workspace or absolute.",
    )


class ProblemOut(BaseModel):
    kind: Literal["opens", "formula", "text", "layout", "fonts", "skipped"]
    where: str
    message: str = Field(description="In English; the page words it by code and params.")
    code: str = Field("", description="What the problem is, as a stable word (e.g. uncached).")
    params: dict[str, str | int] = Field(default_factory=dict)


class FormulaErrorOut(BaseModel):
    sheet: str
    cell: str
    value: str


class ReceiptOut(BaseModel):
    path: str = Field(description="As given (or as the agent saw it), never resolved.")
    format: Literal["docx", "xlsx", "pptx", "pdf"]
    ok: bool = Field(description="No problem other than checks skipped here.")
    problems: list[ProblemOut]
    pages: int | None
    thumbnails: list[str] = Field(description="URLs of PNGs of the first pages.")
    formula_errors: list[FormulaErrorOut]
    sha256: str
    tracked_changes: int
    comments: int
    text: str = Field(description="The start of the extractable text.")
    checked: list[str]
    seconds: float
    call_id: str | None = Field(None, description="The tool call that produced it (a task's).")
