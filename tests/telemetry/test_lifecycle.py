"""The tool-call lifecycle and the Operation contract, driven directly (in-memory providers).

One ``execute_tool`` span per delivered call; ok / error / orphaned / duplicate /
unknown_call; Google calls without ids matched by the answered call's name and args.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import tooltap
from tests.telemetry.support import Recorder, attrs
from tooltap import Parsed, ToolCall, ToolResultRef
from tooltap._telemetry.execution import tool_execution
from tooltap._telemetry.operation import Operation, get_telemetry
from tooltap._telemetry.settlement import Event, State
from tooltap.core import ErrorClass, RequestInfo

SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
TOOLS: dict[str, dict[str, Any]] = {"lookup": SCHEMA, "other": SCHEMA}


def call(call_id: str | None, key: str = "height", name: str = "lookup", index: int = 0,
         dialect: str = "openai.chat") -> ToolCall:  # fmt: skip
    provider = "google" if dialect == "google.genai" else "openai"
    return ToolCall(name, {"key": key}, provider, call_id, index, dialect=dialect)


def turn(
    calls: list[ToolCall] = (),
    results: tuple[ToolResultRef, ...] = (),  # type: ignore[assignment]
    dialect: str = "openai.chat",
    owner: str = "transport",
    **info: Any,
) -> Operation:
    """One request: results go out, calls come back; the operation is ended."""
    tel = get_telemetry()
    assert tel is not None
    op = Operation(tel, dialect=dialect, request_model="m", server_address="h", server_port=1,
                   stream=False, owner=owner)  # type: ignore[arg-type]  # fmt: skip
    request = RequestInfo(dialect, model="m", tools=TOOLS, tool_results=results, **info)
    op.begin_attempt(request, {})
    op.record_parsed(Parsed(dialect, calls=tuple(calls), finish_reason="tool_calls"), request)
    op.end()
    return op


def ok(call_id: str | None, name: str = "lookup", *, is_error: bool = False, index: int = 0,
       args: dict[str, Any] | None = None, digest: int = 0) -> ToolResultRef:  # fmt: skip
    return ToolResultRef(call_id, name, is_error, index, call_args=args, digest=digest)


def by_id(rec: Recorder) -> dict[Any, dict[str, Any]]:
    return {attrs(s).get("gen_ai.tool.call.id"): attrs(s) for s in rec.tools()}


def test_result_ends_span_and_links(rec: Recorder) -> None:
    turn([call("a"), call("b", "weight", index=1)])
    assert rec.tools() == []
    second = turn(results=(ok("a"), ok("b", is_error=True, index=1)))
    spans = by_id(rec)
    assert spans["a"]["tooltap.result"] == "ok" and "error.type" not in spans["a"]
    assert spans["b"]["tooltap.result"] == "error" and spans["b"]["error.type"] == "tool_error"
    b_span = next(s for s in rec.tools() if attrs(s)["gen_ai.tool.call.id"] == "b")
    assert b_span.status.status_code is StatusCode.ERROR
    linked = {link.context.span_id for link in rec.inference()[1].links}
    assert linked == {s.context.span_id for s in rec.tools()}
    assert second.span.get_span_context().span_id == rec.inference()[1].context.span_id
    assert rec.total("tooltap.tool_results", tooltap__result="error") == 1
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 1


def test_a_re_sent_result_is_not_a_duplicate_but_a_second_or_different_one_is(
    rec: Recorder,
) -> None:
    turn([call("a")])
    turn(results=(ok("a"),))
    turn([call("c")], results=(ok("a"),))  # the same request retried: nothing new
    assert rec.total("tooltap.tool_results") == 1
    turn(results=(ok("c"), ok("c", index=1)))  # c answered twice in one request
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 2
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 1
    last = rec.inference()[-1]
    (event,) = [e for e in last.events if e.name == "tooltap.tool_result.duplicate"]
    assert dict(event.attributes or {})["gen_ai.tool.call.id"] == "c"
    assert [e.outcome for e in rec.of(tooltap.ToolResultSent)] == ["ok", "ok", "duplicate"]
    turn(results=(ok("c"), ok("c", index=1)))  # retried: not counted again
    assert rec.total("tooltap.tool_results") == 3
    turn(results=(ok("a", digest=7),))  # a different result for an answered call
    turn(results=(ok("a", digest=7),))  # ... retried
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 2


def test_results_are_matched_in_their_conversation(rec: Recorder) -> None:
    """Two conversations numbering their ids the same way, with the same arguments."""
    with tooltap.conversation("alice"):
        turn([call("call_0")])
    with tooltap.conversation("bob"):
        turn([call("call_0")])
        turn(results=(ok("call_0", args={"key": "height"}),))
    (bob,) = rec.tools()
    assert attrs(bob)["gen_ai.conversation.id"] == "bob"
    assert attrs(rec.inference()[1])["gen_ai.conversation.id"] == "bob"
    with tooltap.conversation("alice"):
        turn(results=(ok("call_0", args={"key": "height"}),))
    assert [attrs(s)["gen_ai.conversation.id"] for s in rec.tools()] == ["bob", "alice"]
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 2


def test_a_rewritten_id_matches_by_the_call_the_history_shows(rec: Recorder) -> None:
    turn([call("call_0"), call("call_1", "weight", index=1)])
    turn(results=(ok("resp_9:call_1", args={"key": "weight"}),))
    (span,) = rec.tools()
    assert attrs(span)["gen_ai.tool.call.id"] == "call_1" and attrs(span)["tooltap.result"] == "ok"


def test_unknown_call_is_counted_once(rec: Recorder) -> None:
    turn(results=(ok("never-seen"),))
    turn(results=(ok("never-seen"),))
    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 1
    assert rec.tools() == []


def test_orphaned_after_timeout_on_next_request(recorder: Recorder) -> None:
    recorder.instrument(orphan_timeout=0.05)
    turn([call("a")])
    time.sleep(0.06)
    turn()
    (span,) = recorder.tools()
    assert attrs(span)["tooltap.result"] == "orphaned" and attrs(span)["error.type"] == "orphaned"
    assert recorder.total("tooltap.tool_results", tooltap__result="orphaned") == 1


@pytest.mark.parametrize("how", ["flush", "uninstrument"])
def test_open_calls_end_orphaned_at_flush_and_uninstrument(rec: Recorder, how: str) -> None:
    turn([call("a"), call("b", index=1)])
    getattr(tooltap, how)()
    assert sorted(attrs(s)["tooltap.result"] for s in rec.tools()) == ["orphaned", "orphaned"]


def test_open_call_table_is_capped(recorder: Recorder) -> None:
    recorder.instrument(max_open_calls=2)
    turn([call("a"), call("b", index=1), call("c", index=2)])
    (evicted,) = recorder.tools()
    assert attrs(evicted)["gen_ai.tool.call.id"] == "a"
    tel = get_telemetry()
    assert tel is not None and len(tel.lifecycle) == 2


def test_google_calls_without_ids_match_by_the_answered_call(rec: Recorder) -> None:
    g = "google.genai"
    turn([call(None, "height", dialect=g), call(None, "weight", index=1, dialect=g)], dialect=g)
    turn(results=(ok(None, index=0, args={"key": "weight"}),), dialect=g)
    (weight,) = rec.tools()
    assert attrs(weight)["tooltap.tool_call.index"] == 1
    turn(results=(ok(None, index=0), ok(None, index=1)), dialect=g)  # no such call shown
    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 1
    turn(results=(ok(None, index=0, args={"key": "weight"}),
                  ok(None, index=1, args={"key": "height"})), dialect=g)  # fmt: skip
    assert sorted(attrs(s)["tooltap.tool_call.index"] for s in rec.tools()) == [0, 1]
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 2
    assert "gen_ai.tool.call.id" not in attrs(rec.tools()[0])


def test_validation_outcomes_and_tool_name_labels(recorder: Recorder) -> None:
    recorder.instrument(tool_name_cap=1)
    bad = ToolCall("lookup", {"kee": 1}, "openai", "bad", 0, dialect="openai.chat")
    stray = ToolCall("not_declared", {}, "openai", "stray", 1, dialect="openai.chat")
    late = ToolCall("other", {"key": "x"}, "openai", "late", 2, dialect="openai.chat")
    turn([bad, stray, late])
    assert recorder.total("tooltap.tool_calls", tooltap__outcome="schema_violation",
                          gen_ai__tool__name="lookup") == 1  # fmt: skip
    assert recorder.total("tooltap.tool_calls", tooltap__outcome="undeclared_tool",
                          gen_ai__tool__name="_undeclared") == 1  # fmt: skip
    assert (
        recorder.total("tooltap.tool_calls", tooltap__outcome="ok", gen_ai__tool__name="_other")
        == 1
    )
    tooltap.flush()
    spans = by_id(recorder)
    assert spans["bad"]["tooltap.outcome"] == "schema_violation"
    assert spans["stray"]["gen_ai.tool.name"] == "not_declared"  # spans keep the real name
    problems = [e.problem.kind for e in recorder.of(tooltap.ToolCallProblem)]
    assert "schema_violation" in problems and "undeclared_tool" in problems


def test_failing_listener_is_contained(recorder: Recorder) -> None:
    def broken(event: object) -> None:
        raise ValueError("listener bug")

    tooltap.instrument(tracer_provider=recorder.tracer_provider,
                       meter_provider=recorder.meter_provider,
                       listeners=[broken, recorder.events.append])  # fmt: skip
    turn([call("a")])
    assert len(recorder.of(tooltap.ToolCallReceived)) == 1
    assert recorder.total("tooltap.internal_errors", tooltap__component="listener") == 1


@pytest.mark.parametrize(("choice", "calls", "honored"), [
    ("any", [call("a")], True), ("any", [], False), ("tool:other", [call("a")], False),
    ("auto", [], None)])  # fmt: skip
def test_forced_tool_choice(
    rec: Recorder, choice: str, calls: list[ToolCall], honored: bool | None
) -> None:
    turn(calls, tool_choice=choice)
    points = rec.points("tooltap.forced_tool_choice")
    assert [a["tooltap.honored"] for a, _ in points] == ([] if honored is None else [honored])


def test_retries_resend_count_and_failed_attempt_events(rec: Recorder) -> None:
    tel = get_telemetry()
    assert tel is not None
    op = Operation(tel, dialect="anthropic.messages", request_model="claude", server_address=None,
                   server_port=None, stream=False, owner="sdk")  # fmt: skip
    info = RequestInfo("anthropic.messages", model="claude")
    op.begin_attempt(info, {"X-Stainless-Retry-Count": "0"})
    op.attempt_failed(ErrorClass("rate_limited", True, retry_after=0.5, status=429))
    op.begin_attempt(info, {"X-Stainless-Retry-Count": "1"})
    op.record_parsed(Parsed("anthropic.messages", finish_reason="end_turn"), info)
    op.end()
    (span,) = rec.inference()
    a = attrs(span)
    assert a["http.request.resend_count"] == 1 and "error.type" not in a
    (event,) = span.events
    assert dict(event.attributes or {}) == {"error.type": "rate_limited", "tooltap.retryable": True,
                                            "http.response.status_code": 429,
                                            "tooltap.retry_after": 0.5}  # fmt: skip
    assert rec.total("tooltap.retries", error__type="rate_limited") == 1
    assert rec.total("tooltap.provider.errors", error__type="rate_limited") == 1


def test_sdk_hold_ends_after_the_call_returns_only(rec: Recorder) -> None:
    tel = get_telemetry()
    assert tel is not None

    def sdk_op() -> Operation:
        return Operation(tel, dialect="openai.chat", request_model="m", server_address=None,
                         server_port=None, stream=True, owner="sdk")  # fmt: skip

    inside = sdk_op()  # body read inside the SDK call: the SDK's end wins
    inside.report(Event.BODY_UNREAD)
    inside.report(Event.BODY_ENDED)
    assert inside.state is State.CALLING and not inside.ended
    inside.report(Event.SDK_RAISED, ValueError("parse failed after reading"))
    assert attrs(rec.inference()[0])["error.type"] == "_OTHER"

    outside = sdk_op()  # streamed: the app reads after the SDK returned
    outside.report(Event.BODY_UNREAD)
    outside.report(Event.SDK_RETURNED)
    assert outside.state is State.STREAMING and not outside.ended
    outside.report(Event.BODY_ENDED)
    assert outside.ended and len(rec.inference()) == 2
    outside.end()  # idempotent
    assert len(rec.inference()) == 2


def test_tool_execution_records_on_the_wire_span(rec: Recorder) -> None:
    seen = call("a")
    turn([seen])
    with tool_execution(seen, side_effects=True) as execution:
        execution.record_result({"error": "no such key"}, is_error=True, error_type="KeyError")
    turn(results=(ok("a", is_error=True),))
    (span,) = rec.tools()
    a = attrs(span)
    assert a["tooltap.tool.side_effects"] is True and a["tooltap.tool.handler.duration"] >= 0
    assert a["error.type"] == "KeyError" and a["tooltap.result"] == "error"
    assert "gen_ai.tool.call.result" not in a  # no content by default


def test_tool_execution_opens_and_registers_when_the_wire_never_saw_the_call(rec: Recorder) -> None:
    unseen = call("z")
    with pytest.raises(KeyError), tool_execution(unseen) as execution:
        raise KeyError("handler failed")
    assert rec.tools() == []  # open until the result is sent
    turn(results=(ok("z"),))
    (span,) = rec.tools()
    assert attrs(span)["tooltap.result"] == "ok" and attrs(span)["error.type"] == "KeyError"
    assert execution is not None


def test_tool_execution_without_instrumentation_is_a_no_op() -> None:
    assert get_telemetry() is None
    with tool_execution(call("a")) as execution:
        execution.record_result("fine", is_error=False)
