"""One agent run with global providers, in a process of its own: what the tests compare.

``python -m tests.framework_venv.apps FRAMEWORK TRACED FAULT`` runs the lookup
conversation through the real framework (strands-agents, google-adk) against the
loopback simulator, with the OpenTelemetry SDK's providers set globally and tooltap
instrumented with its defaults, and prints one JSON line: the call ids tooltap
received, per call id the instrumentation scopes of its ``execute_tool`` spans and
their ``tooltap.*`` attributes, the problems tooltap reported, and tooltap's metric
points. ``TRACED``: ``on`` or ``off`` (the framework's tracer made a no-op one);
``FAULT``: a simulator fault for the first response, or ``none``.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import Counter
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap
from tooltap.simulator import Fault, Simulator

USER = "How tall am I, and how much do I weigh?"
RESULTS = {"height": "170 cm", "weight": "70 kg"}


def lookup_demo_value(key: str) -> str:
    """The stored value of ``key`` (``height`` or ``weight``).

    Args:
        key: ``height`` or ``weight``.
    """
    return RESULTS.get(key, "unknown")


def run_strands(sim: Simulator, traced: bool) -> str:
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel
    from strands.telemetry.tracer import get_tracer

    if not traced:  # strands has no switch: its tracer goes nowhere
        get_tracer().tracer = trace.NoOpTracer()
    model = OpenAIModel(
        client_args={"base_url": sim.openai_base_url, "api_key": "sk-test"},
        model_id="gpt-4o-mini",
    )
    agent = Agent(model=model, tools=[tool(lookup_demo_value)], callback_handler=None)
    return str(agent(USER))


def run_adk(sim: Simulator, traced: bool) -> str:
    from google.adk.agents import Agent
    from google.adk.flows.llm_flows.tools import _batch_executor
    from google.adk.models.google_llm import Gemini
    from google.adk.runners import InMemoryRunner
    from google.adk.telemetry import tracing
    from google.genai import types

    os.environ.setdefault("GOOGLE_API_KEY", "sim-key")
    if not traced:  # ADK traces into the global provider, no switch: its tracer goes nowhere
        tracing.tracer = _batch_executor.tracer = trace.NoOpTracer()

    agent = Agent(
        name="lookup",
        model=Gemini(model="gemini-2.5-flash", base_url=sim.google_base_url),
        tools=[lookup_demo_value],
        instruction="Answer with the stored values.",
    )
    runner = InMemoryRunner(agent=agent, app_name="lookup")

    async def main() -> str:
        session = await runner.session_service.create_session(app_name="lookup", user_id="u")
        text = ""
        message = types.Content(role="user", parts=[types.Part(text=USER)])
        async for event in runner.run_async(
            user_id="u", session_id=session.id, new_message=message
        ):
            for part in (event.content.parts or []) if event.content else []:
                text = part.text or text
        return text

    return asyncio.run(main())


def _tool_spans(spans: list[ReadableSpan]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        attributes = dict(span.attributes or {})
        if attributes.get("gen_ai.operation.name") != "execute_tool":
            continue
        call_id = str(attributes.get("gen_ai.tool.call.id"))
        scope = span.instrumentation_scope.name if span.instrumentation_scope else ""
        tooltap_attributes = {k: v for k, v in attributes.items() if k.startswith("tooltap.")}
        found.setdefault(call_id, []).append({"scope": scope, **tooltap_attributes})
    return found


def _metrics(reader: InMemoryMetricReader) -> list[list[Any]]:
    found: Counter[str] = Counter()
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != "tooltap":
                continue
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    labels = {k: v for k, v in (point.attributes or {}).items()
                              if k not in ("gen_ai.tool.call.id", "server.port")}  # fmt: skip
                    key = json.dumps([metric.name, sorted(labels.items())])
                    found[key] += point.count if value is None else value
    return sorted([json.loads(k), v] for k, v in found.items())


def main(framework: str, traced: bool, fault: str) -> dict[str, Any]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(tracer_provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    events: list[Any] = []
    tooltap.instrument(listeners=[events.append])
    with Simulator() as sim:
        if fault != "none":
            sim.inject(Fault(fault))
        try:
            answer = {"strands": run_strands, "adk": run_adk}[framework](sim, traced)
        except Exception as exc:  # noqa: BLE001 - google-genai refuses a malformed response
            answer = f"raised {type(exc).__name__}"
    tooltap.flush()
    received = [e.call.call_id for e in events if isinstance(e, tooltap.ToolCallReceived)]
    problems = [
        [e.problem.kind, e.problem.call_id]
        for e in events
        if isinstance(e, tooltap.ToolCallProblem)
    ]
    return {
        "answer": answer,
        "received": received,
        "problems": problems,
        "tool_spans": _tool_spans(list(exporter.get_finished_spans())),
        "metrics": _metrics(reader),
    }


if __name__ == "__main__":
    name, traced, fault = sys.argv[1:4]
    print(json.dumps(main(name, traced == "on", fault)))
