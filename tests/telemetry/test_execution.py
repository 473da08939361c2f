"""The harness side of a call id: ``Execution``'s methods, the current span while the handler
runs, and calls delivered again (each delivery its own span).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from opentelemetry import trace

import tooltap
from tests.telemetry.support import Recorder, attrs, turn
from tooltap import Problem, ToolCall, ToolResultRef
from tooltap._telemetry import semconv as sc
from tooltap._telemetry.execution import find_execution, tool_execution
from tooltap._telemetry.operation import get_telemetry


def call(call_id: str | None, key: str = "height", index: int = 0) -> ToolCall:
    return ToolCall("lookup", {"key": key}, "openai", call_id, index, dialect="openai.chat")


def events(span: Any, name: str) -> list[dict[str, Any]]:
    return [dict(e.attributes or {}) for e in span.events if e.name == name]


# --- Execution's methods ----------------------------------------------------------------------


def test_execution_records_retries_attempts_and_replays_on_the_wire_span(rec: Recorder) -> None:
    turn((call("a"), call("b", "weight", 1)))
    with tool_execution(call("a")) as execution:
        execution.record_retry(1, "ConnectionError")
        execution.record_result("170 cm", is_error=False, attempts=2)
    find_execution(call("b", "weight", 1)).record_replay("pending")
    turn(results=("a", "b"))
    spans = {attrs(s)["gen_ai.tool.call.id"]: s for s in rec.tools()}
    a, b = spans["a"], spans["b"]
    assert events(a, sc.EVENT_TOOL_RETRY) == [
        {sc.ERROR_TYPE: "ConnectionError", sc.TOOLTAP_TOOL_ATTEMPTS: 1}
    ]
    assert attrs(a)[sc.TOOLTAP_TOOL_ATTEMPTS] == 2 and sc.TOOLTAP_TOOL_REPLAYED not in attrs(a)
    assert events(b, sc.EVENT_TOOL_REPLAYED) == [{sc.TOOLTAP_LEDGER_STATE: "pending"}]
    assert attrs(b)[sc.TOOLTAP_TOOL_REPLAYED] is True
    assert sc.TOOLTAP_HANDLER_DURATION not in attrs(b)  # not run
    assert (sc.TOOLTAP_TOOL_ATTEMPTS, sc.EVENT_TOOL_RETRY, sc.EVENT_TOOL_REPLAYED) == (
        "tooltap.tool.attempts", "tooltap.tool.retry", "tooltap.tool.replayed")  # fmt: skip


def test_find_execution_never_opens_a_span(rec: Recorder) -> None:
    find_execution(call("never")).record_replay("done")
    tooltap.flush()
    assert rec.tools() == []


def test_recording_after_flush_ended_the_span_is_silent(
    rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    """flush() ends the span (orphaned) while the handler still runs: no OTel warnings."""
    turn((call("a"),))
    with caplog.at_level(logging.WARNING), tool_execution(call("a")) as execution:
        tooltap.flush()
        execution.record_retry(1, "TimeoutError")
        execution.record_result("late", is_error=True, error_type="TimeoutError", attempts=2)
    assert [r.getMessage() for r in caplog.records] == []
    (span,) = rec.tools()
    assert attrs(span)["tooltap.result"] == "orphaned"
    assert sc.TOOLTAP_TOOL_ATTEMPTS not in attrs(span) and span.events == ()


# --- the current span while the handler runs --------------------------------------------------


def test_handler_spans_nest_under_the_execute_tool_span(rec: Recorder) -> None:
    tracer = rec.tracer_provider.get_tracer("app")
    turn((call("a"),))
    outside = trace.get_current_span()
    with tool_execution(call("a")), tracer.start_as_current_span("db.query"):
        pass
    assert trace.get_current_span() is outside  # restored
    with tool_execution(call("unseen")), tracer.start_as_current_span("http.get"):
        pass  # a call the wire never saw: its span is opened, and current, all the same
    turn(results=("a", "unseen"))
    tools = {attrs(s)["gen_ai.tool.call.id"]: s for s in rec.tools()}
    children = {s.name: s for s in rec.spans() if s.name in ("db.query", "http.get")}
    assert children["db.query"].parent is not None
    assert children["db.query"].parent.span_id == tools["a"].context.span_id
    assert children["http.get"].parent is not None
    assert children["http.get"].parent.span_id == tools["unseen"].context.span_id
    assert all(attrs(t)["tooltap.result"] == "ok" for t in tools.values())  # ended by results


async def test_concurrent_async_handlers_each_nest_under_their_own_span(rec: Recorder) -> None:
    tracer = rec.tracer_provider.get_tracer("app")
    turn((call("a"), call("b", "weight", 1)))

    async def handler(c: ToolCall) -> None:
        with tool_execution(c):
            await asyncio.sleep(0.01)
            with tracer.start_as_current_span(f"work {c.call_id}"):
                await asyncio.sleep(0.01)

    await asyncio.gather(handler(call("a")), handler(call("b", "weight", 1)))
    turn(results=("a", "b"))
    tools = {attrs(s)["gen_ai.tool.call.id"]: s.context.span_id for s in rec.tools()}
    for cid in ("a", "b"):
        (work,) = [s for s in rec.spans() if s.name == f"work {cid}"]
        assert work.parent is not None and work.parent.span_id == tools[cid]


def test_an_escaping_exception_is_recorded_once_without_its_message(rec: Recorder) -> None:
    turn((call("a"),))
    with pytest.raises(PermissionError), tool_execution(call("a")):
        raise PermissionError("token sk-secret rejected")
    turn(results=("a",))
    (span,) = rec.tools()
    assert attrs(span)["error.type"] == "PermissionError"
    assert span.events == ()  # no exception event: its message may hold a secret


# --- replays -----------------------------------------------------------------------------------


def test_a_response_delivered_again_opens_its_spans_again(rec: Recorder) -> None:
    """A response is a delivery (a gateway cache, a re-sent response): its calls are what the
    app received, so they get spans again; the inference span says the response came before."""
    turn((call("a"), call("b", "weight", 1)), response_id="resp_1")
    turn(results=("a", "b"))
    again = turn((call("a"), call("b", "weight", 1)), response_id="resp_1")
    with tool_execution(call("a")) as execution:  # the harness runs it again: the new span
        execution.record_result("170 cm", is_error=False)
    turn(results=("a", "b"))
    tooltap.flush()
    assert [attrs(s)["tooltap.result"] for s in rec.tools()] == ["ok"] * 4  # no orphan
    assert events(rec.inference()[0], sc.EVENT_CALL_REPLAYED) == []
    replayed = events(rec.inference()[2], sc.EVENT_CALL_REPLAYED)
    assert replayed == [
        {"gen_ai.tool.call.id": "a", "gen_ai.tool.name": "lookup", "tooltap.tool_call.index": 0},
        {"gen_ai.tool.call.id": "b", "gen_ai.tool.name": "lookup", "tooltap.tool_call.index": 1},
    ]
    assert rec.inference()[2].context.span_id == again.span.get_span_context().span_id
    parents = [s.parent.span_id for s in rec.tools() if s.parent is not None]
    spans = [s.context.span_id for s in rec.inference()]
    assert parents == [spans[0], spans[0], spans[2], spans[2]]
    ran = [s for s in rec.tools() if sc.TOOLTAP_SIDE_EFFECTS in attrs(s)]
    assert [s.parent.span_id for s in ran if s.parent is not None] == [spans[2]]
    assert rec.total("tooltap.tool_calls") == 4
    assert rec.total("tooltap.tool_results") == 4
    received = rec.of(tooltap.ToolCallReceived)
    assert [e.call.call_id for e in received] == ["a", "b", "a", "b"]
    assert len({e.span_context.span_id for e in received if e.span_context}) == 4


def test_a_call_delivered_twice_while_open_has_two_spans(rec: Recorder) -> None:
    """A new call never supersedes an open one with the same id: each result ends one."""
    turn((call("a"),))
    turn((call("a"),))
    turn(results=("a",))
    turn(results=("a",))
    tooltap.flush()
    assert [attrs(s)["tooltap.result"] for s in rec.tools()] == ["ok", "ok"]
    assert rec.total("tooltap.tool_results", tooltap__result="orphaned") == 0


def test_a_reused_id_with_other_arguments_is_a_new_call(rec: Recorder) -> None:
    """Providers that number their ids (call_0, call_1...) reuse them across turns."""
    weight = ToolResultRef("call_0", "lookup", False, 0, call_args={"key": "weight"})
    height = ToolResultRef("call_0", "lookup", False, 0, call_args={"key": "height"})
    turn((call("call_0"),))
    turn((call("call_0", "weight"),))  # both open: the first is not orphaned
    turn(results=(weight,))
    turn(results=(height,))
    spans = {attrs(s).get("tooltap.tool_call.index", 0): s for s in rec.tools()}
    assert [attrs(s)["tooltap.result"] for s in rec.tools()] == ["ok", "ok"]
    assert rec.inference()[2].links[0].context.span_id == rec.tools()[0].context.span_id
    assert len(spans) == 1 and rec.total("tooltap.tool_calls") == 2
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 0


def test_a_broken_call_delivered_twice_is_counted_twice(rec: Recorder) -> None:
    bad = Problem("invalid_json", 0, "bad", "Expecting value", "lookup", "{oops")
    turn(problems=(bad,))
    turn(problems=(bad,))
    assert rec.total("tooltap.tool_calls", tooltap__outcome="invalid_json") == 2
    assert len(rec.of(tooltap.ToolCallProblem)) == 2
    tooltap.flush()
    assert [attrs(s)["tooltap.result"] for s in rec.tools()] == ["orphaned", "orphaned"]


def test_the_answered_memory_is_bounded(recorder: Recorder) -> None:
    recorder.instrument(call_id_memory=3)
    tel = get_telemetry()
    assert tel is not None
    for i in range(6):
        turn((call(f"id{i}"),), response_id=f"r{i}")
        turn(results=(f"id{i}",))
    assert len(tel.lifecycle._answered._memory) == 3
    assert len(tel.lifecycle._responses) == 3
    turn(results=("id5",))  # remembered: re-sent, nothing counted
    assert recorder.total("tooltap.tool_results", tooltap__result="unknown_call") == 0
    turn(results=("id0",))  # forgotten, and no such call open: unknown
    assert recorder.total("tooltap.tool_results", tooltap__result="unknown_call") == 1


# --- gen_ai.execute_tool.duration -------------------------------------------------------------


def test_handler_runs_record_execute_tool_duration(rec: Recorder) -> None:
    """The handler's own time (semconv), beside tooltap's received -> result-sent turnaround."""
    turn((call("a"), call("b", "weight", 1)), tools={"lookup": {"type": "object"}})
    with tool_execution(call("a")) as execution:
        time.sleep(0.05)
        execution.record_result("170 cm", is_error=False)
    with pytest.raises(KeyError), tool_execution(call("b", "weight", 1)):
        raise KeyError("weight")
    points = rec.points(sc.EXECUTE_TOOL_DURATION)
    base = {
        sc.GEN_AI_OPERATION_NAME: "execute_tool",
        sc.GEN_AI_PROVIDER_NAME: "openai",
        sc.GEN_AI_TOOL_NAME: "lookup",
        sc.GEN_AI_TOOL_TYPE: "function",
    }
    assert sorted(points, key=lambda p: len(p[0])) == [
        (base, 1),
        ({**base, sc.ERROR_TYPE: "KeyError"}, 1),
    ]
    assert sc.EXECUTE_TOOL_DURATION == "gen_ai.execute_tool.duration"
    data = rec.reader.get_metrics_data()
    (histogram,) = [
        m
        for r in data.resource_metrics
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == sc.EXECUTE_TOOL_DURATION
    ]
    assert histogram.unit == "s"
    ok = next(p for p in histogram.data.data_points if sc.ERROR_TYPE not in p.attributes)
    assert 0.05 <= ok.sum < 1.0
    assert rec.points(sc.TOOL_CALL_DURATION) == []  # no result sent yet: no turnaround


def test_execute_tool_duration_needs_a_handler_run(rec: Recorder) -> None:
    turn((call("a"),))
    turn(results=("a",))
    assert rec.points(sc.EXECUTE_TOOL_DURATION) == []
    assert [p[1] for p in rec.points(sc.TOOL_CALL_DURATION)] == [1]
