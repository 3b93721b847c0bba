"""A long task in one process does not leak (issue #20 item 1).

``Session.load()`` used to call ``gc.freeze()`` after every load, cached loads too,
moving every tracked object of the process (garbage cycles included) into the
permanent generation: ``hearth serve``, which runs tasks in-process, grew for as long
as it ran. Here 1,000 steps of the real agent loop, driven by the task service as
``hearth run`` drives it, with a scripted model (the network edge) that leaves 500
unreachable cycles behind on each call: the freeze count must not grow, no cycle may
survive the run, and what the last 200 steps allocated and kept (tracemalloc, traced
only there: it slows every allocation) stays within a few MB.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workhearth.agent.approval import allow_all
from workhearth.agent.loop import Agent
from workhearth.agent.runner import RunOptions
from workhearth.app import Workhearth
from workhearth.models.base import ModelRequest
from workhearth.models.messages import Message
from workhearth.models.router import Router
from workhearth.models.streaming import Completion, Done, StreamEvent, StreamingChatModel, Usage
from workhearth.tasks.service import TaskService

STEPS = 1000
TRACE_FROM = 800
CYCLES = 500
GROWTH_LIMIT = 4 * 1024 * 1024


class Cycle:
    def __init__(self) -> None:
        self.me = self
        self.payload = [0] * 8


class LitteringModel(StreamingChatModel):
    """Answers at once with a read_file call, ``STEPS`` times, then ends; each call
    leaves ``CYCLES`` unreachable reference cycles (what real code leaves behind)."""

    name = "test:littering"
    context_window = 1_000_000

    def __init__(self) -> None:
        self.calls = 0

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        for _ in range(CYCLES):
            Cycle()
        self.calls += 1
        usage = Usage(input_tokens=10, output_tokens=5)
        if self.calls > STEPS:
            final: Message = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
            yield Done(Completion(final, usage, "end_turn", self.name))
            return
        block = {"type": "tool_use", "id": f"call_{self.calls:05d}", "name": "read_file"}
        block["input"] = {"path": "small.txt"}
        reply: Message = {"role": "assistant", "content": [block]}  # type: ignore[list-item]
        yield Done(Completion(reply, usage, "tool_use", self.name))


def test_a_thousand_steps_freeze_nothing_and_leak_nothing(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "small.txt").write_text("a small file\n")
    env = {
        "HEARTH_HOME": str(tmp_path / "home"),
        "HEARTH_MODEL": "openai:test",
        "OPENAI_API_KEY": "unused",
        "OPENAI_BASE_URL": "http://127.0.0.1:9",  # never called: the model is swapped
        "HEARTH_FSYNC": "never",
    }
    wh = Workhearth(workspace=workspace, env=env)
    session = wh.sessions.create(mode="agent")
    model = LitteringModel()
    kept: list[int] = []

    def swap_model(agent: Agent) -> None:
        agent.model.close()
        agent.model = Router([model])
        agent.limits.max_steps = STEPS + 1
        listener = agent.listener

        def sampling(event: Any) -> None:
            if model.calls == TRACE_FROM and not tracemalloc.is_tracing():
                gc.collect()
                tracemalloc.start()
            elif model.calls == STEPS and tracemalloc.is_tracing() and not kept:
                gc.collect()
                kept.append(tracemalloc.get_traced_memory()[0])
                tracemalloc.stop()
            listener(event)

        agent.listener = sampling

    service = TaskService(wh.config, workspace)
    opts = RunOptions(mode="agent", approver=allow_all, on_agent=swap_model)
    frozen_before = gc.get_freeze_count()
    try:
        task = service.run_here(wh, session, opts, "read small.txt many times", lambda e: None)
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
    assert task.status == "done", task.message
    assert model.calls == STEPS + 1
    # Why <=: objects frozen earlier in this process (a test server) may die meanwhile.
    assert gc.get_freeze_count() <= frozen_before, "a load froze the process's objects"
    gc.collect()
    assert not any(isinstance(o, Cycle) for o in gc.get_objects()), "garbage survived"
    # The last 200 steps made 100,000 cycles; what they kept is the transcript's growth.
    (growth,) = kept
    assert growth < GROWTH_LIMIT, f"the last 200 steps kept {growth / 1e6:.1f} MB"
