"""pydantic-ai with its instrumentation on: one ``execute_tool`` span per call id.

The real agent drives the loopback simulator through the real openai SDK, recording
into in-memory providers; tooltap adopts pydantic-ai's tool span, or emits its own when
the agent's instrumentation is off, and its metrics are the same either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections import Counter
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import tooltap
from tooltap._telemetry.pending_span import PendingToolSpan
from tooltap.simulator import Fault, Simulator

from .drivers import RESULTS, USER
from .frameworks import Run, instrumented, one_span_per_call, result_events


def _lookup(key: str) -> str:
    return RESULTS[key]


def run_pydantic_ai(sim: Simulator, run: Run, *, traced: bool, provider: Any = None) -> str:
    """The lookup conversation through a pydantic-ai agent (its tracing on or off)."""
    model = OpenAIChatModel(
        "gpt-4o-mini", provider=OpenAIProvider(base_url=sim.openai_base_url, api_key="sk-test")
    )
    agent = Agent(model)
    agent.instrument = (
        InstrumentationSettings(
            tracer_provider=provider or run.tracer_provider, meter_provider=run.meter_provider
        )
        if traced
        else False
    )
    agent.tool_plain(name="lookup_demo_value")(_lookup)
    return agent.run_sync(USER).output


def test_pydantic_ai_tool_span_is_adopted(sim: Simulator) -> None:
    with instrumented() as run:
        assert run_pydantic_ai(sim, run, traced=True) == "You are 170 cm tall and weigh 70 kg."
    spans = one_span_per_call(run)
    for span in spans:
        attributes = dict(span.attributes or {})
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "pydantic-ai"
        assert attributes["tooltap.tool_span"] == "adopted"
        assert attributes["tooltap.outcome"] == "ok"
        assert "tooltap.tool_call.index" in attributes
    events = result_events(run)
    assert sorted(e["gen_ai.tool.call.id"] for e in events) == sorted(run.call_ids())
    assert {e["tooltap.result"] for e in events} == {"ok"}
    assert all(e["tooltap.tool_call.duration"] > 0 for e in events)


def test_pydantic_ai_untraced_gets_tooltaps_span(sim: Simulator) -> None:
    with instrumented() as run:
        run_pydantic_ai(sim, run, traced=False)
    for span in one_span_per_call(run):
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "tooltap"
        assert (span.attributes or {})["tooltap.result"] == "ok"
    assert result_events(run) == []


def test_pydantic_ai_invalid_arguments_stay_visible(sim: Simulator) -> None:
    sim.inject(Fault("invalid_json_args"), dialect="openai.chat")
    with instrumented() as run:
        run_pydantic_ai(sim, run, traced=True)
    outcomes = sorted(str((s.attributes or {})["tooltap.outcome"]) for s in one_span_per_call(run))
    assert outcomes == ["invalid_json", "ok"]
    broken = next(
        s for s in run.spans() if (s.attributes or {}).get("tooltap.outcome") == "invalid_json"
    )
    assert broken.instrumentation_scope is not None
    assert broken.instrumentation_scope.name == "pydantic-ai"
    assert (
        run.tooltap_metrics()[
            (
                "tooltap.tool_calls",
                (
                    ("gen_ai.operation.name", "execute_tool"),
                    ("gen_ai.provider.name", "openai"),
                    ("gen_ai.tool.name", "lookup_demo_value"),
                    ("tooltap.outcome", "invalid_json"),
                ),
            )
        ]
        == 1
    )


@pytest.mark.parametrize("fault", [None, "invalid_json_args"])
def test_pydantic_ai_metrics_same_traced_or_not(sim: Simulator, fault: str | None) -> None:
    metrics = []
    for traced in (True, False):
        sim.reset()
        if fault:
            sim.inject(Fault(fault), dialect="openai.chat")
        with instrumented() as run:
            run_pydantic_ai(sim, run, traced=traced)
        metrics.append(run.tooltap_metrics())
    assert metrics[0] == metrics[1]
    assert any(name == "tooltap.tool_call.duration" for name, _ in metrics[0])


@pytest.mark.parametrize(
    ("setting", "traced", "another", "waits"),
    [
        (None, True, False, True),
        (None, False, False, False),  # its tracing off: nothing to wait for
        (None, True, True, False),  # its tracing records elsewhere
        (True, False, False, True),
        (False, True, False, False),
    ],
)
def test_pydantic_ai_spans_wait_only_when_adoption_can_happen(
    sim: Simulator, setting: bool | None, traced: bool, another: bool, waits: bool
) -> None:
    """By default a call's span waits for pydantic-ai's only while pydantic-ai's tracing
    records into tooltap's provider; ``True`` always, ``False`` never."""
    elsewhere = TracerProvider() if another else None
    with instrumented(adopt_tool_spans=setting) as run:
        run_pydantic_ai(sim, run, traced=traced, provider=elsewhere)
    received = [e.span for e in run.events if isinstance(e, tooltap.ToolCallReceived)]
    assert len(received) == 2
    assert [isinstance(s, PendingToolSpan) for s in received] == [waits, waits]
    for call_id in run.call_ids():
        assert len(run.tool_spans(call_id)) == 1 + (traced and not waits and not another)


def test_pydantic_ai_switched_off_keeps_both_spans(sim: Simulator) -> None:
    with instrumented(adopt_tool_spans=False) as run:
        run_pydantic_ai(sim, run, traced=True)
    for call_id in run.call_ids():
        scopes = sorted(
            s.instrumentation_scope.name
            for s in run.tool_spans(call_id)
            if s.instrumentation_scope is not None
        )
        assert scopes == ["pydantic-ai", "tooltap"]


def test_pydantic_ai_on_another_provider_is_not_adopted(sim: Simulator) -> None:
    elsewhere = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(elsewhere))
    with instrumented() as run:
        run_pydantic_ai(sim, run, traced=True, provider=provider)
    for span in one_span_per_call(run):
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "tooltap"
    theirs = [s for s in elsewhere.get_finished_spans() if s.name.startswith("execute_tool")]
    assert len(theirs) == 2
    assert all("tooltap.tool_span" not in (s.attributes or {}) for s in theirs)
    provider.shutdown()


_GLOBAL_SCRIPT = textwrap.dedent(
    """
    import json
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    import tooltap
    from tooltap.simulator import Simulator

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    tooltap.instrument()
    Agent.instrument_all()
    with Simulator() as sim:
        model = OpenAIChatModel(
            "gpt-4o-mini", provider=OpenAIProvider(base_url=sim.openai_base_url, api_key="k")
        )
        agent = Agent(model)
        agent.tool_plain(name="lookup_demo_value")(lambda key: {"height": "1", "weight": "2"}[key])
        agent.run_sync("How tall am I, and how much do I weigh?")
    tooltap.flush()
    print(json.dumps([
        [s.instrumentation_scope.name, s.attributes.get("gen_ai.tool.call.id")]
        for s in exporter.get_finished_spans()
        if s.attributes.get("gen_ai.operation.name") == "execute_tool"
    ]))
    """
)


def test_pydantic_ai_with_global_providers() -> None:
    """The app's global provider (pydantic-ai's ``instrument_all``, tooltap's default)."""
    done = subprocess.run(
        [sys.executable, "-c", _GLOBAL_SCRIPT],
        capture_output=True,
        text=True,
        timeout=50,
        env={**os.environ, "OTEL_SDK_DISABLED": "false"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    spans = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(spans) == 2
    assert {scope for scope, _ in spans} == {"pydantic-ai"}
    assert len({call_id for _, call_id in spans}) == 2


def test_pydantic_ai_ids_numbered_per_response() -> None:
    """Ids reused by every response (``call_0``): each conversation's calls adopt their own."""
    with Simulator(ids="numbered") as numbered, instrumented() as run:
        for _ in range(3):
            run_pydantic_ai(numbered, run, traced=True)
    tool_spans = [
        s
        for s in run.spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
    ]
    assert len(tool_spans) == 6
    assert all((s.attributes or {}).get("tooltap.tool_span") == "adopted" for s in tool_spans)
    per_trace = Counter(
        (s.context.trace_id, (s.attributes or {})["gen_ai.tool.call.id"])
        for s in tool_spans
        if s.context is not None
    )
    assert sorted(per_trace.values()) == [1] * 6
    assert len({trace for trace, _ in per_trace}) == 3
    results = Counter(e["tooltap.result"] for e in result_events(run))
    assert results == {"ok": 6}


def test_pydantic_ai_concurrent_conversations_sharing_ids() -> None:
    """Four conversations at once, every response numbering its calls ``call_0``,
    ``call_1``: within ``tooltap.conversation``, each framework span is its own call's."""
    errors: list[BaseException] = []

    def converse(run: Run, sim: Simulator, name: str) -> None:
        try:
            tracer = run.tracer_provider.get_tracer("app")
            with tooltap.conversation(name), tracer.start_as_current_span(name):
                run_pydantic_ai(sim, run, traced=True)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    with Simulator(ids="numbered") as numbered, instrumented() as run:
        threads = [
            threading.Thread(target=converse, args=(run, numbered, f"c{i}")) for i in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert not errors and not any(t.is_alive() for t in threads)
    roots = {s.context.trace_id: s.name for s in run.spans() if s.parent is None and s.context}
    tool_spans = [
        s
        for s in run.spans()
        if (s.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
    ]
    assert len(tool_spans) == 8
    assert all((s.attributes or {})["tooltap.tool_span"] == "adopted" for s in tool_spans)
    by_id = {s.context.span_id: s for s in tool_spans if s.context is not None}
    linked = [
        (span, link)
        for span in run.spans()
        for link in span.links
        if (link.attributes or {}).get("tooltap.link") == "tool_result"
    ]
    assert len(linked) == 8
    for span, link in linked:  # a result links to the framework span of its own conversation
        assert span.context is not None
        assert roots[link.context.trace_id] == roots[span.context.trace_id]
        assert link.context.span_id in by_id
