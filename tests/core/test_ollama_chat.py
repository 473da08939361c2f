"""Ollama chat: NDJSON streams in any split, whole bodies, id-less results by name and order."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tooltap._core.errors import classify_error
from tooltap.core import Limits, StreamParser, parse_request, parse_response

DIALECT = "ollama.chat"


def line(message: dict[str, Any], **rest: Any) -> bytes:
    return (json.dumps({"model": "llama3.2", "message": message, **rest}) + "\n").encode()


def stream(calls: list[tuple[str, Any]], *, done: bool = True) -> bytes:
    out = [line({"role": "assistant", "content": "Let me "}, done=False)]
    for name, args in calls:
        call = {"function": {"name": name, "arguments": args}}
        out.append(line({"role": "assistant", "content": "", "tool_calls": [call]}, done=False))
    if done:
        end = {"done_reason": "stop", "prompt_eval_count": 9, "eval_count": 4}
        out.append(line({"role": "assistant", "content": ""}, done=True, **end))
    return b"".join(out)


_ARGS = st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=9)))


@examples(60)
@given(st.lists(_ARGS, min_size=1, max_size=4), st.lists(st.integers(min_value=0), max_size=20))
def test_any_split_gives_the_calls_in_order(args: list[dict[str, Any]], cuts: list[int]) -> None:
    body = stream([(f"tool_{i}", a) for i, a in enumerate(args)])
    parser = StreamParser(DIALECT, framing="ndjson")
    emitted = []
    last = 0
    for cut in [*sorted({c % (len(body) + 1) for c in cuts}), len(body)]:
        emitted += parser.feed(body[last:cut])
        last = cut
    parsed = parser.close()
    assert [(c.name, c.args, c.call_id) for c in parsed.calls] == [
        (f"tool_{i}", a, None) for i, a in enumerate(args)
    ]
    assert tuple(emitted) == parsed.calls
    assert parsed.complete and parsed.problems == () and parsed.finish_reason == "stop"
    assert parsed.usage is not None and parsed.usage.output_tokens == 4
    assert parse_response(body, DIALECT) == parsed  # bytes: one object a line is recognised


def test_a_stream_cut_inside_a_call_line_is_truncated_json() -> None:
    body = stream([("a", {"x": 1}), ("b", {"y": 2})])
    cut = body.index(b'"b"') + 2
    parser = StreamParser(DIALECT, framing="ndjson")
    parser.feed(body[:cut])
    parsed = parser.close()
    assert [c.name for c in parsed.calls] == ["a"]
    assert [(p.kind, p.call_index) for p in parsed.problems] == [
        ("truncated_json", 1),
        ("truncated_stream", None),
    ]
    assert not parsed.complete


def test_an_error_line_and_bad_arguments() -> None:
    body = stream([("a", "{not json")], done=False) + b'{"error": "model crashed"}\n'
    parsed = parse_response(body, DIALECT)
    assert parsed.calls == () and not parsed.complete
    assert [p.kind for p in parsed.problems] == ["invalid_json", "error_event"]
    big = parse_response(
        stream([("a", {"k": "v" * 50})]), DIALECT, limits=Limits(max_argument_bytes=10)
    )
    assert [p.kind for p in big.problems] == ["oversized_arguments"]


def test_whole_body() -> None:
    body = {
        "model": "qwen3",
        "message": {
            "role": "assistant",
            "content": "",
            "thinking": "hmm",
            "tool_calls": [
                {"function": {"name": "w", "arguments": {"c": "x"}}},
                {"function": {"index": 1, "name": "w", "arguments": {"c": "y"}}},
            ],
        },
        "done": True,
        "done_reason": "length",
    }
    parsed = parse_response(json.dumps(body).encode(), DIALECT)
    assert [(c.index, c.args) for c in parsed.calls] == [(0, {"c": "x"}), (1, {"c": "y"})]
    assert [p.kind for p in parsed.problems] == ["incomplete_response"]
    assert parse_response({"error": "model 'x' not found"}, DIALECT).complete is False


def test_results_answer_calls_by_name_and_order() -> None:
    body = {
        "model": "m",
        "tools": [
            {"type": "function", "function": {"name": "w", "parameters": {"type": "object"}}}
        ],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "w", "arguments": {"c": 1}}},
                    {"function": {"name": "v", "arguments": {}}},
                    {"function": {"name": "w", "arguments": {"c": 2}}},
                ],
            },
            {"role": "tool", "tool_name": "w", "content": "one"},
            {"role": "tool", "tool_name": "w", "content": '{"error": "no"}'},
            {"role": "tool", "tool_name": "v", "content": "ok"},
        ],
    }
    info = parse_request(body, DIALECT)
    assert info.tools == {"w": {"type": "object"}}
    got = [(r.name, r.position, r.call_args, r.is_error) for r in info.tool_results]
    assert got == [("w", 0, {"c": 1}, False), ("w", 2, {"c": 2}, True), ("v", 1, {}, False)]


def test_ollama_and_cohere_error_statuses() -> None:
    missing = classify_error(
        404, {}, b'{"error": "model \'llama9\' not found, try pulling it first"}'
    )
    assert (missing.error_type, missing.hint) == (
        "not_found",
        "the model name is unknown to this endpoint",
    )
    busy = classify_error(503, {}, b'{"error": "server busy, please try again."}')
    assert busy.error_type == "overloaded" and busy.retryable
    trial = classify_error(429, {}, b'{"message": "You are using a Trial key"}')
    assert trial.error_type == "rate_limited"
