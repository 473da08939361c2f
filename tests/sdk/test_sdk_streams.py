"""Streams the app stops reading still end their inference span, exactly once.

The SDK call returns before the body is read, so the operation outlives the call
(held by the transport tap): an early ``break`` + ``close()``, an abandoned and
garbage-collected stream, and google-genai's generators closed or dropped must
all end it. Calls completed before the app stopped are still reported.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from tests.sdk.drivers import DRIVERS, USER, resolve
from tooltap._quietly import run_deferred
from tooltap.simulator import Fault, Simulator

SYNC = [pytest.param(s, id="sync" if s else "async") for s in (True, False)]
#: After its first event the body stalls: the app stops reading a body still open.
STALL = Fault("stall", seconds=2.0)


async def _first(stream: Any) -> Any:
    if hasattr(stream, "__anext__"):
        return await stream.__anext__()
    return next(iter(stream))


async def _close(stream: Any) -> None:
    close = getattr(stream, "aclose", None) or stream.close
    await resolve(close())


def _openai_stream(sim: Simulator, sync: bool) -> Any:
    client = DRIVERS["openai.chat"].client(sim, sync=sync)
    request = DRIVERS["openai.chat"]._request([{"role": "user", "content": USER}])
    return client.chat.completions.create(**request, stream=True)


def _google_stream(sim: Simulator, sync: bool) -> Any:
    models = DRIVERS["google"].client(sim, sync=sync)
    return models.generate_content_stream(
        model=DRIVERS["google"].model, contents=USER, config=DRIVERS["google"]._config()
    ), models


@pytest.mark.parametrize("sync", SYNC)
async def test_openai_break_then_close_ends_span(
    rec: Any, sim: Simulator, sync: bool, double_end: Any
) -> None:
    sim.inject(STALL, dialect="openai.chat")
    stream = await resolve(_openai_stream(sim, sync))
    first = await _first(stream)
    assert first.choices[0].delta is not None
    assert rec.inference() == []  # the body is still open: the span too

    await _close(stream)

    (span,) = rec.inference()
    assert span.attributes["tooltap.stream.closed_early"] is True
    assert span.status.status_code.name == "UNSET"  # the app stopping is not a failure
    assert rec.total("gen_ai.client.operation.duration") == 1


@pytest.mark.parametrize("sync", SYNC)
async def test_openai_abandoned_stream_ends_span_when_collected(
    rec: Any, sim: Simulator, sync: bool, double_end: Any
) -> None:
    sim.inject(STALL, dialect="openai.chat")
    stream = await resolve(_openai_stream(sim, sync))
    await _first(stream)
    del stream
    gc.collect()
    run_deferred()  # what the collection left for a safe point

    (span,) = rec.inference()
    assert span.attributes["tooltap.stream.closed_early"] is True
    assert rec.total("gen_ai.client.operation.duration") == 1


@pytest.mark.parametrize("sync", SYNC)
async def test_google_generator_exhausted_ends_span(
    rec: Any, sim: Simulator, sync: bool, double_end: Any
) -> None:
    stream, _models = _google_stream(sim, sync)
    chunks = [c async for c in await stream] if not sync else list(stream)

    (span,) = rec.inference()
    assert span.attributes["gen_ai.request.stream"] is True
    calls = [fc for c in chunks for fc in c.function_calls or ()]
    assert rec.calls() == [(fc.id, fc.name, fc.args) for fc in calls]
    assert "tooltap.stream.closed_early" not in span.attributes


@pytest.mark.parametrize("sync", SYNC)
async def test_google_generator_closed_early_ends_span(
    rec: Any, sim: Simulator, sync: bool, double_end: Any
) -> None:
    sim.inject(STALL, dialect="google.genai")
    stream, _models = _google_stream(sim, sync)
    generator = await resolve(stream)
    first = await _first(generator)
    assert first.function_calls  # the first chunk carries the first call

    await _close(generator)
    await _settle()  # google's inner async generators are closed by the loop, not by aclose

    (span,) = rec.inference()
    assert span.attributes["tooltap.stream.closed_early"] is True
    assert rec.calls()[0][0] == first.function_calls[0].id
    assert rec.total("gen_ai.client.operation.duration") == 1


@pytest.mark.parametrize("sync", SYNC)
async def test_google_generator_abandoned_ends_span(
    rec: Any, sim: Simulator, sync: bool, double_end: Any
) -> None:
    sim.inject(STALL, dialect="google.genai")
    stream, _models = _google_stream(sim, sync)
    generator = await resolve(stream)
    await _first(generator)
    del generator, stream
    await _settle()

    (span,) = rec.inference()
    assert span.attributes["tooltap.stream.closed_early"] is True
    assert rec.total("gen_ai.client.operation.duration") == 1


async def _settle() -> None:
    """Collect garbage and let the loop run the async-generator finalizers it schedules."""
    for _ in range(3):
        gc.collect()
        run_deferred()  # what the collection left for a safe point
        await asyncio.sleep(0.01)
