"""Agent frameworks driving the simulator: their own orders of calls and results.

- smolagents' ``ToolCallingAgent`` sends each call back as assistant text and its result
  as a user ``Observation: ...``, and after its step limit asks for an answer under
  another system prompt: every call ends ``unanswered``, none orphaned.
- pydantic-ai's structured output is a tool call it consumes itself (``final_result``):
  it ends ``output``, not orphaned, and not an error.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from smolagents import OpenAIServerModel, ToolCallingAgent, tool

from tests.sdk.drivers import RESULTS
from tooltap.simulator import Simulator


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
