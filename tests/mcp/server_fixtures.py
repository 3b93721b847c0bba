"""Shared by the MCP server tests: a home with one skill, and an async runner."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio

T = TypeVar("T")

SKILL_MD = """---
name: greet
description: Write a greeting card for someone.
---
Write a short, warm greeting card.
"""

SKILL_META = """examples:
  - id: card
    title:
      zh: 贺卡
      en: A card
    description:
      zh: 给某人写一张贺卡。
      en: Write a card for someone.
    prompt: |
      Write a greeting card for {{who}} in a {{tone}} tone.
    variables:
      - name: who
        description:
          zh: 收件人
          en: Who the card is for
        required: true
      - name: tone
        description:
          zh: 语气
          en: The tone
        type: choice
        choices: [warm, funny]
        default: warm
"""


def add_skill(home: Path) -> Path:
    folder = home / "skills" / "greet"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (folder / ".skill-metadata.yaml").write_text(SKILL_META, encoding="utf-8")
    return folder


def run(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    return anyio.run(fn, *args)


def error_text(result: Any) -> str:
    assert result.is_error, result
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
