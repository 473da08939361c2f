"""Regression cases from real traffic shapes (bodies in tests/fixtures/written, see SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.test_split_property import feed_in_pieces
from tests.corpus import CASES
from tooltap import Parsed
from tooltap.core import parse_request, parse_response

WRITTEN = Path(__file__).parent.parent / "fixtures" / "written"


def body(name: str) -> bytes:
    return (WRITTEN / name).read_bytes()


def both(name: str, dialect: str) -> Parsed:
    """The whole body parsed, checked equal to it fed one byte at a time."""
    data = body(name)
    whole = parse_response(data, dialect)
    if data.startswith((b"data:", b"event:")):
        emitted, parsed = feed_in_pieces(data, list(range(len(data))), dialect)
        assert parsed == whole and emitted == list(parsed.calls)
    return whole


def calls(parsed: Parsed) -> list[tuple[str, str | None, dict[str, object]]]:
    return [(c.name, c.call_id, c.args) for c in parsed.calls]


def test_interleaved_chat_deltas_go_to_the_call_their_index_names() -> None:
    parsed = both("chat_stream_interleaved_parallel.body", "openai.chat")
    assert calls(parsed) == [
        ("get_weather", "call_w1", {"city": "Paris"}),
        ("get_time", "call_t1", {"tz": "Europe/Paris"}),
    ]
    assert [c.index for c in parsed.calls] == [0, 1]
    assert parsed.problems == () and parsed.complete


def test_cortex_empty_function_call_is_absent() -> None:
    for name in (
        "chat_json_cortex_empty_function_call.body",
        "chat_stream_cortex_empty_function_call.body",
    ):
        parsed = both(name, "openai.chat")
        assert calls(parsed) == [("get_weather", "tooluse_a1", {"city": "Paris"})], name
        assert parsed.problems == (), name


def test_groq_error_event_is_not_complete() -> None:
    (case,) = [c for c in CASES if c.name.endswith("stream_error_event_groq_tool_use_failed")]
    parsed = parse_response(case.body, case.dialect)
    assert not parsed.complete
    assert "error_event" in [p.kind for p in parsed.problems]


def test_responses_failed_mid_call() -> None:
    parsed = both("responses_stream_failed_mid_call.body", "openai.responses")
    assert not parsed.complete and parsed.calls == ()
    assert [(p.kind, p.call_id) for p in parsed.problems] == [
        ("error_event", None),
        ("truncated_json", "call_1"),
    ]


def test_responses_done_text_that_no_continuation_mends_is_invalid_json() -> None:
    parsed = both("responses_stream_done_broken_json.body", "openai.responses")
    assert [(p.kind, p.received) for p in parsed.problems] == [("invalid_json", '{"q": ["a", "b"}')]
    assert parsed.complete


def test_chat_body_with_broken_arguments_is_invalid_json_and_a_cut_prefix_truncated() -> None:
    msg = json.loads(body("chat_json_cortex_empty_function_call.body"))
    function = msg["choices"][0]["message"]["tool_calls"][0]["function"]
    for text, kind in (('{"a": [1, 2}', "invalid_json"), ('{"a": [1, 2', "truncated_json")):
        function["arguments"] = text
        parsed = parse_response(json.dumps(msg), "openai.chat")
        assert [p.kind for p in parsed.problems] == [kind]


def test_anthropic_overloaded_mid_tool_use() -> None:
    parsed = both("anthropic_stream_overloaded_mid_tool.body", "anthropic.messages")
    assert not parsed.complete and parsed.calls == ()
    assert [(p.kind, p.call_id, p.detail) for p in parsed.problems][:2] == [
        ("error_event", None, "overloaded_error"),
        ("truncated_json", "toolu_01", "stream ended inside the block"),
    ]


def test_responses_additional_tools_are_declared() -> None:
    info = parse_request(body("responses_request_additional_tools.json"), "openai.responses")
    assert set(info.tools) == {"search", "book_flight", "lookup_customer"}
    assert info.tools["book_flight"]["required"] == ["to"]
    assert info.problems == ()


def test_google_tools_object_is_read() -> None:
    info = parse_request(body("google_request_tools_object.json"), "google.genai")
    assert list(info.tools) == ["get_weather"] and info.problems == ()
