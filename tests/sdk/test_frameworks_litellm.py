"""openai-agents through its litellm model: litellm itself puts results between split turns.

For a model whose name says Claude or Gemini, openai-agents' ``LitellmModel`` reorders
the history so that each call of a response is its own assistant turn followed by its
result (call A, result A, call B, result B); litellm sends that to Anthropic's Messages
API (``anthropic/claude-...``) or, for a gateway serving Claude, as Chat Completions
(``openai/claude-...``). Many runs at once against a simulator that reuses ids
(``toolu_0``, ``call_0``), two parallel calls a response: every call ends ``ok`` on a
request of its own run, linked from it only, none orphaned.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.sdk.drivers import RESULTS
from tooltap.simulator import Simulator

#: litellm fetches its model price map from the network on import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agents import Agent, Runner, function_tool
from agents.extensions.models.litellm_model import LitellmModel
from agents.tracing import set_tracing_disabled


@pytest.fixture(scope="module", autouse=True)
def _no_agents_tracing() -> Iterator[None]:
    set_tracing_disabled(True)
    yield


@pytest.fixture(scope="module")
def numbered() -> Iterator[Simulator]:
    sim = Simulator(ids="numbered").start()
    try:
        yield sim
    finally:
        sim.stop()


@function_tool
def lookup_demo_value(key: str) -> str:
    """The user's height or weight."""
    return RESULTS[key]


def model_of(route: str, sim: Simulator) -> Any:
    if route == "anthropic":
        return LitellmModel("anthropic/claude-sonnet-4-5", base_url=sim.anthropic_base_url,
                            api_key="sk-ant-test")  # fmt: skip
    return LitellmModel("openai/claude-sonnet-4-5", base_url=sim.openai_base_url,
                        api_key="sk-test")  # fmt: skip


@pytest.mark.parametrize(("route", "dialect"), [("anthropic", "anthropic.messages"),
                                                ("openai", "openai.chat")])  # fmt: skip
async def test_litellm_split_turns_of_many_runs_end_on_their_own_run(
    rec: Any, numbered: Simulator, route: str, dialect: str
) -> None:
    import tooltap

    numbered.reset()
    agent = Agent(name="body", instructions="Answer from the tools.", tools=[lookup_demo_value],
                  model=model_of(route, numbered))  # fmt: skip
    tracer = rec.tracer_provider.get_tracer("test")

    async def run(n: int) -> Any:  # each run in a trace of its own
        with tracer.start_as_current_span(f"run {n}"):
            question = f"I am user {n}. How tall am I, and how much do I weigh?"
            return await Runner.run(agent, question)

    results = await asyncio.wait_for(asyncio.gather(*(run(n) for n in range(10))), 120)
    assert all(r.final_output for r in results)
    tooltap.flush()
    split = [r.json for r in numbered.requests if r.json and len(r.json["messages"]) > 3]
    assert len(split) == 10  # litellm's order, as the wire carries it: call, result, call...
    for body in split:
        assert [m["role"] for m in body["messages"]][-4:] == ["assistant", *split_roles(dialect)]
    tools = rec.tools()
    assert len(tools) == 20  # two calls a run
    assert {(s.attributes or {})["gen_ai.provider.name"] for s in rec.inference()} == {
        "anthropic" if route == "anthropic" else "openai"
    }
    assert {(s.attributes or {})["tooltap.result"] for s in tools} == {"ok"}
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 20
    assert rec.total("tooltap.tool_results") == 20  # none orphaned, unknown or duplicate
    linked: dict[int, list[int]] = {}
    for span in rec.inference():
        for link in span.links:
            linked.setdefault(link.context.span_id, []).append(span.context.trace_id)
    for span in tools:  # linked from a request of its own run only
        assert linked[span.context.span_id] == [span.context.trace_id]


def split_roles(dialect: str) -> list[str]:
    """The roles after the first split call turn: its result, the next call, its result."""
    result = "user" if dialect == "anthropic.messages" else "tool"
    return [result, "assistant", result]
