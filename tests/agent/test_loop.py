"""The agent loop (agent/loop.py) driving real providers against local fake servers.

The model is a real :class:`OpenAIChatModel` / :class:`AnthropicChatModel` talking
HTTP to tests/fake_providers.py; the tools are the real registry bound to a real
session, workspace and audit log. Only the network peer is scripted.
"""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.agent.conftest import Tree
from tests.fake_providers import (
    FakeProvider,
    Reply,
    anthropic_message,
    anthropic_text_block,
    anthropic_thinking_block,
    anthropic_tool_block,
    json_reply,
    openai_chunk,
    openai_sse,
    openai_text,
    openai_tool_calls,
    openai_usage,
    split,
)
from workhearth.agent.approval import allow_all
from workhearth.agent.audit import AuditLog
from workhearth.agent.compact import Compactor
from workhearth.agent.loop import Agent, Limits
from workhearth.agent.safefs import SafeFS
from workhearth.agent.tools import ToolContext, default_registry, tool
from workhearth.agent.tools.registry import ToolRegistry
from workhearth.config import Config, ModelSettings, load_config
from workhearth.models.adapters import to_anthropic, to_openai
from workhearth.models.anthropic_provider import AnthropicChatModel
from workhearth.models.http import HttpOptions
from workhearth.models.messages import Message
from workhearth.models.openai_provider import OpenAIChatModel
from workhearth.models.registry import build_model
from workhearth.models.scripted import ScriptedModel, calling
from workhearth.models.streaming import StreamingChatModel
from workhearth.models.tokens import count_tokens
from workhearth.models.validate import anthropic_problems, openai_problems
from workhearth.sessions.reconstruct import INTERRUPTED_TOOL_TEXT, repair
from workhearth.sessions.session import Session
from workhearth.sessions.state import COMPACT_PREFIX
from workhearth.sessions.store import SessionStore

SYSTEM = "You are hearth, working in a test workspace."
FAST = HttpOptions(timeout=10.0, max_retries=0)
Call = tuple[str, str, dict[str, Any]]


# --------------------------------------------------------------------------- scripts


def calls(api: str, *wanted: Call) -> Reply:
    """An assistant turn calling tools; arguments arrive in two fragments per call."""
    if api == "openai":
        split = [(i, n, _halves(a)) for i, n, a in wanted]
        return Reply(pieces=openai_sse(openai_tool_calls(split)))
    blocks = [anthropic_tool_block(k, i, n, _halves(a)) for k, (i, n, a) in enumerate(wanted)]
    return Reply(pieces=anthropic_message(*blocks, stop_reason="tool_use"))


def say(api: str, text: str) -> Reply:
    if api == "openai":
        return Reply(pieces=openai_sse(openai_text([text])))
    return Reply(pieces=anthropic_message(anthropic_text_block(0, [text])))


def _halves(arguments: dict[str, Any]) -> list[str]:
    raw = json.dumps(arguments)
    return [raw[: len(raw) // 2], raw[len(raw) // 2 :]]


def problems(api: str, body: dict[str, Any]) -> list[str]:
    return openai_problems(body["messages"]) if api == "openai" else anthropic_problems(body)


def assert_valid(api: str, fake: FakeProvider) -> None:
    for n, body in enumerate(fake.bodies):
        assert problems(api, body) == [], f"request {n}: {json.dumps(body)[:1500]}"
    assert fake.unscripted == 0


def assert_resumable(session: Session) -> None:
    """What ``hearth resume`` would send is valid for both APIs."""
    for fmt in ("anthropic", "openai"):
        resumed = session.resume(fmt)  # type: ignore[arg-type]
        if fmt == "openai":
            assert openai_problems(resumed.messages) == []
        else:
            assert anthropic_problems({"messages": resumed.messages}) == []


def results_in(body: dict[str, Any], api: str) -> list[tuple[str, str]]:
    """``(call id, text)`` of each tool result in a request body, in order."""
    out = []
    for msg in body["messages"]:
        if api == "openai" and msg["role"] == "tool":
            out.append((msg["tool_call_id"], msg["content"]))
        elif api == "anthropic" and isinstance(msg["content"], list):
            out += [
                (b["tool_use_id"], b["content"])
                for b in msg["content"]
                if b.get("type") == "tool_result"
            ]
    return out


# --------------------------------------------------------------------------- wiring


def provider(api: str, fake: FakeProvider, **settings: Any) -> StreamingChatModel:
    model = "qwen-plus" if api == "openai" else "claude-sonnet-4-5"
    base = ModelSettings(
        name=f"{api}:{model}",
        provider=api,  # type: ignore[arg-type]
        model=model,
        base_url=fake.url,
        api_key_env="KEY",
        api_key="sk-test",
        **settings,
    )
    cls = OpenAIChatModel if api == "openai" else AnthropicChatModel
    return cls(base, FAST)


def bind(
    session: Session,
    fs: SafeFS,
    config: Config,
    *,
    mode: str = "agent",
    registry: ToolRegistry | None = None,
):
    ctx = ToolContext(
        session=session,
        fs=fs,
        mode=mode,  # type: ignore[arg-type]
        approver=allow_all,
        audit=AuditLog(config.paths.audit_log),
    )
    return (registry or default_registry()).bind(ctx)


def make_agent(
    session: Session,
    fs: SafeFS,
    config: Config,
    model: StreamingChatModel,
    *,
    limits: Limits | None = None,
    registry: ToolRegistry | None = None,
    compactor: Compactor | None = None,
) -> Agent:
    return Agent(
        session=session,
        model=model,
        tools=bind(session, fs, config, registry=registry),
        system=SYSTEM,
        mode="agent",
        limits=limits,
        compactor=compactor,
    )


@pytest.fixture(params=["openai", "anthropic"])
def api(request: pytest.FixtureRequest) -> str:
    return request.param


# --------------------------------------------------------------------------- tools


def test_read_only_calls_of_one_turn_run_side_by_side(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    meeting = threading.Barrier(3, timeout=5)
    threads: dict[str, int] = {}

    @tool(read_only=True)
    def rendezvous(ctx: ToolContext, name: str) -> str:
        """Wait until two other calls arrive."""
        meeting.wait()  # raises BrokenBarrierError (an error result) when run one by one
        threads[name] = threading.get_ident()
        return f"met {name}"

    registry = default_registry()
    registry.add(rendezvous)
    fake = serve(
        [
            calls(api, *[(f"call_{n}", "rendezvous", {"name": n}) for n in "abc"]),
            say(api, "All three met."),
        ]
    )
    agent = make_agent(session, fs, config, provider(api, fake), registry=registry)
    result = agent.run("meet")

    assert result.status == "done", result
    assert result.text == "All three met."
    assert len(set(threads.values())) == 3
    assert results_in(fake.bodies[1], api) == [(f"call_{n}", f"met {n}") for n in "abc"]
    assert_valid(api, fake)


def test_calls_with_side_effects_run_alone_in_the_order_asked(
    session: Session, fs: SafeFS, config: Config, tree: Tree, serve
) -> None:
    api = "openai"
    fake = serve(
        [
            calls(
                api,
                ("call_1", "read_file", {"path": "README.md"}),
                ("call_2", "write_file", {"path": "README.md", "content": "# changed\n"}),
                ("call_3", "read_file", {"path": "README.md"}),
            ),
            say(api, "Changed."),
        ]
    )
    result = make_agent(session, fs, config, provider(api, fake)).run("change the readme")

    assert result.status == "done"
    got = dict(results_in(fake.bodies[1], api))
    assert [cid for cid, _ in results_in(fake.bodies[1], api)] == ["call_1", "call_2", "call_3"]
    assert "# readme" in got["call_1"]
    assert "# changed" in got["call_3"]
    assert (tree.root / "README.md").read_text() == "# changed\n"
    audit = AuditLog(config.paths.audit_log).read()
    assert [r.call_id for r in audit] == ["call_1", "call_2", "call_3"]


# --------------------------------------------------------------------------- limits


def test_max_steps_stops_and_the_session_resumes(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    fake = serve([calls(api, (f"call_{i}", "list_dir", {"path": "."})) for i in range(2)])
    result = make_agent(session, fs, config, provider(api, fake), limits=Limits(max_steps=2)).run(
        "look"
    )
    assert (result.status, result.steps, result.ok) == ("max_steps", 2, False)
    assert len(fake.bodies) == 2
    assert session.messages()[-1]["content"][0]["type"] == "tool_result"
    assert_resumable(session)

    more = serve([say(api, "Finished.")])
    again = make_agent(session, fs, config, provider(api, more)).run()
    assert (again.status, again.text) == ("done", "Finished.")
    assert_valid(api, fake)
    assert_valid(api, more)


def test_no_step_limit_runs_until_the_model_is_done(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    # Why: Limits (and a quest Policy) say None means no limit; it once crashed the loop.
    fake = serve(
        [calls(api, (f"call_{i}", "list_dir", {"path": "."})) for i in range(3)]
        + [say(api, "Looked.")]
    )
    model = provider(api, fake)
    result = make_agent(session, fs, config, model, limits=Limits(max_steps=None)).run("look")
    assert (result.status, result.steps, result.text) == ("done", 4, "Looked.")


def test_max_seconds_stops_a_step_that_crosses_it(
    session: Session, fs: SafeFS, config: Config, serve
) -> None:
    api = "openai"
    slow = calls(api, ("call_1", "list_dir", {"path": "."}))
    slow.pieces = [0.4, *slow.pieces]  # the model takes 0.4 s to answer
    fake = serve([slow, say(api, "never asked")])
    agent = make_agent(session, fs, config, provider(api, fake), limits=Limits(max_seconds=0.2))
    result = agent.run("look")
    assert (result.status, result.steps) == ("time", 1)
    assert len(fake.bodies) == 1
    assert_resumable(session)


def test_max_seconds_cuts_a_reply_that_streams_past_it(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    slow = say(api, "A long answer " * 40)
    slow.pieces = split(slow.pieces, 64, pause=0.2)  # about 12 s from first to last byte
    fake = serve([slow, say(api, "Finished.")])
    agent = make_agent(session, fs, config, provider(api, fake), limits=Limits(max_seconds=0.5))
    started = time.monotonic()
    result = agent.run("answer at length")
    # Cut, not waited for (a wide margin: a loaded CI machine is slow, never 12 s slow).
    assert time.monotonic() - started < 6.0
    assert (result.status, result.steps) == ("time", 1)
    # Nothing of the unfinished reply was kept: the task still waits for its answer.
    assert [m["role"] for m in session.messages()] == ["user"]
    again = make_agent(session, fs, config, provider(api, fake)).run()
    assert (again.status, again.text) == ("done", "Finished.")
    assert_valid(api, fake)


def test_max_seconds_bounds_a_model_that_never_answers(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    stalled = say(api, "too late")
    stalled.delay = 12.0  # the provider holds the request; the read timeout is 30 s
    fake = serve([stalled, say(api, "Finished.")])
    model = provider(api, fake)
    model.options = HttpOptions(timeout=30.0, max_retries=0)
    agent = make_agent(session, fs, config, model, limits=Limits(max_seconds=0.5))
    started = time.monotonic()
    result = agent.run("answer")
    assert time.monotonic() - started < 6.0
    assert (result.status, result.steps) == ("time", 1)
    assert [m["role"] for m in session.messages()] == ["user"]
    again = make_agent(session, fs, config, provider(api, fake)).run()
    assert (again.status, again.text) == ("done", "Finished.")


def test_max_cost_stops_once_the_configured_prices_add_up(
    session: Session, fs: SafeFS, config: Config, serve
) -> None:
    api = "openai"
    # Each reply reports 31 prompt + 9 completion tokens; at 1000 per million, 0.04 per call.
    fake = serve([calls(api, (f"call_{i}", "list_dir", {"path": "."})) for i in range(3)])
    model = provider(api, fake, price_in=1000.0, price_out=1000.0)
    result = make_agent(session, fs, config, model, limits=Limits(max_cost=0.07)).run("look")
    assert (result.status, result.steps) == ("cost", 2)
    assert result.cost == pytest.approx(0.08)
    assert result.usage.input_tokens == 62 and result.usage.output_tokens == 18
    assert len(fake.bodies) == 2
    assert session.load().business.cost == pytest.approx(0.08)


def test_session_cost_adds_up_across_a_resume(
    session: Session, fs: SafeFS, config: Config, serve
) -> None:
    api = "openai"
    fake = serve([calls(api, ("call_1", "list_dir", {"path": "."})), say(api, "done")])
    model = provider(api, fake, price_in=1000.0, price_out=1000.0)
    make_agent(session, fs, config, model, limits=Limits(max_steps=1)).run("look")
    assert session.load().business.cost == pytest.approx(0.04)
    make_agent(session, fs, config, model).run()
    assert session.load().business.cost == pytest.approx(0.08)
    assert session.load().business.usage == {"input_tokens": 62, "output_tokens": 18}


def test_a_run_rewrites_the_checkpoint_in_the_same_format_keeping_unknown_keys(
    session: Session, fs: SafeFS, config: Config, serve
) -> None:
    api = "openai"
    # Why: a newer hearth's checkpoint must come through a run of this one without loss.
    session.checkpoint({"tasks": [{"title": "a"}], "files": {}, "budget": {"left": 3}})
    fake = serve([say(api, "done")])
    make_agent(session, fs, config, provider(api, fake, price_in=1000.0)).run("look")
    lines = session.transcript.read_text().splitlines()
    written = [json.loads(line)["state"] for line in lines if '"checkpoint"' in line][-1]
    assert written.pop("system_prompt_hash") and written.pop("cost") > 0
    assert written == {
        "tasks": [{"title": "a"}],
        "files": {},
        "mode": "agent",
        "model": "openai:qwen-plus",
        "system": SYSTEM,
        "usage": {"input_tokens": 31, "output_tokens": 9},
        "budget": {"left": 3},
    }


# --------------------------------------------------------------------------- odd replies


def _empty(api: str) -> Reply:
    if api == "openai":
        return Reply(pieces=openai_sse(openai_text([])))
    return Reply(pieces=anthropic_message())


def test_an_empty_reply_ends_the_turn_with_a_valid_message(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    fake = serve([_empty(api), say(api, "Now with words.")])
    agent = make_agent(session, fs, config, provider(api, fake))
    first = agent.run("say nothing")
    assert first.status == "done"
    assert first.text == "(the model returned nothing)"
    assert session.messages()[-1]["content"] == [
        {"type": "text", "text": "(the model returned nothing)"}
    ]
    second = agent.run("say something")
    assert (second.status, second.text) == ("done", "Now with words.")
    assert_valid(api, fake)
    assert_resumable(session)


def test_a_reply_of_only_reasoning_keeps_the_next_request_valid(
    session: Session, fs: SafeFS, config: Config, serve, api: str
) -> None:
    if api == "openai":
        thinking = Reply(pieces=openai_sse(openai_text([], reasoning=["let me think"])))
    else:
        thinking = Reply(pieces=anthropic_message(anthropic_thinking_block(0, ["hmm"], "sig-1")))
    fake = serve([thinking, say(api, "Answer.")])
    agent = make_agent(session, fs, config, provider(api, fake))
    assert agent.run("think").status == "done"
    assert agent.run("now answer").text == "Answer."
    assert_valid(api, fake)
    assert_resumable(session)


def _cut_call(api: str, arguments: str) -> Reply:
    """A tool call whose input was cut by the token limit (finish "length" / "max_tokens")."""
    if api == "openai":
        chunks = openai_tool_calls([("call_cut", "write_file", [arguments])])[:-2]
        chunks += [openai_chunk({}, "length"), openai_usage()]
        return Reply(pieces=openai_sse(chunks))
    block = anthropic_tool_block(0, "call_cut", "write_file", [arguments])
    return Reply(pieces=anthropic_message(block, stop_reason="max_tokens"))


@pytest.mark.parametrize("arguments", ['{"path": "cut.txt", "content": "par', "{}"])
def test_a_tool_call_cut_by_max_tokens_is_never_run(
    session: Session,
    fs: SafeFS,
    config: Config,
    tree: Tree,
    serve,
    api: str,
    arguments: str,
) -> None:
    fake = serve([_cut_call(api, arguments)])
    result = make_agent(session, fs, config, provider(api, fake)).run("write cut.txt")
    assert result.status == "error"
    assert "max_tokens" in (result.error or "")
    assert not (tree.root / "cut.txt").exists()
    assert AuditLog(config.paths.audit_log).read() == []
    assert_resumable(session)

    # Resuming tells the model the call did not run, and carries on.
    more = serve([say(api, "I will write it in smaller parts.")])
    again = make_agent(session, fs, config, provider(api, more)).run()
    assert again.status == "done"
    assert results_in(more.bodies[0], api) == [("call_cut", INTERRUPTED_TOOL_TEXT)]
    assert_valid(api, fake)
    assert_valid(api, more)


# --------------------------------------------------------------------------- compaction


BIG = "\n".join(f"line {i}: alpha beta gamma delta epsilon zeta eta theta" for i in range(120))


def small_window_model(
    tmp_path: Path, fake: FakeProvider, window: int = 2000
) -> StreamingChatModel:
    """A model configured the way a user would: ``[models.small] context_window = N``."""
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        "[models]\nmax_retries = 0\n\n[models.small]\n"
        f'provider = "openai"\nmodel = "qwen-plus"\nbase_url = "{fake.url}"\n'
        f"context_window = {window}\n"
    )
    config = load_config({"HEARTH_HOME": str(home), "OPENAI_API_KEY": "sk-test"})
    model = build_model("small", config.models)
    assert model.context_window == window
    return model


def compact_events(session: Session) -> list[dict[str, Any]]:
    lines = session.transcript.read_text().splitlines()
    return [e for e in map(json.loads, lines) if e.get("type") == "compact"]


def assert_pairs_intact(messages: list[Message]) -> None:
    """Every tool_result answers a tool_use of the message just before it (no split pair)."""
    for i, message in enumerate(messages):
        asked = {b["id"] for b in messages[i - 1]["content"] if b.get("type") == "tool_use"}
        for block in message["content"]:
            if block.get("type") == "tool_result":
                assert i > 0 and block["tool_use_id"] in asked, (i, block["tool_use_id"])
        answered = (
            {b["tool_use_id"] for b in messages[i + 1]["content"] if b.get("type") == "tool_result"}
            if i + 1 < len(messages)
            else None
        )
        ids = {b["id"] for b in message["content"] if b.get("type") == "tool_use"}
        if answered is not None:
            assert ids <= answered, (i, ids, answered)


def test_compaction_on_a_small_window_keeps_pairs_and_stays_resumable(
    session: Session, fs: SafeFS, config: Config, tree: Tree, serve, tmp_path: Path
) -> None:
    api = "openai"
    (tree.root / "big.txt").write_text(BIG)
    assert count_tokens(BIG) > 1500
    fake = serve(
        [
            calls(api, ("call_r1", "read_file", {"path": "big.txt"})),
            # big.txt overfills the window inside the task: compaction runs before the next ask
            say(api, "The user read big.txt (120 numbered lines of Greek letters)."),  # summary
            say(api, "It has 120 lines."),
        ]
    )
    model = small_window_model(tmp_path, fake)
    agent = make_agent(session, fs, config, model, compactor=Compactor())
    assert agent.run("read big.txt").text == "It has 120 lines."

    (event,) = compact_events(session)
    summary_request = fake.bodies[1]
    assert "tools" not in summary_request
    assert "big.txt" in json.dumps(summary_request["messages"])
    folded = session.messages()
    assert folded[0]["content"][0]["text"].startswith(COMPACT_PREFIX)
    assert "120 numbered lines of Greek letters" in folded[0]["content"][0]["text"]
    assert_pairs_intact(folded)
    # The cut fell before the assistant's reply turn: no tool_use lost its result.
    assert event["upto_seq"] < session.load().seqs[1]
    # The request after compaction fits the window, and the old tool output is gone from it.
    after = fake.bodies[2]["messages"]
    assert count_tokens(json.dumps(after)) < model.context_window
    assert "line 119" not in json.dumps(after)
    assert "120 numbered lines of Greek letters" in json.dumps(after)
    assert_valid(api, fake)
    assert_resumable(session)

    # A crash after compaction, mid tool call, still resumes to a valid conversation.
    session.append_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "call_lost", "name": "list_dir", "input": {}}],
        }
    )
    assert_resumable(session)
    more = serve([say(api, "Done after the crash.")])
    again = make_agent(session, fs, config, small_window_model(tmp_path, more)).run()
    assert again.status == "done"
    assert ("call_lost", INTERRUPTED_TOOL_TEXT) in results_in(more.bodies[0], api)
    assert COMPACT_PREFIX.strip() in json.dumps(more.bodies[0]["messages"])
    assert_valid(api, more)


def _seed_turns(session: Session, rng: random.Random, turns: int) -> None:
    """User tasks, each followed by 0-3 tool rounds of random sizes, then an answer."""
    n = 0
    for t in range(turns):
        session.append_message(
            {
                "role": "user",
                "content": [{"type": "text", "text": f"task {t} " + "w " * rng.randint(1, 200)}],
            }
        )
        for _ in range(rng.randint(0, 3)):
            ids = [f"call_{(n := n + 1)}" for _ in range(rng.randint(1, 3))]
            session.append_message(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": i}}
                        for i in ids
                    ],
                }
            )
            session.append_message(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": i,
                            "content": "x " * rng.randint(1, 400),
                        }
                        for i in ids
                    ],
                }
            )
        session.append_message(
            {"role": "assistant", "content": [{"type": "text", "text": f"answer {t}"}]}
        )
    session.append_message({"role": "user", "content": [{"type": "text", "text": "next task"}]})


@pytest.mark.parametrize("seed", range(12))
def test_a_compaction_cut_never_splits_a_tool_pair(
    store: SessionStore, serve, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    session = store.create(mode="agent")
    with session:
        _seed_turns(session, rng, turns=rng.randint(3, 8))
        before = session.messages()
        fake = serve([say("openai", f"summary {seed}")])
        window = rng.choice([2000, 3000, 4000, 6000])
        compactor = Compactor(threshold=0.05, keep=rng.choice([0.05, 0.2, 0.35]), reserve=0)
        assert compactor(session, small_window_model(tmp_path, fake, window))

        (event,) = compact_events(session)
        folded = session.messages()
        kept = folded[1:]
        assert kept == before[len(before) - len(kept) :]
        # The first kept message is a user task or an assistant turn, never a tool result.
        assert kept[0]["role"] == "assistant" or all(
            b.get("type") == "text" for b in kept[0]["content"]
        )
        assert_pairs_intact(folded)
        assert anthropic_problems(to_anthropic(None, repair(folded).messages)) == []
        assert openai_problems(to_openai(None, repair(folded).messages)) == []
        assert_resumable(session)
        assert event["summary"] == f"summary {seed}"


def test_a_small_conversation_is_not_compacted(
    session: Session, fs: SafeFS, config: Config, serve, tmp_path: Path
) -> None:
    # Extra replies so a needless summary call shows as a compact event, not as a 500.
    fake = serve([say("openai", t) for t in ("hi", "fine", "bye", "s1", "s2", "s3", "s4")])
    agent = make_agent(
        session, fs, config, small_window_model(tmp_path, fake), compactor=Compactor()
    )
    for task in ("hello", "how are you", "bye"):
        assert agent.run(task).status == "done"
    # Each request is a few dozen tokens of a 2000-token window: nothing to compact.
    assert compact_events(session) == []
    assert len(fake.bodies) == 3
    assert_valid("openai", fake)


def test_one_long_task_is_compacted_before_it_outgrows_the_window(
    session: Session, fs: SafeFS, config: Config, tree: Tree, serve, tmp_path: Path
) -> None:
    api = "openai"
    (tree.root / "big.txt").write_text(BIG[: len(BIG) // 2])
    steps = [calls(api, (f"call_{i}", "read_file", {"path": "big.txt"})) for i in range(6)]
    fake = serve(steps + [say(api, "summary so far")] * 6 + [say(api, "done")])
    model = small_window_model(tmp_path, fake)
    agent = make_agent(session, fs, config, model, compactor=Compactor(), limits=Limits(7))
    agent.run("read big.txt six times")
    sizes = [count_tokens(json.dumps(b["messages"])) for b in fake.bodies if "tools" in b]
    assert max(sizes) <= model.context_window, sizes


def test_a_failed_summary_call_ends_the_run_with_an_error_status(
    session: Session, fs: SafeFS, config: Config, tree: Tree, serve, tmp_path: Path
) -> None:
    api = "openai"
    (tree.root / "big.txt").write_text(BIG)
    fake = serve(
        [
            calls(api, ("call_r1", "read_file", {"path": "big.txt"})),
            # big.txt overfills the window inside this task: the summary call comes next, and fails
            json_reply(500, {"error": {"message": "overloaded"}}),
        ]
    )
    agent = make_agent(
        session, fs, config, small_window_model(tmp_path, fake), compactor=Compactor()
    )
    result = agent.run("read big.txt")
    assert result.status == "error"
    assert "overloaded" in (result.error or "")
    assert_resumable(session)


# --------------------------------------------------------------------------- provider quirks


def test_malformed_tool_arguments_are_refused_and_the_next_request_stays_valid(
    session: Session, fs: SafeFS, config: Config, tree: Tree, serve
) -> None:
    api = "openai"
    broken = openai_tool_calls(
        [("call_bad", "write_file", ['{"path": "x.txt", "content": "unterm'])]
    )
    fake = serve([Reply(pieces=openai_sse(broken)), say(api, "Sorry.")])
    result = make_agent(session, fs, config, provider(api, fake)).run("write x.txt")
    assert result.status == "done"
    assert not (tree.root / "x.txt").exists()
    ((call_id, text),) = results_in(fake.bodies[1], api)
    assert call_id == "call_bad" and "invalid arguments for write_file" in text
    (record,) = AuditLog(config.paths.audit_log).read()
    assert (record.decision, record.outcome) == ("denied-by-policy", "error")
    assert_valid(api, fake)


def test_a_reused_provider_call_id_keeps_each_saved_output(
    session: Session, fs: SafeFS, config: Config, tree: Tree, serve
) -> None:
    api = "openai"
    for name in ("a", "b"):
        lines = "".join(f"{name.upper() * 3} line {i}\n" for i in range(3000))
        (tree.root / f"{name}.txt").write_text(lines)
    grep = [("call_0", "grep", {"pattern": p, "max_results": 1000}) for p in ("AAA", "BBB")]
    fake = serve([calls(api, grep[0]), calls(api, grep[1]), say(api, "Both searched.")])
    assert make_agent(session, fs, config, provider(api, fake)).run("search").status == "done"
    assert_valid(api, fake)
    first = results_in(fake.bodies[2], api)[0][1]
    saved = Path(first.split("The full output (")[1].split(" is in ")[1].split(";")[0])
    assert "a.txt:1000: AAA line 999" in saved.read_text()


# --------------------------------------------------------------------------- scripted model


def test_the_loop_runs_tools_for_the_shipped_scripted_model(
    session: Session, fs: SafeFS, config: Config
) -> None:
    # Why: models/scripted.py is the no-network model users and unit tests drive the loop with.
    model = ScriptedModel([calling(("read_file", {"path": "README.md"})), "It is a readme."])
    result = make_agent(session, fs, config, model).run("what is in README.md?")

    assert (result.status, result.text, result.steps) == ("done", "It is a readme.", 2)
    model.assert_done()
    assert "read_file" in model.requests[0].tools
    answered = model.requests[1].messages[-1]["content"][0]
    assert answered["type"] == "tool_result" and "# readme" in str(answered["content"])
    assert result.models == ["scripted:test", "scripted:test"]


def test_the_compactor_keeps_its_running_size_equal_to_a_full_sum() -> None:
    """The size the compaction check keeps step by step equals summing every message,
    also after a rewind (the tail replaced) and a compaction (the start replaced)."""
    compactor = Compactor()
    messages: list[Message] = []
    seqs: list[int] = []

    def full() -> int:
        return sum(compactor._size(s, m) for s, m in zip(seqs, messages, strict=True))

    seq = 0
    for step in range(60):
        seq += 1
        messages.append(
            {"role": "user", "content": [{"type": "text", "text": f"step {step} " * step}]}
        )
        seqs.append(seq)
        if step == 30:  # a rewind: the last ten go, new ones come with higher seqs
            del messages[-10:], seqs[-10:]
        if step == 45:  # a compaction: the first twenty become one summary
            seq += 1
            messages[:20] = [{"role": "user", "content": [{"type": "text", "text": "summary"}]}]
            seqs[:20] = [seqs[19]]
        assert compactor._total(messages, seqs) == full(), step
