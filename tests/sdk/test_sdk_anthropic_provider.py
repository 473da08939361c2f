"""anthropic's call span is adopted only when it records into tooltap's provider.

The app hands tooltap a provider of its own (never set globally) and wraps the
conversation in a root span of that provider; anthropic's own tracing is on but
records into the global (no-op) provider, or into a third provider. Either way the
app's provider must hold one inference span per call, under the root span.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.sdk.drivers import ANTHROPIC_TRACES, DRIVERS, USER
from tooltap.simulator import Simulator

pytestmark = pytest.mark.skipif(not ANTHROPIC_TRACES, reason="anthropic < 2 has no own tracing")

CALLS = 3


def _converse(client: anthropic.Anthropic, tracer: Any, *, stream: bool) -> int:
    """``CALLS`` calls under one root span; returns the root's trace id."""
    request: dict[str, Any] = DRIVERS["anthropic"]._request([{"role": "user", "content": USER}])
    with tracer.start_as_current_span("conversation") as root:
        for _ in range(CALLS):
            if stream:
                for _event in client.messages.create(**request, stream=True):
                    pass
            else:
                client.messages.create(**request)
        return int(root.get_span_context().trace_id)


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
def test_global_noop_tracing_leaves_tooltaps_span_in_the_apps_trace(
    rec: Any, sim: Simulator, stream: bool
) -> None:
    assert not isinstance(trace.get_tracer_provider(), TracerProvider)  # not global
    client = anthropic.Anthropic(base_url=sim.anthropic_base_url, api_key="k", max_retries=0)
    assert client._tracer is not None  # anthropic's tracing is on (into the global provider)
    trace_id = _converse(client, rec.tracer_provider.get_tracer("app"), stream=stream)
    spans = rec.inference()
    assert len(spans) == CALLS
    (root,) = [s for s in rec.spans() if s.name == "conversation"]
    for span in spans:
        assert span.name.startswith("chat claude-")
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == "tooltap"
        assert span.context.trace_id == trace_id
        assert span.parent is not None and span.parent.span_id == root.context.span_id
    assert rec.total("gen_ai.client.operation.duration") == CALLS


def test_span_of_another_recording_provider_is_not_adopted(rec: Any, sim: Simulator) -> None:
    elsewhere = InMemorySpanExporter()
    other = TracerProvider()
    other.add_span_processor(SimpleSpanProcessor(elsewhere))
    client = anthropic.Anthropic(
        base_url=sim.anthropic_base_url,
        api_key="k",
        max_retries=0,
        open_telemetry={"tracer_provider": other},
    )
    trace_id = _converse(client, rec.tracer_provider.get_tracer("app"), stream=False)
    spans = rec.inference()
    assert [s.instrumentation_scope.name for s in spans if s.instrumentation_scope] == [
        "tooltap"
    ] * CALLS
    assert all(s.context.trace_id == trace_id for s in spans)
    theirs = elsewhere.get_finished_spans()
    assert len(theirs) == CALLS  # anthropic's spans stay anthropic's, untouched
    assert not [k for s in theirs for k in s.attributes or {} if k.startswith("tooltap.")]
    other.shutdown()
