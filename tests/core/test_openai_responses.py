"""OpenAI Responses reducer and body parser: cases the recorded corpus lacks."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tooltap
from tests.conftest import examples
from tooltap._core.dialects import openai_responses
from tooltap._core.sse import SSEEvent

DIALECT = "openai.responses"


def sse(*payloads: dict[str, Any], named: bool = True) -> bytes:
    """SSE bytes, one event per payload (``event:`` line from its ``type`` unless not ``named``)."""
    out = []
    for p in payloads:
        head = f"event: {p['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(p)}\n\n")
    return "".join(out).encode()


def response(
    status: str, output: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {"id": "resp_1", "model": "gpt-test", "status": status, "output": output or [], **extra}


def created() -> dict[str, Any]:
    return {"type": "response.created", "response": response("in_progress")}


def fc(
    item_id: str, call_id: str, name: str, arguments: str = "", status: str = "in_progress"
) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": status,
    }


def added(pos: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.added", "output_index": pos, "item": item}


def delta(pos: int, item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.delta",
        "output_index": pos,
        "item_id": item_id,
        "delta": text,
    }


def args_done(pos: int, item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "response.function_call_arguments.done",
        "output_index": pos,
        "item_id": item_id,
        "arguments": text,
    }


def item_done(pos: int, item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response.output_item.done", "output_index": pos, "item": item}


def completed(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "response.completed", "response": response("completed", list(items), **extra)}


def one_call(
    item_id: str, call_id: str, name: str, fragments: list[str], pos: int = 0
) -> list[dict[str, Any]]:
    """The full event sequence of one streamed function call."""
    text = "".join(fragments)
    return [
        added(pos, fc(item_id, call_id, name)),
        *[delta(pos, item_id, f) for f in fragments],
        args_done(pos, item_id, text),
        item_done(pos, fc(item_id, call_id, name, text, "completed")),
    ]


def per_event(body: bytes) -> tuple[list[list[str | None]], tooltap.Parsed]:
    parser = tooltap.core.StreamParser(DIALECT)
    emitted = []
    for block in body.split(b"\n\n"):
        if block:
            emitted.append([c.call_id for c in parser.feed(block + b"\n\n")])
    return emitted, parser.close()


def kinds(parsed: tooltap.Parsed) -> list[str]:
    return [p.kind for p in parsed.problems]


def test_single_call_is_emitted_at_arguments_done_with_usage() -> None:
    usage = {"input_tokens": 10, "output_tokens": 4, "input_tokens_details": {"cached_tokens": 8}}
    body = sse(
        created(),
        *one_call("fc_1", "call_1", "get_capital", ['{"country":', '"France"}']),
        completed(
            fc("fc_1", "call_1", "get_capital", '{"country":"France"}', "completed"), usage=usage
        ),
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], [], [], ["call_1"], [], []]
    (call,) = parsed.calls
    assert (call.name, call.call_id, call.args, call.index, call.provider, call.dialect) == (
        "get_capital",
        "call_1",
        {"country": "France"},
        0,
        "openai",
        DIALECT,
    )
    assert call.raw_arguments == '{"country":"France"}'
    assert parsed.usage == tooltap.core.Usage(10, 4, 8)
    assert (parsed.response_id, parsed.model, parsed.finish_reason) == (
        "resp_1",
        "gpt-test",
        "completed",
    )
    assert parsed.complete and parsed.problems == ()


def test_interleaved_parallel_calls_keep_output_order() -> None:
    a, b = fc("fc_a", "call_a", "f"), fc("fc_b", "call_b", "g")
    body = sse(
        created(),
        added(0, a),
        added(1, b),
        delta(1, "fc_b", '{"q": "東'),
        delta(0, "fc_a", '{"city": "Zü'),
        delta(1, "fc_b", '京"}'),
        args_done(1, "fc_b", '{"q": "東京"}'),  # the later item finishes first
        delta(0, "fc_a", 'rich"}'),
        args_done(0, "fc_a", '{"city": "Zürich"}'),
        completed(),
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], [], [], [], [], [], [], ["call_a", "call_b"], []]
    assert [(c.call_id, c.args, c.index) for c in parsed.calls] == [
        ("call_a", {"city": "Zürich"}, 0),
        ("call_b", {"q": "東京"}, 1),
    ]
    assert parsed.problems == ()


def test_failed_response_is_an_error_event_and_truncates_the_open_call() -> None:
    failed = {
        "type": "response.failed",
        "response": response(
            "failed", error={"code": "server_error", "message": "Something broke"}
        ),
    }
    body = sse(created(), added(0, fc("fc_1", "call_1", "f")), delta(0, "fc_1", '{"a": '), failed)
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert not parsed.complete and parsed.calls == ()
    assert parsed.finish_reason == "failed"
    assert [(p.kind, p.detail, p.call_id, p.received) for p in parsed.problems] == [
        ("error_event", "server_error: Something broke", None, None),
        (
            "truncated_json",
            "the response ended before the call's arguments did",
            "call_1",
            '{"a": ',
        ),
    ]


def test_incomplete_response_gives_the_reason_and_truncates() -> None:
    incomplete = {
        "type": "response.incomplete",
        "response": response("incomplete", incomplete_details={"reason": "max_output_tokens"}),
    }
    body = sse(
        created(),
        *one_call("fc_0", "call_0", "f", ['{"done": true}']),
        added(1, fc("fc_1", "call_1", "g")),
        delta(1, "fc_1", '{"text": "abc'),
        incomplete,
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.call_id for c in parsed.calls] == ["call_0"]
    assert parsed.complete and parsed.finish_reason == "max_output_tokens"
    assert [
        (p.kind, p.call_index, p.detail if p.call_index is None else p.received)
        for p in parsed.problems
    ] == [
        ("incomplete_response", None, "max_output_tokens"),
        ("truncated_json", 1, '{"text": "abc'),
    ]


def test_error_event_ends_the_stream() -> None:
    err = {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None}
    body = sse(created(), added(0, fc("fc_1", "call_1", "f")), err)
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert not parsed.complete  # ended by the error, not finished
    assert [
        (p.kind, p.detail if p.kind == "error_event" else p.received) for p in parsed.problems
    ] == [
        ("error_event", "rate_limit_exceeded: Slow down"),
        ("truncated_json", ""),
    ]


def test_invalid_json_and_not_an_object() -> None:
    body = sse(
        created(),
        *one_call("fc_0", "call_0", "f", ['{"a": 1,', "}"]),
        *one_call("fc_1", "call_1", "g", ["[1]"], pos=1),
        *one_call("fc_2", "call_2", "h", ['{"ok": 1}'], pos=2),
        completed(),
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [(c.call_id, c.index) for c in parsed.calls] == [("call_2", 0)]
    assert [(p.kind, p.call_index, p.call_id, p.name, p.received) for p in parsed.problems] == [
        ("invalid_json", 0, "call_0", "f", '{"a": 1,}'),
        ("unexpected_shape", 1, "call_1", "g", "[1]"),
    ]


def test_oversized_arguments() -> None:
    limits = tooltap.core.Limits(max_argument_bytes=16)
    body = sse(
        created(),
        *one_call("fc_0", "call_0", "f", ['{"t": "', "y" * 40, '"}']),
        *one_call("fc_1", "call_1", "g", ['{"a": 1}'], pos=1),
        completed(),
    )
    parser = tooltap.core.StreamParser(DIALECT, limits=limits)
    parser.feed(body)
    parsed = parser.close()
    assert [c.call_id for c in parsed.calls] == ["call_1"]
    (problem,) = parsed.problems
    assert (problem.kind, problem.call_id, problem.call_index) == (
        "oversized_arguments",
        "call_0",
        0,
    )


def test_done_arguments_win_over_deltas_and_a_mismatch_is_reported() -> None:
    body = sse(
        created(),
        added(0, fc("fc_1", "call_1", "f")),
        delta(0, "fc_1", '{"a": 9'),
        args_done(0, "fc_1", '{"a": 1}'),
        completed(),
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.args for c in parsed.calls] == [{"a": 1}]
    assert [(p.kind, p.call_id) for p in parsed.problems] == [("unexpected_shape", "call_1")]


def test_deltas_before_the_item_is_added_wait_for_its_name() -> None:
    item = fc("fc_1", "call_1", "late_name", '{"x": 1}', "completed")
    body = sse(
        delta(0, "fc_1", '{"x": 1}'),
        args_done(0, "fc_1", '{"x": 1}'),
        item_done(0, item),
        completed(),
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], ["call_1"], []]
    assert [(c.name, c.call_id) for c in parsed.calls] == [("late_name", "call_1")]


@pytest.mark.parametrize("compact", [False, True], ids=["spaced", "compact"])
def test_a_stream_resumed_inside_a_call_takes_its_done_arguments(compact: bool) -> None:
    """``starting_after`` in the middle of a call's deltas: the deltas that arrive are a
    part only (on the fast path too); the ``.done`` arguments are the call's, no problem."""
    whole = '{"city": "Paris", "unit": "c"}'
    tail = [delta(1, "fc_b", piece) for piece in ('s", "un', 'it": "c"}')]
    if compact:  # OpenAI's own key order, no spaces: the fast path's events
        head = "event: response.function_call_arguments.delta\ndata: "
        compacted = [
            {"type": d["type"], "sequence_number": 7 + n, "item_id": d["item_id"],
             "output_index": d["output_index"], "delta": d["delta"]}
            for n, d in enumerate(tail)
        ]  # fmt: skip
        deltas = b"".join(
            f"{head}{json.dumps(d, separators=(',', ':'))}\n\n".encode() for d in compacted
        )
    else:
        deltas = sse(*tail)
    item = fc("fc_b", "call_b", "weather", whole, "completed")
    body = deltas + sse(
        args_done(1, "fc_b", whole),
        item_done(1, item),
        completed(fc("fc_a", "call_a", "f", "{}", "completed"), item),
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], [], ["call_b"], ["call_a"]]  # call_a: done before the resume
    assert [c.args for c in parsed.calls] == [{"city": "Paris", "unit": "c"}, {}]
    assert parsed.complete and parsed.problems == ()


def test_a_resumed_calls_deltas_are_not_taken_from_decoded_items() -> None:
    """An SDK's decoded delta of a call the stream joined late is declined like the bytes'
    (a part only): the ``.done`` arguments stand alone, no mismatch reported."""
    whole = '{"city": "Paris"}'
    reducer = openai_responses.Reducer(tooltap.core.Limits())
    first = delta(1, "fc_b", "Par")
    reducer.take(first["type"], first)
    assert not reducer.args_delta("fc_b", 'is"}')
    for ev in (
        args_done(1, "fc_b", whole),
        item_done(1, fc("fc_b", "call_b", "w", whole, "completed")),
    ):
        reducer.take(ev["type"], ev)
    reducer.take("response.completed", completed(fc("fc_b", "call_b", "w", whole, "completed")))
    parsed = reducer.finish()
    assert [c.args for c in parsed.calls] == [{"city": "Paris"}]
    assert parsed.problems == ()


def test_terminal_output_fills_in_calls_the_stream_did_not_finish() -> None:
    final = fc("fc_1", "call_1", "f", '{"k": "v"}', "completed")
    body = sse(created(), added(0, fc("fc_1", "call_1", "f")), completed(final))
    emitted, parsed = per_event(body)
    assert emitted == [[], [], ["call_1"]]
    assert parsed.calls[0].args == {"k": "v"}


def test_custom_tool_call_and_other_items_are_not_calls() -> None:
    custom = {
        "type": "custom_tool_call",
        "id": "ctc_1",
        "call_id": "call_c",
        "name": "sql",
        "input": "SELECT 1",
    }
    message = {"type": "message", "id": "msg_1", "content": [{"type": "output_text", "text": "hi"}]}
    body = sse(
        created(),
        added(0, message),
        item_done(0, message),
        added(1, {**custom, "input": ""}),
        {
            "type": "response.custom_tool_call_input.delta",
            "output_index": 1,
            "item_id": "ctc_1",
            "delta": "SELECT 1",
        },
        item_done(1, custom),
        completed(message, custom),
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert [(p.kind, p.name, p.call_id, p.received) for p in parsed.problems] == [
        ("unexpected_shape", "sql", "call_c", "SELECT 1")
    ]


def test_data_only_stream_with_done_sentinel() -> None:
    body = (
        sse(created(), *one_call("fc_1", "call_1", "f", ["{}"]), completed(), named=False)
        + b"data: [DONE]\n\n"
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.call_id for c in parsed.calls] == ["call_1"]
    assert parsed.complete and parsed.problems == ()


def test_truncated_stream_with_an_empty_call() -> None:
    parsed = tooltap.core.parse_response(
        sse(created(), added(0, fc("fc_1", "call_1", "f"))), DIALECT
    )
    assert not parsed.complete
    assert [(p.kind, p.call_id, p.received) for p in parsed.problems] == [
        ("truncated_stream", None, None),
        ("truncated_json", "call_1", ""),
    ]


STREAM = sse(
    created(),
    *one_call("fc_a", "call_a", "f", ['{"city": "Zü', 'rich", "e": "🙂"}']),
    *one_call("fc_b", "call_b", "g", ['{"q": "東', '京"}'], pos=1),
    completed(),
)


def test_byte_by_byte_with_multibyte_arguments_matches_whole() -> None:
    whole = tooltap.core.parse_response(STREAM, DIALECT)
    parser = tooltap.core.StreamParser(DIALECT)
    emitted = []
    for i in range(len(STREAM)):
        emitted += parser.feed(STREAM[i : i + 1])
    assert parser.close() == whole
    assert emitted == list(whole.calls)
    assert [c.args for c in whole.calls] == [{"city": "Zürich", "e": "🙂"}, {"q": "東京"}]


@examples(60)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_cut_points_give_the_same_result(cuts: list[int]) -> None:
    whole = tooltap.core.parse_response(STREAM, DIALECT)
    parser = tooltap.core.StreamParser(DIALECT)
    emitted = []
    for a, b in itertools.pairwise([0, *sorted(cuts), len(STREAM)]):
        emitted += parser.feed(STREAM[a:b])
    assert parser.close() == whole
    assert emitted == list(whole.calls) and len(whole.calls) == 2


@pytest.mark.parametrize(
    ("data", "shaped"),
    [
        (b"not json", True),
        (b"[1, 2]", True),
        (b'{"type": "response.completed", "response": "nope"}', True),
        (b'{"type": "response.output_text.delta", "delta": 5}', False),  # not about calls: ignored
    ],
)
def test_malformed_events_are_problems(data: bytes, shaped: bool) -> None:
    reducer = openai_responses.Reducer(tooltap.core.Limits())
    assert reducer.event(SSEEvent("message", data)) == []
    parsed = reducer.finish()
    assert ("unexpected_shape" in kinds(parsed)) is shaped
    assert parsed.calls == ()


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "item",
                    "item_id",
                    "output_index",
                    "delta",
                    "arguments",
                    "name",
                    "call_id",
                    "id",
                    "response",
                    "output",
                    "status",
                    "error",
                    "usage",
                    "incomplete_details",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=12,
)
EVENT_TYPES = st.sampled_from(
    [
        "response.created",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "error",
    ]
)


@examples(150)
@given(st.lists(st.tuples(EVENT_TYPES, JSONISH), max_size=6))
def test_reducer_never_raises(events: list[tuple[str, Any]]) -> None:
    reducer = openai_responses.Reducer(tooltap.core.Limits())
    for kind, body in events:
        payload = {**body, "type": kind} if isinstance(body, dict) else body
        reducer.event(SSEEvent(kind, json.dumps(payload).encode()))
    parsed = reducer.finish()
    assert [c.index for c in parsed.calls] == list(range(len(parsed.calls)))


def test_body_with_calls_incomplete_item_and_error() -> None:
    body = response(
        "incomplete",
        [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            fc("fc_1", "call_1", "f", '{"a": 1}', "completed"),
            {
                "type": "function_call",
                "id": "fc_2",
                "call_id": "call_2",
                "name": "g",
                "arguments": {"b": 2},
            },
            fc("fc_3", "call_3", "h", '{"c": "x', "incomplete"),
            "junk",
        ],
        incomplete_details={"reason": "max_output_tokens"},
        usage={"input_tokens": 3, "output_tokens": 5},
    )
    parsed = openai_responses.parse_body(body, tooltap.core.Limits())
    assert [(c.call_id, c.args, c.index) for c in parsed.calls] == [
        ("call_1", {"a": 1}, 0),
        ("call_2", {"b": 2}, 1),
    ]
    assert [(p.kind, p.call_index) for p in parsed.problems] == [
        ("incomplete_response", None),
        ("truncated_json", 2),
        ("unexpected_shape", None),
    ]
    assert parsed.finish_reason == "max_output_tokens" and parsed.usage == tooltap.core.Usage(3, 5)


def test_body_error_and_bad_shapes() -> None:
    limits = tooltap.core.Limits()
    err = {"error": {"code": "model_not_found", "message": "no such model"}}
    assert [(p.kind, p.detail) for p in openai_responses.parse_body(err, limits).problems] == [
        ("error_event", "model_not_found: no such model")
    ]
    assert kinds(openai_responses.parse_body({"output": "x"}, limits)) == ["unexpected_shape"]
    assert kinds(openai_responses.parse_body("x", limits)) == ["unexpected_shape"]
