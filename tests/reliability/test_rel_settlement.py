"""Settlement at the control-flow edges: signals, cancellation, flush, teardown races.

* A signal handler that calls ``tooltap.flush()`` never deadlocks (20 runs in
  subprocesses, each with a hard timeout).
* Cancellation is the app stopping: under asyncio, trio and anyio, a request cancelled
  while waiting for headers or mid-stream ends its span without ERROR and counts no
  ``tooltap.provider.errors``; the span says ``tooltap.outcome=cancelled``.
* ``flush()`` while a stream is being read (from another thread, or from a listener
  inside the read) loses nothing: the finish reason, the usage, every tool span under a
  still-open inference span.
* ``flush(timeout)`` and exit stay within their bounds with a synchronous exporter that
  takes a second per span.
* instrument()/uninstrument() racing from threads while streams run leave no span open.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
import pytest
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import tooltap
from tests.reliability.settlement_app import lookups
from tests.reliability.support import Recorder, attrs
from tests.telemetry.support import first_body, turn, url
from tooltap.simulator import Fault, Simulator

APP = Path(__file__).with_name("settlement_app.py")
ROOT = Path(__file__).parent.parent.parent
CANCELLED = "cancelled"


def _run(mode: str, timeout: float) -> tuple[dict[str, Any] | None, float]:
    """The app's result (None if it hung past ``timeout``) and when it exited."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    try:
        done = subprocess.run(
            [sys.executable, str(APP), mode], capture_output=True, text=True,
            timeout=timeout, env=env, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None, time.time()
    exited = time.time()
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1]), exited


# --- signals -------------------------------------------------------------------------------


def test_flush_from_a_signal_handler_never_hangs() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: _run("signal", 60)[0], range(20)))
    hung = sum(1 for r in results if r is None)
    assert hung == 0, f"{hung} of 20 runs hung"
    for result in results:
        assert result is not None
        assert result["flushes"] > 0  # the handler did run, mid-turn
        assert result["open"] == 0
        assert result["ended_twice"] == 0
        assert result["waited"] == 0  # never waits on the lock its own thread holds
        assert result["slowest_flush"] < 1.0 + 0.5  # flush(1000) keeps its bound


# --- cancellation --------------------------------------------------------------------------


def _not_failed(recorder: Recorder) -> None:
    (span,) = recorder.inference()
    assert span.status.status_code.name != "ERROR"
    assert "error.type" not in attrs(span)
    assert attrs(span)["tooltap.outcome"] == CANCELLED
    assert recorder.total("tooltap.provider.errors") == 0
    assert [e.name for e in span.events if e.name == "tooltap.attempt.failed"] == []


async def _raw_read(sim: Simulator, chunks: list[bytes]) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        target = url(sim, "openai.chat", True)
        async with client.stream("POST", target, json=first_body("openai.chat", True)) as r:
            async for chunk in r.aiter_raw():
                chunks.append(chunk)


async def _sdk_read(sim: Simulator, chunks: list[bytes]) -> None:
    client = openai.AsyncOpenAI(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
    body = first_body("openai.chat", True)
    stream = await client.chat.completions.create(**body)
    async for event in stream:
        chunks.append(event.model_dump_json().encode())


READERS = {"httpx": _raw_read, "openai": _sdk_read}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("where", ["before_headers", "mid_stream"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_cancelled_request_is_not_a_provider_error(
    rec: Recorder, sim: Simulator, backend: str, where: str, reader: str
) -> None:
    fault = Fault("delay", seconds=20) if where == "before_headers" else Fault("stall", seconds=20)
    sim.inject(fault, dialect="openai.chat")
    chunks: list[bytes] = []

    async def main() -> None:
        with anyio.move_on_after(0.5) as scope:  # asyncio.CancelledError / trio.Cancelled
            await READERS[reader](sim, chunks)
        assert scope.cancelled_caught

    anyio.run(main, backend=backend)
    assert bool(chunks) is (where == "mid_stream")
    _not_failed(rec)


def test_asyncio_timeout_mid_stream_is_not_a_provider_error(rec: Recorder, sim: Simulator) -> None:
    sim.inject(Fault("stall", seconds=20), dialect="openai.chat")
    chunks: list[bytes] = []

    async def main() -> None:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):
                await _raw_read(sim, chunks)

    asyncio.run(main())
    assert chunks
    _not_failed(rec)


def test_keyboard_interrupt_while_reading_is_not_a_provider_error(
    rec: Recorder, sim: Simulator
) -> None:
    """Ctrl-C lands while the tap waits for the next chunk (inside the socket read)."""
    sim.inject(Fault("stall", seconds=20), dialect="openai.chat")

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        with httpx.Client(timeout=30) as client:
            target = url(sim, "openai.chat", True)
            body = first_body("openai.chat", True)
            with pytest.raises(KeyboardInterrupt), client.stream("POST", target, json=body) as r:
                signal.setitimer(signal.ITIMER_REAL, 0.5)
                for _ in r.iter_raw():
                    pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    _not_failed(rec)


# --- flush during live streams ------------------------------------------------------------


def _whole(recorder: Recorder) -> None:
    """One inference span with its finish reason and usage; every tool span under it,
    started while it was open, none of them orphaned by the flush."""
    (span,) = recorder.inference()
    a = attrs(span)
    assert a.get("gen_ai.response.finish_reasons") == ("tool_call",)
    assert a.get("gen_ai.usage.input_tokens", 0) > 0
    assert "tooltap.stream.closed_early" not in a
    assert span.status.status_code.name != "ERROR"
    tools = recorder.tools()
    assert len(tools) == 2
    assert len(recorder.received()) == 2
    assert span.end_time is not None
    for tool in tools:
        assert tool.parent is not None and tool.parent.span_id == span.context.span_id
        assert tool.start_time is not None and tool.start_time <= span.end_time
        assert attrs(tool)["tooltap.result"] == "orphaned"  # by the last flush, after the end


def _read_sdk_stream(sim: Simulator) -> None:
    client = openai.OpenAI(base_url=sim.openai_base_url, api_key="sk-test", max_retries=0)
    for _ in client.chat.completions.create(**first_body("openai.chat", True)):
        pass


def _read_raw_stream(sim: Simulator) -> None:
    with httpx.Client(timeout=10) as client:
        target = url(sim, "openai.chat", True)
        with client.stream("POST", target, json=first_body("openai.chat", True)) as r:
            for _ in r.iter_raw():
                pass


STREAMS: dict[str, Callable[[Simulator], None]] = {
    "httpx": _read_raw_stream,
    "openai": _read_sdk_stream,
}


@pytest.mark.parametrize("reader", sorted(STREAMS))
def test_flush_from_a_listener_inside_the_read_loses_nothing(
    recorder: Recorder, sim: Simulator, reader: str
) -> None:
    def listener(event: object) -> None:
        tooltap.flush()

    recorder.instrument(listener)
    STREAMS[reader](sim)
    assert recorder.tools() == []  # the flushes left the live stream's calls open
    tooltap.flush()
    _whole(recorder)


@pytest.mark.parametrize("reader", sorted(STREAMS))
def test_flush_from_another_thread_while_reading_loses_nothing(
    rec: Recorder, sim: Simulator, reader: str
) -> None:
    sim.inject(Fault("chunk_size", size=16), dialect="openai.chat")  # many small reads
    done = threading.Event()
    flushes = 0

    def flusher() -> None:
        nonlocal flushes
        while not done.is_set():
            tooltap.flush()
            flushes += 1
            time.sleep(0.001)

    thread = threading.Thread(target=flusher)
    thread.start()
    try:
        STREAMS[reader](sim)
    finally:
        done.set()
        thread.join(10)
    assert flushes > 0
    tooltap.flush()
    _whole(rec)


class _SlowEnds(SpanProcessor):
    """Ends the spans of ``operation`` slowly (before the processors added after it have
    them); says when the first began."""

    def __init__(self, operation: str = "execute_tool", seconds: float = 0.02) -> None:
        self.operation, self.seconds = operation, seconds
        self.ending = threading.Event()

    def on_end(self, span: ReadableSpan) -> None:
        if (span.attributes or {}).get("gen_ai.operation.name") == self.operation:
            self.ending.set()
            time.sleep(self.seconds)


def test_flush_waits_for_the_calls_another_flush_is_still_ending(recorder: Recorder) -> None:
    slow = _SlowEnds()
    recorder.tracer_provider.add_span_processor(slow)
    recorder.instrument()
    turn(lookups("c", 20))
    other = threading.Thread(target=tooltap.flush)  # takes all 20 out, ends them slowly
    other.start()
    assert slow.ending.wait(10)
    tooltap.flush()
    assert len(recorder.tools()) == 20  # what the other flush took ended before this returned
    other.join(10)


def test_flush_waits_for_an_operation_another_thread_is_ending() -> None:
    slow, exporter = _SlowEnds("chat", 0.3), InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(slow)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tooltap.instrument(tracer_provider=provider, meter_provider=NoOpMeterProvider())
    try:
        other = threading.Thread(target=turn)  # a request whose end takes a while
        other.start()
        assert slow.ending.wait(10)
        tooltap.flush()
        assert len(exporter.get_finished_spans()) == 1  # ended before this flush returned
        other.join(10)
    finally:
        tooltap.uninstrument()
        provider.shutdown()


def test_flush_waits_for_no_more_than_its_timeout(recorder: Recorder) -> None:
    slow = _SlowEnds()
    recorder.tracer_provider.add_span_processor(slow)
    recorder.instrument()
    turn(lookups("c", 100))  # two seconds of ending
    other = threading.Thread(target=tooltap.flush)
    other.start()
    assert slow.ending.wait(10)
    started = time.monotonic()
    tooltap.flush(200)
    assert time.monotonic() - started < 0.2 + 0.3
    assert len(recorder.tools()) < 100
    other.join(10)
    assert len(recorder.tools()) == 100


# --- bounds --------------------------------------------------------------------------------


def test_flush_and_exit_are_bounded_with_a_slow_synchronous_exporter() -> None:
    result, exited = _run("slow", 60)
    assert result is not None
    assert result["flush"] < 2.0 + 0.5  # flush(2000), spans ending included
    assert exited - result["last_line"] < 5.0 + 1.5  # the exit hook's bound, plus start-up slack


# --- teardown races ------------------------------------------------------------------------


def test_instrument_uninstrument_races_leave_no_span_open() -> None:
    result, _ = _run("race", 120)
    assert result is not None
    assert result["failures"] == []
    assert result["streams"] > 0
    assert result["open"] == []
    assert result["anomalies"] == {"started_twice": 0, "ended_twice": 0, "ended_unstarted": 0}
