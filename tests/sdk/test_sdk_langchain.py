"""LangChain with OpenInference's instrumentor: one tool span per call id.

A real LangChain agent drives the loopback simulator through langchain-openai;
tooltap adopts OpenInference's TOOL span, or emits its own when the instrumentor is
off, and its metrics are the same either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openinference.instrumentation.langchain import LangChainInstrumentor
from opentelemetry.sdk.trace import TracerProvider

from tooltap.simulator import Fault, Simulator

from .drivers import RESULTS, USER
from .frameworks import instrumented, one_span_per_call, result_events


@contextmanager
def openinference(provider: TracerProvider) -> Iterator[None]:
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


@tool
def lookup_demo_value(key: str) -> str:
    """The stored value of ``key``."""
    return RESULTS[key]


def run_langchain(sim: Simulator) -> str:
    llm = ChatOpenAI(model="gpt-4o-mini", base_url=sim.openai_base_url, api_key="sk-test")
    agent = create_agent(llm, [lookup_demo_value])
    return str(agent.invoke({"messages": [("user", USER)]})["messages"][-1].content)


def test_openinference_langchain_tool_span_is_adopted(sim: Simulator) -> None:
    with instrumented() as run, openinference(run.tracer_provider):
        assert run_langchain(sim) == "You are 170 cm tall and weigh 70 kg."
    for span in one_span_per_call(run):
        attributes = dict(span.attributes or {})
        assert attributes["openinference.span.kind"] == "TOOL"
        assert attributes["tooltap.tool_span"] == "adopted"
        assert attributes["tooltap.outcome"] == "ok"
    assert {e["tooltap.result"] for e in result_events(run)} == {"ok"}


def test_openinference_off_gets_tooltaps_span(sim: Simulator) -> None:
    with instrumented() as run:
        run_langchain(sim)
    for span in one_span_per_call(run):
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "tooltap"


def test_openinference_metrics_same_traced_or_not(sim: Simulator) -> None:
    metrics = []
    for traced in (True, False):
        sim.reset()
        with instrumented() as run:
            if traced:
                with openinference(run.tracer_provider):
                    run_langchain(sim)
            else:
                run_langchain(sim)
        metrics.append(run.tooltap_metrics())
    assert metrics[0] == metrics[1]


def test_openinference_invalid_arguments_keep_tooltaps_span(sim: Simulator) -> None:
    """LangChain never runs a call with malformed arguments: no TOOL span, tooltap's own."""
    sim.inject(Fault("invalid_json_args"), dialect="openai.chat")
    with instrumented() as run, openinference(run.tracer_provider):
        run_langchain(sim)
    by_outcome = {str((s.attributes or {})["tooltap.outcome"]): s for s in one_span_per_call(run)}
    assert sorted(by_outcome) == ["invalid_json", "ok"]
    broken, good = by_outcome["invalid_json"], by_outcome["ok"]
    assert broken.instrumentation_scope is not None and good.instrumentation_scope is not None
    assert broken.instrumentation_scope.name == "tooltap"
    assert (broken.attributes or {})["error.type"] == "invalid_json"
    assert (good.attributes or {})["tooltap.tool_span"] == "adopted"
