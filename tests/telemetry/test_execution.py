"""The harness side of a call id: ``Execution``'s methods, the current span while the handler
runs, and re-sent calls (replays) that must not open a second span.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from opentelemetry import trace

import tooltap
from tests.telemetry.support import Recorder, attrs, turn
from tooltap import Problem, ToolCall
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
    find_execution(call("b")).record_replay("pending")
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


def test_a_call_re_sent_after_its_result_opens_no_second_span(rec: Recorder) -> None:
    turn((call("a"), call("b", "weight", 1)))
    turn(results=("a", "b"))
    again = turn((call("a"), call("b", "weight", 1)))  # the same response delivered again
    with tool_execution(call("a")) as execution:  # and the harness runs it again
        execution.record_result("170 cm", is_error=False)
    turn(results=("a", "b"))  # history re-sent: nothing new
    tooltap.flush()
    assert sorted(attrs(s)["tooltap.result"] for s in rec.tools()) == ["ok", "ok"]  # no orphan
    replayed = events(rec.inference()[2], sc.EVENT_CALL_REPLAYED)
    assert replayed == [
        {"gen_ai.tool.call.id": "a", "gen_ai.tool.name": "lookup", "tooltap.tool_call.index": 0},
        {"gen_ai.tool.call.id": "b", "gen_ai.tool.name": "lookup", "tooltap.tool_call.index": 1},
    ]
    assert rec.inference()[2].context.span_id == again.span.get_span_context().span_id
    assert rec.total("tooltap.tool_calls") == 2
    assert rec.total("tooltap.tool_results") == 2
    received = rec.of(tooltap.ToolCallReceived)  # listeners see what arrived, replays too
    assert [e.call.call_id for e in received] == ["a", "b", "a", "b"]
    spans = {attrs(s)["gen_ai.tool.call.id"]: s.context for s in rec.tools()}
    assert [e.span_context for e in received] == [spans["a"], spans["b"]] * 2


def test_a_call_re_sent_while_open_keeps_its_one_span(rec: Recorder) -> None:
    turn((call("a"),))
    turn((call("a"),))
    turn(results=("a",))
    (span,) = rec.tools()
    assert attrs(span)["tooltap.result"] == "ok"
    assert rec.total("tooltap.tool_results", tooltap__result="orphaned") == 0


def test_a_reused_id_with_other_arguments_is_a_new_call(rec: Recorder) -> None:
    """Providers that number their ids (call_0, call_1...) reuse them across turns."""
    turn((call("call_0"),))
    turn((call("call_0", "weight"),), results=("call_0",))
    refs = ("call_0", "call_0")  # both turns' results in the history
    turn(results=refs)
    assert [attrs(s)["tooltap.result"] for s in rec.tools()] == ["ok", "ok"]
    assert rec.total("tooltap.tool_calls") == 2
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 0


def test_a_re_sent_broken_call_is_counted_once(rec: Recorder) -> None:
    bad = Problem("invalid_json", 0, "bad", "Expecting value", "lookup", "{oops")
    turn(problems=(bad,))
    turn(problems=(bad,))
    assert rec.total("tooltap.tool_calls", tooltap__outcome="invalid_json") == 1
    assert len(rec.of(tooltap.ToolCallProblem)) == 2  # listeners see what arrived
    assert [e.name for e in rec.inference()[1].events] == ["tooltap.problem",
                                                           sc.EVENT_CALL_REPLAYED]  # fmt: skip
    tooltap.flush()
    assert len(rec.tools()) == 1


def test_replay_memory_is_bounded(recorder: Recorder) -> None:
    recorder.instrument(call_id_memory=3)
    tel = get_telemetry()
    assert tel is not None
    for i in range(6):
        assert tel.lifecycle.admit(call(f"id{i}"), None)
    assert len(tel.lifecycle._received) == 3
    assert not tel.lifecycle.admit(call("id5"), None)  # recent: a replay
    assert tel.lifecycle.admit(call("id0"), None)  # forgotten: new again
