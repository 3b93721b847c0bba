from __future__ import annotations

import copy
import gc
import time
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import conversations
from workhearth.models.adapters import to_anthropic, to_openai
from workhearth.models.validate import anthropic_problems, openai_problems
from workhearth.sessions.reconstruct import (
    CONTINUED_TEXT,
    INTERRUPTED_REPLY_TEXT,
    INTERRUPTED_TOOL_TEXT,
    MISSING_START_TEXT,
    GrowingRepair,
    repair,
)

# --------------------------------------------------------------------------- helpers


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def use(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "shell", "input": {"cmd": "ls"}}


def result(tool_id: str, content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": content}


def signed(thought: str = "hm", sig: str = "c2ln") -> dict[str, Any]:
    return {"type": "thinking", "thinking": thought, "signature": sig}


def user(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks), **extra}


def assistant(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks), **extra}


def assert_valid(messages: list) -> None:
    assert anthropic_problems(to_anthropic("sys", messages)) == []
    assert openai_problems(to_openai("sys", messages)) == []


def signed_blocks(messages: list) -> list[tuple[str, str]]:
    return sorted(
        (b["thinking"], b["signature"])
        for m in messages
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "thinking" and b.get("signature")
    )


def assert_consistent(result_: Any) -> None:
    """The classification matches how the conversation ends."""
    out = result_.messages
    if not out or out[-1]["role"] == "assistant":
        assert result_.interruption == "none"
    else:
        assert result_.interruption in ("interrupted_prompt", "interrupted_turn")


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(conversations())
def test_valid_conversation_comes_back_unchanged(conv: list) -> None:
    before = copy.deepcopy(conv)
    repaired = repair(conv)
    assert repaired.messages == conv
    assert conv == before
    assert repaired.closed_tool_calls == []
    assert repaired.dropped_blocks == 0
    expected = "interrupted_prompt" if conv[-1]["role"] == "user" else "none"
    assert repaired.interruption == expected


@settings(max_examples=120, deadline=None)
@given(conversations())
def test_every_crash_point_repairs_to_a_valid_conversation(conv: list) -> None:
    for i, msg in enumerate(conv):
        for j in range(len(msg["content"]) + 1):
            cut = [*conv[:i], {**msg, "content": msg["content"][:j]}]
            repaired = repair(cut)
            out = repaired.messages
            if not out:
                assert i == 0 and j == 0
                continue
            assert_valid(out)
            assert_consistent(repaired)
            # Everything before the crash point is kept as it was.
            assert out[:i] == conv[:i]
            if j:
                assert out[i]["content"][:j] == msg["content"][:j]
                for a, b in zip(out[i]["content"], msg["content"][:j], strict=False):
                    if b["type"] == "thinking":
                        assert a is b  # the very same object: byte for byte
            assert signed_blocks(out) == signed_blocks(cut)


DAMAGE = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "drop",
                "dup",
                "dup_far",
                "drop_block",
                "swap",
                "trim",
                "blank",
                "unfinished",
                "reverse",
            ]
        ),
        st.integers(0, 10_000),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=4,
)


def damage(conv: list, ops: list[tuple[str, int, int]]) -> list:
    msgs = list(conv)
    for op, a, b in ops:
        if not msgs:
            break
        n = len(msgs)
        i = a % n
        content = msgs[i]["content"]
        if op == "drop":
            del msgs[i]
        elif op == "dup":
            msgs.insert(i + 1, msgs[i])
        elif op == "dup_far":
            msgs.insert(b % (n + 1), msgs[i])
        elif op == "drop_block" and content:
            k = b % len(content)
            msgs[i] = {**msgs[i], "content": content[:k] + content[k + 1 :]}
        elif op == "swap" and i + 1 < n:
            msgs[i], msgs[i + 1] = msgs[i + 1], msgs[i]
        elif op == "trim":
            msgs = msgs[: i + 1]
            msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"][: b % (len(content) + 1)]}
        elif op == "blank":
            junk = [text(""), text(" "), {"type": "thinking", "thinking": "", "signature": ""}]
            msgs[i] = {**msgs[i], "content": [*content, junk[b % 3]]}
        elif op == "unfinished":
            msgs.insert(i, assistant({"type": "thinking", "thinking": "so the answer"}))
        elif op == "reverse":
            msgs[i] = {**msgs[i], "content": content[::-1]}
    return msgs


@settings(max_examples=200, deadline=None)
@given(conversations(), DAMAGE)
def test_damaged_conversations_repair_to_valid(conv: list, ops: list) -> None:
    damaged = damage(conv, ops)
    before = copy.deepcopy(damaged)
    repaired = repair(damaged)
    assert damaged == before  # input untouched
    out = repaired.messages
    if out:
        assert_valid(out)
    assert_consistent(repaired)
    # Signed thinking is never dropped or edited (exact repeats of a message count once).
    assert set(signed_blocks(out)) == set(signed_blocks(damaged))
    # Repairing a repaired conversation changes nothing.
    assert repair(out).messages == out


# --------------------------------------------------------------------------- classification


def test_none_when_the_answer_is_there() -> None:
    conv = [user(text("hi")), assistant(signed(), text("hello"))]
    assert repair(conv).interruption == "none"


def test_interrupted_prompt_when_the_last_user_message_has_no_answer() -> None:
    conv = [user(text("hi")), assistant(text("hello")), user(text("and?"))]
    repaired = repair(conv)
    assert repaired.interruption == "interrupted_prompt"
    assert repaired.messages == conv


def test_interrupted_prompt_after_complete_tool_results() -> None:
    conv = [user(text("hi")), assistant(use("a")), user(result("a"))]
    assert repair(conv).interruption == "interrupted_prompt"


def test_interrupted_turn_closes_missing_results_in_the_next_user_message() -> None:
    conv = [user(text("go")), assistant(signed(), use("a"), use("b")), user(result("a"))]
    repaired = repair(conv)
    assert repaired.interruption == "interrupted_turn"
    assert repaired.closed_tool_calls == ["b"]
    last = repaired.messages[-1]["content"]
    assert last[0] == result("a")
    assert last[1] == {
        "type": "tool_result",
        "tool_use_id": "b",
        "content": INTERRUPTED_TOOL_TEXT,
        "is_error": True,
    }
    assert_valid(repaired.messages)


def test_interrupted_turn_creates_the_result_message_when_missing() -> None:
    conv = [user(text("go")), assistant(use("a"))]
    repaired = repair(conv)
    assert repaired.interruption == "interrupted_turn"
    assert repaired.messages[:2] == conv
    assert repaired.messages[2]["content"][0]["tool_use_id"] == "a"
    assert repaired.messages[2]["content"][0]["is_error"] is True


def test_interrupted_turn_drops_trailing_unfinished_thinking() -> None:
    conv = [user(text("go")), assistant({"type": "thinking", "thinking": "first I"})]
    repaired = repair(conv)
    assert repaired.interruption == "interrupted_turn"
    assert repaired.messages == conv[:1]
    assert repaired.dropped_blocks == 1


def test_trailing_signed_thinking_is_kept_and_followed_by_a_note() -> None:
    thought = signed("deep thought", "U0lH" * 100)
    conv = [user(text("go")), assistant(thought)]
    repaired = repair(conv)
    assert repaired.messages[1]["content"][0] is thought
    assert repaired.messages[2]["content"] == [text(INTERRUPTED_REPLY_TEXT)]
    assert repaired.interruption == "interrupted_turn"
    assert_valid(repaired.messages)


def test_unfinished_thinking_after_an_answer_is_dropped_and_noted() -> None:
    conv = [user(text("go")), assistant(text("part one"), {"type": "thinking", "thinking": "and"})]
    repaired = repair(conv)
    assert repaired.messages[1] == assistant(text("part one"))
    assert repaired.messages[2]["content"] == [text(INTERRUPTED_REPLY_TEXT)]
    assert repaired.interruption == "interrupted_turn"


def test_tool_call_closed_mid_conversation_does_not_make_the_end_interrupted() -> None:
    conv = [user(text("go")), assistant(use("a")), assistant(text("done"))]
    repaired = repair(conv)
    assert repaired.closed_tool_calls == ["a"]
    assert [m["role"] for m in repaired.messages] == ["user", "assistant", "user", "assistant"]
    assert repaired.interruption == "none"


# --------------------------------------------------------------------------- repairs


def test_starts_with_a_user_message() -> None:
    conv = [assistant(text("hello")), user(text("hi"))]
    repaired = repair(conv)
    assert repaired.messages[0] == user(text(MISSING_START_TEXT))
    assert repaired.messages[1:] == conv
    assert_valid(repaired.messages)


def test_empty_blocks_and_messages_are_dropped_but_signed_empty_thinking_stays() -> None:
    omitted = {"type": "thinking", "thinking": "", "signature": "c2ln"}
    conv = [
        user(text(""), text("hi")),
        assistant({"type": "thinking", "thinking": "", "signature": ""}, omitted, text("yo")),
        user(),
        user(text("  ")),
    ]
    repaired = repair(conv)
    assert repaired.messages == [user(text("hi")), assistant(omitted, text("yo"))]
    assert repaired.messages[1]["content"][0] is omitted
    assert repaired.dropped_blocks == 3
    assert repaired.interruption == "none"


def test_orphan_tool_results_are_dropped() -> None:
    conv = [user(result("ghost"), text("hi")), assistant(text("yo")), user(result("a"), text("x"))]
    repaired = repair(conv)
    assert repaired.messages == [user(text("hi")), assistant(text("yo")), user(text("x"))]
    assert repaired.dropped_blocks == 2


def test_duplicate_tool_ids_are_renamed_with_their_results() -> None:
    conv = [
        user(text("go")),
        assistant(use("a")),
        user(result("a", "first")),
        assistant(use("a")),
        user(result("a", "second")),
    ]
    repaired = repair(conv)
    out = repaired.messages
    assert out[1]["content"][0]["id"] == "a"
    assert out[3]["content"][0]["id"] == "a_2"
    assert out[4]["content"][0] == result("a_2", "second")
    assert conv[3]["content"][0]["id"] == "a"  # input untouched
    assert_valid(out)


def test_user_neighbours_merge_with_results_first() -> None:
    conv = [
        user(text("go")),
        assistant(use("a"), use("b")),
        user(text("wait")),
        user(result("b")),
        user(result("a"), text("ok")),
    ]
    out = repair(conv).messages
    assert out[2]["content"] == [result("b"), result("a"), text("wait"), text("ok")]
    assert_valid(out)


def test_assistant_neighbours_merge_when_thinking_stays_first() -> None:
    conv = [user(text("go")), assistant(signed()), assistant(text("answer"), id="m2")]
    out = repair(conv).messages
    assert out == [user(text("go")), assistant(signed(), text("answer"))]


def test_assistant_neighbours_with_thinking_get_a_continued_turn_between() -> None:
    first = assistant(signed("a", "s1"), text("one"))
    second = assistant(signed("b", "s2"), text("two"))
    out = repair([user(text("go")), first, second]).messages
    assert out == [user(text("go")), first, user(text(CONTINUED_TEXT)), second]
    assert_valid(out)


def test_thinking_after_text_in_one_message_is_split_not_moved() -> None:
    late = signed("later", "s2")
    conv = [user(text("go")), assistant(text("one"), late, text("two"), id="m1")]
    out = repair(conv).messages
    assert out[1] == assistant(text("one"), id="m1")
    assert out[2] == user(text(CONTINUED_TEXT))
    assert out[3]["content"][0] is late
    assert "id" not in out[3]  # message ids stay unique
    assert_valid(out)


def test_exact_repeated_message_counts_once() -> None:
    hello = assistant(signed(), text("hello"), id="m1")
    repaired = repair([user(text("hi")), hello, hello])
    assert repaired.messages == [user(text("hi")), hello]


def test_unsigned_thinking_only_message_in_the_middle_is_dropped() -> None:
    conv = [
        user(text("go")),
        assistant({"type": "thinking", "thinking": "hmm"}),
        user(text("well?")),
        assistant({"type": "thinking", "thinking": "ok"}, text("yes")),
    ]
    out = repair(conv).messages
    assert out == [user(text("go"), text("well?")), conv[3]]
    assert_valid(out)


def test_input_is_never_mutated_and_output_is_new() -> None:
    conv = [user(text("go")), assistant(use("a")), assistant(use("a"))]
    before = copy.deepcopy(conv)
    out = repair(conv).messages
    assert conv == before
    assert all(o is not m for o in out for m in conv)
    assert all(o["content"] is not m["content"] for o in out for m in conv)


def _conversation(turns: int) -> list[Any]:
    conv: list[Any] = []
    for n in range(turns):
        conv.append(user(text(f"q{n}")))
        conv.append(assistant(signed(), text("looking"), use(f"t{n}")))
        conv.append(user(result(f"t{n}", "x" * 100)))
        conv.append(assistant(text(f"a{n}")))
    return conv


def test_repair_time_grows_linearly_with_the_conversation() -> None:
    """Four times the turns cost about four times the work, never sixteen (quadratic).

    Why: a ratio of CPU times on this machine, not a time limit (speed itself is
    measured by bench/sessions.py); the best of three runs damps noise, and the
    garbage collector is off while timing (its full passes grow with everything
    alive, which once pushed the ratio past 8 on a busy machine).
    """

    def cost(conv: list[Any]) -> float:
        best = float("inf")
        for _ in range(3):
            gc.collect()
            gc.disable()
            try:
                started = time.process_time()
                repaired = repair(conv)
                best = min(best, time.process_time() - started)
            finally:
                gc.enable()
            assert repaired.messages == conv
        return best

    small, large = _conversation(2_500), _conversation(10_000)
    ratio = cost(large) / max(cost(small), 1e-4)
    assert ratio < 8, ratio


# --------------------------------------------------------------------------- growing


def grow_and_compare(messages: list, stride: int) -> int:
    """Feed ``messages`` to one GrowingRepair, ``stride`` messages at a time after the
    first (the loop appends a reply and its results per step); every answer must equal
    a full repair's. Returns how many answers were extended rather than recomputed."""
    grower = GrowingRepair()
    state: list = []
    seqs: list[int] = []
    extended = 0
    cut = 1
    while cut <= len(messages):
        state[:] = messages[:cut]
        seqs[:] = range(1, cut + 1)
        held = grower._conversation
        got = grower.repair(state, seqs)
        extended += held is not None and grower._conversation is held
        full = repair(state)
        assert got.messages == full.messages, cut
        assert got.interruption == full.interruption
        assert got.closed_tool_calls == full.closed_tool_calls
        cut += stride
    return extended


@settings(max_examples=100, deadline=None)
@given(conversations(max_rounds=6), DAMAGE)
def test_growing_repair_equals_a_full_repair_at_every_step(conv: list, ops: list) -> None:
    for stride in (1, 2):
        grow_and_compare(conv, stride)
        grow_and_compare(damage(conv, ops), stride)


def test_growing_repair_extends_valid_steps() -> None:
    """The property above must exercise the extending path, not only the fallback."""
    from hypothesis import find

    conv = find(conversations(max_rounds=8), lambda c: grow_and_compare(c, 2) >= 2)
    assert grow_and_compare(conv, 2) >= 2


def test_growing_repair_extends_a_clean_run_and_notices_rewind_and_compaction() -> None:
    def step(i: int) -> list:
        call = {"type": "tool_use", "id": f"call_{i}", "name": "read_file", "input": {"p": i}}
        result = {"type": "tool_result", "tool_use_id": f"call_{i}", "content": f"out {i}"}
        return [
            {"role": "assistant", "content": [{"type": "text", "text": "reading"}, call]},
            {"role": "user", "content": [result]},
        ]

    messages: list = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    seqs = [1]
    grower = GrowingRepair()
    grower.repair(messages, seqs)
    held = grower._conversation
    assert held is not None
    for i in range(50):
        messages.extend(step(i))
        seqs.extend([seqs[-1] + 1, seqs[-1] + 2])
        got = grower.repair(messages, seqs)
        assert grower._conversation is held  # extended, not recomputed
        assert got.messages == repair(messages).messages
    # A repeated tool id: repair renames it, so the grower falls back to a full repair.
    messages.extend(step(3))
    seqs.extend([seqs[-1] + 1, seqs[-1] + 2])
    assert grower.repair(messages, seqs).messages == repair(messages).messages
    # A rewind then new steps (same length, other objects and seqs): noticed.
    del messages[-4:], seqs[-4:]
    messages.extend(step(90) + step(91))
    seqs.extend(range(seqs[-1] + 10, seqs[-1] + 14))
    assert grower.repair(messages, seqs).messages == repair(messages).messages
    # A compaction replaces the start: noticed.
    messages[:5] = [{"role": "user", "content": [{"type": "text", "text": "summary"}]}]
    seqs[:5] = [seqs[4]]
    messages.extend(step(92))
    seqs.extend([seqs[-1] + 1, seqs[-1] + 2])
    assert grower.repair(messages, seqs).messages == repair(messages).messages
