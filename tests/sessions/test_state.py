"""The business state a ``checkpoint`` event holds, read as a :class:`BusinessState`."""

from __future__ import annotations

import json
from typing import Any

from workhearth.sessions.state import BusinessState
from workhearth.sessions.store import SessionStore

# A checkpoint exactly as hearth wrote it before BusinessState existed (Agent.checkpoint
# after an activate_skill, a --model switch and two priced replies).
TODAY: dict[str, Any] = {
    "tasks": [],
    "files": {},
    "mode": "quest",
    "model": "openai:qwen-plus",
    "active_skill": {"name": "docx", "allowed_tools": ["read_file", "shell"]},
    "system": "You are hearth.",
    "system_prompt_hash": "0123456789abcdef",
    "usage": {"input_tokens": 62, "output_tokens": 18},
    "cost": 0.08,
    "tier": "strong",
    "pinned": "openai:qwen-plus",
}


def checkpoint_events(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """The ``state`` of every checkpoint line, as stored on disk."""
    lines = store.open(session_id).transcript.read_text().splitlines()
    return [e["state"] for e in map(json.loads, lines) if e["type"] == "checkpoint"]


def test_a_checkpoint_in_todays_format_loads_field_by_field(store: SessionStore) -> None:
    s = store.create(model="light", mode="agent")
    s.checkpoint(TODAY)
    s.close()
    state = store.open(s.id).load().business
    assert (state.mode, state.model, state.pinned, state.tier) == (
        "quest",
        "openai:qwen-plus",
        "openai:qwen-plus",
        "strong",
    )
    assert state.system == "You are hearth." and state.system_prompt_hash == "0123456789abcdef"
    assert state.usage == {"input_tokens": 62, "output_tokens": 18} and state.cost == 0.08
    assert state.active_skill == TODAY["active_skill"]
    assert (state.tasks, state.files, state.extra) == ([], {}, {})
    assert state.as_event() == TODAY


def test_without_a_checkpoint_the_meta_gives_mode_and_model(store: SessionStore) -> None:
    s = store.create(model="m1", mode="ask")
    state = s.load().business
    assert (state.mode, state.model, state.pinned, state.cost) == ("ask", "m1", None, None)
    assert state.as_event() == {"tasks": [], "files": {}, "mode": "ask", "model": "m1"}


def test_an_unknown_key_survives_a_rewrite_by_this_version(store: SessionStore) -> None:
    # Why: a newer hearth's checkpoint must round-trip through this one without loss.
    newer = {**TODAY, "budget": {"left": 3}, "plan": ["a", "b"]}
    s = store.create(model="light", mode="agent")
    s.checkpoint(newer)
    state = s.load().business
    assert state.extra == {"budget": {"left": 3}, "plan": ["a", "b"]}
    s.checkpoint(state.replace(mode="agent", cost=0.1))
    s.close()
    written = checkpoint_events(store, s.id)[-1]
    assert written == {**newer, "mode": "agent", "cost": 0.1}


def test_a_known_key_of_the_wrong_type_is_kept_not_trusted() -> None:
    odd = {"mode": 5, "cost": True, "usage": "lots", "tier": None, "extra": "x"}
    state = BusinessState.from_event(odd)
    assert (state.mode, state.cost, state.usage, state.tier) == (None, None, None, None)
    assert state.extra == {"mode": 5, "cost": True, "usage": "lots", "extra": "x"}
    # An explicit null is the same as no value, so only it is not written back.
    assert state.as_event() == {
        "tasks": [],
        "files": {},
        "model": None,
        "mode": 5,
        "cost": True,
        "usage": "lots",
        "extra": "x",
    }
    assert state.replace(mode="ask").mode == "ask"
