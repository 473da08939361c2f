"""The ``cohere`` v2 client against the simulator: calls with ids, streamed and not, the
client's retries on one span, results answered in the next turn."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import cohere
import pytest

import tooltap
from tooltap.simulator import Fault, Simulator

DIALECT = "cohere.chat"
MODEL = "command-a-03-2025"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup_demo_value",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
        },
    }
]
USER = [{"role": "user", "content": "How tall am I, and how heavy?"}]
STREAM = [pytest.param(s, id="stream" if s else "json") for s in (False, True)]


def client(sim: Simulator) -> cohere.ClientV2:
    return cohere.ClientV2(api_key="not-a-key", base_url=sim.cohere_base_url)


def chat(co: cohere.ClientV2, messages: list[Any], stream: bool, **options: Any) -> list[Any]:
    """One turn; ``(id, name, arguments text)`` of the tool calls the app gets."""
    if not stream:
        response = co.chat(model=MODEL, messages=messages, tools=TOOLS, **options)
        return [(c.id, c.function.name, c.function.arguments) for c in response.message.tool_calls]
    calls: dict[int, list[Any]] = {}
    for event in co.chat_stream(model=MODEL, messages=messages, tools=TOOLS, **options):
        if event.type == "tool-call-start":
            call = event.delta.message.tool_calls
            calls[event.index] = [call.id, call.function.name, call.function.arguments or ""]
        elif event.type == "tool-call-delta":
            calls[event.index][2] += event.delta.message.tool_calls.function.arguments
    return [tuple(c) for c in calls.values()]


@pytest.mark.parametrize("stream", STREAM)
def test_a_conversation_is_one_span_per_turn_and_its_calls_answered(
    rec: Any, sim: Simulator, stream: bool
) -> None:
    co = client(sim)
    calls = chat(co, USER, stream)

    assert rec.calls() == [(i, n, json.loads(a)) for i, n, a in calls]
    assistant = {
        "role": "assistant",
        "tool_plan": "Looking up.",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ],
    }
    results = [
        {
            "role": "tool",
            "tool_call_id": i,
            "content": [{"type": "document", "document": {"data": "1"}}],
        }
        for i, _, _ in calls
    ]
    final = co.chat(model=MODEL, messages=[*USER, assistant, *results], tools=TOOLS)

    assert final.finish_reason == "COMPLETE"
    first, last = rec.inference()
    assert first.attributes["gen_ai.provider.name"] == "cohere"
    assert first.attributes["gen_ai.request.stream"] is stream
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert last.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in rec.tools()) == sorted(
        i for i, _, _ in calls
    )


def test_the_clients_retries_are_one_span(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("rate_limit", retry_after=0.05), dialect=DIALECT)
    calls = chat(client(sim), USER, False)

    assert len(calls) == 2 and len(sim.requests) == 2
    (span,) = rec.inference()
    assert span.attributes["http.request.resend_count"] == 1
    assert "error.type" not in span.attributes
    assert rec.total("tooltap.retries", error__type="rate_limited") == 1


def test_a_failed_call_is_classed(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("server_error", status=500), dialect=DIALECT)
    with pytest.raises(cohere.core.ApiError):
        chat(client(sim), USER, False, request_options={"max_retries": 0})

    (span,) = rec.inference()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"] == "server_error"


def test_an_error_finish_mid_stream_fails_the_call(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("error_event"), dialect=DIALECT)
    chat(client(sim), USER, True)  # the client hands the events on; message-end says ERROR

    (span,) = rec.inference()
    assert span.attributes["error.type"] == "stream_error_event"
    kinds = [e.problem.kind for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert "error_event" in kinds and "truncated_json" in kinds
    assert rec.calls() == []


def test_a_cut_stream_is_a_truncated_call(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"), dialect=DIALECT)
    with contextlib.suppress(Exception):  # whether the client raises at the cut is its own
        chat(client(sim), USER, True)

    kinds = [e.problem.kind for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert kinds == ["truncated_json", "truncated_stream"]
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"]


async def test_the_async_client_retries_on_one_span(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("rate_limit", retry_after=0.05), dialect=DIALECT)
    co = cohere.AsyncClientV2(api_key="not-a-key", base_url=sim.cohere_base_url)
    response = await co.chat(model=MODEL, messages=USER, tools=TOOLS)

    calls = [
        (c.id, c.function.name, json.loads(c.function.arguments))
        for c in response.message.tool_calls
    ]
    assert rec.calls() == calls
    (span,) = rec.inference()
    assert span.attributes["http.request.resend_count"] == 1
    assert span.attributes["gen_ai.provider.name"] == "cohere"


def test_content_capture_records_the_streamed_answer(rec: Any, sim: Simulator) -> None:
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        capture_content="SPAN_ONLY",
    )
    co = client(sim)
    calls = chat(co, USER, False)
    assistant = {
        "role": "assistant",
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ],
    }
    results = [{"role": "tool", "tool_call_id": i, "content": "1"} for i, _, _ in calls]
    text = "".join(
        e.delta.message.content.text
        for e in co.chat_stream(model=MODEL, messages=[*USER, assistant, *results], tools=TOOLS)
        if e.type == "content-delta"
    )

    _, answer_span = rec.inference()
    (answer,) = json.loads(answer_span.attributes["gen_ai.output.messages"])
    assert [p for p in answer["parts"] if p["type"] == "text"] == [
        {"type": "text", "content": text}
    ]
    assert answer["finish_reason"] == "stop"
