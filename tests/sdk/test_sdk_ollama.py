"""The ``ollama`` client against the simulator: calls without ids, seen over httpx, answered
by name and order in the next turn, and what the client hands the app unchanged."""

from __future__ import annotations

import json
from typing import Any

import ollama
import pytest

import tooltap
from tooltap.simulator import Fault, Simulator

DIALECT = "ollama.chat"
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


def chat(client: Any, messages: list[dict[str, Any]], stream: bool) -> list[Any]:
    """One turn; the tool calls the app gets."""
    if not stream:
        return list(
            client.chat(model="llama3.2", messages=messages, tools=TOOLS).message.tool_calls or []
        )
    parts = client.chat(model="llama3.2", messages=messages, tools=TOOLS, stream=True)
    return [tc for part in parts for tc in (part.message.tool_calls or [])]


@pytest.mark.parametrize("stream", STREAM)
def test_a_conversation_is_two_spans_and_its_calls_answered(
    rec: Any, sim: Simulator, stream: bool
) -> None:
    client = ollama.Client(host=sim.ollama_host)
    calls = chat(client, USER, stream)

    assert [c.function.arguments for c in calls] == [{"key": "height"}, {"key": "weight"}]
    assert rec.calls() == [(None, c.function.name, dict(c.function.arguments)) for c in calls]
    turn = [
        *USER,
        {"role": "assistant", "content": "", "tool_calls": [c.model_dump() for c in calls]},
        *[{"role": "tool", "tool_name": c.function.name, "content": "1 unit"} for c in calls],
    ]
    final = client.chat(model="llama3.2", messages=turn, tools=TOOLS, stream=False)

    assert "1 unit" in final.message.content
    first, _ = rec.inference()
    assert first.attributes["gen_ai.provider.name"] == "ollama"
    assert first.attributes["gen_ai.request.stream"] is stream
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    tool_spans = rec.tools()
    assert len(tool_spans) == 2
    assert {s.attributes["tooltap.result"] for s in tool_spans} == {"ok"}  # matched by content
    assert rec.total("tooltap.tool_calls", gen_ai__provider__name="ollama") == 2


def test_a_stream_cut_inside_a_call_is_a_problem(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("truncate_args"), dialect=DIALECT)
    client = ollama.Client(host=sim.ollama_host)
    with pytest.raises(Exception):  # noqa: B017 - the client fails on the cut line
        chat(client, USER, True)

    kinds = [e.problem.kind for e in rec.events if isinstance(e, tooltap.ToolCallProblem)]
    assert "truncated_json" in kinds
    assert [name for _, name, _ in rec.calls()] == ["lookup_demo_value"]


def test_an_error_line_fails_the_call(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("error_event"), dialect=DIALECT)
    with pytest.raises(ollama.ResponseError):
        chat(ollama.Client(host=sim.ollama_host), USER, True)

    (span,) = rec.inference()
    assert span.status.status_code.name == "ERROR"
    assert span.attributes["error.type"] == "stream_error_event"


def test_a_server_error_is_classed(rec: Any, sim: Simulator) -> None:
    sim.inject(Fault("overloaded"), dialect=DIALECT)
    with pytest.raises(ollama.ResponseError):
        chat(ollama.Client(host=sim.ollama_host), USER, False)

    (span,) = rec.inference()
    assert span.attributes["error.type"] == "overloaded"


@pytest.mark.parametrize("size", [1, 13])
def test_any_chunking_hands_the_app_what_it_gets_uninstrumented(
    rec: Any, sim: Simulator, size: int
) -> None:
    def parts() -> list[Any]:
        sim.inject(Fault("chunk_size", size=size), dialect=DIALECT)
        client = ollama.Client(host=sim.ollama_host)
        return [
            p.message.model_dump()
            for p in client.chat(model="llama3.2", messages=USER, tools=TOOLS, stream=True)
        ]

    seen = parts()
    tooltap.uninstrument()
    bare = parts()
    rec.instrument()
    assert seen == bare
    assert len(rec.calls()) == 2


@pytest.mark.parametrize("stream", STREAM)
async def test_the_async_client_is_seen_the_same(rec: Any, sim: Simulator, stream: bool) -> None:
    client = ollama.AsyncClient(host=sim.ollama_host)
    if stream:
        parts = await client.chat(model="llama3.2", messages=USER, tools=TOOLS, stream=True)
        calls = [tc async for part in parts for tc in (part.message.tool_calls or [])]
    else:
        response = await client.chat(model="llama3.2", messages=USER, tools=TOOLS)
        calls = list(response.message.tool_calls or [])

    assert rec.calls() == [(None, c.function.name, dict(c.function.arguments)) for c in calls]
    (span,) = rec.inference()
    assert span.attributes["gen_ai.provider.name"] == "ollama"
    assert span.attributes["gen_ai.request.stream"] is stream


def test_content_capture_records_the_streamed_answer(rec: Any, sim: Simulator) -> None:
    tooltap.uninstrument()
    tooltap.instrument(
        tracer_provider=rec.tracer_provider,
        meter_provider=rec.meter_provider,
        capture_content="SPAN_ONLY",
    )
    client = ollama.Client(host=sim.ollama_host)
    calls = chat(client, USER, False)
    turn = [
        *USER,
        {"role": "assistant", "content": "", "tool_calls": [c.model_dump() for c in calls]},
        *[{"role": "tool", "tool_name": c.function.name, "content": "1 unit"} for c in calls],
    ]
    parts = client.chat(model="llama3.2", messages=turn, tools=TOOLS, stream=True)
    text = "".join(p.message.content or "" for p in parts)

    _, answer_span = rec.inference()
    (answer,) = json.loads(answer_span.attributes["gen_ai.output.messages"])
    assert [p for p in answer["parts"] if p["type"] == "text"] == [
        {"type": "text", "content": text}
    ]
