"""A scripted model server for the wiki: it answers every page and overview call with a
short page naming what it was asked about, and counts the calls by kind.

Why one that answers anything (not a fixed script): a build's calls follow the folders,
so the test states what it expects by counting (``fake.pages``, ``fake.overviews``) and
by the folders asked (``fake.asked``); a call nobody expected fails those counts.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any

from tests.fake_providers import FakeProvider, Reply, openai_sse, openai_text

FOLDER = re.compile(r"Folder: ([^\n]*)\n")
FIRST_SOURCE = re.compile(r"\n- ([^\n]+?) \(sha256 ")


class WikiModel(FakeProvider):
    """Answers ``Folder: X`` prompts with a page about X citing its first source, and the
    overview prompt with one line; ``delay`` seconds before each answer (a slow model)."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__([])
        self.delay = delay
        self.asked: list[str] = []  # "overview" or the folder of each page call, in order
        self._lock = threading.Lock()

    def reply_for(self, raw: bytes) -> Reply:
        body: Any = json.loads(raw)
        prompt = _user_text(body)
        folder = FOLDER.search(prompt)
        if folder is None:
            with self._lock:
                self.asked.append("overview")
            text = "This project holds code and documents; each page below covers a folder."
        else:
            first = FIRST_SOURCE.search(prompt)
            cite = f"`{first.group(1)}:1`" if first else "nothing"
            with self._lock:
                self.asked.append(folder.group(1))
            text = f"## Purpose\n\nThe folder {folder.group(1)} is summarized here ({cite})."
        return Reply(pieces=openai_sse(openai_text([text])), delay=self.delay)

    @property
    def pages(self) -> list[str]:
        return [a for a in self.asked if a != "overview"]

    @property
    def overviews(self) -> int:
        return self.asked.count("overview")


def _user_text(body: dict[str, Any]) -> str:
    parts = []
    for msg in body.get("messages", []):
        if msg.get("role") != "user":
            continue
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        else:
            parts += [c.get("text", "") for c in content or [] if isinstance(c, dict)]
    return "\n".join(parts)


def model_env(fake: FakeProvider) -> dict[str, str]:
    """The environment that points hearth at ``fake`` (an OpenAI-compatible server)."""
    return {
        "OPENAI_BASE_URL": fake.url,
        "OPENAI_API_KEY": "sk-test-dummy",
        "HEARTH_MODEL": "openai:qwen-plus",
    }
