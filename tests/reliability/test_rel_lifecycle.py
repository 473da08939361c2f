"""Lifecycle: however the app leaves a stream, every span ends once, rightly.

Through each real SDK (and anthropic with its own tracing on, whose span tooltap adopts),
sync and async, against the simulator: read to the end; ``break`` then ``close()``; exit
the SDK's context manager early; close before reading; raise inside the loop; abandon the
stream to the garbage collector; and, async only, cancel the reading task mid-stream and
read in another task than the one that sent the request.

After each: no span was started or ended twice; no inference span is left open; the
status is right (unset for the app's own choices, with ``tooltap.stream.closed_early``
when it stopped before the end); no "Failed to detach context" error was logged; tooltap
counted no internal error; and after ``tooltap.flush()`` no span at all is open. A span
ends when the body ends, without waiting for garbage collection, except where the SDK
itself leaves the body to the collector: an abandoned stream, a cancelled reader, and
google-genai's async stream (its inner generator releases the aiohttp response).
Cancelling the reading task is the app's choice too: not a provider error.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import tooltap
from tests.reliability.apps import MODELS, App, close
from tests.reliability.support import Recorder, attrs
from tooltap._quietly import run_deferred
from tooltap.simulator import FAULT_HEADER, Simulator

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.usefixtures("frozen_heap"),
]

APPS = [*MODELS, "anthropic.traced"]


class AppError(Exception):
    """The app's own exception, raised mid-iteration."""


async def next_item(stream: Any) -> Any:
    if hasattr(stream, "__anext__"):
        return await stream.__anext__()
    if hasattr(stream, "__aiter__"):
        return await stream.__aiter__().__anext__()
    return next(iter(stream))


async def exhaust(stream: Any) -> list[Any]:
    if hasattr(stream, "__aiter__"):
        return [item async for item in stream]
    return list(stream)


@asynccontextmanager
async def managed(stream: Any) -> AsyncIterator[Any]:
    """The SDK's own context manager (async or sync), or close on exit for generators."""
    if hasattr(stream, "__aenter__"):
        async with stream:
            yield stream
    elif hasattr(stream, "__enter__"):
        with stream:
            yield stream
    else:
        try:
            yield stream
        finally:
            await close(stream)


async def _exhausted(stream: Any) -> None:
    assert await exhaust(stream)


async def _break_then_close(stream: Any) -> None:
    await next_item(stream)
    await close(stream)


async def _context_exit(stream: Any) -> None:
    async with managed(stream) as s:
        await next_item(s)


async def _close_unread(stream: Any) -> None:
    await close(stream)


async def _app_raises(stream: Any) -> None:
    with pytest.raises(AppError):
        async with managed(stream) as s:
            await next_item(s)
            raise AppError("the app's own bug")


async def _abandoned(stream: Any) -> None:
    await next_item(stream)


async def _cancelled(stream: Any) -> None:
    first = asyncio.Event()

    async def read() -> None:
        async with managed(stream) as s:
            async for _ in s:
                first.set()

    task = asyncio.create_task(read())
    await asyncio.wait_for(first.wait(), 10)
    await asyncio.sleep(0.05)  # the reader now waits on the stalled body
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def _other_task(stream: Any) -> None:
    await asyncio.create_task(_exhausted(stream))


async def _settle(collect: bool) -> None:
    """Let the event loop run what is pending; with ``collect``, collect the unreachable (an
    abandoned stream) first: an abandoned async generator is then closed by the loop."""
    for _ in range(3 if collect else 1):
        if collect:
            gc.collect()
            run_deferred()  # what the collection left for a safe point
        await asyncio.sleep(0.01)


Scenario = Callable[[Any], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {
    "exhausted": _exhausted,
    "break_then_close": _break_then_close,
    "context_exit": _context_exit,
    "close_unread": _close_unread,
    "app_raises": _app_raises,
    "abandoned": _abandoned,
    "cancelled": _cancelled,
    "other_task": _other_task,
}
ASYNC_ONLY = ("cancelled", "other_task")
CASES = [
    pytest.param(app, name, sync, id=f"{app}-{name}-{'sync' if sync else 'async'}")
    for app in APPS
    for name in SCENARIOS
    for sync in (True, False)
    if not (sync and name in ASYNC_ONLY)
]


def _app(name: str, sim: Simulator, sync: bool, recorder: Recorder, headers: dict[str, str]) -> App:
    if name == "anthropic.traced":
        tracing = {"tracer_provider": recorder.tracer_provider}
        return App(
            "anthropic.messages",
            sim.url,
            sync=sync,
            open_telemetry=tracing,
            default_headers=headers,
        )
    if name == "google.genai":
        return App(name, sim.url, sync=sync, headers=headers)
    return App(name, sim.url, sync=sync, default_headers=headers)


@pytest.mark.parametrize(("app_name", "scenario", "sync"), CASES)
async def test_stream_ends_once(
    app_name: str,
    scenario: str,
    sync: bool,
    sim: Simulator,
    rec: Recorder,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    # Unless the app reads to the end, the body stalls after its first event: the SDK
    # cannot have read the whole body ahead of the app, so the app's stop is "early".
    ends = scenario in ("exhausted", "other_task")
    headers = {} if ends else {FAULT_HEADER: "stall;seconds=2"}
    app = _app(app_name, sim, sync, rec, headers)
    try:
        stream = await app.stream()
        await SCENARIOS[scenario](stream)
        del stream
        # google-genai's async stream is a chain of async generators: closing the outer one
        # leaves the inner one, which releases the aiohttp response, to the collector.
        google_async = app_name == "google.genai" and not sync
        await _settle(scenario in ("abandoned", "cancelled") or google_async)
    finally:
        await app.aclose()

    assert rec.ledger.anomalies() == {"started_twice": [], "ended_twice": [], "ended_unstarted": []}
    assert rec.ledger.open_spans(tools=False) == []
    spans = rec.inference()
    sent = not (app_name == "google.genai" and scenario == "close_unread")  # a lazy generator
    assert len(spans) == (1 if sent else 0)
    for span in spans:
        early = attrs(span).get("tooltap.stream.closed_early")
        if scenario in ("exhausted", "other_task"):  # anthropic's own span says OK
            assert span.status.status_code in (StatusCode.UNSET, StatusCode.OK)
            assert early is None
        else:
            assert span.status.status_code is StatusCode.UNSET, span.status
            assert early is True
    assert not [r for r in caplog.records if "Failed to detach context" in r.getMessage()]
    assert rec.total("tooltap.internal_errors") == 0
    tooltap.flush()
    assert rec.ledger.open_spans() == []
    assert rec.ledger.anomalies() == {"started_twice": [], "ended_twice": [], "ended_unstarted": []}
