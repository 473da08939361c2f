"""Agent frameworks driving the simulator: their own orders of calls and results.

- openai-agents with its Chat Completions model, its history in the order its litellm
  model sends (call A, result A, call B, result B; through ``call_model_input_filter``),
  many runs at once: every call ends ok on its own run's request.
- smolagents' ``ToolCallingAgent`` sends each call back as assistant text and its result
  as a user ``Observation: ...``, and after its step limit asks for an answer under
  another system prompt: every call ends ``unanswered``, none orphaned.
- pydantic-ai's structured output is a tool call it consumes itself (``final_result``):
  it ends ``output``, not orphaned, and not an error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner, function_tool
from agents.run_config import CallModelData, ModelInputData
from agents.tracing import set_tracing_disabled
from pydantic import BaseModel
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

from tests.sdk.drivers import RESULTS
from tooltap.simulator import Simulator


@pytest.fixture(scope="module", autouse=True)
def _no_agents_tracing() -> Iterator[None]:
    set_tracing_disabled(True)
    yield


@pytest.fixture
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


def split_turns(data: CallModelData[Any]) -> ModelInputData:
    """Each call followed by its own result, as openai-agents' litellm model sends them."""
    items = list(data.model_data.input)
    outputs = {i.get("call_id"): i for i in items
               if isinstance(i, dict) and i.get("type") == "function_call_output"}  # fmt: skip
    ordered: list[Any] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            continue
        ordered.append(item)
        if isinstance(item, dict) and item.get("type") == "function_call":
            ordered.extend([outputs.pop(item.get("call_id"))] if item.get("call_id") in outputs
                           else [])  # fmt: skip
    ordered.extend(outputs.values())
    return ModelInputData(input=ordered, instructions=data.model_data.instructions)


async def test_openai_agents_split_turns_of_many_runs_end_on_their_own_run(
    rec: Any, numbered: Simulator
) -> None:
    import tooltap

    client = openai.AsyncOpenAI(base_url=numbered.openai_base_url, api_key="sk-test")
    agent = Agent(name="body", instructions="Answer from the tools.", tools=[lookup_demo_value],
                  model=OpenAIChatCompletionsModel("gpt-4o-mini", client))  # fmt: skip
    config = RunConfig(call_model_input_filter=split_turns)
    tracer = rec.tracer_provider.get_tracer("test")

    async def run(n: int) -> Any:  # each run in a trace of its own
        with tracer.start_as_current_span(f"run {n}"):
            question = f"I am user {n}. How tall am I, and how much do I weigh?"
            return await Runner.run(agent, question, run_config=config)

    results = await asyncio.wait_for(asyncio.gather(*(run(n) for n in range(10))), 60)
    assert all(r.final_output for r in results)
    tooltap.flush()
    tools = rec.tools()
    assert len(tools) == 20  # two calls a run
    assert {(s.attributes or {})["tooltap.result"] for s in tools} == {"ok"}
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 20
    assert rec.total("tooltap.tool_results") == 20
    linked: dict[int, list[int]] = {}
    for span in rec.inference():
        for link in span.links:
            linked.setdefault(link.context.span_id, []).append(span.context.trace_id)
    for span in tools:  # linked from a request of its own run only
        assert linked[span.context.span_id] == [span.context.trace_id]


@tool
def lookup_value(key: str) -> str:
    """The user's height or weight.

    Args:
        key: height or weight.
    """
    return RESULTS[key]


def test_smolagents_calls_answered_as_text_end_unanswered(rec: Any) -> None:
    """Three steps of one call each, then the answer asked under another system prompt."""
    import tooltap

    sim = Simulator(ids="numbered", calls=[("lookup_value", {"key": "height"})]).start()
    try:
        model = OpenAIServerModel("gpt-4o-mini", api_base=sim.openai_base_url, api_key="sk-test")
        agent = ToolCallingAgent(tools=[lookup_value], model=model, max_steps=3,
                                 verbosity_level=0)  # fmt: skip
        agent.run("How tall am I?")
    finally:
        sim.stop()
    tooltap.flush()
    tools = rec.tools()
    assert len(tools) == 3
    for span in tools:
        attrs = dict(span.attributes or {})
        assert attrs["tooltap.result"] == "unanswered", attrs
        assert "error.type" not in attrs
        assert span.status.status_code.name == "UNSET"
    assert rec.total("tooltap.tool_results", tooltap__result="unanswered") == 3
    assert rec.total("tooltap.tool_results") == 3  # none orphaned


class City(BaseModel):
    city: str
    country: str


def test_pydantic_ai_structured_output_is_no_orphan(rec: Any) -> None:
    import tooltap

    sim = Simulator(calls=[("final_result", {"city": "Paris", "country": "France"})]).start()
    try:
        provider = OpenAIProvider(base_url=sim.openai_base_url, api_key="sk-test")
        agent = PydanticAgent(OpenAIChatModel("gpt-4o-mini", provider=provider), output_type=City)
        for _ in range(3):
            assert agent.run_sync("Where is the Eiffel tower?").output == City(
                city="Paris", country="France"
            )
    finally:
        sim.stop()
    tooltap.flush()
    tools = rec.tools()
    assert len(tools) == 3
    for span in tools:
        attrs = dict(span.attributes or {})
        assert attrs["tooltap.result"] == "output", attrs
        assert "error.type" not in attrs
        assert span.status.status_code.name == "UNSET"
    assert rec.total("tooltap.tool_results", tooltap__result="orphaned") == 0
    assert rec.total("tooltap.tool_results", tooltap__result="output") == 3
