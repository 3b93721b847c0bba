"""Fixtures shared across test folders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.disks import small_tmpfs
from tests.fake_providers import FakeProvider, Reply
from tests.shared_data import CLAUDE_CODE_FIXTURES, require


@pytest.fixture
def serve() -> Iterator[Callable[[list[Reply]], FakeProvider]]:
    """Start scripted local provider servers on demand; all are stopped after the test."""
    started: list[FakeProvider] = []

    def start(replies: list[Reply]) -> FakeProvider:
        fake = FakeProvider(replies).__enter__()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.__exit__(None, None, None)


@pytest.fixture
def claude_code_fixtures() -> Path:
    """The real Claude Code transcripts in ../shared (a skip without them; in CI a failure)."""
    return require(CLAUDE_CODE_FIXTURES, "real Claude Code fixtures")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs with at most 200 files, unmounted after the test."""
    with small_tmpfs(tmp_path / "disk") as disk:
        yield disk
