"""Cohere v2 Chat: tool-call-start/delta/end streams in any split, whole bodies, results."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tooltap._core.errors import classify_problem
from tooltap.core import StreamParser, parse_request, parse_response

DIALECT = "cohere.chat"


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def call_events(index: int, call_id: str, name: str, arguments: str) -> list[dict[str, Any]]:
    start = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
    out = [{"type": "tool-call-start", "index": index, "delta": {"message": {"tool_calls": start}}}]
    for at in range(0, len(arguments), 4):
        piece = {"function": {"arguments": arguments[at : at + 4]}}
        out.append(
            {"type": "tool-call-delta", "index": index, "delta": {"message": {"tool_calls": piece}}}
        )
    out.append({"type": "tool-call-end", "index": index})
    return out


def stream(calls: list[tuple[str, str, str]], *, finish: str | None = "TOOL_CALL") -> bytes:
    events: list[dict[str, Any]] = [
        {"id": "r-1", "type": "message-start", "delta": {"message": {"role": "assistant"}}},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will"}}},
    ]
    for i, (call_id, name, arguments) in enumerate(calls):
        events += call_events(i, call_id, name, arguments)
    if finish is not None:
        usage = {"tokens": {"input_tokens": 12, "output_tokens": 5}}
        events.append({"type": "message-end", "delta": {"finish_reason": finish, "usage": usage}})
    return sse(*events)


_ARGS = st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=9)))


@examples(60)
@given(st.lists(_ARGS, min_size=1, max_size=4), st.lists(st.integers(min_value=0), max_size=20))
def test_any_split_gives_the_calls(args: list[dict[str, Any]], cuts: list[int]) -> None:
    calls = [(f"c_{i}", f"tool_{i}", json.dumps(a)) for i, a in enumerate(args)]
    body = stream(calls)
    parser = StreamParser(DIALECT)
    emitted = []
    last = 0
    for cut in [*sorted({c % (len(body) + 1) for c in cuts}), len(body)]:
        emitted += parser.feed(body[last:cut])
        last = cut
    parsed = parser.close()
    assert [(c.call_id, c.name, c.args) for c in parsed.calls] == [
        (i, n, json.loads(a)) for i, n, a in calls
    ]
    assert tuple(emitted) == parsed.calls
    assert parsed.complete and parsed.problems == ()
    assert (parsed.response_id, parsed.finish_reason) == ("r-1", "TOOL_CALL")
    assert parsed.usage is not None and parsed.usage.input_tokens == 12


def test_a_cut_stream_and_an_error_finish() -> None:
    body = stream([("c_0", "f", '{"a": 1}'), ("c_1", "g", '{"b": 2}')], finish=None)
    cut = parse_response(body[: body.rindex(b"tool-call-end")], DIALECT)
    assert [c.call_id for c in cut.calls] == ["c_0"]
    assert [p.kind for p in cut.problems] == ["truncated_json", "truncated_stream"]
    failed = parse_response(stream([("c_0", "f", '{"a"')], finish="ERROR"), DIALECT)
    assert not failed.complete and failed.calls == ()
    assert [p.kind for p in failed.problems] == ["truncated_json", "error_event"]
    error = classify_problem(failed.problems[1])
    assert error is not None and error.error_type == "stream_error_event"
    event = sse({"type": "error", "message": "upstream failure"})
    assert [p.kind for p in parse_response(event, DIALECT).problems] == ["error_event"]


def test_whole_body() -> None:
    body = {
        "id": "r-2",
        "finish_reason": "MAX_TOKENS",
        "message": {
            "role": "assistant",
            "tool_plan": "plan",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{,}"}},
            ],
        },
        "usage": {"billed_units": {"input_tokens": 3, "output_tokens": 2}},
    }
    parsed = parse_response(json.dumps(body).encode(), DIALECT)
    assert [(c.call_id, c.args) for c in parsed.calls] == [("a", {"x": 1})]
    assert [(p.kind, p.call_id) for p in parsed.problems] == [
        ("invalid_json", "b"),
        ("incomplete_response", None),
    ]


def test_request_reader() -> None:
    body = {
        "model": "command-a",
        "tool_choice": "REQUIRED",
        "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
        ],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                    {
                        "id": "b",
                        "type": "function",
                        "function": {"name": "f", "arguments": '{"k": 2}'},
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "b",
                "content": [{"type": "document", "document": {"data": '{"error": "x"}'}}],
            },
            {"role": "tool", "tool_call_id": "a", "content": "fine"},
        ],
    }
    info = parse_request(body, DIALECT)
    assert info.tool_choice == "any" and info.tools == {"f": {"type": "object"}}
    got = [(r.call_id, r.position, r.call_args, r.is_error) for r in info.tool_results]
    assert got == [("b", 1, {"k": 2}, True), ("a", 0, {}, False)]
