"""Anthropic Messages reducer: streams and whole bodies, including what the corpus lacks."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import anthropic.types as at
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tooltap
from tests.conftest import examples
from tooltap import Parsed
from tooltap._core.args import may_exceed
from tooltap._core.dialects import anthropic as reducer_module
from tooltap._core.sse import SSEEvent
from tooltap.core import Limits, StreamParser, parse_response

DIALECT = "anthropic.messages"


def ev(name: str, **data: Any) -> tuple[str, dict[str, Any]]:
    return name, {"type": name, **data}


def sse(*events: tuple[str, Any]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
        out.append(f"event: {name}\ndata: {payload}\n\n")
    return "".join(out).encode("utf-8")


def message_start(msg_id: str = "msg_1", **usage: int) -> tuple[str, dict[str, Any]]:
    usage = usage or {"input_tokens": 10, "output_tokens": 1}
    message = {"id": msg_id, "type": "message", "role": "assistant", "model": "claude-x"}
    return ev("message_start", message={**message, "content": [], "usage": usage})


def tool_start(index: int, call_id: str, name: str, kind: str = "tool_use", **extra: Any) -> Any:
    block = {"type": kind, "id": call_id, "name": name, "input": extra.pop("input", {})}
    return ev("content_block_start", index=index, content_block=block)


def delta(index: int, partial: str) -> tuple[str, dict[str, Any]]:
    return ev(
        "content_block_delta",
        index=index,
        delta={"type": "input_json_delta", "partial_json": partial},
    )


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return ev("content_block_stop", index=index)


def end(reason: str = "tool_use", output_tokens: int = 42) -> list[tuple[str, dict[str, Any]]]:
    return [
        ev(
            "message_delta",
            delta={"stop_reason": reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        ev("message_stop"),
    ]


def text_block(index: int, text: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ev("content_block_start", index=index, content_block={"type": "text", "text": ""}),
        ev("content_block_delta", index=index, delta={"type": "text_delta", "text": text}),
        stop(index),
    ]


def kinds(parsed: Parsed) -> list[str]:
    return [p.kind for p in parsed.problems]


TWO_CALLS = sse(
    message_start(cache_read_input_tokens=3, cache_creation_input_tokens=4, input_tokens=10),
    ev("ping"),
    *text_block(0, "Let me check."),
    tool_start(1, "toolu_A", "get_weather"),
    ev("ping"),
    delta(1, ""),
    delta(1, '{"city": "Par'),
    delta(1, 'is", "unit": "c"}'),
    stop(1),
    tool_start(2, "toolu_B", "get_time"),
    delta(2, ""),
    delta(2, '{"tz": "Europe/Paris"}'),
    ev("ping"),
    stop(2),
    *end(),
)


def test_two_tool_use_blocks_with_pings_and_empty_first_delta() -> None:
    parsed = parse_response(TWO_CALLS, DIALECT)
    assert [(c.name, c.call_id, c.args, c.index) for c in parsed.calls] == [
        ("get_weather", "toolu_A", {"city": "Paris", "unit": "c"}, 0),
        ("get_time", "toolu_B", {"tz": "Europe/Paris"}, 1),
    ]
    assert parsed.calls[0].raw_arguments == '{"city": "Paris", "unit": "c"}'
    assert {c.provider for c in parsed.calls} == {"anthropic"}
    assert {c.dialect for c in parsed.calls} == {DIALECT}
    assert parsed.problems == ()
    assert parsed.complete
    assert parsed.finish_reason == "tool_use"
    assert (parsed.response_id, parsed.model) == ("msg_1", "claude-x")
    assert parsed.usage == tooltap.core.Usage(10, 42, 3, 4)


def test_each_call_is_emitted_by_its_content_block_stop() -> None:
    parser = StreamParser(DIALECT)
    emitted_at = {}
    for block in TWO_CALLS.split(b"\n\n"):
        for call in parser.feed(block + b"\n\n"):
            emitted_at[call.call_id] = block
    assert b'"content_block_stop", "index": 1' in emitted_at["toolu_A"]
    assert b'"content_block_stop", "index": 2' in emitted_at["toolu_B"]
    assert [c.call_id for c in parser.close().calls] == ["toolu_A", "toolu_B"]


def test_overloaded_error_mid_stream_after_a_tool_use_started() -> None:
    body = sse(
        message_start(),
        tool_start(0, "toolu_A", "search"),
        delta(0, '{"q": "x"}'),
        stop(0),
        tool_start(1, "toolu_B", "fetch"),
        delta(1, ""),
        delta(1, '{"url": "https://exa'),
        (
            "error",
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ),
    )
    parsed = parse_response(body, DIALECT)
    assert [c.call_id for c in parsed.calls] == ["toolu_A"]
    errors = [p for p in parsed.problems if p.kind == "error_event"]
    assert [(p.detail, p.received) for p in errors] == [("overloaded_error", "Overloaded")]
    cut = [p for p in parsed.problems if p.kind == "truncated_json"]
    assert [(p.call_index, p.call_id, p.name, p.received) for p in cut] == [
        (1, "toolu_B", "fetch", '{"url": "https://exa')
    ]
    assert not parsed.complete  # an error ended it
    assert "truncated_stream" not in kinds(parsed)


def test_events_after_an_error_are_ignored() -> None:
    body = sse(
        message_start(),
        ("error", {"type": "error", "error": {"type": "api_error", "message": "boom"}}),
        tool_start(0, "toolu_late", "f"),
        stop(0),
    )
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert kinds(parsed) == ["error_event"]


MULTIBYTE = sse(
    message_start(),
    tool_start(0, "toolu_U", "note"),
    delta(0, '{"text": "café ☕ 日'),
    delta(0, '本 🎉", "emoji": "\\ud83d\\ude00"}'),
    stop(0),
    *end(),
)


def test_byte_by_byte_feeding_keeps_multibyte_utf8_args_intact() -> None:
    parser = StreamParser(DIALECT)
    emitted = []
    for i in range(len(MULTIBYTE)):
        emitted += parser.feed(MULTIBYTE[i : i + 1])
    parsed = parser.close()
    assert parsed == parse_response(MULTIBYTE, DIALECT)
    assert emitted == list(parsed.calls)
    assert parsed.calls[0].args == {"text": "café ☕ 日本 🎉", "emoji": "😀"}


@examples(60)
@given(st.lists(st.integers(0, len(TWO_CALLS)), max_size=12))
def test_any_chunking_gives_the_same_result(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(TWO_CALLS)]
    parser = StreamParser(DIALECT)
    emitted = []
    for a, b in pairwise(bounds):
        emitted += parser.feed(TWO_CALLS[a:b])
    parsed = parser.close()
    assert parsed == parse_response(TWO_CALLS, DIALECT)
    assert emitted == list(parsed.calls)


def test_complete_but_invalid_json_is_a_problem_not_a_call() -> None:
    body = sse(
        message_start(),
        tool_start(0, "toolu_bad", "broken"),
        delta(0, '{"a": 1,, "b": 2}'),
        stop(0),
        tool_start(1, "toolu_ok", "fine"),
        delta(1, '{"a": 1}'),
        stop(1),
        *end(),
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.call_id, c.index) for c in parsed.calls] == [("toolu_ok", 0)]
    (problem,) = parsed.problems
    assert (problem.kind, problem.call_index, problem.call_id, problem.name) == (
        "invalid_json",
        0,
        "toolu_bad",
        "broken",
    )
    assert problem.received == '{"a": 1,, "b": 2}'


def test_arguments_that_are_not_an_object_are_unexpected_shape() -> None:
    body = sse(message_start(), tool_start(0, "t1", "f"), delta(0, "[1, 2]"), stop(0), *end())
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert [(p.kind, p.call_id, p.received) for p in parsed.problems] == [
        ("unexpected_shape", "t1", "[1, 2]")
    ]


def test_oversized_arguments_with_small_limits() -> None:
    big = '{"blob": "' + "x" * 100 + '"}'
    body = sse(
        message_start(),
        tool_start(0, "t_big", "upload"),
        *[delta(0, big[i : i + 7]) for i in range(0, len(big), 7)],
        stop(0),
        tool_start(1, "t_small", "ok"),
        delta(1, '{"a": 1}'),
        stop(1),
        *end(),
    )
    limits = Limits(max_argument_bytes=40)
    parsed = parse_response(body, DIALECT, limits=limits)
    assert [c.call_id for c in parsed.calls] == ["t_small"]
    (problem,) = parsed.problems
    assert (problem.kind, problem.call_index, problem.call_id) == (
        "oversized_arguments",
        0,
        "t_big",
    )
    assert problem.received is not None and big.startswith(problem.received)
    assert len(problem.received) <= 256


def test_oversized_input_in_a_whole_body() -> None:
    body = {
        "type": "message",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"k": "v" * 50}}],
    }
    parsed = reducer_module.parse_body(body, Limits(max_argument_bytes=20))
    assert parsed.calls == ()
    assert kinds(parsed) == ["oversized_arguments"]


@pytest.mark.parametrize("limit", [63, 64])
def test_whole_body_bytes_measure_inputs_that_grow_when_dumped(limit: int) -> None:
    """``9e15`` dumps as 18 characters: a small body can still hold an oversized input."""
    value = {"n": [9e15] * 3}
    dumped = len(json.dumps(value, separators=(",", ":")))  # 64
    body = {"type": "message", "content": [{"type": "tool_use", "id": "t", "name": "f"}]}
    encoded = json.dumps(body)[:-3] + ', "input": {"n": [9e15, 9e15, 9e15]}}]}'
    parsed = parse_response(encoded.encode(), DIALECT, limits=Limits(max_argument_bytes=limit))
    assert kinds(parsed) == (["oversized_arguments"] if dumped > limit else [])
    assert [c.args for c in parsed.calls] == ([] if dumped > limit else [value])


@pytest.mark.parametrize("text", ['{"n":9e15}', '{"n":[9e15,9e15,9e15]}', '{"n":-1E15}'])
def test_may_exceed_bounds_the_growth_of_dumped_numbers(text: str) -> None:
    dumped = len(json.dumps(json.loads(text), separators=(",", ":")))
    assert dumped > len(text)
    assert may_exceed(len(text), Limits(max_argument_bytes=dumped - 1))


def test_stream_without_message_stop_is_truncated() -> None:
    body = sse(
        message_start(),
        tool_start(0, "t_done", "a"),
        delta(0, "{}"),
        stop(0),
        tool_start(1, "t_cut", "b"),
        delta(1, '{"x": [1, 2'),
    )
    parsed = parse_response(body, DIALECT)
    assert not parsed.complete
    assert [c.call_id for c in parsed.calls] == ["t_done"]
    assert [(p.kind, p.call_index, p.call_id, p.name, p.received) for p in parsed.problems] == [
        ("truncated_json", 1, "t_cut", "b", '{"x": [1, 2'),
        ("truncated_stream", None, None, None, None),
    ]


def test_cut_inside_an_event_is_only_the_truncation() -> None:
    whole = sse(message_start(), tool_start(0, "t", "f"), delta(0, '{"a": 1}'), stop(0))
    parsed = parse_response(whole[:-25], DIALECT)  # cut inside the content_block_stop line
    assert kinds(parsed) == ["truncated_json", "truncated_stream"]


def test_unterminated_last_event_still_counts() -> None:
    body = sse(message_start(), *end())
    parsed = parse_response(body.rstrip(b"\n"), DIALECT)
    assert parsed.complete
    assert parsed.problems == ()


def test_start_input_without_deltas_is_used() -> None:
    body = sse(
        message_start(),
        tool_start(0, "t1", "lookup", input={"key": "height"}),
        stop(0),
        tool_start(1, "t2", "lookup", input={"ignored": True}),
        delta(1, '{"key": "weight"}'),
        stop(1),
        *end(),
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.args, c.raw_arguments) for c in parsed.calls] == [
        ({"key": "height"}, None),
        ({"key": "weight"}, '{"key": "weight"}'),
    ]


def test_provider_executed_blocks_are_server_calls() -> None:
    body = sse(
        message_start(),
        tool_start(0, "srvtoolu_1", "web_search", kind="server_tool_use"),
        delta(0, '{"query": "news"}'),
        stop(0),
        tool_start(1, "mcptoolu_1", "ask", kind="mcp_tool_use", server_name="wiki"),
        delta(1, '{"q": "?"}'),
        stop(1),
        tool_start(2, "toolu_1", "client_tool"),
        delta(2, "{}"),
        stop(2),
        tool_start(3, "x_1", "future", kind="future_tool_use", input={"a": 1}),
        stop(3),
        *end(),
    )
    parsed = parse_response(body, DIALECT)
    assert [(c.name, c.index) for c in parsed.calls] == [("client_tool", 0)]
    assert [(s.name, s.call_id, s.args, s.block_type, s.index) for s in parsed.server_calls] == [
        ("web_search", "srvtoolu_1", {"query": "news"}, "server_tool_use", 0),
        ("ask", "mcptoolu_1", {"q": "?"}, "mcp_tool_use", 1),
        ("future", "x_1", {"a": 1}, "future_tool_use", 2),
    ]


def test_a_broken_server_block_is_a_problem_without_call_index() -> None:
    body = sse(
        message_start(),
        tool_start(0, "srv", "web_search", kind="server_tool_use"),
        delta(0, '{"query": '),
    )
    parsed = parse_response(body, DIALECT)
    cut = parsed.problems[0]
    assert (cut.kind, cut.call_index, cut.call_id) == ("truncated_json", None, "srv")
    assert cut.detail.startswith("server_tool_use: ")


def test_max_tokens_inside_a_tool_use() -> None:
    body = sse(
        message_start(),
        tool_start(0, "t", "write_file"),
        delta(0, '{"path": "a.txt", "content": "lorem'),
        stop(0),
        *end(reason="max_tokens"),
    )
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert parsed.complete
    assert parsed.finish_reason == "max_tokens"
    assert kinds(parsed) == ["truncated_json", "incomplete_response"]


def test_message_delta_usage_overrides_message_start() -> None:
    body = sse(
        message_start(input_tokens=5, output_tokens=1),
        ev(
            "message_delta",
            delta={"stop_reason": "end_turn"},
            usage={"input_tokens": 7, "output_tokens": 30, "cache_read_input_tokens": None},
        ),
        ev("message_stop"),
    )
    assert parse_response(body, DIALECT).usage == tooltap.core.Usage(7, 30, None, None)


def test_malformed_events_are_unexpected_shape_and_never_raise() -> None:
    body = sse(
        message_start(),
        ("content_block_start", "{not json"),
        ("message_delta", "[1, 2]"),
        ev("content_block_start", index=[0], content_block={"type": "tool_use", "id": "t"}),
        delta(9, '{"orphan": 1}'),
        ev("content_block_stop", index={"a": 1}),
        *end(),
    )
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert kinds(parsed) == ["unexpected_shape"] * 4
    assert parsed.complete


BODY = {
    "id": "msg_body",
    "type": "message",
    "role": "assistant",
    "model": "claude-y",
    "content": [
        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
        {"type": "text", "text": "Calling tools."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "x"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 12, "output_tokens": 34, "cache_read_input_tokens": 5},
}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside nested dicts (the places a mutation can land)."""
    if not isinstance(value, dict):
        return []
    out = []
    for key, child in value.items():
        out.append((*prefix, key))
        out += _paths(child, (*prefix, key))
    return out


def _mutated(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(data))
    node = copy
    for key in path[:-1]:
        node = node.get(key)
        if not isinstance(node, dict):  # an earlier mutation replaced or removed this parent
            return copy
    node[path[-1]] = value
    return copy


TEMPLATES = [
    (name, json.loads(data))
    for name, data in (
        (block.split(b"\n")[0][7:].decode(), block.split(b"\n")[1][6:])
        for block in TWO_CALLS.strip().split(b"\n\n")
    )
] + [("error", {"type": "error", "error": {"type": "overloaded_error", "message": "x"}})]
MUTATIONS = [(i, path) for i, (_, data) in enumerate(TEMPLATES) for path in _paths(data)]


@examples(80)
@given(st.lists(st.tuples(st.sampled_from(MUTATIONS), JSON), max_size=3))
def test_reducer_is_total_on_mutated_events(mutations: list[tuple[Any, Any]]) -> None:
    events = [(name, dict(data)) for name, data in TEMPLATES]
    for (i, path), value in mutations:
        events[i] = (events[i][0], _mutated(events[i][1], path, value))
    reducer = reducer_module.Reducer(Limits())
    for name, data in events:
        reducer.event(SSEEvent(name, json.dumps(data).encode()))
    parsed = reducer.finish()
    assert [c.index for c in parsed.calls] == list(range(len(parsed.calls)))
    assert len(parsed.calls) <= 2


@examples(80)
@given(st.sampled_from(_paths(BODY)), JSON)
def test_parse_body_is_total_on_mutated_bodies(path: tuple[Any, ...], value: Any) -> None:
    parsed = reducer_module.parse_body(_mutated(BODY, path, value), Limits())
    assert [c.index for c in parsed.calls] == list(range(len(parsed.calls)))
    assert len(parsed.calls) + len(parsed.server_calls) <= 3


@examples(40)
@given(JSON)
def test_parse_body_is_total_on_any_json(body: Any) -> None:
    assert isinstance(reducer_module.parse_body(body, Limits()), Parsed)


def test_deeply_nested_arguments_do_not_raise() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    body = sse(message_start(), tool_start(0, "t", "f"), delta(0, deep), stop(0), *end())
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == ()
    assert kinds(parsed) == ["invalid_json"]  # deeper than any json.loads takes
    deep = "[" * 990 + "]" * 990  # what json.loads takes at the top of a stack
    body = sse(message_start(), tool_start(0, "t", "f"), delta(0, '{"a":' + deep + "}"), stop(0),
               *end())  # fmt: skip
    (call,) = parse_response(body, DIALECT).calls
    assert list(call.args) == ["a"]


def test_whole_body() -> None:
    parsed = parse_response(json.dumps(BODY).encode(), DIALECT)
    assert [(c.name, c.call_id, c.args, c.index) for c in parsed.calls] == [
        ("get_weather", "toolu_1", {"city": "Oslo"}, 0),
        ("get_time", "toolu_2", {}, 1),
    ]
    assert [(s.name, s.block_type) for s in parsed.server_calls] == [
        ("web_search", "server_tool_use")
    ]
    assert (parsed.finish_reason, parsed.response_id, parsed.model) == (
        "tool_use",
        "msg_body",
        "claude-y",
    )
    assert parsed.usage == tooltap.core.Usage(12, 34, 5, None)
    assert parsed.complete and parsed.problems == ()


def test_sdk_message_object_parses_like_the_wire_body() -> None:
    message = at.Message.model_validate(BODY)
    from_sdk = parse_response(message, DIALECT)
    assert from_sdk == parse_response(BODY, DIALECT)
    assert len(from_sdk.calls) == 2


def test_error_body_is_an_error_event() -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    parsed = parse_response(body, DIALECT)
    assert [(p.kind, p.detail) for p in parsed.problems] == [("error_event", "rate_limit_error")]
    assert parsed.calls == ()


def test_bad_blocks_in_a_body_are_problems() -> None:
    body = {
        "type": "message",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "f", "input": [1]},
            {"type": "tool_use", "id": "t2", "input": {}},
            "not a block",
            {"type": "tool_use", "id": "t3", "name": "g", "input": '{"as": "string"}'},
        ],
    }
    parsed = parse_response(body, DIALECT)
    assert [(c.call_id, c.args, c.index) for c in parsed.calls] == [("t3", {"as": "string"}, 0)]
    assert [(p.kind, p.call_index, p.call_id) for p in parsed.problems] == [
        ("unexpected_shape", 0, "t1"),
        ("unexpected_shape", 1, "t2"),
    ]
