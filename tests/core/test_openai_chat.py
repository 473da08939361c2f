"""OpenAI Chat Completions reducer and body parser: cases the recorded corpus lacks."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tooltap
from tests.conftest import examples
from tooltap._core.dialects import openai_chat
from tooltap._core.sse import SSEEvent

DIALECT = "openai.chat"


def chunk(
    *tool_calls: dict[str, Any], finish: str | None = None, choice: int = 0, **extra: Any
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` with a delta carrying ``tool_calls``."""
    delta: dict[str, Any] = {"tool_calls": list(tool_calls)} if tool_calls else {}
    delta.update(extra.pop("delta", {}))
    body = {
        "id": "chatcmpl-1",
        "model": "gpt-test",
        "object": "chat.completion.chunk",
        "choices": [{"index": choice, "delta": delta, "finish_reason": finish}],
    }
    body.update(extra)
    return body


def tc(index: int | None, args: str | None = None, **fields: Any) -> dict[str, Any]:
    """One tool-call delta; ``id``/``name`` only when given, like the wire."""
    out: dict[str, Any] = {} if index is None else {"index": index}
    if "id" in fields:
        out["id"] = fields["id"]
        out["type"] = "function"
    fn: dict[str, Any] = {}
    if "name" in fields:
        fn["name"] = fields["name"]
    if args is not None or "null_args" in fields:
        fn["arguments"] = args
    out["function"] = fn
    return out


def sse(*events: Any) -> bytes:
    """SSE bytes: dicts become JSON ``data:`` events; ``("error", obj)`` adds ``event: error``."""
    out = []
    for ev in events:
        if isinstance(ev, tuple):
            out.append(f"event: {ev[0]}\ndata: {json.dumps(ev[1])}\n\n")
        elif isinstance(ev, str):
            out.append(f"data: {ev}\n\n")
        else:
            out.append(f"data: {json.dumps(ev)}\n\n")
    return "".join(out).encode()


def per_event(
    body: bytes, limits: tooltap.core.Limits | None = None
) -> tuple[list[list[str]], tooltap.Parsed]:
    """Feed one SSE event at a time; the call ids emitted by each feed, and the result."""
    parser = tooltap.core.StreamParser(DIALECT, limits=limits)
    emitted = []
    for block in body.split(b"\n\n"):
        if block:
            emitted.append([str(c.call_id or c.name) for c in parser.feed(block + b"\n\n")])
    return emitted, parser.close()


def kinds(parsed: tooltap.Parsed) -> list[str]:
    return [p.kind for p in parsed.problems]


def test_calls_are_emitted_as_soon_as_the_next_index_starts() -> None:
    body = sse(
        chunk(tc(0, "", id="call_a", name="f")),
        chunk(tc(0, '{"x": 1}')),
        chunk(tc(1, "", id="call_b", name="g")),
        chunk(tc(1, '{"y": 2}')),
        chunk(finish="tool_calls"),
        chunk(
            choices=[],
            usage={
                "prompt_tokens": 7,
                "completion_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 5},
            },
        ),
        "[DONE]",
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], ["call_a"], [], ["call_b"], [], []]
    assert [(c.name, c.call_id, c.args, c.index) for c in parsed.calls] == [
        ("f", "call_a", {"x": 1}, 0),
        ("g", "call_b", {"y": 2}, 1),
    ]
    assert parsed.calls[0].raw_arguments == '{"x": 1}'
    assert parsed.finish_reason == "tool_calls"
    assert parsed.usage == tooltap.core.Usage(7, 3, 5)
    assert parsed.response_id == "chatcmpl-1" and parsed.model == "gpt-test"
    assert parsed.complete and parsed.problems == ()


def test_arguments_null_then_fragments_and_missing_arguments() -> None:
    body = sse(
        chunk(tc(0, None, id="call_a", name="f", null_args=True)),
        chunk(tc(0, '{"ci')),
        chunk(tc(0, 'ty": "Zürich"}')),
        chunk(tc(1, id="call_b", name="g")),  # no "arguments" key at all, ever
        chunk(finish="tool_calls"),
        "[DONE]",
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [(c.call_id, c.args) for c in parsed.calls] == [
        ("call_a", {"city": "Zürich"}),
        ("call_b", {}),
    ]
    assert parsed.calls[1].raw_arguments == ""
    assert parsed.problems == ()


def test_whole_call_in_one_delta_is_emitted_at_finish_reason() -> None:
    whole = tc(0, '{"q": "東京"}', id="fc_1", name="search")
    emitted, parsed = per_event(sse(chunk(whole), chunk(finish="tool_calls")))
    assert emitted == [[], ["fc_1"]]
    assert parsed.calls[0].args == {"q": "東京"}
    assert parsed.complete  # a finish_reason without [DONE] still ends the stream
    assert parsed.problems == ()


def test_legacy_function_call_stream_is_one_call_without_id() -> None:
    body = sse(
        chunk(
            delta={"role": "assistant", "function_call": {"name": "get_weather", "arguments": ""}}
        ),
        chunk(delta={"function_call": {"arguments": '{"location"'}}),
        chunk(delta={"function_call": {"arguments": ': "Boston"}'}}),
        chunk(finish="function_call"),
        "[DONE]",
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], [], ["get_weather"], []]
    assert [(c.name, c.call_id, c.args) for c in parsed.calls] == [
        ("get_weather", None, {"location": "Boston"})
    ]
    assert parsed.finish_reason == "function_call"


def test_error_chunk_with_choices_is_recorded_and_the_stream_goes_on() -> None:
    body = sse(
        chunk(tc(0, '{"a": 1}', id="call_a", name="f")),
        chunk(error={"code": 502, "message": "Upstream hiccup"}),
        chunk(tc(1, '{"b": 2}', id="call_b", name="g")),
        chunk(finish="tool_calls"),
        "[DONE]",
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.call_id for c in parsed.calls] == ["call_a", "call_b"]
    assert [(p.kind, p.detail) for p in parsed.problems] == [
        ("error_event", "502: Upstream hiccup")
    ]
    assert parsed.complete


def test_error_event_ends_the_stream_and_truncates_the_open_call() -> None:
    error = {
        "error": {
            "message": "Tool call validation failed",
            "type": "invalid_request_error",
            "code": "tool_use_failed",
        }
    }
    body = sse(
        chunk(tc(0, '{"a": 1}', id="call_a", name="f")),
        chunk(tc(1, '{"b": ', id="call_b", name="g")),
        ("error", error),
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], ["call_a"], []]
    assert not parsed.complete  # an error is not a complete response
    assert [(p.kind, p.call_index, p.call_id, p.name, p.received) for p in parsed.problems] == [
        ("error_event", None, None, None, None),
        ("truncated_json", 1, "call_b", "g", '{"b": '),
    ]
    assert parsed.problems[0].detail == "tool_use_failed: Tool call validation failed"


def test_invalid_json_arguments_are_a_problem_not_a_call() -> None:
    body = sse(
        chunk(tc(0, '{"a": 1,}', id="call_a", name="f")),
        chunk(tc(1, '{"b": 2}', id="call_b", name="g")),
        chunk(finish="tool_calls"),
        "[DONE]",
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [(c.call_id, c.index) for c in parsed.calls] == [("call_b", 0)]
    (problem,) = parsed.problems
    assert (problem.kind, problem.call_index, problem.call_id, problem.name, problem.received) == (
        "invalid_json",
        0,
        "call_a",
        "f",
        '{"a": 1,}',
    )


def test_arguments_that_are_not_an_object_are_unexpected_shape() -> None:
    body = sse(chunk(tc(0, "[1, 2]", id="call_a", name="f")), chunk(finish="tool_calls"))
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert [(p.kind, p.received) for p in parsed.problems] == [("unexpected_shape", "[1, 2]")]


def test_oversized_arguments_stop_being_kept() -> None:
    limits = tooltap.core.Limits(max_argument_bytes=20)
    body = sse(
        chunk(tc(0, '{"text": "', id="call_a", name="f")),
        *[chunk(tc(0, "x" * 8)) for _ in range(50)],
        chunk(tc(0, '"}')),
        chunk(tc(1, '{"ok": true}', id="call_b", name="g")),
        chunk(finish="tool_calls"),
    )
    reducer = openai_chat.Reducer(limits)
    blocks = [b.removeprefix(b"data: ") for b in body.split(b"\n\n") if b]
    for data in blocks[:52]:
        reducer.event(SSEEvent("message", data))
    open_call = reducer._choices[0].open
    assert open_call is not None and sum(map(len, open_call.parts)) <= 20  # memory stays capped
    for data in blocks[52:]:
        reducer.event(SSEEvent("message", data))
    parsed = reducer.finish()
    assert [c.call_id for c in parsed.calls] == ["call_b"]
    (problem,) = parsed.problems
    assert (problem.kind, problem.call_id, problem.call_index) == (
        "oversized_arguments",
        "call_a",
        0,
    )
    assert problem.received is not None and len(problem.received) <= 20


def test_truncated_stream_turns_open_calls_into_truncated_json_even_when_empty() -> None:
    body = sse(
        chunk(tc(0, '{"a": 1}', id="call_a", name="f")), chunk(tc(1, "", id="call_b", name="g"))
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.call_id for c in parsed.calls] == ["call_a"]
    assert not parsed.complete
    assert [(p.kind, p.call_id, p.received) for p in parsed.problems] == [
        ("truncated_stream", None, None),
        ("truncated_json", "call_b", ""),
    ]


def test_calls_of_several_choices_come_in_choice_order() -> None:
    body = sse(
        chunk(tc(0, '{"n": 1}', id="c1", name="f"), choice=1),
        chunk(tc(0, '{"n": 0}', id="c0", name="f"), choice=0),
        chunk(choice=1, finish="tool_calls"),
        chunk(choice=0, finish="tool_calls"),
        "[DONE]",
    )
    emitted, parsed = per_event(body)
    assert emitted == [[], [], [], ["c0", "c1"], []]  # choice 1 waits for choice 0
    assert [(c.call_id, c.index) for c in parsed.calls] == [("c0", 0), ("c1", 1)]


def test_index_less_deltas_follow_the_last_call_gemini_style() -> None:
    body = sse(
        chunk(tc(None, '{"location":', id="function-call-1", name="get_weather")),
        chunk(tc(None, '"Sydney"}')),
        chunk(tc(None, '{"location":"Perth"}', id="function-call-2", name="get_weather")),
        chunk(finish="stop"),
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [(c.call_id, c.args) for c in parsed.calls] == [
        ("function-call-1", {"location": "Sydney"}),
        ("function-call-2", {"location": "Perth"}),
    ]
    assert parsed.finish_reason == "stop"


def test_surrogate_pair_split_across_fragments_is_rejoined() -> None:
    # the argument text {"e": "😀"} cut between the two halves of its UTF-16 escape
    body = (
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c",'
        b'"type":"function","function":{"name":"f","arguments":"{\\"e\\": \\"\\ud83d"}}]}}]}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
        b'"function":{"arguments":"\\ude00\\"}"}}]},"finish_reason":"tool_calls"}]}\n\n'
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert parsed.calls[0].args == {"e": "😀"}


def test_custom_tool_call_is_kept_out_of_calls() -> None:
    custom = {
        "index": 0,
        "id": "call_c",
        "type": "custom",
        "custom": {"name": "run_sql", "input": "SELECT 1"},
    }
    parsed = tooltap.core.parse_response(sse(chunk(custom), chunk(finish="tool_calls")), DIALECT)
    assert parsed.calls == ()
    (problem,) = parsed.problems
    assert (problem.kind, problem.name, problem.call_id, problem.received) == (
        "unexpected_shape",
        "run_sql",
        "call_c",
        "SELECT 1",
    )


def test_fragments_after_a_call_finished_are_reported() -> None:
    body = sse(
        chunk(tc(0, '{"a": 1}', id="call_a", name="f")),
        chunk(tc(1, '{"b": 2}', id="call_b", name="g")),
        chunk(tc(0, "junk")),
        chunk(finish="tool_calls"),
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.args for c in parsed.calls] == [{"a": 1}, {"b": 2}]
    assert kinds(parsed) == ["unexpected_shape"]


def test_byte_by_byte_with_multibyte_arguments_matches_whole() -> None:
    body = sse(
        chunk(tc(0, "", id="call_a", name="f")),
        chunk(tc(0, '{"city": "Zür')),
        chunk(tc(0, 'ich", "to": "東京", "mood": "🙂"}')),
        chunk(finish="tool_calls"),
        "[DONE]",
    )
    whole = tooltap.core.parse_response(body, DIALECT)
    parser = tooltap.core.StreamParser(DIALECT)
    emitted = []
    for i in range(len(body)):
        emitted += parser.feed(body[i : i + 1])
    assert parser.close() == whole
    assert emitted == list(whole.calls)
    assert whole.calls[0].args == {"city": "Zürich", "to": "東京", "mood": "🙂"}


PARALLEL = sse(
    chunk(tc(0, "", id="call_a", name="f")),
    chunk(tc(0, '{"city": "Zü')),
    chunk(tc(0, 'rich"}')),
    chunk(tc(1, '{"q": "東', id="call_b", name="g")),
    chunk(tc(1, '京"}')),
    chunk(finish="tool_calls"),
    "[DONE]",
)


@examples(60)
@given(st.lists(st.integers(min_value=0, max_value=len(PARALLEL)), max_size=12))
def test_any_cut_points_give_the_same_result(cuts: list[int]) -> None:
    whole = tooltap.core.parse_response(PARALLEL, DIALECT)
    bounds = [0, *sorted(cuts), len(PARALLEL)]
    parser = tooltap.core.StreamParser(DIALECT)
    emitted = []
    for a, b in itertools.pairwise(bounds):
        emitted += parser.feed(PARALLEL[a:b])
    assert parser.close() == whole
    assert emitted == list(whole.calls) and len(whole.calls) == 2


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"not json", "unexpected_shape"),
        (b"42", "unexpected_shape"),
        (b'{"choices": {"index": 0}}', "unexpected_shape"),
        (b'{"choices": [{"index": "0", "delta": {}}]}', "unexpected_shape"),
        (b'{"choices": [{"index": 0, "delta": {"tool_calls": {"index": 0}}}]}', "unexpected_shape"),
        (
            b'{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": "0"}]}}]}',
            "unexpected_shape",
        ),
        (b'{"choices": [{"index": 0, "delta": {"tool_calls": [7]}}]}', "unexpected_shape"),
        (b'{"choices": [{"index": 0, "delta": "text"}]}', "unexpected_shape"),
        (b'{"choices": [{"index": 0, "delta": {"function_call": "f"}}]}', "unexpected_shape"),
    ],
)
def test_malformed_chunks_are_problems(data: bytes, kind: str) -> None:
    reducer = openai_chat.Reducer(tooltap.core.Limits())
    assert reducer.event(SSEEvent("message", data)) == []
    parsed = reducer.finish()
    assert kind in kinds(parsed) and parsed.calls == ()


def test_arguments_of_the_wrong_type_are_unexpected_shape() -> None:
    body = sse(
        chunk({"index": 0, "id": "c", "function": {"name": "f", "arguments": 5}}),
        chunk(finish="stop"),
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert [(p.kind, p.call_id) for p in parsed.problems] == [("unexpected_shape", "c")]


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "index",
                    "delta",
                    "tool_calls",
                    "function",
                    "id",
                    "name",
                    "arguments",
                    "finish_reason",
                    "error",
                    "usage",
                    "function_call",
                    "type",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@examples(150)
@given(st.lists(JSONISH, max_size=6), st.booleans())
def test_reducer_never_raises(payloads: list[Any], cut: bool) -> None:
    reducer = openai_chat.Reducer(tooltap.core.Limits())
    for p in payloads:
        reducer.event(SSEEvent("message", json.dumps(p).encode(), None, not cut))
    parsed = reducer.finish()
    assert [c.index for c in parsed.calls] == list(range(len(parsed.calls)))


def test_body_with_tool_calls_legacy_and_custom() -> None:
    body = {
        "id": "chatcmpl-2",
        "model": "gpt-test",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"x": 1}'},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "g", "arguments": {"y": 2}},
                        },
                        {"id": "c", "type": "function", "function": {"name": "h", "arguments": 3}},
                        {"id": "d", "type": "custom", "custom": {"name": "sql", "input": "SELECT"}},
                        {
                            "id": "e",
                            "type": "function",
                            "function": {"name": "k", "arguments": '{"z":'},
                        },
                    ]
                },
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2},
    }
    parsed = openai_chat.parse_body(body, tooltap.core.Limits())
    assert [(c.call_id, c.args, c.index, c.raw_arguments) for c in parsed.calls] == [
        ("a", {"x": 1}, 0, '{"x": 1}'),
        ("b", {"y": 2}, 1, None),
    ]
    assert [(p.kind, p.call_index, p.call_id) for p in parsed.problems] == [
        ("unexpected_shape", 2, "c"),
        ("unexpected_shape", 3, "d"),
        ("truncated_json", 4, "e"),
    ]
    assert parsed.usage == tooltap.core.Usage(1, 2) and parsed.finish_reason == "tool_calls"


def test_body_error_length_and_bad_shapes() -> None:
    limits = tooltap.core.Limits()
    assert kinds(
        openai_chat.parse_body({"error": {"code": "content_filter", "message": "no"}}, limits)
    ) == ["error_event"]
    cut = {"choices": [{"index": 0, "finish_reason": "length", "message": {"content": "..."}}]}
    assert kinds(openai_chat.parse_body(cut, limits)) == ["incomplete_response"]
    assert kinds(openai_chat.parse_body([1, 2], limits)) == ["unexpected_shape"]
    assert kinds(
        openai_chat.parse_body({"choices": [{"message": {"tool_calls": "x"}}]}, limits)
    ) == ["truncated_stream", "unexpected_shape"]


def test_body_without_finish_reason_is_an_unfinished_snapshot() -> None:
    """An SDK's snapshot of a stream cut early has no finish_reason: not complete."""
    snapshot = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"k": 1}'},
                        },
                    ]
                },
            }
        ],
    }
    parsed = openai_chat.parse_body(snapshot, tooltap.core.Limits())
    assert not parsed.complete
    assert kinds(parsed) == ["truncated_stream"]
    done = {"choices": [{**snapshot["choices"][0], "finish_reason": "tool_calls"}]}
    assert openai_chat.parse_body(done, tooltap.core.Limits()).complete


def test_error_detail_never_carries_a_key() -> None:
    body = {
        "error": {
            "code": "invalid_api_key",
            "message": "Incorrect API key provided: sk-proj-abc***wxyz.",
        }
    }
    (problem,) = openai_chat.parse_body(body, tooltap.core.Limits()).problems
    assert "sk-proj" not in problem.detail and problem.detail.startswith("invalid_api_key: ")


def test_tool_data_after_finish_reason_is_reported_once_and_ignored() -> None:
    body = sse(
        chunk(tc(0, '{"a": 1}', id="call_a", name="f"), finish="tool_calls"),
        chunk(tc(1, '{"b": 2}', id="call_b", name="g")),
        chunk(tc(1, '{"c": 3}')),
        "[DONE]",
    )
    parsed = tooltap.core.parse_response(body, DIALECT)
    assert [c.call_id for c in parsed.calls] == ["call_a"]
    assert kinds(parsed) == ["unexpected_shape"]
