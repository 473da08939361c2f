"""A stream a proxy buffered (one burst after a long wait) is a ``stream_buffered`` problem.

Real SDKs against the simulator: its ``buffered`` fault sends the headers, waits, then
writes every event at once, as a buffering proxy releases a finished response. A normal
stream over loopback, and one the app starts reading late (events pile up in the socket
while it is busy), are not buffered. aiohttp (google-genai's async transport) is read
line by line, so its first read never shows the burst: not checked there.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import openai
import pytest

import tooltap
from tests.recorder import Recorder
from tests.sdk.drivers import DRIVERS, resolve
from tooltap.simulator import Fault, Simulator

WAIT = 0.3  # stream_buffered_wait for these tests: the fault waits longer
EVENTS = 2  # stream_buffered_events: the simulator's Google tool-call stream is 2 events
STREAMING = ["openai.chat", "openai.responses", "anthropic", "google"]
PROBLEMS = "tooltap.stream.problems"


@pytest.fixture
def buffered_otel(rec: Recorder) -> Iterator[Recorder]:
    """``rec`` re-instrumented with a short ``stream_buffered_wait``."""
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        stream_buffered_wait=WAIT,
        stream_buffered_events=EVENTS,
    )
    yield rec


def _problem_events(rec: Recorder) -> list[dict[str, Any]]:
    return [
        dict(e.attributes or {})
        for s in rec.inference()
        for e in s.events
        if e.name == "tooltap.problem"
        and (e.attributes or {}).get("tooltap.problem.kind") == "stream_buffered"
    ]


@pytest.mark.parametrize(
    ("name", "sync"),
    [(n, s) for n in STREAMING for s in (True, False) if n != "google" or s],
)
async def test_a_buffered_stream_is_a_problem(
    buffered_otel: Recorder, sim: Simulator, name: str, sync: bool
) -> None:
    driver = DRIVERS[name]
    sim.inject(Fault("buffered", seconds=WAIT + 0.2))
    client = driver.client(sim, sync=sync)
    _, items = await driver.raw(client, True)
    assert len(items) >= 2
    assert buffered_otel.total(PROBLEMS, tooltap__problem__kind="stream_buffered") == 1
    (event,) = _problem_events(buffered_otel)
    (span,) = buffered_otel.inference()
    assert span.status.is_ok  # not a failure: the response is whole
    assert "tooltap.problem.detail" not in event  # content capture is off


@pytest.mark.parametrize("name", STREAMING)
async def test_a_normal_stream_is_not(buffered_otel: Recorder, sim: Simulator, name: str) -> None:
    driver = DRIVERS[name]
    _, items = await driver.raw(driver.client(sim, sync=True), True)
    assert len(items) >= 2
    assert buffered_otel.total(PROBLEMS, tooltap__problem__kind="stream_buffered") == 0
    assert buffered_otel.inference()


async def test_a_reader_that_starts_late_is_not(buffered_otel: Recorder, sim: Simulator) -> None:
    """The whole stream waits in the socket while the app is busy: many events in the first
    read after a long pause, but the reader did not wait for them."""
    driver = DRIVERS["openai.chat"]
    client = driver.client(sim, sync=False)
    request = driver._request([{"role": "user", "content": "How tall am I?"}])
    stream = await resolve(client.chat.completions.create(**request, stream=True))
    await asyncio.sleep(WAIT + 0.3)
    items = [item async for item in stream]
    assert len(items) >= 5
    assert buffered_otel.total(PROBLEMS, tooltap__problem__kind="stream_buffered") == 0
    assert buffered_otel.total("gen_ai.client.operation.time_to_first_chunk") == 1


async def test_fewer_events_than_the_threshold_are_not(rec: Recorder, sim: Simulator) -> None:
    """The same burst with ``stream_buffered_events`` above its event count: not counted."""
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        stream_buffered_wait=WAIT,
        stream_buffered_events=10_000,
    )
    sim.inject(Fault("buffered", seconds=WAIT + 0.2))
    driver = DRIVERS["anthropic"]
    await driver.raw(driver.client(sim, sync=True), True)
    assert rec.total(PROBLEMS, tooltap__problem__kind="stream_buffered") == 0
    assert rec.inference()


def _chunk(text: str, finish: str | None = None) -> bytes:
    body = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-x",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


@pytest.mark.parametrize(("tail", "flagged"), [(40, False), (1, True)], ids=["streams", "burst"])
def test_the_bytes_after_a_first_read_of_many_events_decide(
    buffered_otel: Recorder, tail: int, flagged: bool
) -> None:
    """The first read comes after a long wait with several events; the rest comes over a
    while longer than a tenth of that wait, so only the bytes tell: many more (a stream
    that started slowly) are not a burst, a small tail after nearly all of them is."""
    first = b"".join(_chunk("x" * 2000) for _ in range(EVENTS + 1))
    rest = [_chunk("y" * 1000) for _ in range(tail - 1)] + [_chunk("", "stop"), b"data: [DONE]\n\n"]

    def body() -> Iterator[bytes]:
        time.sleep(WAIT + 0.2)
        yield first
        for piece in rest:
            time.sleep(0.25 / len(rest))
            yield piece

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    http = httpx2.Client(transport=httpx2.MockTransport(handler))
    client = openai.OpenAI(base_url="http://llm/v1", api_key="sk-test", http_client=http)
    messages: Any = [{"role": "user", "content": "hi"}]
    stream = client.chat.completions.create(model="gpt-x", messages=messages, stream=True)
    assert len(list(stream)) == EVENTS + 1 + tail
    client.close()
    found = buffered_otel.total(PROBLEMS, tooltap__problem__kind="stream_buffered")
    assert found == (1 if flagged else 0)
