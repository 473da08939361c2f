"""anthropic's own call span is adopted: one inference span per call, tooltap's data on it.

anthropic ends its span before tooltap's operation ends (``Stream.close`` ends it
before closing the body tooltap taps), so its ``end()`` is deferred until the
operation is done: what tooltap records last still lands on the span.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.sdk.drivers import DRIVERS, USER, drain, entered, resolve
from tooltap.simulator import Fault, Simulator

SYNC = [pytest.param(s, id="sync" if s else "async") for s in (True, False)]
ANTHROPIC_SCOPE = "com.anthropic.sdk.python"


def _client(rec: Any, sim: Simulator, sync: bool, **options: Any) -> Any:
    return DRIVERS["anthropic.traced"].client(
        sim, sync=sync, tracer_provider=rec.tracer_provider, **options
    )


def _request() -> dict[str, Any]:
    request: dict[str, Any] = DRIVERS["anthropic"]._request([{"role": "user", "content": USER}])
    return request


@pytest.mark.parametrize("sync", SYNC)
async def test_stream_left_early_ends_anthropics_span_with_tooltaps_attributes(
    rec: Any, sim: Simulator, sync: bool, double_end: None
) -> None:
    sim.inject(Fault("stall", seconds=2.0), dialect="anthropic.messages")
    client = _client(rec, sim, sync)

    async with entered(client.messages.stream(**_request())) as stream:
        events = stream.__aiter__() if not sync else iter(stream)
        first = await events.__anext__() if not sync else next(events)
        assert first.type == "message_start"
    # leaving the ``with`` closed the stream after one event

    (span,) = rec.inference()
    assert span.instrumentation_scope.name == ANTHROPIC_SCOPE
    attrs = dict(span.attributes or {})
    assert attrs["anthropic.request.id"]  # anthropic's own attribute
    assert attrs["tooltap.stream.closed_early"] is True  # tooltap's, set after anthropic's end()
    assert "gen_ai.request.stop_sequences" not in attrs  # content to anthropic: metadata_only
    assert rec.total("gen_ai.client.operation.duration") == 1


@pytest.mark.parametrize("sync", SYNC)
async def test_failed_call_is_one_span_in_error(
    rec: Any, sim: Simulator, sync: bool, double_end: None
) -> None:
    sim.inject(Fault("overloaded"), dialect="anthropic.messages")
    client = _client(rec, sim, sync, max_retries=0)

    with pytest.raises(Exception) as caught:
        await resolve(client.messages.create(**_request()))

    assert type(caught.value).__name__ == "OverloadedError"
    (span,) = rec.inference()
    assert span.instrumentation_scope.name == ANTHROPIC_SCOPE
    assert span.status.status_code.name == "ERROR"
    failed = [e for e in span.events if e.name == "gen_ai.client.attempt.failed"]
    assert [e.attributes["http.response.status_code"] for e in failed] == [529]
    (point,) = rec.points("gen_ai.client.operation.duration")
    assert point[0]["error.type"]  # the metric carries tooltap's error class


@pytest.mark.parametrize("sync", SYNC)
async def test_untraced_client_gets_tooltaps_span(rec: Any, sim: Simulator, sync: bool) -> None:
    client = DRIVERS["anthropic"].client(sim, sync=sync)
    stream = await resolve(client.messages.create(**_request(), stream=True))
    await drain(stream)

    (span,) = rec.inference()
    assert span.instrumentation_scope.name == "tooltap"
    assert span.name == f"chat {DRIVERS['anthropic'].model}"
    assert [s for s in rec.spans() if s.instrumentation_scope.name == ANTHROPIC_SCOPE] == []
