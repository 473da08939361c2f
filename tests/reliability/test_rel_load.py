"""Load: many streams at once, many turns in a row; nothing lost, mixed or kept.

The simulator runs in its own process (its threads and memory are not measured).

* ``LOAD_STREAMS`` concurrent async streams (CI 200; ``TOOLTAP_LONG=1``: 500) over the
  four SDKs, and 8 threads of sync streams (``THREAD_STREAMS`` each): every stream's
  tool calls, as tooltap reported them (listener events, execute_tool spans under the
  inference span of the same response id), equal what that stream's own SDK assembled;
  exactly one inference span per stream and one tool span per call, none doubled; and
  after ``flush`` the traced memory is back to where it started (tracemalloc after gc,
  event-loop machinery left out: ``tests.reliability.support.MACHINERY``), within 256 KiB.
* ``TURNS`` sequential turns (CI 1,000; long: 10,000), whole conversations on a bare
  HTTP client: after a warm-up, memory does not grow with the number of turns.

The only per-call state that outlives a call is the lifecycle's bounded LRU memories of
call ids (the ``call_id_memory`` option, 1,024 by default): the tests lower the bound so
that the warm-up fills them, and check that it holds.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx2
import pytest

import tooltap
from tests.reliability.apps import MODELS, App
from tests.reliability.support import (
    LOAD_STREAMS,
    THREAD_STREAMS,
    TURNS,
    Lean,
    Recorder,
    SimProcess,
    attrs,
    settled_memory,
    traced_memory,
)
from tests.reliability.wire import conversation
from tooltap._telemetry import callids
from tooltap._telemetry.telemetry import get_telemetry

pytestmark = pytest.mark.usefixtures("frozen_heap")

DIALECTS = list(MODELS)
THREADS = 8
#: Traced bytes a round may leave behind, whatever its size (caches warmed beforehand).
LEFT_BEHIND = 256 * 1024
#: The lifecycle's call-id memories, lowered so that the warm-up fills them (see above).
MEMORY_CAP = 16
Calls = dict[str | None, list[tuple[Any, str, Any]]]


def _cap_memories(cap: int) -> None:
    """Lower the instrumented lifecycle's call-id memories to ``cap`` ids each."""
    tel = get_telemetry()
    assert tel is not None
    for memory in vars(tel.lifecycle).values():
        if isinstance(memory, callids.Bounded):
            memory.cap = cap


@pytest.fixture(scope="module")
def remote() -> Iterator[SimProcess]:
    sim = SimProcess()
    try:
        yield sim
    finally:
        sim.stop()


def _by_response(recorder: Recorder) -> Calls:
    """tooltap's calls, grouped by the response id of the inference span that received them."""
    spans = {s.context.span_id: s for s in recorder.spans()}
    found: Calls = defaultdict(list)
    for event in recorder.events:
        if isinstance(event, tooltap.ToolCallReceived):
            assert event.span_context is not None
            tool = spans[event.span_context.span_id]
            assert tool.parent is not None
            inference = spans[tool.parent.span_id]
            call = event.call
            found[attrs(inference).get("gen_ai.response.id")].append(
                (call.call_id, call.name, call.args)
            )
    return found


def _verify(recorder: Recorder, results: list[tuple[str | None, list[Any]]]) -> None:
    """Each stream's calls as its SDK assembled them == as tooltap reported them."""
    sdk: Calls = {}
    for response_id, calls in results:
        assert response_id not in sdk, "two streams with one response id"
        assert len(calls) == 2
        sdk[response_id] = sorted(calls, key=repr)
    theirs = {rid: sorted(calls, key=repr) for rid, calls in _by_response(recorder).items()}
    assert theirs == sdk
    inference = recorder.inference()
    assert len(inference) == len(results)
    assert len(recorder.tools()) == 2 * len(results)
    assert recorder.ledger.anomalies() == {
        "started_twice": [],
        "ended_twice": [],
        "ended_unstarted": [],
    }
    assert recorder.ledger.open_spans() == []


async def _async_round(url: str, streams: int) -> list[tuple[str | None, list[Any]]]:
    apps = {d: App(d, url, sync=False, timeout=120) for d in DIALECTS}
    try:
        jobs = [apps[DIALECTS[i % len(DIALECTS)]].assembled() for i in range(streams)]
        return list(await asyncio.gather(*jobs))
    finally:
        for app in apps.values():
            await app.aclose()


def _thread_round(url: str, per_thread: int) -> list[tuple[str | None, list[Any]]]:
    def worker(offset: int) -> list[tuple[str | None, list[Any]]]:
        apps = {d: App(d, url, sync=True, timeout=120) for d in DIALECTS}
        try:
            order = itertools.islice(itertools.cycle(DIALECTS), offset, offset + per_thread)
            return [asyncio.run(apps[d].assembled()) for d in order]
        finally:
            for app in apps.values():
                asyncio.run(app.aclose())

    with ThreadPoolExecutor(THREADS) as pool:
        return [r for rs in pool.map(worker, range(THREADS)) for r in rs]


@pytest.mark.long
async def test_concurrent_async_streams(remote: SimProcess, rec: Recorder) -> None:
    _cap_memories(MEMORY_CAP)
    warm = await _async_round(remote.url, 2 * len(DIALECTS))  # lazy imports, first-use caches
    tooltap.flush()
    _verify(rec, warm)
    rec.clear()
    with traced_memory():
        start = settled_memory()
        results = await _async_round(remote.url, LOAD_STREAMS)
        tooltap.flush()  # ends the (unanswered) tool spans as orphaned
        _verify(rec, results)
        del results
        rec.clear()
        left = settled_memory() - start
    assert left < LEFT_BEHIND, f"{left} bytes left after {LOAD_STREAMS} concurrent streams"


@pytest.mark.long
def test_threads_of_sync_streams(remote: SimProcess, rec: Recorder) -> None:
    _cap_memories(MEMORY_CAP)
    warm = _thread_round(remote.url, 1)
    tooltap.flush()
    _verify(rec, warm)
    rec.clear()
    with traced_memory():
        start = settled_memory()
        results = _thread_round(remote.url, THREAD_STREAMS)
        tooltap.flush()
        _verify(rec, results)
        del results
        rec.clear()
        left = settled_memory() - start
    assert left < LEFT_BEHIND, f"{left} bytes left after {THREADS}x{THREAD_STREAMS} streams"


@pytest.mark.long
def test_no_growth_per_turn(remote: SimProcess) -> None:
    lean = Lean()
    lean.instrument(call_id_memory=64)
    try:
        with httpx2.Client(timeout=30) as client:
            turns = itertools.cycle(DIALECTS)
            calls = sum(conversation(client, remote.url, next(turns)) for _ in range(64))
            with traced_memory():
                start = settled_memory()
                for _ in range(TURNS // 2):  # two turns per conversation
                    calls += conversation(client, remote.url, next(turns))
                grown = settled_memory() - start
        tel = get_telemetry()
        assert tel is not None
        assert len(tel.lifecycle) == 0  # every call was answered: no span left open
        memories = [v for v in vars(tel.lifecycle).values() if isinstance(v, callids.Bounded)]
        assert memories and all(len(m) <= 64 for m in memories)
        tooltap.flush()
        conversations = 64 + TURNS // 2
        assert lean.spans.counts["execute_tool"] == calls == 2 * conversations
        assert (
            lean.spans.counts["chat"] + lean.spans.counts["generate_content"] == 2 * conversations
        )
    finally:
        lean.shutdown()
    assert grown < 256 * 1024, f"{grown} bytes more after {TURNS} turns"
