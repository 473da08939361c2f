"""Chunk boundaries never matter: any cut points give the same ``Parsed`` as the whole body.

Runs over every streamed corpus case and over generated tool-call streams for all four
dialects (random names, non-ASCII arguments, random fragment sizes). The calls emitted
by ``feed`` must equal ``Parsed.calls``.

Example counts are modest by default (Hypothesis profile ``ci``). Set
``TOOLTAP_LONG=1`` to use the ``long`` profile for a long fuzzing run.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import examples
from tests.corpus import CASES, Case
from tooltap import Parsed, ToolCall
from tooltap.core import StreamParser, parse_response

PROFILE = examples(60)
# each corpus case is its own test: fewer examples apiece keep the whole run short
PER_CASE = examples(25)


def feed_in_pieces(body: bytes, cuts: list[int], dialect: str) -> tuple[list[ToolCall], Parsed]:
    points = sorted({c for c in cuts if 0 < c < len(body)})
    parser = StreamParser(dialect)
    emitted: list[ToolCall] = []
    for start, end in zip([0, *points], [*points, len(body)], strict=True):
        emitted += parser.feed(body[start:end])
    return emitted, parser.close()


def multibyte_cuts(body: bytes) -> list[int]:
    """Offsets that fall inside a multi-byte UTF-8 character (continuation bytes)."""
    return [i for i, b in enumerate(body) if 0x80 <= b < 0xC0]


# --- the recorded corpus ---------------------------------------------------------------------

STREAMED = [c for c in CASES if c.stream]


def test_corpus_has_streams_with_multibyte_characters() -> None:
    assert len(STREAMED) >= 30
    assert any(multibyte_cuts(c.body) for c in STREAMED)


@pytest.mark.parametrize("case", STREAMED, ids=lambda c: c.name)
def test_corpus_one_byte_chunks(case: Case) -> None:
    whole = parse_response(case.body, case.dialect)
    emitted, parsed = feed_in_pieces(case.body, list(range(len(case.body))), case.dialect)
    assert parsed == whole
    assert emitted == list(parsed.calls)


@pytest.mark.parametrize("case", STREAMED, ids=lambda c: c.name)
def test_corpus_any_cut_points(case: Case) -> None:
    whole = parse_response(case.body, case.dialect)
    inside = multibyte_cuts(case.body)
    anywhere = st.integers(0, len(case.body))
    point = st.one_of(anywhere, st.sampled_from(inside)) if inside else anywhere

    @PER_CASE
    @given(cuts=st.lists(point, max_size=40))
    def check(cuts: list[int]) -> None:
        emitted, parsed = feed_in_pieces(case.body, cuts, case.dialect)
        assert parsed == whole
        assert emitted == list(parsed.calls)

    check()


# --- generated streams -----------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,20}", fullmatch=True)
TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12
)  # includes non-ASCII, emoji, quotes, backslashes, newlines
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
ARGS = st.dictionaries(TEXT, JSON_VALUES, max_size=4)


@st.composite
def fragments(draw: st.DrawFn, text: str) -> list[str]:
    """``text`` split into random pieces (by character, as providers send deltas)."""
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=8))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return [p for p in pieces if p] or [""]


def sse(data: Any, event: str | None = None, eol: str = "\n") -> str:
    head = f"event: {event}{eol}" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}{eol}{eol}"


@st.composite
def chat_stream(draw: st.DrawFn, calls: list[tuple[str, dict[str, Any]]]) -> str:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "gpt-x",
                "choices": [choice],
            }
        )

    out = chunk({"role": "assistant", "content": None})
    for i, (name, args) in enumerate(calls):
        head = {
            "index": i,
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        out += chunk({"tool_calls": [head]})
        for piece in draw(fragments(json.dumps(args, ensure_ascii=False))):
            out += chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    out += chunk({}, "tool_calls" if calls else "stop")
    return out + "data: [DONE]\n\n"


@st.composite
def responses_stream(draw: st.DrawFn, calls: list[tuple[str, dict[str, Any]]]) -> str:
    def ev(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, kind)

    response = {
        "id": "resp_1",
        "object": "response",
        "status": "in_progress",
        "model": "gpt-x",
        "output": [],
    }
    out = ev("response.created", response=response)
    items = []
    for i, (name, args) in enumerate(calls):
        text = json.dumps(args, ensure_ascii=False)
        item = {
            "type": "function_call",
            "id": f"fc_{i}",
            "call_id": f"call_{i}",
            "name": name,
            "arguments": "",
            "status": "in_progress",
        }
        out += ev("response.output_item.added", output_index=i, item=item)
        for piece in draw(fragments(text)):
            out += ev(
                "response.function_call_arguments.delta",
                item_id=f"fc_{i}",
                output_index=i,
                delta=piece,
            )
        out += ev(
            "response.function_call_arguments.done",
            item_id=f"fc_{i}",
            output_index=i,
            arguments=text,
        )
        done = {**item, "arguments": text, "status": "completed"}
        items.append(done)
        out += ev("response.output_item.done", output_index=i, item=done)
    final = {
        **response,
        "status": "completed",
        "output": items,
        "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12},
    }
    return out + ev("response.completed", response=final)


@st.composite
def anthropic_stream(draw: st.DrawFn, calls: list[tuple[str, dict[str, Any]]]) -> str:
    def ev(kind: str, **fields: Any) -> str:
        return sse({"type": kind, **fields}, kind)

    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
    out = ev("message_start", message=message)
    for i, (name, args) in enumerate(calls):
        block = {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}
        out += ev("content_block_start", index=i, content_block=block)
        if draw(st.booleans()):
            out += ev("ping")
        for piece in draw(fragments(json.dumps(args, ensure_ascii=False))):
            out += ev(
                "content_block_delta",
                index=i,
                delta={"type": "input_json_delta", "partial_json": piece},
            )
        out += ev("content_block_stop", index=i)
    stop = "tool_use" if calls else "end_turn"
    out += ev("message_delta", delta={"stop_reason": stop}, usage={"output_tokens": 9})
    return out + ev("message_stop")


@st.composite
def google_stream(draw: st.DrawFn, calls: list[tuple[str, dict[str, Any]]]) -> str:
    parts = [
        {"functionCall": {"name": n, "args": a, "id": f"g_{i}"}} for i, (n, a) in enumerate(calls)
    ]
    sizes = draw(st.lists(st.integers(1, 3), min_size=len(parts), max_size=len(parts)))
    out, i = "", 0
    for size in sizes:
        if i >= len(parts):
            break
        content = {"role": "model", "parts": parts[i : i + size]}
        out += sse(
            {"candidates": [{"content": content, "index": 0}], "modelVersion": "g-x"}, eol="\r\n"
        )
        i += size
    last = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": ""}]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2},
        "modelVersion": "g-x",
    }
    return out + sse(last, eol="\r\n")


GENERATORS = {
    "openai.chat": (chat_stream, "call_{}"),
    "openai.responses": (responses_stream, "call_{}"),
    "anthropic.messages": (anthropic_stream, "toolu_{}"),
    "google.genai": (google_stream, "g_{}"),
}


@pytest.mark.parametrize("dialect", sorted(GENERATORS))
@PROFILE
@given(data=st.data(), calls=st.lists(st.tuples(NAMES, ARGS), max_size=4))
def test_generated_streams_any_cut_points(
    dialect: str, data: st.DataObject, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    generator, id_format = GENERATORS[dialect]
    body = data.draw(generator(calls)).encode()
    whole = parse_response(body, dialect)
    # the generator speaks valid wire format: every call comes back intact
    assert whole.problems == () and whole.complete
    assert [(c.name, c.args, c.call_id) for c in whole.calls] == [
        (name, args, id_format.format(i)) for i, (name, args) in enumerate(calls)
    ]
    inside = multibyte_cuts(body)
    point = st.integers(0, len(body))
    if inside:
        point = st.one_of(point, st.sampled_from(inside))
    cuts = data.draw(st.lists(point, max_size=30))
    emitted, parsed = feed_in_pieces(body, cuts, dialect)
    assert parsed == whole
    assert emitted == list(whole.calls)
    one_byte, parsed = feed_in_pieces(body, list(range(len(body))), dialect)
    assert parsed == whole and one_byte == list(whole.calls)
