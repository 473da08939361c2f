"""Pending tool spans settle as eager ones: flush, cancellation, exit and internal faults.

While an agent framework's tracing is at work, a call's ``execute_tool`` span is pending
(made only when needed, or replaced by the framework's). Each case here runs twice
against the same reseeded simulator: tooltap's span made at receipt
(``adopt_tool_spans=False``) and pending (``True``, with pydantic-ai imported so its
hook is in place), and the spans ended must be the same, attribute for attribute
(ids and times aside): a flush from a listener in the middle of a live stream leaves
the stream's calls open, a request carrying results and cancelled before its answer
ends its calls and its span as the eager path does, exit
ends every open call as orphaned, and a tracer that fails when the tool span is made is
contained, logged, counted, and leaves nothing open or ended twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import anyio
import httpx
import pydantic_ai  # noqa: F401 - its hook in place: what makes tooltap's tool spans pending
import pytest

import tooltap
from tests.reliability.support import Recorder, attrs
from tests.reliability.test_rel_settlement import STREAMS
from tests.telemetry.support import first_body, second_body, url
from tooltap._telemetry.pending_span import PendingToolSpan
from tooltap._telemetry.telemetry import get_telemetry
from tooltap.simulator import Fault, Simulator

Shape = list[tuple[Any, ...]]
PATHS = {"eager": False, "pending": True}
DIALECT = "anthropic.messages"


def _volatile(key: str) -> bool:
    return key.endswith(".id") or "duration" in key or key.endswith("time_to_first_chunk")


def _shape(recorder: Recorder) -> Shape:
    """The ended spans: name, parent's name, attributes (no ids or times), status, events."""
    spans = recorder.spans()
    names = {s.context.span_id: s.name for s in spans if s.context is not None}
    return sorted(
        (
            s.name,
            names.get(s.parent.span_id) if s.parent is not None else None,
            tuple(sorted((k, repr(v)) for k, v in attrs(s).items() if not _volatile(k))),
            s.status.status_code.name,
            tuple(e.name for e in s.events),
        )
        for s in spans
    )


@pytest.fixture
def runs() -> Iterator[Callable[..., Recorder]]:
    """``runs(path, *listeners)``: a recorder instrumented on that path (shut down after)."""
    made: list[Recorder] = []

    def start(path: str, *listeners: Any) -> Recorder:
        if made:
            made[-1].shutdown()
        recorder = Recorder()
        made.append(recorder)
        recorder.instrument(*listeners, adopt_tool_spans=PATHS[path])
        return recorder

    yield start
    if made:
        made[-1].shutdown()


def _on_path(recorder: Recorder, path: str) -> None:
    """The run took the path it names (pending spans only where asked)."""
    spans = [e.span for e in recorder.of(tooltap.ToolCallReceived)]
    assert spans
    assert all(isinstance(s, PendingToolSpan) is (path == "pending") for s in spans)


@pytest.mark.parametrize("reader", sorted(STREAMS))
def test_flush_from_a_listener_mid_stream(
    runs: Callable[..., Recorder], seeded: Callable[[int], Simulator], reader: str
) -> None:
    shapes: dict[str, Shape] = {}
    for path in PATHS:
        recorder = runs(path, lambda event: tooltap.flush())
        STREAMS[reader](seeded(3))
        assert recorder.tools() == []  # the live stream's calls stayed open
        _on_path(recorder, path)
        tooltap.flush()
        assert len(recorder.tools()) == 2
        shapes[path] = _shape(recorder)
    assert shapes["pending"] == shapes["eager"]


async def _send(sim: Simulator, body: dict[str, Any], sdk: bool) -> None:
    """One anthropic request, its stream read to the end."""
    if sdk:
        client = anthropic.AsyncAnthropic(
            base_url=sim.anthropic_base_url, api_key="sk-test", max_retries=0
        )
        async for _ in await client.messages.create(**body):
            pass
        return
    async with (
        httpx.AsyncClient(timeout=30) as client,
        client.stream("POST", url(sim, DIALECT, True), json=body) as r,
    ):
        async for _ in r.aiter_raw():
            pass


async def _results_cancelled(recorder: Recorder, sim: Simulator, sdk: bool) -> None:
    first = first_body(DIALECT, True)
    await _send(sim, first, sdk)
    calls = [e.call for e in recorder.of(tooltap.ToolCallReceived)]
    sim.inject(Fault("delay", seconds=20), dialect=DIALECT)
    with anyio.move_on_after(0.5) as scope:
        await _send(sim, second_body(DIALECT, first, calls), sdk)
    assert scope.cancelled_caught


@pytest.mark.parametrize("sdk", [False, True], ids=["httpx", "anthropic"])
def test_cancelled_request_carrying_results(
    runs: Callable[..., Recorder], seeded: Callable[[int], Simulator], sdk: bool
) -> None:
    """Turn 1 read through (its calls open); turn 2, carrying their results, cancelled
    while waiting for headers."""
    shapes: dict[str, Shape] = {}
    for path in PATHS:
        recorder = runs(path)
        asyncio.run(_results_cancelled(recorder, seeded(5), sdk))
        _on_path(recorder, path)
        tooltap.flush()
        outcomes = [attrs(s).get("tooltap.outcome") for s in recorder.inference()]
        assert outcomes.count("cancelled") == 1
        assert [attrs(s)["tooltap.result"] for s in recorder.tools()] == ["ok", "ok"]
        shapes[path] = _shape(recorder)
    assert shapes["pending"] == shapes["eager"]


def test_exit_ends_open_calls(
    runs: Callable[..., Recorder], seeded: Callable[[int], Simulator]
) -> None:
    shapes: dict[str, Shape] = {}
    for path in PATHS:
        recorder = runs(path)
        STREAMS["openai"](seeded(7))
        assert recorder.tools() == []  # open: no result sent yet
        _on_path(recorder, path)
        tooltap.uninstrument()  # as at exit: everything open ends
        assert [attrs(s)["tooltap.result"] for s in recorder.tools()] == ["orphaned"] * 2
        assert recorder.ledger.open_spans() == []
        shapes[path] = _shape(recorder)
    assert shapes["pending"] == shapes["eager"]


def _raised(record: logging.LogRecord) -> BaseException | None:
    return record.exc_info[1] if record.exc_info else None


class InjectedFault(RuntimeError):
    """The tracer's failure when a tool span is made."""


def _failing(start: Callable[..., Any], hits: list[str]) -> Callable[..., Any]:
    """``start`` (a tracer's ``start_span``), raising for tool spans."""

    def start_span(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("execute_tool"):
            hits.append(name)
            raise InjectedFault(name)
        return start(name, *args, **kwargs)

    return start_span


def test_tool_span_creation_fault_is_contained(
    runs: Callable[..., Recorder],
    seeded: Callable[[int], Simulator],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, "tooltap")
    tools: dict[str, Shape] = {}
    for path in PATHS:
        recorder = runs(path)
        tel = get_telemetry()
        assert tel is not None
        hits: list[str] = []
        caplog.clear()
        with monkeypatch.context() as patched:
            patched.setattr(tel.tracer, "start_span", _failing(tel.tracer.start_span, hits))
            STREAMS["openai"](seeded(9))  # the app reads its stream unharmed
            tooltap.flush()  # the calls end: a pending span is made now
        assert hits, "the fault never fired"
        if path == "pending":
            _on_path(recorder, path)
        injected = [
            r for r in caplog.records if r.exc_info and isinstance(r.exc_info[1], InjectedFault)
        ]
        assert injected and all(r.levelno == logging.DEBUG for r in injected)
        assert recorder.points("tooltap.internal_errors")
        assert len(recorder.inference()) == 1
        assert recorder.ledger.open_spans() == []
        assert recorder.ledger.anomalies() == {
            "started_twice": [],
            "ended_twice": [],
            "ended_unstarted": [],
        }
        tools[path] = [s for s in _shape(recorder) if s[0].startswith("execute_tool")]
    assert tools["pending"] == tools["eager"] == []
