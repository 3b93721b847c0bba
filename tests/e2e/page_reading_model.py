"""A scripted model that reads what its tools answer: a generator decides each next call.

The other scripted models (tests/fake_providers.py) play fixed replies; a browsing task
needs the refs and rows of the page the real browser just showed, so here each tool
result goes into a generator that yields the next call. The model is still a script —
no judgement — but it only knows what hearth's tools told it.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Generator
from typing import Any

from tests.e2e.test_agent_run import calls_reply, text_reply
from tests.fake_providers import FakeProvider, Reply

Call = tuple[str, dict[str, Any]]
# Yields calls, receives each call's result text; returns the final answer.
Plan = Generator[Call, str, str]


class PageReadingModel(FakeProvider):
    """Answers every request with the plan's next call (OpenAI wire format)."""

    def __init__(self, plan: Plan) -> None:
        super().__init__([])
        self.plan = plan
        self.calls: list[Call] = []
        self.results: list[str] = []
        self.started = False
        self.failure: BaseException | None = None

    def reply_for(self, raw: bytes) -> Reply:
        body = json.loads(raw)
        try:
            if not self.started:
                self.started = True
                call = next(self.plan)
            else:
                result = last_tool_result(body)
                self.results.append(result)
                call = self.plan.send(result)
        except StopIteration as done:
            return text_reply("openai", str(done.value))
        except Exception as exc:
            # Why kept: the plan's own checks fail in the server's thread; the test re-raises.
            self.failure = exc
            raise
        self.calls.append(call)
        name, args = call
        return calls_reply("openai", (f"call_{len(self.calls)}", name, args))


def last_tool_result(body: dict[str, Any]) -> str:
    """The newest tool result in a request: the answer to the call made last."""
    tools = [m for m in body["messages"] if m["role"] == "tool"]
    assert tools, "a request after a call carries its result"
    return str(tools[-1]["content"])


def ref_for(snapshot: str, name: str) -> int | None:
    """The ref the snapshot gives the element named ``name``, or None."""
    found = re.search(r"\[(\d+)\] \S+ \"" + re.escape(name) + '"', snapshot)
    return int(found.group(1)) if found else None


def script_command(activation: str, script: str) -> str:
    """``PYTHON SKILL_DIR/<script>`` with the two words as activate_skill defined them."""
    said = re.search(r"PYTHON is (.+) and SKILL_DIR is (.+)\.$", activation, re.M)
    assert said, activation
    python, folder = shlex.split(said.group(1))[0], shlex.split(said.group(2))[0]
    return f"{shlex.quote(python)} {shlex.quote(folder + '/' + script)}"
