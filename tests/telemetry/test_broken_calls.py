"""Broken calls keep their call-id lifecycle.

A call whose arguments arrived whole but unusable (invalid_json, unexpected_shape,
oversized_arguments, with an id) gets its execute_tool span, and the error result a
harness sends under its id ends it (``tooltap.tool_results{result=error}``), where it
used to count as ``unknown_call``. A truncated call never fully arrived: no span, but a
result for its id is not ``unknown_call`` either. ``tooltap.tool_calls`` counts each
call id once, with its outcome.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

import tooltap
from tests.telemetry.support import Recorder, attrs, first_body, post, url
from tests.telemetry.support import turn as tt_turn
from tooltap import Problem, ToolCall, ToolResultRef
from tooltap._telemetry.operation import Operation
from tooltap.simulator import Fault, Simulator

SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}}
TOOLS: dict[str, Any] = {"lookup": SCHEMA}


def turn(calls: tuple[ToolCall, ...] = (), problems: tuple[Problem, ...] = (),
         results: tuple[ToolResultRef, ...] = ()) -> Operation:  # fmt: skip
    """One openai.chat request declaring ``lookup`` with SCHEMA: results go out, calls and
    problems come back."""
    return tt_turn(calls, results, problems, tools=TOOLS)


def good(call_id: str, index: int = 0) -> ToolCall:
    return ToolCall("lookup", {"key": "height"}, "openai", call_id, index, dialect="openai.chat")


def result(call_id: str, *, is_error: bool = True) -> ToolResultRef:
    return ToolResultRef(call_id, "lookup", is_error, 0)


BROKEN = (
    Problem("invalid_json", 1, "bad", "Expecting ',' delimiter", "lookup", '{"key": "h" "x"}'),
    Problem("oversized_arguments", 2, "big", "over 10 characters", "lookup", '{"key": "hh'),
    Problem("unexpected_shape", 3, "odd", "custom tool call", "lookup", "free text"),
    Problem("truncated_json", 4, "cut", "ended inside the arguments", "lookup", '{"ke'),
)


def test_broken_calls_get_spans_and_their_error_results_match(rec: Recorder) -> None:
    first = turn((good("a"),), BROKEN)
    assert rec.tools() == []  # all open, awaiting results
    assert [e.call.call_id for e in rec.of(tooltap.ToolCallReceived)] == ["a"]  # not calls to run
    second = turn(results=(result("a", is_error=False), *(result(p.call_id or "") for p in BROKEN)))

    spans = {attrs(s)["gen_ai.tool.call.id"]: s for s in rec.tools()}
    assert sorted(spans) == ["a", "bad", "big", "odd"]  # no span for the truncated call
    for problem in BROKEN[:3]:
        span = spans[problem.call_id]
        a = attrs(span)
        assert span.name == "execute_tool lookup"
        assert a["tooltap.outcome"] == a["error.type"] == problem.kind
        assert a["tooltap.result"] == "error"
        assert a["tooltap.tool_call.index"] == problem.call_index
        assert span.status.status_code is StatusCode.ERROR
        assert (
            span.parent is not None and span.parent.span_id == first.span.get_span_context().span_id
        )
        assert "gen_ai.tool.call.arguments" not in a  # content capture is opt-in
    assert attrs(spans["a"])["tooltap.result"] == "ok" and "error.type" not in attrs(spans["a"])
    linked = {link.context.span_id for link in rec.inference()[1].links}
    assert linked == {s.context.span_id for s in spans.values()}
    assert second.span.get_span_context().span_id == rec.inference()[1].context.span_id

    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 0
    assert rec.total("tooltap.tool_results", tooltap__result="error") == 4  # 3 spans + truncated
    assert rec.total("tooltap.tool_results", tooltap__result="ok") == 1
    assert rec.total("tooltap.tool_call.duration") == 4  # the truncated call never arrived
    outcomes = {a["tooltap.outcome"]: v for a, v in rec.points("tooltap.tool_calls")}
    assert outcomes == {"ok": 1, "invalid_json": 1, "oversized_arguments": 1,
                        "unexpected_shape": 1, "truncated_json": 1}  # fmt: skip
    sent = {e.call_id: e.outcome for e in rec.of(tooltap.ToolResultSent)}
    assert sent == {"a": "ok", "bad": "error", "big": "error", "odd": "error", "cut": "error"}


def test_replayed_history_and_second_results_for_a_truncated_id(rec: Recorder) -> None:
    turn(problems=(BROKEN[3],))
    turn(results=(result("cut"),))
    turn(results=(result("cut"),))  # the history re-sent: nothing new
    assert rec.total("tooltap.tool_results") == 1
    turn(results=(result("cut"), result("cut")))  # answered a second time
    assert rec.total("tooltap.tool_results", tooltap__result="duplicate") == 1
    assert rec.tools() == []


def test_unanswered_broken_call_ends_orphaned_with_its_problem_as_error(rec: Recorder) -> None:
    turn(problems=(BROKEN[0],))
    tooltap.flush()
    tooltap.flush()
    (span,) = rec.tools()
    assert attrs(span)["tooltap.result"] == "orphaned"
    assert attrs(span)["error.type"] == "invalid_json"
    assert rec.total("tooltap.tool_results", tooltap__result="orphaned") == 1


def test_problem_about_a_delivered_call_counts_that_call_once(rec: Recorder) -> None:
    """Responses: streamed deltas that disagree with the final arguments annotate the call."""
    shape = Problem("unexpected_shape", None, "a", "streamed deltas differ", "lookup")
    turn((good("a"),), (shape,))
    assert rec.points("tooltap.tool_calls") == [
        ({"gen_ai.operation.name": "execute_tool", "gen_ai.provider.name": "openai",
          "gen_ai.tool.name": "lookup", "tooltap.outcome": "ok"}, 1)
    ]  # fmt: skip
    assert [e.problem.kind for e in rec.of(tooltap.ToolCallProblem)] == ["unexpected_shape"]
    tooltap.flush()
    assert len(rec.tools()) == 1


def test_broken_call_arguments_only_under_content_capture(recorder: Recorder) -> None:
    recorder.instrument(capture_content="SPAN_ONLY")
    turn(problems=(BROKEN[0],))
    tooltap.flush()
    (span,) = recorder.tools()
    assert attrs(span)["gen_ai.tool.call.arguments"] == BROKEN[0].received


def _answer_all(sim: Simulator, raw: bytes, first: dict[str, Any], stream: bool) -> bytes:
    """Turn 2 over openai.chat: every call id answered, broken ones with an error result."""
    parsed = tooltap.core.parse_response(raw, "openai.chat")
    items = [(c.call_id, c.name, c.raw_arguments or json.dumps(c.args), None) for c in parsed.calls]
    items += [(p.call_id, p.name, p.received or "", p.kind) for p in parsed.problems if p.call_id]
    body = json.loads(json.dumps(first))
    body["messages"].append({"role": "assistant", "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
        for cid, name, args, _ in items]})  # fmt: skip
    for cid, name, _, kind in items:
        call = ToolCall(name or "", {}, "openai", cid, 0, dialect="openai.chat")
        output = f"invalid arguments ({kind})" if kind else "170 cm"
        body["messages"].append(
            tooltap.core.result_message(call, output, is_error=kind is not None)
        )
    status, out = post("httpx2", url(sim, "openai.chat", stream), body, stream=stream)
    assert status == 200, out
    return out


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_wire_invalid_json_call_is_answered_not_unknown(
    rec: Recorder, sim: Simulator, stream: bool
) -> None:
    sim.inject(Fault("invalid_json_args"), dialect="openai.chat")
    first = first_body("openai.chat", stream)
    _, raw = post("httpx2", url(sim, "openai.chat", stream), first, stream=stream)
    (problem,) = tooltap.core.parse_response(raw, "openai.chat").problems
    assert problem.kind == "invalid_json" and problem.call_id
    _answer_all(sim, raw, first, stream)

    spans = {attrs(s)["gen_ai.tool.call.id"]: attrs(s) for s in rec.tools()}
    assert len(spans) == 2
    assert spans[problem.call_id]["error.type"] == "invalid_json"
    assert spans[problem.call_id]["tooltap.result"] == "error"
    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 0
    assert rec.total("tooltap.tool_results", tooltap__result="error") == 1
    assert rec.total("tooltap.tool_calls") == 2  # one per call id
    assert rec.total("tooltap.tool_calls", tooltap__outcome="invalid_json") == 1


def test_wire_truncated_call_gets_no_span_and_no_unknown_result(
    rec: Recorder, sim: Simulator
) -> None:
    sim.inject(Fault("truncate_args"), dialect="openai.chat")
    first = first_body("openai.chat", True)
    _, raw = post("httpx2", url(sim, "openai.chat", True), first, stream=True)
    parsed = tooltap.core.parse_response(raw, "openai.chat")
    cut = [p for p in parsed.problems if p.kind == "truncated_json"]
    assert len(cut) == 1 and cut[0].call_id
    _answer_all(sim, raw, first, True)

    ids = {attrs(s)["gen_ai.tool.call.id"] for s in rec.tools()}
    assert ids == {c.call_id for c in parsed.calls} and cut[0].call_id not in ids
    assert rec.total("tooltap.tool_results", tooltap__result="unknown_call") == 0
    assert rec.total("tooltap.tool_results", tooltap__result="error") == 1
    assert rec.total("tooltap.tool_calls", tooltap__outcome="ok") == len(parsed.calls)
    assert rec.total("tooltap.tool_calls", tooltap__outcome="truncated_json") == 1
