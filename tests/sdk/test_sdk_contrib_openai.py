"""With ``opentelemetry-instrumentation-openai-v2`` on too, each call is still one inference span.

contrib wraps ``Completions.create`` in its own CLIENT ``chat {model}`` span; tooltap
adopts it (its attributes, events and tool spans go on contrib's span) instead of
nesting a second one, and keeps its own metrics under the ``tooltap`` scope.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

import tooltap
from tests.sdk.drivers import DRIVERS
from tooltap.simulator import Fault, Simulator

SYNC = [pytest.param(s, id="sync" if s else "async") for s in (True, False)]
STREAM = [pytest.param(s, id="stream" if s else "whole") for s in (True, False)]


@pytest.fixture
def contrib(rec: Any) -> Iterator[None]:
    """openai-v2 instrumented into the same providers as tooltap."""
    OpenAIInstrumentor().instrument(
        tracer_provider=rec.tracer_provider, meter_provider=rec.meter_provider
    )
    try:
        yield
    finally:
        OpenAIInstrumentor().uninstrument()


def _scopes(rec: Any, name: str) -> set[str]:
    data = rec.reader.get_metrics_data()
    return {
        scope.scope.name
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
    }


@pytest.mark.parametrize("stream", STREAM)
@pytest.mark.parametrize("sync", SYNC)
async def test_one_chat_span_per_call_carrying_tooltaps_data(
    rec: Any, contrib: None, sim: Simulator, sync: bool, stream: bool, double_end: None
) -> None:
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=sync)
    turn = await driver.turn1(client, stream)
    assert turn.calls

    spans = [s for s in rec.spans() if s.name.startswith("chat")]
    assert len(spans) == 1, [(s.name, s.instrumentation_scope.name) for s in spans]
    (span,) = spans
    assert span.instrumentation_scope.name != "tooltap"  # contrib's span, adopted
    attrs = dict(span.attributes or {})
    # the owner keeps its span as it made it: tooltap adds no gen_ai.* attribute there
    # (it would have set gen_ai.request.stream on a span of its own), only the tool spans
    assert "gen_ai.request.stream" not in attrs
    tooltap.flush()  # the calls, never answered, end as orphaned
    tools = rec.tools()
    assert {t.attributes["gen_ai.tool.call.id"] for t in tools} == {c[0] for c in turn.calls}
    assert all(t.parent.span_id == span.context.span_id for t in tools)
    # tooltap's histograms stay under its own scope, once per call
    assert rec.total("tooltap.tool_calls", tooltap__outcome="ok") == len(turn.calls)
    tooltap_points = [
        p
        for p in rec.points("gen_ai.client.operation.duration")
        if p[0].get("gen_ai.request.stream") is None
    ]
    assert tooltap_points
    assert "tooltap" in _scopes(rec, "gen_ai.client.operation.duration")


@pytest.mark.parametrize("sync", SYNC)
async def test_a_failed_call_is_one_span_in_error(
    rec: Any, contrib: None, sim: Simulator, sync: bool
) -> None:
    sim.inject(Fault("rate_limit"), dialect="openai.chat")
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=sync, max_retries=0)
    with pytest.raises(Exception, match=r"429|rate"):
        await driver.turn1(client, False)
    spans = [s for s in rec.spans() if s.name.startswith("chat")]
    assert len(spans) == 1
    events = [e.name for e in spans[0].events]
    assert "gen_ai.client.attempt.failed" in events  # tooltap's event on contrib's span
